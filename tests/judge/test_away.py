"""Pause, resume, extensions and replacements, one by one: what each changes, what each
mails, and the bad input each refuses in one line with the log (and the outbox) unchanged."""

from __future__ import annotations

import json
import re

import pytest

from pbem.mail import away, deadlines, judge
from pbem.protocol import away as absence, commands, offline, reports, submissions
from pbem.protocol.errors import Refused
from pbem.store.audit import audit_store, report_text

DAY, HOUR = 86400, 3600


def when(hours: float) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def timed(make_judge):
    """g1 (Tortuga, four players with addresses) started 2030-01-01 10:00 UTC, a 24h deadline,
    reminders 6h before it."""
    def make(**kw):
        game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "default"}, **kw)
        judge.attach(game.store)
        return game
    return make


def dues(game) -> dict:
    return {w["player"]: w.get("due") for w in reports.waiting(game.session())}


def refused(game, call, match: str) -> None:
    """``call`` is refused with a one-line message matching ``match``; nothing changes."""
    before = game.frozen()
    with pytest.raises(Refused, match=match) as caught:
        call()
    assert "\n" not in str(caught.value)
    assert game.frozen() == before


# ---------------------------------------------------------------------- pause and resume

def test_a_pause_stops_every_deadline_and_the_resume_moves_them_on_by_its_length(timed):
    game = timed()
    assert set(dues(game).values()) == {when(24)}
    sent = len(game.outbox())
    absence.pause(game.store, "g1", "summer holidays", at=when(2))
    notices = game.outbox()[sent:]
    assert sorted(r["recipient"] for r in notices) == sorted(
        [f"{p}@example.org" for p in ("ani", "alex", "frank", "lothar")] + ["table@lists.example.org"])
    assert all(r["kind"] == "notice" and "summer holidays" in r["body_text"] and "no deadline runs" in r["body_text"]
               for r in notices)
    status = reports.status(game.session(), game.store.head("g1"))
    assert status["paused"] == {"since": when(2), "by": "moderator", "reason": "summer holidays"}
    assert all(w.get("paused") and "due" not in w for w in status["waiting"])
    # nothing runs while paused: no reminder, no default, however late it gets
    before = game.frozen()
    for hours in (18, 24, 25, 48, 74):
        assert deadlines.tick(game.store, when(hours)) == []
    assert game.frozen() == before
    refused(game, lambda: commands.nmr(game.store, "g1", "ani", at=when(30)), "is paused")
    # a move that arrives is taken
    assert game.send("ani", f"password {game.passwords['ani']}\nseal A").outcome == "applied"
    sent = len(game.outbox())
    absence.resume(game.store, "g1", at=when(74))
    assert dues(game) == {p: when(24 + 72) for p in ("alex", "frank", "lothar")}  # paused 72 hours
    mailed = game.outbox()[sent:]
    private = [r for r in mailed if r["kind"] == "private"]
    assert sorted(r["recipient"] for r in private) == [f"{p}@example.org" for p in ("alex", "ani", "frank", "lothar")]
    assert "every open deadline moved on by the length of the pause" in private[0]["body_text"]
    assert [r["recipient"] for r in mailed if r["kind"] == "notice"] == ["table@lists.example.org"]
    assert [a.player for a in deadlines.tick(game.store, when(96 - 6))] == ["alex", "frank", "lothar"]  # reminded
    kinds = [e["kind"] for e in game.log()]
    assert kinds.count("paused") == 1 and kinds.count("resumed") == 1


def test_a_request_opened_during_the_pause_gets_its_whole_deadline_from_the_resume(timed):
    game = timed()
    absence.pause(game.store, "g1", "a holiday", at=when(1))
    game.minute = 120  # the mails arrive an hour into the pause
    for player in ("ani", "alex", "frank", "lothar"):
        game.send(player, f"password {game.passwords[player]}\nseal A")
    opened = {w["player"]: w["since"] for w in reports.waiting(game.session())}
    assert opened and all(since > when(1) for since in opened.values())
    absence.resume(game.store, "g1", at=when(50))
    assert set(dues(game).values()) == {when(50 + 24)}


