"""The stand-in's policy v2 (pbem/protocol/standin.py, docs/protocol.md §3 and §16): its
draws are labelled by what the move answers, so nothing the judge can add before a move
(an extension, a pause and a resume) changes it; a game in which every seat is stood in
plays to its end; and logs made with v1 still replay with v1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pbem.protocol import away, commands, loading, standin
from pbem.protocol.errors import Refused
from pbem.store import Store
from pbem.store.audit import audit_file, audit_store

ROOT = Path(__file__).resolve().parents[2]
AT = "2030-01-02T10:00:00Z"
PLAYERS = {"tortuga": ("ani", "alex", "frank", "lothar"), "tortuga1667": ("ani", "alex", "frank", "lothar", "mary")}


def fork(store: Store, path: Path) -> Store:
    """A copy of the whole database (secrets too): the same game, the same seed."""
    src, dst = sqlite3.connect(store.path), sqlite3.connect(path)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return Store(path)


def command(store: Store, absent: str):
    """The next command of a game played by bots, as a function of a store: a forced
    default for ``absent`` until the stand-in has the seat, else the bot's move."""
    session = loading.load(store, "g1")
    player, _what, sealed, _ = session.owed()[0]
    if player == absent and player not in session.standing_in:
        return lambda s: commands.nmr(s, "g1", player, force=True, at=AT)
    request = next(r for r in session.requests_of(player) if r.sealed == sealed)
    choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind, request=request)
    if sealed:
        return lambda s: commands.commit_for_player(s, "g1", player, choice, at=AT)
    return lambda s: commands.decide(s, "g1", player, choice, at=AT)


def stand_in_moves(store: Store, after: int) -> list:
    return [(e.kind, e.data["player"], e.data["round"], e.data["step"], e.data.get("choice"), e.data.get("commitment"))
            for e in store.events("g1") if e.seq > after and e.data.get("by") == "stand-in"]


def harmless(store: Store) -> None:
    """What a judge could add before a move without deciding anything: an extension of
    every deadline, then a pause and a resume."""
    away.extend(store, "g1", seconds=3600, reason="a day off", at=AT)
    away.pause(store, "g1", reason="the judge's holiday", at=AT)
    away.resume(store, "g1", at=AT)


@pytest.mark.parametrize("game_type", ["tortuga", "tortuga1667"])
def test_the_stand_ins_move_is_the_same_whatever_harmless_events_come_before_it(tmp_path, game_type):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", game_type, list(PLAYERS[game_type]), {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    assert store.events("g1")[0].data["stand_in_policy"] == "stand-in-v2"
    compared, kinds = 0, set()
    for turn in range(400):
        session = loading.load(store, "g1")
        if session.finished or (compared >= 6 and ("commit" in kinds or game_type == "tortuga1667")):
            break
        act = command(store, "lothar")
        head = store.head("g1")[0]
        other = fork(store, tmp_path / f"fork{turn}.db")
        act(store)
        plain = stand_in_moves(store, head)
        if not plain:
            continue
        harmless(other)
        moved = store.head("g1")[0] - head
        act(other)
        shifted = stand_in_moves(other, head)
        assert other.head("g1")[0] - store.head("g1")[0] == 3  # the three harmless events, and the same moves
        assert [m[:4] for m in shifted] == [m[:4] for m in plain] and moved
        for mine, theirs in zip(plain, shifted):
            if mine[0] == "decide":
                assert mine == theirs
            else:  # the same choice and salt: the same commitment (the judge's own salts differ)
                assert mine[5] == theirs[5], (mine, theirs)
        assert audit_store(other, "g1")["ok"] or not loading.load(other, "g1").seed_revealed
        compared += len(plain)
        kinds.update(m[0] for m in plain)
    assert compared >= 6, "the stand-in made too few moves to compare"


@pytest.mark.parametrize("game_type", ["tortuga", "tortuga1667"])
def test_a_game_in_which_every_seat_is_stood_in_plays_to_its_end(tmp_path, game_type):
    """Issue 29: in 1667 the v1 stand-in peeked for ever (1,001 events a command). Every seat
    is handed to the stand-in by forced defaults; the game ends, within the events of a game
    played by people, and each command adds no more than the stand-in's guard."""
    store = Store(tmp_path / "g.db")
    players = PLAYERS[game_type]
    commands.create_game(store, "g1", game_type, list(players), {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=2)
    for _ in range(3 * len(players)):
        session = loading.load(store, "g1")
        if session.finished:
            break
        head = store.head("g1")[0]
        commands.nmr(store, "g1", session.owed()[0][0], force=True, at=AT)
        assert store.head("g1")[0] - head <= standin.MAX_MOVES
    session = loading.load(store, "g1")
    assert session.finished and session.seed_revealed
    assert session.standing_in == set(players)
    assert store.head("g1")[0] < 1000  # a bot game of either kind takes a few hundred events
    report = audit_store(store, "g1")
    assert report["ok"] and report["discretion"]["stand_in_moves"] > 10


@pytest.mark.parametrize("name", ["tortuga", "tortuga1667"])
def test_logs_made_with_stand_in_v1_still_audit_ok_with_v1(name):
    """examples/stand-in-v1/: games played by the pbem before v2 (examples/stand-in-v1/make_v1.py)."""
    text = (ROOT / "examples" / "stand-in-v1" / f"{name}.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    assert "stand_in_policy" not in rows[0]["data"]  # v1: the only policy then
    report = audit_file(text)
    assert report["ok"] and report["replay"] == "full", report
    assert report["discretion"]["stand_in_moves"] == sum(
        1 for r in rows if r["kind"] in ("commit", "decide") and r["data"].get("by") == "stand-in")
    # the same log, named v2, fails: its moves were drawn by the event's index
    rows[0]["data"]["stand_in_policy"] = "stand-in-v2"
    from tests.protocol.test_public_audit import rechain
    forged = audit_file(rechain(rows))
    assert not forged["ok"] and "its policy (stand-in-v2)" in forged["problem"]


def test_a_log_naming_an_unknown_policy_is_refused(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", "tortuga", ["ani", "alex"], {}, start=True, stand_in_after=1)
    from tests.protocol.test_public_audit import rechain
    from pbem.store.export import export_lines
    rows = [json.loads(line) for line in export_lines(store.events("g1"))]
    rows[0]["data"]["stand_in_policy"] = "stand-in-v9"
    report = audit_file(rechain(rows))
    assert not report["ok"] and "unknown stand-in policy 'stand-in-v9'" in report["problem"]
    with pytest.raises(Refused, match="unknown stand-in policy"):
        standin.check_policy({"stand_in_policy": "x"})


def test_v2_labels_name_the_request_never_the_event():
    private = {"player": "a/b%c", "requests": [{"kind": "vote", "sealed": True, "round": 3, "step": 2,
                                                "default": "vote 1", "options": ["vote 1", "vote 2"]}]}
    assert standin.labels("stand-in-v2", private, private["requests"][0], 77) == (
        "stand-in-v2/3/2/a%2Fb%25c/vote/sealed", "stand-in-v2-salt/3/2/a%2Fb%25c/vote/sealed")
    assert standin.labels("stand-in-v1", private, private["requests"][0], 77) == ("stand-in/77", "stand-in-salt/77")
