"""The dishonest judge's clock, in ways issue 27 did not test (docs/protocol.md §15): an
event time in another spelling than the log's one (UTC to the second, ``...Z``) compares
as a string, so ``09:30:00+01:00`` (08:30 UTC) sorted after a 09:00 deadline and an early
default passed unforced. The replay takes only the log's spelling."""

from __future__ import annotations

import json

import pytest

from pbem.protocol import commands
from pbem.store import Store, audit
from pbem.text import quote
from tests.protocol.test_discretion import rechain, rows_of

T0 = "2026-04-01T08:00:00Z"


@pytest.fixture
def early(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=3600, start=True, at=T0)
    commands.nmr(store, "g", "ani", at="2026-04-01T09:00:00Z")
    commands.reveal_seed(store, "g", force=True, at="2026-04-01T09:10:00Z")
    rows = rows_of(store)
    assert audit.audit_file(rechain(json.loads(json.dumps(rows))))["verdict"] == "OK"
    return rows


@pytest.mark.parametrize("spelling", ["2026-04-01T09:30:00+01:00",  # 08:30 UTC, before the 09:00 deadline
                                      "2026-04-01T09:30:00.000Z", "2026-04-01t09:30:00z",
                                      "2026-04-01T09:30:00Z ", "２０２６-04-01T09:30:00Z", "2026-04-01T25:30:00Z"])
def test_an_event_time_in_another_spelling_fails_the_audit(early, spelling):
    rows = json.loads(json.dumps(early))
    nmr = next(i for i, r in enumerate(rows) if r["kind"] == "nmr")
    rows[nmr]["at"] = spelling
    rows[nmr + 1]["at"] = "2026-04-01T09:40:00Z"
    line = audit.audit_file(rechain(rows))["verdict_line"]
    assert line == (f"FAIL: event {nmr + 1}: event time {quote(spelling)} is not a time "
                    f"as the log writes them (UTC, to the second, like 2026-01-31T18:00:00Z)"), line