def test_resume_until_sets_every_open_deadline(timed):
    game = timed()
    absence.pause(game.store, "g1", "a holiday", at=when(1))
    absence.resume(game.store, "g1", until=when(100), at=when(2))
    assert set(dues(game).values()) == {when(100)}
    refused(game, lambda: absence.pause(game.store, "g1", "", at=when(3)), "needs a reason")


def test_bad_pauses_and_resumes_are_refused(timed):
    game = timed()
    refused(game, lambda: absence.resume(game.store, "g1", at=when(1)),
            r"^game g1 is not paused, so there is nothing to resume \(pbem pause g1 --reason TEXT pauses it\)$")
    absence.pause(game.store, "g1", "a holiday", at=when(1))
    refused(game, lambda: absence.pause(game.store, "g1", "again", at=when(2)), "already paused .* pbem resume g1")
    refused(game, lambda: absence.resume(game.store, "g1", until=when(0.5), at=when(2)), "not later than now")
    absence.resume(game.store, "g1", at=when(3))
    commands.reveal_seed(game.store, "g1", force=True, at=when(4))
    refused(game, lambda: absence.pause(game.store, "g1", "too late", at=when(5)),
            "game g1 is over, so it cannot be paused; only a game in play can")


# ---------------------------------------------------------------------- extensions

def test_a_player_extends_their_own_deadline_by_mail_once(timed):
    game = timed()
    game.store.conn.execute("update mail_players set tz = 'Europe/Prague' where player = 'ani'")
    game.store.conn.commit()
    result = game.send("ani", f"password {game.passwords['ani']}\nextend 24h")
    assert result.outcome == "applied"
    assert result.lines[0]["text"] == ("extension granted: your select (round 1, step 1) is now due "
                                       "2030-01-03 10:00:00 UTC (2030-01-03 11:00:00 CET, Europe/Prague)")
    assert dues(game) == {"ani": when(48), "alex": when(24), "frank": when(24), "lothar": when(24)}
    event = game.log()[-1]
    assert event["kind"] == "extended" and event["data"] == {
        "by": "player", "player": "ani", "reason": "asked by mail",
        "requests": [{"player": "ani", "round": 1, "step": 1, "kind": "select", "from": when(24), "until": when(48)}]}
    # the status (by mail and on the command line) shows the new time
    status = game.send("ani", "status").lines[0]["text"]
    assert "ani (commit, due 2030-01-03 10:00 UTC (2030-01-03 11:00 CET, Europe/Prague))" in status
    # once per game, by default
    before = game.frozen()[0]
    again = game.send("ani", f"password {game.passwords['ani']}\nextend 1h")
    assert again.lines[0] == {"line": "extend 1h", "ok": False, "text": "ani has used the extensions this game "
                              "allows a player (1); ask the moderator instead"}
    assert game.frozen()[0] == before


@pytest.mark.parametrize("body, reason", [
    ("extend 25h", "a player may extend a deadline by at most 24h in this game; ask for 24h or less, or ask the moderator"),
    ("extend soon", "extend soon: a duration is a whole number of minutes, hours or days from 1m to 365d, "
                    "like 12h or 1d, e.g. extend 24h"),
    # a duration written in words or with a space is an extend all the same, answered, not read past as chat
    ("extend 1 day", "extend 1 day: a duration is a whole number of minutes, hours or days from 1m to 365d, "
                     "like 12h or 1d, e.g. extend 24h"),
    ("Extend 24 h", "extend 24 h: a duration is a whole number of minutes, hours or days from 1m to 365d, "
                    "like 12h or 1d, e.g. extend 24h"),
    ("extend -5 hours", "extend -5 hours: a duration is a whole number of minutes, hours or days from 1m to 365d, "
                        "like 12h or 1d, e.g. extend 24h"),
])
def test_an_extension_beyond_the_allowance_is_refused(timed, body, reason):
    game = timed()
    before = game.frozen()[0]
    result = game.send("alex", f"password {game.passwords['alex']}\n{body}")
    assert result.lines[0]["text"] == reason and not result.lines[0]["ok"]
    assert game.frozen()[0] == before


