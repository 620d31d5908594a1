"""The dishonest judge drops a pause and its resume (docs/protocol.md §15): players relax
on the pause notice, the judge deletes both events before the next summary, re-chains, and
defaults a player at the deadline the pause should have moved. The log alone audits OK (no
pause: the default was due); the notices to the list carry the chain head of their event,
so the list's mail of the pause makes ``--heads`` FAIL the rewritten log."""

from __future__ import annotations

import json

from pbem.mail import judge
from pbem.protocol import away as absence

from pbem.protocol.heads import heads_in_text
from pbem.store import audit, export_lines
from pbem.store.verdict import Published
from tests.protocol.test_discretion import rechain

DAY, HOUR = 86400, 3600
LIST = "table@lists.example.org"


def when(hours: float) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_dropped_pause_is_caught_by_the_head_its_notice_carried(make_judge):
    game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "default"})
    judge.attach(game.store)
    sent = len(game.outbox())
    absence.pause(game.store, "g1", "summer holidays", at=when(2))
    pause = game.store.events("g1")[-1]
    notice = next(r for r in game.outbox()[sent:] if r["recipient"] == LIST)
    assert f"Chain head: event {pause.seq} {pause.hash}" in notice["body_text"]
    sent = len(game.outbox())
    absence.resume(game.store, "g1", at=when(3))
    resume = game.store.events("g1")[-1]
    notice = next(r for r in game.outbox()[sent:] if r["recipient"] == LIST)
    assert f"Chain head: event {resume.seq} {resume.hash}" in notice["body_text"]
    heads = heads_in_text(notice["body_text"])
    # the judge's rewrite: no pause, no resume, and ani defaulted at her first deadline
    rows = [json.loads(line) for line in export_lines(game.store.events("g1"))]
    rows = [r for r in rows if r["kind"] not in ("paused", "resumed")]
    honest = [json.loads(line) for line in export_lines(game.store.events("g1"))]
    assert audit.audit_file(rechain(json.loads(json.dumps(honest))))["verdict"] in ("INCOMPLETE", "OK")
    rows.append({"game": "g1", "kind": "nmr", "at": when(24),
                 "data": {"player": "ani", "round": 1, "step": 1, "deadline": when(24)}})
    text = rechain(rows)
    assert audit.audit_file(text)["verdict"] == "INCOMPLETE"  # the log alone: no trace of the pause
    report = audit.audit_file(text, Published(heads=heads))
    assert report["verdict"] == "FAIL", report["verdict_line"]
    assert f"published head event {resume.seq} " in report["verdict_line"]


def test_a_replacement_notice_carries_its_head(make_judge):
    game = make_judge(deadline_seconds=DAY)
    judge.attach(game.store)
    sent = len(game.outbox())
    absence.replace(game.store, "g1", "ani", reason="moved away", at=when(1))
    event = game.store.events("g1")[-1]
    notice = next(r for r in game.outbox()[sent:] if r["recipient"] == LIST)
    assert f"Chain head: event {event.seq} {event.hash}" in notice["body_text"]


