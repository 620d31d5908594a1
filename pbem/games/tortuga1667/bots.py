"""A seedable bot that picks uniformly among the legal choices of its own open request.

It reads only what its player may be told (the legal options), so it can stand in for a
player in simulations and property tests.
"""

from __future__ import annotations

import random

from . import legal
from .engine import owed
from .model import State


class RandomBot:
    def __init__(self, seed: int | str = 0, reveal_bias: float = 0.0):
        self.random = random.Random(seed)
        self.reveal_bias = reveal_bias  # chance to reveal outright: shortens simulated games

    def choose(self, state: State, player: str, kind: str) -> str:
        for p, k, entry in owed(state):
            if p == player and k == kind:
                options = legal.options(state, player, kind, entry)
                reveals = [o for o in options if o.startswith("reveal ")]
                if reveals and self.random.random() < self.reveal_bias:
                    return self.random.choice(reveals)
                return self.random.choice(options)
        raise ValueError(f"{player} owes no {kind} choice now")
