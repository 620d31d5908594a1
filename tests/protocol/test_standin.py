"""The stand-in (pbem/protocol/standin.py): it takes a seat after N defaults in a row, plays
from the seat's own private report and labelled draws only, is logged ``by: stand-in``,
hands the seat back at the player's next move or a replacement, and the audit replays it:
a stand-in move its policy would not make fails."""

from __future__ import annotations

import json
import math

import pytest

from pbem.protocol import away as absence, commands, loading, reports, standin, writing
from pbem.protocol.errors import Refused
from pbem.store import Store
from pbem.store.audit import audit_file, audit_store, report_text
from pbem.store.export import export_lines

AT = "2030-01-02T10:00:00Z"


def make(tmp_path, game_type="tortuga", after=2, players=("ani", "alex", "frank", "lothar")):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", game_type, list(players), {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=after)
    return store


def move(store, seat_absent: str | None = None) -> bool:
    """One move of whoever owes first (``seat_absent`` is defaulted, forced); False at the end."""
    session = loading.load(store, "g1")
    if session.finished:
        return False
    player, _what, sealed, _ = session.owed()[0]
    if player == seat_absent and player not in session.standing_in:
        commands.nmr(store, "g1", player, force=True, at=AT)
        return True
    request = next(r for r in session.requests_of(player) if r.sealed == sealed)
    choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind, request=request)
    if sealed:
        commands.commit_for_player(store, "g1", player, choice, at=AT)
    else:
        commands.decide(store, "g1", player, choice, at=AT)
    return True


def by_stand_in(store) -> list:
    return [e for e in store.events("g1") if e.data.get("by") == "stand-in"]


def test_the_stand_in_takes_the_seat_after_n_defaults_in_a_row(tmp_path):
    store = make(tmp_path)
    for _ in range(200):
        if "lothar" in loading.load(store, "g1").standing_in:
            break
        move(store, seat_absent="lothar")
    for _ in range(100):  # the stand-in answers as soon as the seat owes something
        if by_stand_in(store):
            break
        move(store)
    late = [e for e in store.events("g1") if e.kind in ("nmr", "default") and e.data.get("player") == "lothar"
            and e.data.get("reason") != "no commitment (NMR)"]
    assert len(late) == 2  # two in a row, and the stand-in plays from the second on
    assert by_stand_in(store), "the stand-in made no move"
    assert all(e.data["player"] == "lothar" for e in by_stand_in(store))
    assert not [p for p, what, *_ in loading.load(store, "g1").owed() if p == "lothar" and what != "reveal"]
    # the audit names the stand-in's moves
    report = audit_store(store, "g1")
    assert report["ok"] and report["discretion"]["stand_in_moves"] == len(
        [e for e in by_stand_in(store) if e.kind in ("commit", "decide")])
    assert "stand-in move" in report_text(report)


def test_a_valid_move_of_the_player_ends_the_stand_in(tmp_path):
    store = make(tmp_path, after=1)
    while "lothar" not in loading.load(store, "g1").standing_in:
        move(store, seat_absent="lothar")
    # play on until lothar's seat has a sealed commitment by the stand-in that can still be replaced
    for _ in range(300):
        session = loading.load(store, "g1")
        step = session.sealed
        if step is not None and step.commits.get("lothar", {}).get("by") == "stand-in" and not step.all_committed:
            break
        move(store)
    else:
        pytest.skip("no open sealed step with the stand-in's commitment came up")
    commands.commit_for_player(store, "g1", "lothar", session.rules.default(session.state, "lothar", step.kind), at=AT)
    assert "lothar" not in loading.load(store, "g1").standing_in
    assert audit_store(store, "g1")["ok"]


def test_a_replacement_ends_the_stand_in(tmp_path):
    store = make(tmp_path, after=1)
    while "lothar" not in loading.load(store, "g1").standing_in:
        move(store, seat_absent="lothar")
    absence.replace(store, "g1", "lothar", reason="maria takes over", at=AT)
    session = loading.load(store, "g1")
    assert "lothar" not in session.standing_in and "lothar" not in session.missed


