"""Public summaries of a live game reveal no secret: not the server seed, not a held salt,
not a treasure tile's value, not an unrevealed roll.

Two kinds of test. The searches look for the actual secrets (from the store and from the
players' private views) in every public rendering. The differential test is the stronger
one: it replays the same log with different tile values and different unrevealed rolls, and
requires every public rendering to stay byte for byte the same (while the private messages
change, proving the secrets did differ).
"""

from __future__ import annotations

import json
import re
import secrets

import pytest

from pbem.protocol import commands, loading, reports
from pbem.protocol.rng import RandomSource
from pbem.protocol.session import Session
from pbem.render import record, summary

FORMATS = ("text", "markdown", "bbcode", "html")
NAMES = ["ani", "alex", "frank", "lothar"]
FIXED_SEED = bytes(range(32))  # a fixed server seed: the live game is the same every run


@pytest.fixture(scope="module")
def live(tmp_path_factory, games):
    """A game in round 3 or later, mid sealed step, where someone holds treasure tiles and
    one commitment was sealed by the moderator (who keeps that salt)."""
    from pbem.store import Store
    store = Store(tmp_path_factory.mktemp("secrets") / "live.db")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secrets, "token_bytes", lambda n: FIXED_SEED[:n])
        commands.create_game(store, "live", "tortuga", NAMES, {}, at=games.AT)
    commands.start_game(store, "live", at=games.AT)

    def until(session):
        return (games.stop_mid_step(3)(session) and len(session.sealed.waiting) >= 3
                and any(b.tiles for b in session.state.boards))

    from pbem.render.demo import play_bots
    play_bots(store, "live", "secrets", until=until, at=games.AT)
    session = loading.load(store, "live")
    assert not session.finished, "the bots should not have finished the game yet"
    late = session.sealed.owes_commit()[0]
    default = session.rules.default(session.state, late, "select")
    commands.commit_for_player(store, "live", late, default, at=games.AT)
    session = loading.load(store, "live")
    assert session.sealed.owes_commit(), "the step must still be collecting commitments"
    yield store
    store.close()


def public_outputs(rec) -> dict[str, str]:
    """Every public rendering of the game: each round in each format, all rounds, and the
    JSON models behind them."""
    out = {}
    for fmt in FORMATS:
        for r in rec.rounds:
            model, text = summary.render_public(rec, r.number, fmt)
            out[f"round {r.number} {fmt}"] = text
            out[f"round {r.number} json"] = json.dumps(model, sort_keys=True)
        models, text = summary.render_all(rec, fmt)
        out[f"all {fmt}"] = text
        out["all json"] = json.dumps(models, sort_keys=True)
    return out


def test_no_public_summary_holds_the_seed_a_salt_tile_values_or_a_hidden_roll(live):
    rec = record.from_store(live, "live")
    assert not rec.finished and rec.revealed_seed is None
    outputs = public_outputs(rec)
    seed = live.get_secret("live", "server_seed")
    assert seed == FIXED_SEED.hex()
    step = rec.session.sealed
    held = [json.loads(live.get_secret("live", name))["salt"] for name in live.secret_names("live")
            if name.startswith("held/")]
    assert held, "one commitment should be held by the moderator"
    session = loading.load(live, "live")
    privates = {p: reports.private(session, p)["view"]["boards"][p] for p in NAMES}
    assert any(b["tile_values"] for b in privates.values())
    current = outputs[f"round {step.round} text"]
    for where, text in outputs.items():
        assert seed not in text, f"the server seed leaks in {where}"
        for salt in held:
            assert salt not in text, f"a held salt leaks in {where}"
        assert "coins" not in text and "tile_values" not in text and '"secret"' not in text, where
        assert '"kept"' not in text and '"returned"' not in text, where
        for player, board in privates.items():
            if board["tile_values"]:
                values = ", ".join(map(str, board["tile_values"]))
                assert f"{values} = {sum(board['tile_values'])} coins" not in text, where
                assert f'"tile_values": {json.dumps(board["tile_values"])}' not in text, where
    for player in step.waiting:
        roll = " ".join(f"{d}={f}" for d, f in sorted(privates[player]["roll"].items()))
        # earlier rolls of this player in this round had more dice, so this exact line
        # could only come from the hidden roll
        assert f"{player} rolled {roll} and" not in current, f"{player}'s hidden roll leaks"
        assert privates[player]["roll"], "players of the open step have a hidden roll"


def _altered_below(step_round: int, step_number: int):
    """A RandomSource.below that changes every treasure tile drawn and every die of the open
    sealed step, and nothing else."""
    original = RandomSource.below
    current_step = re.compile(rf"^r{step_round}/roll{step_number}/[^/]+/[A-E]$")
    tile = re.compile(r"/hunt/\d/tile\d$")

    def below(self, label, n):
        value = original(self, label, n)
        if tile.search(label):
            return n - 1 - value  # the other end of the pool: other values
        if current_step.match(label):
            return (value + 1) % n  # every hidden face changes
        return value

    return below


def test_public_summaries_do_not_change_when_the_secrets_do(live, monkeypatch):
    events = live.events("live")
    seed = bytes.fromhex(live.get_secret("live", "server_seed"))
    real = record.build("live", events, seed)
    step = real.session.sealed
    real_private = {p: summary.render_private(Session.replay("live", events, seed), p, "text")[1] for p in NAMES}
    monkeypatch.setattr(RandomSource, "below", _altered_below(step.round, step.step))
    other = record.build("live", events, seed)
    other_private = {p: summary.render_private(Session.replay("live", events, seed), p, "text")[1] for p in NAMES}
    assert other_private != real_private, "the altered replay should change the secrets"
    changed = [p for p in NAMES if other_private[p] != real_private[p]]
    assert set(step.waiting) <= set(changed)
    real_out, other_out = public_outputs(real), public_outputs(other)
    for where in real_out:
        assert real_out[where] == other_out[where], f"{where} depends on a secret"
