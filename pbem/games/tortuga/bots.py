"""Seedable bots: a uniformly random legal player and a simple greedy one.

Bots read only what their player may see (their view plus the legal options), so they
can stand in for real players in demos, simulations and property tests.
"""

from __future__ import annotations

import random

from . import legal
from .engine import default_for, open_requests, options_for
from .model import State
from .choices import format_dice, format_order


class RandomBot:
    """Picks uniformly among the legal choices."""

    def __init__(self, seed: int | str = 0):
        self.random = random.Random(seed)

    def choose(self, state: State, seat: int, kind: str) -> str:
        if kind == "select":  # the same uniform choice, without spelling out every option
            selections = legal.legal_selections(state.boards[seat])
            return format_dice(self.random.choice(selections)) if selections else "none"
        options = options_for(state, seat, kind)
        if options is None:  # an ordering with many arrangements: shuffle and cut
            board = state.boards[seat]
            kf, kc = legal.order_limits(state, seat)
            crew, island = board.crew[:], board.island[:]
            self.random.shuffle(crew)
            self.random.shuffle(island)
            return format_order(crew[:kf], island[:kc])
        return self.random.choice(options)


class GreedyBot:
    """Takes the biggest selection, always acts, attacks whoever has the richest area."""

    def __init__(self, seed: int | str = 0):
        self.random = random.Random(seed)

    def choose(self, state: State, seat: int, kind: str) -> str:
        if kind in ("fleet", "crew", "hunt"):
            return f"{kind}:go"
        if kind in ("board", "raid"):
            best, best_value = None, -1  # the first of the most valuable (as max would pick)
            for option in options_for(state, seat, kind):
                if not option.endswith(":forfeit"):
                    value = _chest_value(option)
                    if value > best_value:
                        best, best_value = option, value
            if best is None:
                raise ValueError("max() arg is an empty sequence")  # as before: never in a game
            return best
        if kind == "select":
            return legal.default_select(state, seat)
        return default_for(state, seat, kind)


_VALUES = {"purple": 5, "white": 3}


def _chest_value(option: str) -> int:
    parts = option.split(":")
    return _VALUES.get(parts[2], 2) if len(parts) == 3 else 0


def play(state: State, bots, rng, apply, max_moves: int = 100_000):
    """Play until the game is over; ``bots`` maps seat -> bot. Yields each new state."""
    for _ in range(max_moves):
        requests = open_requests(state)
        if not requests:
            return
        seat, kind, _sealed = requests[0]
        choice = bots[seat].choose(state, seat, kind)
        state = apply(state, state.players[seat], choice, rng)
        yield state, state.players[seat], choice
    raise RuntimeError("game did not end")