@pytest.mark.parametrize("game_type, players", [
    ("tortuga", ("ani", "alex", "frank", "lothar")),
    ("tortuga1667", ("ani", "alex", "frank", "lothar", "mary")),
])
def test_the_stand_ins_input_is_exactly_the_seats_private_view(tmp_path, monkeypatch, game_type, players):
    store = make(tmp_path, game_type, after=1, players=players)
    seen = []  # (what the stand-in was given, lothar's loyalties before and after that move)
    held = set()
    real = standin.policy
    # Only the policy's calls for new events count: a load replays the events after the
    # newest full snapshot, and checks each stand-in move among them against the policy
    # again, with the seat's view (and loyalty) of that earlier moment.
    head = [math.inf]

    def spy(private, rng, index, version=standin.V1):
        if index > head[0]:
            seen.append((json.loads(json.dumps(private)), held))
        return real(private, rng, index, version)
    monkeypatch.setattr(standin, "policy", spy)
    expected = []
    loyalty = (lambda session: session.state.loyalty["lothar"]) if game_type == "tortuga1667" else (lambda s: None)
    for _ in range(400):
        session = loading.load(store, "g1")
        if session.finished or len(expected) >= 5:
            break
        if "lothar" in session.standing_in and any(p == "lothar" and w != "reveal" for p, w, *_ in session.owed()):
            expected.append(json.loads(json.dumps(reports.private(session, "lothar"))))
        held = {loyalty(session)}  # Cabin Fever may swap a loyalty card within the move
        head[0] = session.seq
        move(store, seat_absent="lothar")
        head[0] = math.inf
        held.add(loyalty(loading.load(store, "g1")))
    live = [v for v, _held in seen]
    assert live, "the stand-in never played"
    # what it was given is the private report of lothar: his own view, no one else's
    for given in live:
        assert given["player"] == "lothar" and given["view"]["viewer"] == "lothar"
    for report in expected:
        assert report in live
    if game_type == "tortuga1667":  # lothar's own loyalty as it was then, and no one else's
        for given, then in seen:
            assert given["view"]["my_loyalty"] in then
            assert "loyalty" not in given["view"] or given["view"].get("phase") == "over"


def finished_with_stand_in(tmp_path):
    store = make(tmp_path, after=1)
    while move(store, seat_absent="lothar"):
        pass
    assert by_stand_in(store)
    return store


def test_a_stand_in_move_the_policy_would_not_make_fails_the_audit(tmp_path):
    from tests.protocol.test_public_audit import rechain
    store = finished_with_stand_in(tmp_path)
    rows = [json.loads(line) for line in export_lines(store.events("g1"))]
    text = rechain([dict(r) for r in rows])
    assert audit_file(text)["ok"]
    session = loading.load(store, "g1")
    for row in rows:
        if row["kind"] == "decide" and row["data"].get("by") == "stand-in":
            replay = commands.Session.replay("g1", [r for r in rows if r["seq"] < row["seq"]],
                                             bytes.fromhex(store.get_secret("g1", "server_seed")))
            request = next(r for r in replay.requests_of("lothar") if not r.sealed)
            others = [o for o in (request.options or ()) if o != row["data"]["choice"]]
            if others:
                forged = [dict(r) for r in rows]
                target = next(r for r in forged if r["seq"] == row["seq"])
                target["data"] = {**target["data"], "choice": others[0]}
                target["data"].pop("applied", None)
                target["data"]["applied"] = replay.rules.check(replay.state, "lothar", others[0])
                report = audit_file(rechain(forged))
                assert not report["ok"] and report["bad_seq"] == row["seq"]
                assert "the stand-in's move for lothar" in report["problem"] and "its policy" in report["problem"]
                return
    assert session is not None
    pytest.fail("no stand-in decision with another option to forge")


def test_the_judge_cannot_play_a_seat_that_is_not_stood_in_for(tmp_path):
    store = make(tmp_path, after=3)
    session = loading.load(store, "g1")
    before = store.head("g1")
    with pytest.raises(Refused, match="ani is not played by the stand-in"):
        writing.write(store, "g1", lambda s: [("commit", {"player": "ani", "round": 1, "step": 1,
                                                            "commitment": "0" * 64, "by": "stand-in"})])
    assert store.head("g1") == before and session is not None


def test_stand_in_after_must_be_a_positive_number(tmp_path):
    store = Store(tmp_path / "x.db")
    with pytest.raises(Refused, match="--stand-in-after is a number of defaults in a row, 1 or more"):
        commands.create_game(store, "g1", "tortuga", ["ani", "alex"], {}, stand_in_after=0)
    assert store.games() == []
