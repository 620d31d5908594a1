"""Tortuga checks most choices without listing the options (the engine's fast path); the
choices it accepts must be exactly those ``options_for`` lists, and a refusal still names
the options. Checked on every request of seeded bot games, for every choice text of the
kinds that have a fixed set of spellings."""

from __future__ import annotations

import pytest

from pbem.games import tortuga
from pbem.games.base import ChoiceError
from pbem.games.tortuga.bots import GreedyBot, RandomBot
from pbem.games.tortuga.engine import open_requests, options_for
from pbem.protocol.rng import RandomSource

ACTIONS = ("fleet", "crew", "hunt", "board", "raid")
COLOURS = ("red", "blue", "yellow", "white", "purple")


def candidates(players) -> list[str]:
    texts = [f"skull:{a}" for a in ACTIONS] + [f"bonus:{how}:{a}" for how in ("new", "flip") for a in ACTIONS]
    texts += [f"{a}:{word}" for a in ("fleet", "crew", "hunt") for word in ("go", "forfeit")]
    texts += [f"{a}:forfeit" for a in ("board", "raid")]
    texts += [f"{a}:{p}" + colour for a in ("board", "raid") for p in players
              for colour in ("", *(f":{c}" for c in COLOURS))]
    return texts


@pytest.mark.parametrize("seed", range(6))
def test_accepted_choices_are_exactly_the_listed_options(seed):
    players = ("ani", "bo", "cy", "dee")[:2 + seed % 3]
    rng = RandomSource.for_testing(f"fast/{seed}", game_id=f"fast-{seed}")
    state = tortuga.setup(players, {}, rng)
    bots = [(GreedyBot if (seat + seed) % 2 else RandomBot)(f"{seed}/{seat}") for seat in range(len(players))]
    texts = candidates(players)
    checked = 0
    while True:
        requests = open_requests(state)
        if not requests:
            break
        for seat, kind, _sealed in requests:
            if kind in ("select", "order"):
                continue
            listed = options_for(state, seat, kind)
            for text in (t for t in texts if t.split(":")[0] == kind):
                try:
                    accepted = tortuga.check(state, players[seat], text)
                except ChoiceError as refusal:
                    assert text not in listed, (kind, text, listed)
                    assert refusal.legal is None or tuple(refusal.legal) == tuple(listed)
                else:
                    assert accepted == text and text in listed, (kind, text, listed)
                checked += 1
        seat, kind, _sealed = requests[0]
        state = tortuga.apply(state, players[seat], bots[seat].choose(state, seat, kind), rng)
    assert checked > 100