def test_extend_followed_by_words_is_chat_not_an_extension(timed):
    game = timed()
    result = game.send("alex", f"password {game.passwords['alex']}\nstatus\nextend my thanks to everyone")
    assert [line["line"] for line in result.lines if not line.get("note")] == ["status"]


def test_an_extension_after_the_deadline_is_refused(timed):
    game = timed()
    game.minute = 24 * 60 + 5  # the mail arrives after the deadline
    before = game.frozen()[0]
    result = game.send("frank", f"password {game.passwords['frank']}\nextend 2h")
    assert result.lines[0]["text"] == ("the deadline of frank's select passed at 2030-01-02 10:00:00 UTC; "
                                       "an extension must come before it (after it, only the moderator can "
                                       "give a new deadline)")
    assert game.frozen()[0] == before
    # the moderator may give the overdue request a new deadline, but one that lies ahead
    refused(game, lambda: absence.extend(game.store, "g1", "frank", seconds=HOUR, at=when(25)),
            r"passed at 2030-01-02T10:00:00Z; a new deadline must be after now \(2030-01-02T11:00:00Z\)")


def test_the_moderators_new_deadline_within_the_grace_period_keeps_the_default_away(make_judge):
    game = make_judge(deadline_seconds=DAY, deadlines={"remind": 0, "grace": 2 * HOUR, "on_late": "default"})
    judge.attach(game.store)
    absence.extend(game.store, "g1", "frank", until=when(30), reason="frank mailed that he is ill", at=when(25))
    acts = deadlines.tick(game.store, when(26.5))  # past the old deadline and its grace: the others defaulted
    assert sorted(a.player for a in acts if a.action == "defaulted") == ["alex", "ani", "lothar"]
    assert [e["data"]["player"] for e in game.log() if e["kind"] == "nmr"] == ["ani", "alex", "lothar"]
    assert dues(game).get("frank") == when(30)
    assert [a.player for a in deadlines.tick(game.store, when(32)) if a.action == "defaulted"] == ["frank"]


def test_the_moderator_gives_an_overdue_request_a_new_deadline_in_a_game_that_waits(make_judge):
    game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "wait"})
    judge.attach(game.store)
    acts = deadlines.tick(game.store, when(30))  # a game that waits: late notices, nobody defaulted
    assert {a.action for a in acts} == {"told late"}
    assert [e for e in game.log() if e["kind"] in ("nmr", "default")] == []
    absence.extend(game.store, "g1", "frank", until=when(48), reason="frank wrote that he was ill", at=when(30))
    assert dues(game)["frank"] == when(48) and dues(game)["ani"] == when(24)
    [event] = [e for e in game.log() if e["kind"] == "extended"]
    assert event["data"]["by"] == "moderator" and event["data"]["requests"][0]["from"] == when(24)
    report = audit_store(game.store, "g1")
    assert report["ok"] and report["discretion"] == {"no_client_seed": True, "extensions": 1,
                                                     "extensions_by_moderator": 1, "extensions_after_deadline": 1}
    assert "1 extension (1 by the moderator, 1 after the deadline had passed)" in report_text(report)


