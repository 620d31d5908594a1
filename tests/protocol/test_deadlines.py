"""Deadlines count from the opening of each request: (player, round, step, kind).

Times are parameters here (``at=``), never the clock: a test that waited for a deadline
would depend on the day it runs.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from pbem.games.tortuga.model import LETTERS, SKULL
from pbem.protocol import commands, loading, reports
from pbem.protocol.errors import Refused
from pbem.protocol.anonymous import held_in
from pbem.protocol.session import Session
from pbem.store import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "games"
FMT = "%Y-%m-%dT%H:%M:%SZ"
T0 = datetime(2024, 5, 1, 12, 0, 0)
HOURS48 = 48 * 3600


def at(hours: float) -> str:
    return (T0 + timedelta(hours=hours)).strftime(FMT)


def one_action_die(session: Session, player: str) -> str:
    """A selection of a single die showing an action (no skull turn, dice left to roll):
    after it, the player takes part in the next sealed step of the round."""
    seat = session.players.index(player)
    roll = session.state.boards[seat].roll
    return next(LETTERS[d] for d in range(5) if roll[d] is not None and roll[d] != SKULL)


@pytest.fixture
def last_reveal_opens_step_2(tmp_path):
    """A 48h game: commitments of step 1.1 at 1h and 2h, ani reveals at 3h, alex (the last)
    at 50h, which resolves step 1.1 and opens step 1.2 for both."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=HOURS48,
                         start=True, at=at(0))
    session = loading.load(store, "g")
    sealed = {p: commands.seal(session, p, one_action_die(session, p)) for p in ("ani", "alex")}
    commands.commit(store, "g", "ani", sealed["ani"]["commitment"], at=at(1))
    commands.commit(store, "g", "alex", sealed["alex"]["commitment"], at=at(2))
    commands.reveal(store, "g", "ani", sealed["ani"]["choice"], sealed["ani"]["salt"], at=at(3))
    commands.reveal(store, "g", "alex", sealed["alex"]["choice"], sealed["alex"]["salt"], at=at(50))
    yield store
    store.close()


def test_the_last_revealer_is_due_48h_after_the_next_step_opens(last_reveal_opens_step_2):
    store = last_reveal_opens_step_2
    session = loading.load(store, "g")
    assert (session.sealed.round, session.sealed.step) == (1, 2)
    due = {w["player"]: (w["since"], w["due"]) for w in reports.waiting(session)}
    assert due == {"ani": (at(50), at(98)), "alex": (at(50), at(98))}
    # the old clock (from step 1.1's opening) made alex due at 48h, already past at 51h
    with pytest.raises(Refused, match="alex's deadline has not passed"):
        commands.nmr(store, "g", "alex", at=at(51))
    with pytest.raises(Refused, match="ani's deadline has not passed"):
        commands.nmr(store, "g", "ani", at=at(51))
    commands.nmr(store, "g", "alex", at=at(98))  # due now: accepted without --force
    assert store.events("g")[-1].kind == "nmr"


def test_the_status_report_cached_with_the_snapshot_has_the_same_due_times(last_reveal_opens_step_2):
    store = last_reveal_opens_step_2
    cached = json.loads(store.latest_snapshot("g")[1])["status"]["waiting"]
    assert {w["player"]: w["due"] for w in cached} == {"ani": at(98), "alex": at(98)}


def kind_answered(event: dict, owed_before: list[tuple] = ()) -> tuple | None:
    """The owed entry (player, kind, sealed) that ``event`` answers, told from the event
    alone (for Tortuga's choice syntax; in Tortuga 1667 a player owes at most one open
    choice at a time, so a decision answers that one): the test's own account, not the
    session's."""
    data, kind = event["data"], event["kind"]
    if kind in ("commit", "nmr"):
        return data["player"], "commit", True
    if kind in ("reveal", "reveal_held") or (kind == "default" and data.get("sealed")):
        return data["player"], "reveal", True
    if kind == "default":
        return data["player"], data["kind"], False
    if kind == "decide":
        open_ = [key for key in owed_before if key[0] == data["player"] and not key[2]]
        if event.get("game_type") == "tortuga1667" and len(open_) == 1:
            return open_[0]
        choice = data["choice"]
        return data["player"], choice.split(":")[0] if ":" in choice else "select", False
    return None


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_every_owed_request_is_due_48h_after_the_event_that_opened_it(example):
    """Replay a recorded game, one minute between events and a 48h deadline: after every
    event, each owed request's ``since`` is the time of the event that opened it (it was
    not owed before, or that event answered the request it replaces)."""
    rows = [json.loads(line) for line in example.read_text(encoding="utf-8").splitlines()]
    seed = bytes.fromhex(next(r["data"]["seed"] for r in rows if r["kind"] == "seed_revealed"))
    rows[0]["data"] = {**rows[0]["data"], "deadline_seconds": HOURS48}
    session = Session(rows[0]["game"], seed, held_in(rows))  # 1667's votes: as the log discloses them
    game_type = rows[0]["data"]["game_type"]
    opened: dict[tuple, str] = {}
    checked = 0
    for number, row in enumerate(rows):
        stamp = at(number / 60)
        before = list(opened)
        session.apply_event(row["kind"], json.loads(json.dumps(row["data"])), stamp, row["seq"])
        answered = kind_answered({**row, "game_type": game_type}, before)
        owed = reports.waiting(session)
        opened = {key: stamp if key not in opened or key == answered else opened[key]
                  for key in ((w["player"], w["kind"], w["sealed"]) for w in owed)}
        for entry in owed:
            since = opened[(entry["player"], entry["kind"], entry["sealed"])]
            assert (entry["since"], entry["due"]) == (since, (datetime.strptime(since, FMT)
                                                             + timedelta(hours=48)).strftime(FMT)), (
                f"event {row['seq']} ({row['kind']}): {entry}")
            checked += 1
    assert session.finished and checked > 50
