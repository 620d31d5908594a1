"""Deadlines by mail (pbem.mail.deadlines): reminders, defaults and late notices, each once,
at the moment the clock (a parameter, never the wall clock) says."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from pbem.mail import addresses, deadlines
from pbem.protocol import commands, loading
from pbem.protocol.errors import Refused

DAY = 86400
HOUR = 3600


def when(hours: float, start: str = "2030-01-01T10:00:00Z") -> str:
    moment = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ") + timedelta(hours=hours)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def timed(make_judge, fixed_seed):
    """g1 started at 2030-01-01 10:00 UTC: a 24h deadline, reminders 6h before, 1h of grace.
    The server seed is fixed: the dice decide whether a step's last choice ends the step (and
    so whether a summary goes out); a random seed once gave a selection that left the step
    open, and no summary, about once in a thousand runs."""
    fixed_seed("deadlines")

    def make(on_late="default", remind=6 * HOUR, grace=HOUR, **kw):
        game = make_judge(deadline_seconds=DAY, deadlines={"remind": remind, "grace": grace, "on_late": on_late}, **kw)
        return game
    return make


def seal(game, player, at):
    session = game.session()
    choice = session.rules.default(session.state, player, "select")
    commands.commit_for_player(game.store, "g1", player, choice, at=at)


def reminders(game) -> list[tuple]:
    return game.store.conn.execute("select player, round, step, kind, stage from mail_reminders order by player").fetchall()


def everything(game) -> tuple:
    """The log, the outbox and the reminders: what a no-op tick must leave as it was."""
    return game.frozen() + (json.dumps(reminders(game)),)


def test_reminders_go_out_when_the_window_opens_and_only_once(timed):
    game = timed()
    assert deadlines.tick(game.store, when(17.99)) == []
    acts = deadlines.tick(game.store, when(18))
    assert sorted(a.player for a in acts) == ["alex", "ani", "frank", "lothar"]
    assert {(a.action, a.kind, a.round, a.step, a.due) for a in acts} == {("reminded", "commit", 1, 1, when(24))}
    sent = game.outbox("reminder")
    assert sorted(r["recipient"] for r in sent) == [f"{p}@example.org" for p in ("alex", "ani", "frank", "lothar")]
    body = sent[0]["body_text"]
    assert body.startswith("REMINDER: your sealed choice in game g1 (round 1, step 1) is due 2030-01-02 10:00:00 UTC.")
    assert "If nothing has arrived by 2030-01-02 11:00:00 UTC (the deadline and 1h of grace)" in body
    assert "Your roll" in body  # the private message follows, with everything needed to answer
    assert sent[0]["subject"] == "[g1] reminder: your sealed choice (round 1, step 1) is due 2030-01-02 10:00 UTC"
    assert {a.message_id for a in acts} == {r["message_id"] for r in sent}
    before = everything(game)
    assert deadlines.tick(game.store, when(18)) == []  # the same minute again
    assert deadlines.tick(game.store, when(23.5)) == []  # later, still before the deadline
    assert everything(game) == before
    assert len(reminders(game)) == 4


def test_a_request_already_answered_is_not_reminded_of(timed):
    game = timed()
    seal(game, "ani", when(1))
    seal(game, "frank", when(2))
    acts = deadlines.tick(game.store, when(19))
    assert sorted(a.player for a in acts) == ["alex", "lothar"]
    assert {r["recipient"] for r in game.outbox("reminder")} == {"alex@example.org", "lothar@example.org"}


def test_no_reminder_without_a_reminder_time(timed):
    game = timed(remind=0)
    assert deadlines.tick(game.store, when(23.9)) == []
    assert game.outbox("reminder") == []


def test_the_default_applies_once_after_deadline_and_grace(timed):
    game = timed()
    for player in ("ani", "alex", "frank"):
        seal(game, player, when(1))
    deadlines.tick(game.store, when(18))  # lothar's reminder
    assert [e["kind"] for e in game.log()].count("nmr") == 0
    assert deadlines.tick(game.store, when(24)) == []  # due, but within the grace period
    assert deadlines.tick(game.store, when(24.99)) == []
    acts = deadlines.tick(game.store, when(25))
    assert [(a.action, a.player, a.kind, a.due) for a in acts] == [("defaulted", "lothar", "commit", when(24))]
    log = game.log()
    nmr = [e for e in log if e["kind"] == "nmr"]
    assert [(e["data"]["player"], e["at"]) for e in nmr] == [("lothar", when(25))]
    assert "forced" not in nmr[0]["data"]  # through the protocol's own deadline check
    # the step resolved: the judge's write hook queued lothar's private message and the summary
    after = [r for r in game.outbox(rendered=False) if r["queued_at"] == when(25)]
    # one message per player for the moment: the summary, then lothar's private message
    # (its model, rendered when it is sent)
    lothar = [r for r in after if r["recipient"] == "lothar@example.org"]
    assert [r["kind"] for r in lothar] == ["summary"]
    parts = json.loads(lothar[0]["render"])["parts"]
    assert [sorted(p) for p in parts] == [["spec"], ["late", "private"]]
    text = [r for r in game.outbox() if r["id"] == lothar[0]["id"]][0]["body_text"]
    assert text.index("Chain head:") < text.index("You were late") < text.index("private message for lothar")
    before = everything(game)
    assert deadlines.tick(game.store, when(25)) == []  # run twice at the same time: nothing more
    assert everything(game) == before


def test_a_late_tick_defaults_without_reminding_first(timed):
    game = timed()
    for player in ("ani", "alex", "frank"):
        seal(game, player, when(1))
    acts = deadlines.tick(game.store, when(40))  # cron was down for a day
    assert [(a.action, a.player) for a in acts] == [("defaulted", "lothar")]
    assert game.outbox("reminder") == []


def test_a_reminder_says_when_the_default_applies(timed):
    game = timed()
    acts = deadlines.tick(game.store, when(19))
    assert {a.action for a in acts} == {"reminded"}
    body = game.outbox("reminder")[0]["body_text"]
    assert "is due 2030-01-02 10:00:00 UTC" in body and "by 2030-01-02 11:00:00 UTC" in body


@pytest.mark.parametrize("hours", [21, 23.99, 24, 24.5])
def test_a_reminder_whose_moment_has_passed_is_not_sent_near_the_deadline(timed, hours):
    """With --remind 6h, a reminder goes out from 6h to 3h before the deadline; a tick that
    comes later (the judge was down) sends none, in the grace period neither."""
    game = timed()
    before = everything(game)
    assert deadlines.tick(game.store, when(hours)) == []
    assert everything(game) == before


def test_a_reminder_goes_out_until_half_the_reminder_time_is_left(timed):
    game = timed()
    assert {a.action for a in deadlines.tick(game.store, when(20.99))} == {"reminded"}



def test_a_game_that_waits_never_defaults_and_tells_the_late_player_once(timed):
    game = timed(on_late="wait")
    for player in ("ani", "alex", "frank"):
        seal(game, player, when(1))
    deadlines.tick(game.store, when(18))
    assert "This game waits for late players" in game.outbox("reminder")[0]["body_text"]
    acts = deadlines.tick(game.store, when(25))
    assert [(a.action, a.player, a.kind) for a in acts] == [("told late", "lothar", "commit")]
    notice = game.outbox("reminder")[-1]
    assert notice["recipient"] == "lothar@example.org" and notice["body_text"].startswith("LATE: your sealed choice")
    assert notice["subject"].startswith("[g1] late: ")
    before = everything(game)
    for hours in (25, 26, 24 * 30):
        assert deadlines.tick(game.store, when(hours)) == []
    assert everything(game) == before
    kinds = [e["kind"] for e in game.log()]
    assert "nmr" not in kinds and "default" not in kinds
    assert ("lothar", 1, 1, "commit", "late") in reminders(game)


def test_a_late_reveal_is_defaulted_on_its_own_clock(timed):
    """Everyone committed themselves (salts on their machines); lothar never reveals."""
    game = timed(remind=0)
    salts = {}
    for player in ("ani", "alex", "frank", "lothar"):
        sealed = commands.seal(game.session(), player, game.session().rules.default(game.session().state, player, "select"))
        commands.commit(game.store, "g1", player, sealed["commitment"], at=when(2))
        salts[player] = sealed
    for player in ("ani", "alex", "frank"):
        commands.reveal(game.store, "g1", player, salts[player]["choice"], salts[player]["salt"], at=when(3))
    assert deadlines.tick(game.store, when(26)) == []  # the reveal was owed from 2h on: due at 26h, grace to 27h
    acts = deadlines.tick(game.store, when(27))
    assert [(a.action, a.player, a.kind, a.due) for a in acts] == [("defaulted", "lothar", "reveal", when(26))]
    last = [e for e in game.log() if e["kind"] == "default"][-1]
    assert last["data"]["player"] == "lothar" and last["data"]["reason"] == "no reveal (NMR)"


def test_a_failure_while_queueing_leaves_neither_the_event_nor_the_reminder(timed):
    game = timed()
    for player in ("ani", "alex", "frank"):
        seal(game, player, when(1))
    with game.store.transaction():  # an address that cannot be mailed (written past the checks)
        game.store.conn.execute("update mail_players set address = 'lothar at example' where player = 'lothar'")
    before = everything(game)
    acts = deadlines.tick(game.store, when(18))
    assert [(a.action, a.player) for a in acts] == [("failed", "lothar")] and "lothar at example" in acts[0].error
    assert everything(game) == before  # no reminder queued, none recorded
    acts = deadlines.tick(game.store, when(25))
    assert [(a.action, a.player) for a in acts] == [("failed", "lothar")]
    assert everything(game) == before  # the default's event rolled back with its mail
    with game.store.transaction():
        game.store.conn.execute("update mail_players set address = 'lothar@example.org' where player = 'lothar'")
    assert [(a.action, a.player) for a in deadlines.tick(game.store, when(25))] == [("defaulted", "lothar")]


def test_only_the_named_game_and_a_game_without_mail_is_refused(timed, tmp_path):
    game = timed()
    commands.create_game(game.store, "quiet", "tortuga", ["a", "b"], {}, deadline_seconds=HOUR, start=True,
                         at=when(0))
    with pytest.raises(Refused, match="has no addresses"):
        deadlines.tick(game.store, when(30), "quiet")
    assert [e.kind for e in game.store.events("quiet")] == ["created", "started"]
    assert deadlines.tick(game.store, when(30)) != []  # g1's players are all late
    assert [e.kind for e in game.store.events("quiet")] == ["created", "started"]  # never touched


def test_settings_are_checked_and_a_refusal_changes_nothing(timed, make_judge):
    game = timed()
    assert deadlines.settings(game.store, "g1") == {"game": "g1", "deadline_seconds": DAY, "remind_seconds": 6 * HOUR,
                                                    "grace_seconds": HOUR, "on_late": "default",
                                                    "player_summaries": True, "hold_answers_seconds": 600}
    with pytest.raises(Refused, match="give less than 1d"):
        deadlines.configure(game.store, "g1", remind=DAY)
    with pytest.raises(Refused, match="use default .* or wait"):
        deadlines.configure(game.store, "g1", on_late="never")
    assert deadlines.settings(game.store, "g1")["remind_seconds"] == 6 * HOUR
    deadlines.configure(game.store, "g1", on_late="wait")
    assert deadlines.settings(game.store, "g1")["remind_seconds"] == 6 * HOUR  # the others kept
    plain = make_judge()  # no deadline
    with pytest.raises(Refused, match="has no deadline"):
        deadlines.configure(plain.store, "g1", remind=HOUR)
    assert deadlines.tick(plain.store, when(24 * 400)) == []


def test_times_are_shown_in_utc_and_in_the_players_zone(timed):
    game = timed()
    addresses.register(game.store, "g1", "ani", "ani@example.org", at=when(1), tz="Europe/Prague")
    deadlines.tick(game.store, when(18))
    mine = [r for r in game.outbox("reminder") if r["recipient"] == "ani@example.org"][0]["body_text"]
    assert "is due 2030-01-02 10:00:00 UTC (2030-01-02 11:00:00 CET, Europe/Prague)." in mine
    assert "Due 2030-01-02 10:00:00 UTC (2030-01-02 11:00:00 CET, Europe/Prague)." in mine  # the private message
    theirs = [r for r in game.outbox("reminder") if r["recipient"] == "alex@example.org"][0]["body_text"]
    assert "Due 2030-01-02 10:00:00 UTC." in theirs and "Prague" not in theirs


def test_summer_time_is_respected(make_judge):
    game = make_judge(at="2030-07-01T10:00:00Z", deadline_seconds=DAY, deadlines={"remind": 6 * HOUR})
    addresses.register(game.store, "g1", "ani", "ani@example.org", at="2030-07-01T10:05:00Z", tz="Europe/Prague")
    deadlines.tick(game.store, "2030-07-02T04:00:00Z")
    mine = [r for r in game.outbox("reminder") if r["recipient"] == "ani@example.org"][0]["body_text"]
    assert "is due 2030-07-02 10:00:00 UTC (2030-07-02 12:00:00 CEST, Europe/Prague)." in mine
    assert "Due 2030-07-02 10:00:00 UTC (2030-07-02 12:00:00 CEST, Europe/Prague)." in mine


def test_an_unknown_time_zone_is_refused_and_changes_nothing(game):
    before = game.frozen(), game.store.conn.execute("select * from mail_players order by player").fetchall()
    for zone in ("Mars/Olympus_Mons", "../../etc/passwd", "europe/prague", ""):
        if not zone:
            continue
        with pytest.raises(Refused, match="is not a time zone known here; give an IANA name such as Europe/Prague"):
            addresses.register(game.store, "g1", "ani", "ani@example.org", at=when(1), tz=zone)
    assert (game.frozen(), game.store.conn.execute("select * from mail_players order by player").fetchall()) == before


def test_shown_times_across_the_change_to_summer_time():
    from pbem.render.times import shown
    # Prague moves from CET (+1) to CEST (+2) at 01:00 UTC on the last Sunday of March
    assert shown("2030-03-31T00:59:59Z", "Europe/Prague") == "2030-03-31 00:59:59 UTC (2030-03-31 01:59:59 CET, Europe/Prague)"
    assert shown("2030-03-31T01:00:00Z", "Europe/Prague") == "2030-03-31 01:00:00 UTC (2030-03-31 03:00:00 CEST, Europe/Prague)"
    assert shown("2030-01-01T23:30:00Z", "America/New_York").endswith("(2030-01-01 18:30:00 EST, America/New_York)")
    assert shown("2030-01-01T23:30:00Z", "Asia/Tokyo").endswith("(2030-01-02 08:30:00 JST, Asia/Tokyo)")
    assert shown("2030-01-01T23:30:00Z", "UTC") == shown("2030-01-01T23:30:00Z") == "2030-01-01 23:30:00 UTC"


def test_late_players_defaulted_in_one_tick_get_one_message(timed):
    game = timed(remind=0, grace=0)
    seal(game, "ani", when(1))
    acts = deadlines.tick(game.store, when(24.5))
    assert [(a.action, a.player) for a in acts] == [("defaulted", p) for p in ("alex", "frank", "lothar")]
    # one tick, one message to alex: the summary (his default applied, the step resolved)
    # and his private message for the next step, not one message per default
    told = [r for r in game.outbox(rendered=False)
            if r["queued_at"] == when(24.5) and r["recipient"] == "alex@example.org"]
    assert len(told) == 1 and told[0]["kind"] == "summary"
    from pbem.mail.letters import render_row
    text = render_row(game.store, "g1", told[0]["render"], {})[0]
    assert "alex: no commitment in time; the documented default" in text
    assert text.index("no commitment in time") < text.index("You were late: the judge applied") < text.index(
        "private message for alex")


def test_each_failure_is_said_once_per_tick_and_the_rest_goes_on(timed):
    game = timed(remind=0, grace=0)
    with game.store.transaction():  # ani cannot be mailed, so her default (and its mail) fails
        game.store.conn.execute("update mail_players set address = 'ani at example' where player = 'ani'")
    acts = deadlines.tick(game.store, when(24))
    # the game is read again after each default; ani's failure is said once all the same
    assert [(a.action, a.player) for a in acts] == [("failed", "ani"), ("defaulted", "alex"), ("defaulted", "frank"),
                                                    ("defaulted", "lothar")]
    assert [e["data"]["player"] for e in game.log() if e["kind"] == "nmr"] == ["alex", "frank", "lothar"]


def test_a_game_that_cannot_be_read_holds_up_no_other(timed):
    game = timed(remind=0, grace=0)
    addresses.create_game(game.store, "g2", "tortuga", ["ann", "bob"], {}, {"ann": "ann@example.org"}, None,
                          at=when(0), deadline_seconds=DAY, start=True)
    with game.store.transaction():  # g1's log damaged, and no snapshot to read it from
        game.store.conn.execute("update events set body = 'x' where game = 'g1' and seq = 2")
        game.store.conn.execute("delete from snapshots where game = 'g1'")
    acts = deadlines.tick(game.store, when(24))
    assert [(a.game, a.action) for a in acts][0] == ("g1", "failed") and "unreadable body" in acts[0].error
    assert [(a.game, a.action, a.player) for a in acts[1:]] == [("g2", "defaulted", "ann"), ("g2", "defaulted", "bob")]


def test_the_status_in_an_answer_shows_due_times_in_the_readers_zone(timed):
    game = timed()
    addresses.register(game.store, "g1", "ani", "ani@example.org", at=when(0), tz="Asia/Tokyo")
    game.send("ani", "status")
    answer = game.outbox("answer")[-1]["body_text"]
    assert "ani (commit, due 2030-01-02 10:00 UTC (2030-01-02 19:00 JST, Asia/Tokyo))" in answer
    assert "alex (commit, due 2030-01-02 10:00 UTC (2030-01-02 19:00 JST, Asia/Tokyo))" in answer  # ani's clock
    game.send("alex", "status")
    theirs = game.outbox("answer")[-1]["body_text"]
    assert "ani (commit, due 2030-01-02 10:00 UTC)" in theirs and "JST" not in theirs


def test_tick_reads_only_games_with_something_due_and_without_snapshots_does_the_same(timed, monkeypatch):
    """The snapshot at the head notes the earliest deadline: a game with nothing due (or
    finished) is passed over unread. Snapshots are a cache: without them every game is read,
    and the same reminders go out."""
    game = timed()
    addresses.create_game(game.store, "g2", "tortuga", ["ann", "bob"], {}, {"ann": "ann@example.org"}, None,
                          at=when(10), deadline_seconds=DAY, start=True)  # due 10 hours after g1
    read = []
    real = loading.load

    def load(store, name, *args, **kwargs):
        read.append(name)
        return real(store, name, *args, **kwargs)
    monkeypatch.setattr(loading, "load", load)
    assert deadlines.tick(game.store, when(17.99)) == [] and read == []  # nothing due yet: nothing read
    acts = deadlines.tick(game.store, when(18))
    assert {a.game for a in acts} == {"g1"} and set(read) == {"g1"}
    with game.store.transaction():
        game.store.conn.execute("delete from snapshots")
    read.clear()
    assert deadlines.tick(game.store, when(18.5)) == []
    assert set(read) == {"g1", "g2"}  # no snapshot says what is due: each game is read
    acts = deadlines.tick(game.store, when(34))
    assert sorted((a.game, a.action, a.player) for a in acts if a.game == "g2") == [
        ("g2", "defaulted", "ann"), ("g2", "defaulted", "bob")]