def test_the_moderator_extends_named_deadlines_and_each_player_is_mailed_the_new_time(timed):
    game = timed()
    sent = len(game.outbox())
    outcome = {}
    absence.extend(game.store, "g1", "lothar", seconds=2 * DAY, reason="lothar is travelling", at=when(3),
                      outcome=outcome)
    assert [(r["player"], r["until"]) for r in outcome["requests"]] == [("lothar", when(72))]
    assert dues(game) == {"ani": when(24), "alex": when(24), "frank": when(24), "lothar": when(72)}
    mailed = game.outbox()[sent:]
    assert [r["recipient"] for r in mailed] == ["lothar@example.org"]
    assert mailed[0]["body_text"].startswith("EXTENDED: your select decision (round 1, step 1) is now due "
                                             "2030-01-04 10:00:00 UTC, instead of 2030-01-02 10:00:00 UTC "
                                             "(the moderator's decision: lothar is travelling).")
    # the moderator's extensions spend no player's allowance; --until moves everyone
    absence.extend(game.store, "g1", until=when(80), at=when(4))
    assert set(dues(game).values()) == {when(80)}
    refused(game, lambda: absence.extend(game.store, "g1", "ani", until=when(79), at=when(5)),
            "an extension moves a deadline later")
    refused(game, lambda: absence.extend(game.store, "g1", "nobody", seconds=HOUR, at=when(5)),
            "no player 'nobody' in game g1; players: ani, alex, frank, lothar")
    # a late default waits for the new deadline
    refused(game, lambda: commands.nmr(game.store, "g1", "ani", at=when(30)),
            r"ani's deadline has not passed \(due 2030-01-04T18:00:00Z\)")


def test_a_game_can_allow_more_or_no_extensions(make_judge):
    game = make_judge(deadline_seconds=DAY, extensions={"count": 2, "max_seconds": 2 * DAY})
    assert game.send("ani", f"password {game.passwords['ani']}\nextend 48h").outcome == "applied"
    assert game.send("ani", f"password {game.passwords['ani']}\nextend 1h").outcome == "applied"
    assert game.send("ani", f"password {game.passwords['ani']}\nextend 1h").outcome == "refused"
    none = make_judge(deadline_seconds=DAY, extensions={"count": 0})
    assert "allows a player (0)" in none.send("ani", f"password {none.passwords['ani']}\nextend 1h").lines[0]["text"]


# ---------------------------------------------------------------------- replacement

def test_a_seat_changes_hands(timed):
    game = timed()
    game.send("lothar", f"password {game.passwords['lothar']}\nseal B")  # judge-sealed: stays binding
    last = game.outbox()[-1]["id"]
    done = away.replace(game.store, "g1", "lothar", "Maria@Example.org", at=when(2), reason="lothar left")
    assert done["address"] == "maria@example.org" and done["password_sent"]
    # what still waited for lothar's address is dropped, but the notice that his seat passed on
    mailed = [r for r in game.outbox() if r["id"] > last]
    assert [r["subject"] for r in game.outbox() if r["recipient"] == "lothar@example.org" and r["state"] == "queued"] \
        == ["[g1] your seat lothar has passed on"]
    welcome = next(r for r in mailed if r["recipient"] == "maria@example.org")
    password = re.search(r"Your mail password for this game: (\S+)", welcome["body_text"]).group(1)
    assert "private message for lothar" in welcome["body_text"] and "Your roll" in welcome["body_text"]
    others = sorted(r["recipient"] for r in mailed if r["kind"] == "notice")
    assert others == ["alex@example.org", "ani@example.org", "frank@example.org", "lothar@example.org",
                      "table@lists.example.org"]
    assert not [r for r in mailed if "maria" in r["body_text"].lower() and r["recipient"] != "maria@example.org"]
    event = game.log()[-1]
    assert event["kind"] == "replaced" and event["data"] == {"seat": "lothar", "by": "moderator",
                                                             "reason": "lothar left"}
    # the old person is refused, whatever password they send; nothing changes
    before = game.frozen()[0]
    old = game.send("lothar", f"password {game.passwords['lothar']}\nseal C")
    assert old.outcome == "refused: former player"
    answer = game.outbox()[-1]
    assert answer["recipient"] == "lothar@example.org"
    assert "the seat lothar in game g1 is played by someone else" in answer["body_text"]
    assert game.frozen()[0] == before
    # the new person plays with their own password, and not with the old one
    assert game.send("maria@example.org", f"password {game.passwords['lothar']}\nseal C").outcome == \
        "refused: wrong password"
    assert game.send("maria@example.org", f"password {password}\nseal C").outcome == "applied"
    for player in ("ani", "alex", "frank"):
        game.send(player, f"password {game.passwords[player]}\nseal A")
    reveals = {e["data"]["player"]: e["data"]["choice"] for e in game.log() if e["kind"] == "reveal"}
    assert reveals["lothar"] == "C"
    report = audit_store(game.store, "g1")
    assert report["ok"] and report["discretion"] == {"no_client_seed": True, "replacements": 1}
    assert "1 replacement" in report_text(report)


