"""Taking a seat back from the stand-in by mail (a line ``back``) and from the command line
(``pbem back``): each is one event in the log, answered or told by mail, refused in one
line when there is nothing to take back; the player then plays again by mail."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.mail import judge
from pbem.protocol import commands, loading
from pbem.store.audit import audit_store, report_text
from tests.judge.conftest import T0, Judge
from tests.protocol.test_standin_back import Seed

DAY = 86400


def bots_until(game, done, lothar_decides: bool = False) -> None:
    """The other players move (by the protocol's commands); lothar is defaulted, forced,
    unless ``lothar_decides``: then he makes his open decisions himself (the game's seed is
    new each run, and an open decision of his may come before his next sealed choice)."""
    for _ in range(400):
        session = game.session()
        if done(session):
            return
        player, _what, sealed, _ = session.owed()[0]
        game.minute += 1
        when = f"2030-01-01T{10 + game.minute // 60:02d}:{game.minute % 60:02d}:00Z"
        if player == "lothar" and (sealed or not lothar_decides):
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
    bots_until(game, lambda s: s.sealed is not None and "lothar" in s.sealed.owes_commit(), lothar_decides=True)
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


class Judge1667(Judge):
    """g1 as tests/judge/conftest.py's Judge makes it, but Tortuga 1667 with five players."""

    def __init__(self, path, seed: str):
        from pbem.mail import addresses
        from pbem.store import Store
        self.store = Store(path)
        names = ("ani", "alex", "frank", "lothar", "mary")
        original = commands.secrets
        commands.secrets = Seed(seed)  # a fixed server seed: every run plays the same game
        try:
            addresses.create_game(self.store, "g1", "tortuga1667", list(names), {},
                                  {p: f"{p}@example.org" for p in names}, "table@lists.example.org", at=T0,
                                  deadline_seconds=DAY, stand_in_after=1, start=True)
        finally:
            commands.secrets = original
        self.passwords = {}
        for row in self.outbox():
            found = re.search(r"Your mail password for this game: (\S+)", row["body_text"])
            if found:
                self.passwords[row["recipient"].split("@")[0]] = found.group(1)
        self.minute = 1


def test_a_1667_game_by_mail_lothar_leaves_comes_back_and_plays_again_and_mary_is_replaced(tmp_path):
    from pbem.mail import away
    game = Judge1667(tmp_path / "j.db", "stand-in back by mail 1667")
    judge.attach(game.store)
    password = game.passwords["lothar"]
    # lothar leaves: one forced default and the stand-in has his seat; it answers at once
    bots_until(game, lambda s: "lothar" in s.standing_in and stand_in_moves(game))
    assert not [w for w in game.session().owed() if w[0] == "lothar" and w[1] != "reveal"]
    # a move of his now is refused in one line (he owes nothing), and changes nothing
    before = game.frozen()
    answer = game.send("lothar", f"password {password}\npeek 1,2")
    assert not answer.lines[0]["ok"] and "\n" not in answer.lines[0]["text"], answer.lines
    assert game.frozen()[0] == before[0]
    # he is back
    answer = game.send("lothar", f"password {password}\nback")
    assert answer.lines[0]["ok"] and answer.lines[0]["text"].startswith("your seat is yours again"), answer.lines
    moved = stand_in_moves(game)
    # mary's seat passes to maria
    away.replace(game.store, "g1", "mary", "maria@example.org", at="2030-01-03T10:00:00Z", reason="mary left")
    assert game.store.events("g1")[-1].kind == "replaced"
    # lothar plays again, by mail, whatever he owes next
    bots_until(game, lambda s: any(w[0] == "lothar" and w[1] != "reveal" for w in s.owed()))
    session = game.session()
    assert not session.finished and stand_in_moves(game) == moved
    request = next(r for r in session.requests_of("lothar") if not (r.sealed and "lothar" not in session.sealed.owes_commit()))
    line = f"seal {request.default}" if request.sealed else request.default
    answer = game.send("lothar", f"password {password}\n{line}")
    assert answer.outcome == "applied" and answer.lines[0]["ok"], answer.lines
    mine = [e for e in game.store.events("g1") if e.data.get("player") == "lothar" and e.kind in ("commit", "decide")]
    assert mine[-1].data.get("by", "player") in ("player", "moderator")  # his own move (sealed on receipt)
    report = audit_store(game.store, "g1")
    assert report["ok"], report
    assert report["discretion"]["seats_taken_back"] == 1 and report["discretion"]["replacements"] == 1


def test_back_in_a_signed_game_says_how_to_take_the_seat_back(make_judge):
    """A plain 'back' cannot show who sent it in a game that takes only signed moves: the
    answer says what does take the seat back (a signed move, or the moderator's pbem back),
    not to paste a block of a move the seat may not even owe; nothing changes."""
    from pbem.protocol.signing import generate_keypair
    keys = {p: generate_keypair() for p in ("ani", "alex", "frank", "lothar")}
    game = make_judge(signed_keys={p: k[1] for p, k in keys.items()}, deadline_seconds=DAY, stand_in_after=1)
    judge.attach(game.store)
    commands.nmr(game.store, "g1", "lothar", force=True, at="2030-01-01T10:01:00Z")
    assert "lothar" in game.session().standing_in
    before = game.frozen()[0]
    answer = game.send("lothar", "back")
    assert answer.lines == [{"line": "back", "ok": False, "text": (
        "this game takes moves only as signed blocks, so a plain 'back' cannot show that it comes from you: "
        "any signed move of yours takes the seat back (pbem seal / pbem decide --key YOUR.key, the block "
        "pasted into your mail), or ask the moderator to end the stand-in (pbem back g1 lothar)")}]
    assert game.frozen()[0] == before and "lothar" in game.session().standing_in


def _owed_line(game, player: str, since: int) -> str:
    rows = [r for r in game.outbox() if r["id"] > since and r["recipient"] == f"{player}@example.org"]
    text = "\n".join(r["body_text"] for r in rows)
    return text.split("You owe: ")[1].split("\n\n")[0]


def test_back_with_the_stand_in_s_choice_sealed_the_private_message_says_who_reveals_it(make_judge):
    """After 'back', the stand-in's sealed choice for the open step stands: the player's
    private message says so, that the judge reveals it, and how to seal a new one instead,
    never 'then send your reveal' (the player has no salt). A choice the judge sealed on
    receipt likewise needs no reveal from the player."""
    game = make_judge(deadline_seconds=DAY, stand_in_after=1)
    judge.attach(game.store)
    commands.nmr(game.store, "g1", "lothar", force=True, at="2030-01-01T10:01:00Z")
    for player in ("ani", "alex", "frank"):
        session = game.session()
        commands.commit_for_player(game.store, "g1", player, session.rules.default(session.state, player, "select"),
                                   at="2030-01-01T10:02:00Z")
    step = game.session().sealed
    assert step is not None and step.commits["lothar"]["by"] == "stand-in"  # the stand-in sealed step 2 at once
    since = game.outbox()[-1]["id"]
    answer = game.send("lothar", f"password {game.passwords['lothar']}\nback\nprivate")
    assert [line["ok"] for line in answer.lines] == [True, True]
    owed = _owed_line(game, "lothar", since)
    assert "then send your reveal" not in owed, owed
    assert ("the stand-in sealed a choice for your seat in this step, and the judge reveals it once every "
            "commitment is in. You may seal a new choice now: it replaces the stand-in's while commitments are "
            "still coming in") in owed, owed
    assert "Send seal CHOICE, CHOICE exactly one of: " in owed, owed
    # a choice the judge sealed on receipt: nothing more to send
    session = game.session()
    since = game.outbox()[-1]["id"]
    game.send("ani", f"password {game.passwords['ani']}\nseal {session.rules.default(session.state, 'ani', 'select')}"
                     f"\nprivate")
    owed = _owed_line(game, "ani", since)
    assert "then send your reveal" not in owed, owed
    assert ("the judge sealed your choice on receipt and reveals it once every commitment is in; nothing more is "
            "needed from you") in owed, owed
