"""Taking a seat back from the stand-in by mail (a line ``back``) and from the command line
(``pbem back``): each is one event in the log, answered or told by mail, refused in one
line when there is nothing to take back; the player then plays again by mail."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.mail import judge
from pbem.protocol import commands, loading
from pbem.store.audit import audit_store, report_text

DAY = 86400


def bots_until(game, done) -> None:
    """The other players move (by the protocol's commands); lothar is defaulted, forced."""
    for _ in range(400):
        session = game.session()
        if done(session):
            return
        player, _what, sealed, _ = session.owed()[0]
        game.minute += 1
        when = f"2030-01-01T{10 + game.minute // 60:02d}:{game.minute % 60:02d}:00Z"
        if player == "lothar":
            commands.nmr(game.store, "g1", player, force=True, at=when)
            continue
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind,
                                                                     request=request)
        (commands.commit_for_player if sealed else commands.decide)(game.store, "g1", player, choice, at=when)
    raise AssertionError("the game never got there")


def stand_in_moves(game) -> int:
    return sum(1 for e in game.store.events("g1") if e.kind in ("commit", "decide") and e.data.get("by") == "stand-in")


def pbem(game, *args: str):
    return CliRunner().invoke(app, [*args, "--db", str(game.store.path)], catch_exceptions=False)


def test_lothar_mails_back_then_plays_again_and_the_moderator_ends_the_stand_in_too(make_judge):
    game = make_judge(deadline_seconds=DAY, stand_in_after=1)
    judge.attach(game.store)
    password = game.passwords["lothar"]
    # nothing to take back yet: refused in one line, nothing changes
    before = game.frozen()
    answer = game.send("lothar", f"password {password}\nback")
    assert answer.lines == [{"line": "back", "ok": False,
                             "text": "lothar is not played by the stand-in, so there is nothing to take back"}]
    assert json.loads(game.frozen()[0]) == json.loads(before[0])
    bots_until(game, lambda s: "lothar" in s.standing_in and stand_in_moves(game))
    moved = stand_in_moves(game)
    # lothar is back: one line, one event by the player
    answer = game.send("lothar", f"password {password}\nback")
    assert answer.outcome == "applied" and answer.lines[0]["ok"], answer.lines
    assert answer.lines[0]["text"].startswith("your seat is yours again")
    last = game.store.events("g1")[-1]
    assert (last.kind, last.data["player"], last.data["by"]) == ("stand_in_ended", "lothar", "player")
    assert "lothar" not in game.session().standing_in
    # the stand-in stops there: lothar's next sealed choice waits for him, and he seals it by mail
    bots_until(game, lambda s: s.sealed is not None and "lothar" in s.sealed.owes_commit())
    assert stand_in_moves(game) == moved
    session = game.session()
    request = next(r for r in session.requests_of("lothar") if r.sealed)
    answer = game.send("lothar", f"password {password}\nseal {request.default}")
    assert answer.outcome == "applied" and answer.lines[0]["ok"], answer.lines
    assert game.session().sealed.commits["lothar"]["by"] == "moderator"  # sealed on receipt, for lothar
    # away again: the stand-in takes the seat after one more default; the moderator ends it
    bots_until(game, lambda s: "lothar" in s.standing_in)
    sent = len(game.outbox())
    done = pbem(game, "back", "g1", "lothar", "--reason", "lothar wrote that he is back")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("the stand-in no longer plays lothar in g1 (event ") and done.stdout.count("\n") == 1
    last = game.store.events("g1")[-1]
    assert last.data == {"player": "lothar", "by": "moderator", "reason": "lothar wrote that he is back"}
    told = [r for r in game.outbox()[sent:] if r["recipient"] == "lothar@example.org"]
    assert told and "your seat is yours again" in told[-1]["subject"]
    assert "The moderator ended the stand-in for your seat lothar" in told[-1]["body_text"]
    # nothing to end now: one line, exit 1, nothing changes
    before = game.frozen()
    again = pbem(game, "back", "g1", "lothar", "--json")
    assert again.exit_code == 1 and json.loads(again.stdout) == {
        "error": "lothar is not played by the stand-in, so there is nothing to take back", "code": 1}, again.output
    assert game.frozen() == before
    report = audit_store(game.store, "g1")
    assert report["ok"] and report["discretion"]["seats_taken_back"] == 2
    assert report["discretion"]["seats_taken_back_by_moderator"] == 1
    assert "2 seats taken back from the stand-in (1 by the moderator)" in report_text(report)
    assert loading.load(game.store, "g1") is not None