def test_bad_replacements_are_refused(timed):
    game = timed()
    refused(game, lambda: away.replace(game.store, "g1", "bob", "bob@example.org", at=when(1)),
            r"^no player 'bob' in game g1; players: ani, alex, frank, lothar$")
    refused(game, lambda: away.replace(game.store, "g1", "lothar", "frank@example.org", at=when(1)),
            r"^frank@example.org already plays frank in game g1; the new player of lothar needs an address of their own$")
    refused(game, lambda: away.replace(game.store, "g1", "lothar", "lothar@example.org", at=when(1)),
            "already plays lothar")
    refused(game, lambda: away.replace(game.store, "g1", "lothar", None, at=when(1)),
            "give the new player's address")
    refused(game, lambda: away.replace(game.store, "g1", "lothar", "not an address", at=when(1)),
            "not a plain email address")


def test_a_choice_the_former_player_sealed_at_home_defaults_at_the_deadline_and_the_log_says_why(timed):
    game = timed()
    session = game.session()
    sealed = commands.seal(session, "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=when(1))
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=when(2))
    for player in ("ani", "alex", "frank"):
        game.send(player, f"password {game.passwords[player]}\nseal A")
    # every commitment is in; the reveal of lothar's is owed, and its salt left with him
    assert [w["player"] for w in reports.waiting(game.session())] == ["lothar"]
    refused(game, lambda: commands.nmr(game.store, "g1", "lothar", at=when(10)), "deadline has not passed")
    actions = deadlines.tick(game.store, when(30))
    assert [(a.player, a.action) for a in actions] == [("lothar", "defaulted")]
    default = next(e for e in game.log() if e["kind"] == "default")
    assert default["data"]["reason"].startswith("no reveal: the seat's former player sealed this choice on their own "
                                                "machine and left with its salt (replaced)")


def test_in_a_signed_game_the_new_key_signs_from_the_replacement_on(make_judge, tmp_path):
    from pbem.protocol.signing import generate_keypair
    from pbem.protocol.token import context_token
    keys = {p: generate_keypair() for p in ("ani", "alex", "frank", "lothar")}
    game = make_judge(signed_keys={p: k[1] for p, k in keys.items()})
    judge.attach(game.store)
    secret, public = generate_keypair()

    def signed_seal(player, secret_key, choice="A"):
        token = context_token(game.session(), player)
        sealed = offline.seal_offline(token, choice)
        return offline.signed_blocks(sealed, secret_key)

    old_blocks = signed_seal("lothar", keys["lothar"][0])
    refused(game, lambda: away.replace(game.store, "g1", "lothar", "maria@example.org", at=when(1)),
            "takes only signed moves: give the new player's public key with --key")
    refused(game, lambda: away.replace(game.store, "g1", "lothar", "maria@example.org", key=keys["ani"][1],
                                       at=when(1)), "already registered for another seat")
    away.replace(game.store, "g1", "lothar", "maria@example.org", key=public, at=when(1))
    assert game.session().keys["lothar"] == public
    before = game.frozen()[0]
    with pytest.raises(Refused, match="not valid for their registered key"):
        submissions.submit(game.store, "g1", old_blocks["commit"], at=when(2))
    assert game.frozen()[0] == before
    reveals = []
    for player, (sk, _pk) in keys.items():
        blocks = signed_seal(player, secret if player == "lothar" else sk)
        submissions.submit(game.store, "g1", blocks["commit"], at=when(2))
        reveals.append(blocks["reveal"])
    for block in reveals:
        submissions.submit(game.store, "g1", block, at=when(3))
    # every signature checks against the key in force for its seat at its event
    report = audit_store(game.store, "g1")
    assert report["ok"], report
    exported = "".join(json.dumps(e) + "\n" for e in game.log())
    assert "maria" not in exported


