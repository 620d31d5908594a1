"""Deadlines only move later (docs/protocol.md §16): a resume ``--until`` earlier than a
deadline in force is refused unless forced, and then the verdict names it; a default
before the deadline in force is always forced. Each lie is played as the judge could: the
command line refuses it, so a patched judge writes it (an edited, re-chained log), and the
audit fails it."""

from __future__ import annotations

import json

import pytest

from pbem.protocol import away, commands
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.errors import Refused
from pbem.store import Store, audit, export_lines

T0 = "2030-01-01T10:00:00Z"  # the game starts; each request is due 24 hours after it opens
DUE = "2030-01-02T10:00:00Z"


def rows_of(store, game="g"):
    return [json.loads(line) for line in export_lines(store.events(game))]


def rechain(rows) -> str:
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)




@pytest.fixture
def paused(tmp_path):
    """A two-player Tortuga game with a 24h deadline, paused two hours in (22 hours left)."""
    store = Store(tmp_path / "g.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=86400, start=True, at=T0)
    away.pause(store, "g", "a public holiday", at="2030-01-01T12:00:00Z")
    return store


def test_a_resume_that_would_shorten_a_deadline_is_refused_in_one_line(paused):
    before = rows_of(paused)
    # resumed at 14:00 after two hours: the deadline in force is 12:00 the next day
    with pytest.raises(Refused) as refused:
        away.resume(paused, "g", until="2030-01-01T14:00:05Z", at="2030-01-01T14:00:00Z")
    assert str(refused.value) == (
        "--until 2030-01-01T14:00:05Z is earlier than ani's deadline in force 2030-01-02T12:00:00Z (its deadline "
        "before the pause, moved on by the pause): a resume moves deadlines later, never earlier; give "
        "2030-01-02T12:00:00Z or later, or use --force (the log marks it forced and the audit names it)")
    # even later than the deadline before the pause (10:00), it takes back paused time
    with pytest.raises(Refused, match="earlier than ani's deadline in force 2030-01-02T12:00:00Z"):
        away.resume(paused, "g", until="2030-01-02T11:00:00Z", at="2030-01-01T14:00:00Z")
    assert rows_of(paused) == before  # the log exactly as before
    away.resume(paused, "g", until="2030-01-02T12:00:00Z", at="2030-01-01T14:00:00Z")  # not earlier: taken
    assert "forced" not in rows_of(paused)[-1]["data"]


def test_a_forced_shortening_is_named_and_its_default_is_then_due(paused):
    away.resume(paused, "g", until="2030-01-01T14:00:05Z", force=True, at="2030-01-01T14:00:00Z")
    resumed = rows_of(paused)[-1]
    assert resumed["kind"] == "resumed" and resumed["data"]["forced"] is True
    commands.nmr(paused, "g", "ani", at="2030-01-01T14:00:12Z")  # 7 seconds later: due by the shortened deadline
    commands.reveal_seed(paused, "g", force=True)
    report = audit.audit_file("".join(export_lines(paused.events("g"))))
    assert report["verdict"] == "OK"
    assert report["discretion"]["shortened_deadlines"] == 1
    assert report["verdict_line"].endswith("the judge ended the game early, at round 1, no client seed: the judge "
                                           "alone chose the deal, 1 forced resume that shortened deadlines, 1 pause")


def test_a_forced_resume_that_shortens_nothing_is_a_plain_resume(paused):
    away.resume(paused, "g", until="2030-01-03T00:00:00Z", force=True, at="2030-01-01T14:00:00Z")
    assert "forced" not in rows_of(paused)[-1]["data"]  # nothing to name


def _patched(store, data: dict, at: str = "2030-01-01T14:00:00Z") -> str:
    """The log as a patched judge writes it: the resume with ``data`` (the command line
    would refuse it), a plain nmr 7 seconds later, the seed revealed; re-chained."""
    away.resume(store, "g", until="2030-01-01T14:00:05Z", force=True, at=at)
    commands.nmr(store, "g", "ani", at="2030-01-01T14:00:12Z")
    commands.reveal_seed(store, "g", force=True)
    rows = rows_of(store)
    resumed = next(r for r in rows if r["kind"] == "resumed")
    resumed["data"] = data
    return rechain(rows)


def test_an_unforced_shortening_written_by_a_patched_judge_fails(paused):
    report = audit.audit_file(_patched(paused, {"by": "moderator", "reason": "the pause is over",
                                                "until": "2030-01-01T14:00:05Z"}))
    assert report["verdict"] == "FAIL"
    assert report["verdict_line"] == (
        "FAIL: event 4: --until 2030-01-01T14:00:05Z is earlier than ani's deadline in force 2030-01-02T12:00:00Z "
        "(its deadline before the pause, moved on by the pause): a resume moves deadlines later, never earlier; "
        "give 2030-01-02T12:00:00Z or later, or use --force (the log marks it forced and the audit names it)")


def test_a_forced_mark_on_a_resume_that_shortens_nothing_fails(tmp_path):
    store = Store(tmp_path / "g.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=86400, start=True, at=T0)
    away.pause(store, "g", "a public holiday", at="2030-01-01T12:00:00Z")
    away.resume(store, "g", at="2030-01-01T14:00:00Z")
    commands.reveal_seed(store, "g", force=True)
    rows = rows_of(store)
    rows[3]["data"]["forced"] = True  # to make a plain resume look like the judge's act, or hide one
    report = audit.audit_file(rechain(rows))
    assert report["verdict_line"] == ("FAIL: event 4: a resume is marked forced only when it moves a deadline "
                                      "earlier; this one moves none: resume without --force")


def test_a_default_before_the_deadline_in_force_is_always_forced(paused):
    """After a plain resume the deadline in force is 12:00 the next day; an unforced default
    before it, written by a patched judge with a recorded deadline of its choosing, fails."""
    away.resume(paused, "g", at="2030-01-01T14:00:00Z")
    commands.nmr(paused, "g", "ani", force=True, at="2030-01-02T11:00:00Z")
    commands.reveal_seed(paused, "g", force=True)
    rows = rows_of(paused)
    nmr = next(r for r in rows if r["kind"] == "nmr")
    assert nmr["data"]["deadline"] == "2030-01-02T12:00:00Z"
    for deadline in ("2030-01-02T12:00:00Z", DUE):  # the true one, or the one before the pause
        edited = json.loads(json.dumps(rows))
        data = next(r for r in edited if r["kind"] == "nmr")["data"]
        data.pop("forced")
        data["deadline"] = deadline
        line = audit.audit_file(rechain(edited))["verdict_line"]
        assert line.startswith(f"FAIL: event {nmr['seq']}: ")
        assert ("had not passed at 2030-01-02T11:00:00Z, and the default is not marked forced" in line
                if deadline != DUE else "is earlier than ani's deadline 2030-01-02T12:00:00Z" in line), line
