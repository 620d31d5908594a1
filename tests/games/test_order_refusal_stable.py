"""Tortuga: an order listing chests the player lacks is refused naming the first colour listed
that is short, whatever Python's hash seed (it once named whichever colour a set gave first)."""

from __future__ import annotations

import pytest

from pbem.games import tortuga
from pbem.games.base import ChoiceError
from pbem.games.tortuga.legal import order_limits
from pbem.protocol.rng import RandomSource

COLOURS = ["purple", "white", "red", "blue", "yellow"]


def _an_order_request():
    for g in range(50):
        rng = RandomSource.for_testing(f"o{g}")
        state = tortuga.setup(["ani", "alex", "frank"], {}, rng)
        bots = {p: tortuga.bot(p) for p in state.players}
        while tortuga.result(state) is None:
            request = tortuga.pending(state)[0]
            seat = state.players.index(request.player)
            if request.kind == "order" and order_limits(state, seat)[0] >= 2:
                return state, request.player, seat
            state = tortuga.apply(state, request.player,
                                  bots[request.player].choose(state, request.player, request.kind), rng)
    pytest.fail("no order request with two chests to move in 50 games")


def test_the_refusal_names_the_first_short_colour_listed():
    state, player, seat = _an_order_request()
    kf = order_limits(state, seat)[0]
    crew = state.boards[seat].crew
    checked = 0
    for listed in (COLOURS[:kf], list(reversed(COLOURS))[:kf]):
        short = [c for c in dict.fromkeys(listed) if listed.count(c) > crew.count(c)]
        if not short:
            continue
        with pytest.raises(ChoiceError) as refused:
            tortuga.check(state, player, "order:" + ",".join(listed) + "/-")
        assert f"has {crew.count(short[0])} {short[0]} chest(s)" in str(refused.value)
        checked += 1
    assert checked, (listed, crew)