def test_a_moved_deadline_gets_its_reminder_again_before_the_new_time(timed):
    game = timed()
    reminded = lambda at: sorted(a.player for a in deadlines.tick(game.store, at) if a.action == "reminded")
    assert reminded(when(18)) == ["alex", "ani", "frank", "lothar"]  # 6h before the first deadline
    absence.extend(game.store, "g1", "lothar", seconds=DAY, reason="a trip", at=when(19))
    assert reminded(when(20)) == []  # lothar's new deadline is a day away
    assert reminded(when(42)) == ["lothar"]  # 6h before it: the reminder about the new time
    assert reminded(when(42.5)) == []  # once
    body = game.outbox("reminder")[-1]["body_text"]
    assert body.startswith("REMINDER: your sealed choice in game g1 (round 1, step 1) is due 2030-01-03 10:00:00 UTC.")


def test_a_queued_reminder_about_the_old_time_is_dropped_when_the_deadline_moves(timed):
    game = timed()
    deadlines.tick(game.store, when(18))  # queued, not sent
    [old] = [r for r in game.outbox("reminder") if r["recipient"] == "lothar@example.org"]
    absence.extend(game.store, "g1", "lothar", seconds=DAY, reason="a trip", at=when(19))
    [row] = [r for r in game.outbox() if r["id"] == old["id"]]
    assert row["state"] == "dropped" and row["last_error"] == "its deadline moved"
    others = [r for r in game.outbox("reminder") if r["recipient"] != "lothar@example.org"]
    assert {r["state"] for r in others} == {"queued"}  # the others' deadlines did not move


def test_an_extension_inside_the_reminder_time_sends_no_second_reminder(timed):
    game = timed()
    deadlines.tick(game.store, when(18))
    absence.extend(game.store, "g1", "lothar", seconds=2 * HOUR, reason="an hour or two", at=when(21))
    # the new deadline (when(26)) is closer than the reminder time: the extension notice was the news
    assert [a for a in deadlines.tick(game.store, when(21.5)) if a.player == "lothar"] == []


def test_a_resume_gives_every_open_request_its_reminder_again(timed):
    game = timed()
    deadlines.tick(game.store, when(18))
    absence.pause(game.store, "g1", "a holiday", at=when(19))
    # a plain resume keeps the 5h that were left: inside the reminder time, so the resume's own
    # notice (with the new deadlines) is the news, and no second reminder follows
    absence.resume(game.store, "g1", at=when(43))
    assert dues(game)["ani"] == when(48) and deadlines.tick(game.store, when(43.5)) == []
    # a resume --until far ahead: the reminder goes again, 6h before the new deadline
    absence.pause(game.store, "g1", "another", at=when(44))
    absence.resume(game.store, "g1", until=when(96), at=when(45))
    assert deadlines.tick(game.store, when(89)) == []
    acts = deadlines.tick(game.store, when(90))
    assert sorted(a.player for a in acts if a.action == "reminded") == ["alex", "ani", "frank", "lothar"]
    assert {a.due for a in acts} == {when(96)}


def test_a_resume_of_a_game_that_waits_does_not_tell_an_overdue_player_again(make_judge):
    game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "wait"})
    judge.attach(game.store)
    assert {a.action for a in deadlines.tick(game.store, when(30))} == {"told late"}
    absence.pause(game.store, "g1", "a holiday", at=when(31))
    absence.resume(game.store, "g1", at=when(32))  # every deadline moves on by an hour: still past
    assert deadlines.tick(game.store, when(32.1)) == []
