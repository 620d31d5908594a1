"""The dishonest judge and the stand-in (docs/protocol.md §15, §16): a new game made with
the stand-in policy v1, whose draws hang on the event's index, lets the judge steer the
stand-in by adding harmless events before its move. ``created`` is the judge's, and neither
the seed hash nor the judge key binds the policy, so the verdict names every v1 move."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.protocol import commands, standin
from pbem.store import Store
from pbem.store.audit import audit_file, audit_store
from tests.protocol.test_standin_v2 import command

ROOT = Path(__file__).resolve().parents[2]
AT = "2030-01-02T10:00:00Z"


def test_a_new_game_made_with_the_steerable_v1_policy_is_named_in_the_verdict(tmp_path, monkeypatch):
    monkeypatch.setattr(standin, "POLICY", standin.V1)  # a patched judge
    store = Store(tmp_path / "g.db")
    players = ["ani", "alex", "frank", "lothar"]
    commands.create_game(store, "g1", "tortuga", players, {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    assert store.events("g1")[0].data["stand_in_policy"] == standin.V1
    play_until_the_stand_in_moves(store)
    commands.reveal_seed(store, "g1", force=True, at=AT)
    report = audit_store(store, "g1")
    moves = report["discretion"]["stand_in_moves"]
    assert report["ok"] and moves >= 1
    assert report["discretion"]["stand_in_v1"] is True
    word = "move" if moves == 1 else "moves"
    assert f"{moves} stand-in {word} (by stand-in-v1, whose draws the judge can steer)" in report["verdict_line"]


def play_until_the_stand_in_moves(store) -> None:
    """Bots play, lothar is defaulted until the stand-in has the seat, until it moved."""
    for _ in range(60):
        if any(e.data.get("by") == "stand-in" for e in store.events("g1")):
            return
        command(store, "lothar")(store)
    raise AssertionError("the stand-in never moved")


@pytest.mark.parametrize("name", ["tortuga", "tortuga1667"])
def test_an_old_v1_log_says_so_too(name):
    text = (ROOT / "examples" / "stand-in-v1" / f"{name}.jsonl").read_text(encoding="utf-8")
    report = audit_file(text)
    assert report["ok"] and "(by stand-in-v1, whose draws the judge can steer)" in report["verdict_line"]


def test_a_v2_game_does_not(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", "tortuga", ["ani", "alex", "frank", "lothar"], {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    play_until_the_stand_in_moves(store)
    report = audit_store(store, "g1")
    assert report["ok"] and report["discretion"]["stand_in_moves"] >= 1
    assert "stand_in_v1" not in report["discretion"] and "stand-in-v1" not in report["verdict_line"]
