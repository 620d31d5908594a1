"""Helpers for the game tests: complete bot games through the public interface only.

Helpers are handed out by session fixtures (``games``, ``sample_states``) rather than
imported, because every test directory has its own ``conftest`` module.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pbem.games import tortuga
from pbem.games.tortuga.bots import GreedyBot, RandomBot
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee")
KINDS = ("select", "skull", "bonus", "fleet", "crew", "hunt", "board", "raid", "order")


def new_game(players: int, variant: str = "standard", seed: int | str = 0, greedy=(False,) * 4):
    """A fresh game, its random source, and one bot per seat (greedy where ``greedy[seat]``)."""
    rng = RandomSource.for_testing(f"game/{seed}", game_id=f"g{seed}")
    state = tortuga.setup(NAMES[:players], {"variant": variant}, rng)
    bots = [(GreedyBot if greedy[seat] else RandomBot)(f"{seed}/{seat}") for seat in range(players)]
    return state, bots, rng


def steps(state, bots, rng, max_moves: int = 20_000):
    """Play to the end, yielding ``(before, player, choice, after)`` for every apply.

    The first open request is answered each time, as ``bots.play`` does.
    """
    for _ in range(max_moves):
        requests = tortuga.pending(state)
        if not requests:
            return
        request = requests[0]
        seat = state.players.index(request.player)
        choice = bots[seat].choose(state, seat, request.kind)
        after = tortuga.apply(state, request.player, choice, rng)
        yield state, request.player, choice, after
        state = after
    raise AssertionError(f"game did not end within {max_moves} moves")


def play_out(players=4, variant="standard", seed=0, greedy=(False,) * 4):
    state, bots, rng = new_game(players, variant, seed, greedy)
    final = state
    for _before, _player, _choice, final in steps(state, bots, rng):
        pass
    return final


def collect_states(per_kind: int = 12, seeds=range(24)):
    """Real states from bot games, grouped by the open request kind ("select/sealed",
    "select/open", "skull", ..., "order/unlisted"): ``{key: [(state, request), ...]}``, at most ``per_kind``
    per key, spread over games with 2, 3 and 4 players."""
    found: dict[str, list] = {}
    for seed in seeds:
        players = 2 + seed % 3
        greedy = tuple(bool((seed >> k) & 1) for k in range(4))
        state, bots, rng = new_game(players, "standard", f"sample/{seed}", greedy)
        taken: dict[str, int] = {}
        for _before, _player, _choice, s in steps(state, bots, rng):
            for request in tortuga.pending(s):
                key = request.kind
                if key == "select":
                    key += "/sealed" if request.sealed else "/open"
                if key == "order" and request.options is None:
                    key += "/unlisted"  # too many orderings to list
                bucket = found.setdefault(key, [])
                if len(bucket) < per_kind and taken.get(key, 0) < 2:
                    bucket.append((s, request))
                    taken[key] = taken.get(key, 0) + 1
    return found


@pytest.fixture(scope="session")
def games():
    return SimpleNamespace(NAMES=NAMES, KINDS=KINDS, new_game=new_game, steps=steps,
                           play_out=play_out, collect_states=collect_states)


@pytest.fixture(scope="session")
def sample_states():
    return collect_states()
