"""Deadlines by mail as a moderator types them: new --remind/--grace/--on-late, mail settings,
address --tz, mail tick, and what status and games say about mail and late players.

The command line reads the wall clock, so the games here that must be late were created in
2020 (through the library, which takes the time as a parameter): late at any time since."""

from __future__ import annotations

import json
import sqlite3

import pytest

from pbem.mail.addresses import create_game
from pbem.store import Store
from pbem.store import outbox

PAST = "2020-01-01T00:00:00Z"


@pytest.fixture
def old_game(pbem_db):
    """'old', started in 2020 with a 1h deadline: both players are long overdue."""
    def make(addresses=True, **deadlines):
        with Store(pbem_db) as store:
            create_game(store, "old", "tortuga", ["ani", "alex"], {},
                        {"ani": "ani@example.org", "alex": "alex@example.org"} if addresses else {},
                        None, at=PAST, deadline_seconds=3600, start=True, deadlines=deadlines)
    return make


def mail_players(pbem_db) -> list:
    conn = sqlite3.connect(pbem_db)
    try:
        return conn.execute("select * from mail_players order by game, player").fetchall()
    finally:
        conn.close()


def test_new_takes_the_mail_settings_and_settings_changes_them(cli):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--deadline", "24h",
           "--remind", "6h", "--grace", "1h", "--on-late", "wait", "--now")
    assert cli.json("mail", "settings", "g1") == {"game": "g1", "deadline_seconds": 86400, "remind_seconds": 21600,
                                                  "grace_seconds": 3600, "on_late": "wait", "player_summaries": True,
                                                  "hold_answers_seconds": 600}
    held = "; an answer that only confirms waits up to 10m for the player's next message (hold-answers 10m)\n"
    assert cli.ok("mail", "settings", "g1").stdout == (
        "game g1: deadline 1d per request; a reminder 6h before; after the deadline and 1h of grace, "
        "the player is told and the game waits (on-late wait); players get every public summary "
        "(player-summaries yes)" + held)
    out = cli.ok("mail", "settings", "g1", "--remind", "12h", "--grace", "none", "--on-late", "default").stdout
    assert out == ("game g1: deadline 1d per request; a reminder 12h before; after the deadline, "
                   "the default is applied (on-late default); players get every public summary "
                   "(player-summaries yes)" + held)
    out = cli.ok("mail", "settings", "g1", "--player-summaries", "no").stdout
    assert out.endswith("; players get the final result, the list every summary (player-summaries no)" + held)
    assert cli.json("mail", "settings", "g1")["remind_seconds"] == 12 * 3600  # the others kept
    cli.refused("g1", "mail", "settings", "g1", "--player-summaries", "maybe", match="use yes")
    out = cli.ok("mail", "settings", "g1", "--hold-answers", "30m").stdout
    assert out.endswith("(hold-answers 30m)\n") and cli.json("mail", "settings", "g1")["player_summaries"] is False
    assert cli.ok("mail", "settings", "g1", "--hold-answers", "0").stdout.endswith(
        "; every mail is answered at once (hold-answers 0)\n")
    assert cli.json("mail", "settings", "g1")["hold_answers_seconds"] == 0
    cli.refused("g1", "mail", "settings", "g1", "--hold-answers", "2h", match="at most 1h")
    cli.refused("g1", "mail", "settings", "g1", "--hold-answers", "soon", code=2)
    assert cli.json("mail", "settings", "g1")["hold_answers_seconds"] == 0


def test_tick_at_a_given_time(cli):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--deadline", "24h",
           "--remind", "6h", "--now")
    due = cli.json("status", "g1")["waiting"][0]["due"]
    from pbem.protocol.times import shift
    acted = cli.json("mail", "tick", "--at", shift(due, -5 * 3600))
    assert acted["now"] == shift(due, -5 * 3600)
    assert sorted(a["action"] for a in acted["actions"]) == ["reminded", "reminded"]
    cli.refused("g1", "mail", "tick", "--at", "tomorrow", code=2, match="is not a time")  # a usage error


def test_settings_refusals_say_what_would_do_and_change_nothing(cli):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex", "--deadline", "24h", "--remind", "6h")
    before = cli.json("mail", "settings", "g1")
    cli.refused("g1", "mail", "settings", "g1", "--remind", "2d", match="give less than 1d")
    cli.refused("g1", "mail", "settings", "g1", "--on-late", "maybe", code=2, match="use default")
    cli.refused("g1", "mail", "settings", "g1", "--grace", "soon", code=2, match="--grace 'soon': give a duration")
    assert cli.json("mail", "settings", "g1") == before
    refused = cli("new", "g2", "--players", "ani,alex", "--remind", "1h")
    assert refused.exit_code == 1 and "has no deadline" in refused.stderr
    assert "g2" not in cli.json("games")["games"]  # the game was not created either


def test_address_sets_and_removes_a_time_zone_and_refuses_an_unknown_one(cli, pbem_db):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--deadline", "24h", "--now")
    out = cli.ok("address", "g1", "ani", "ani@example.org", "--tz", "Europe/Prague").stdout
    assert out == "ani in g1: ani@example.org, time zone Europe/Prague\n"
    assert "(20" in cli.ok("private", "g1", "ani").stdout.split("Due ")[1].split("\n")[0]  # both times
    before = mail_players(pbem_db), cli.json("mail", "outbox")
    reason = cli.refused("g1", "address", "g1", "ani", "ani@example.org", "--tz", "Mars/Olympus_Mons")
    assert reason == ("pbem: 'Mars/Olympus_Mons' is not a time zone known here; give an IANA name such as "
                      "Europe/Prague, America/New_York or UTC")
    assert (mail_players(pbem_db), cli.json("mail", "outbox")) == before
    assert cli.json("address", "g1", "ani", "ani@example.org", "--tz", "none")["tz"] is None
    assert "Europe/Prague" not in cli.ok("private", "g1", "ani").stdout


def test_tick_defaults_the_late_once_and_prints_a_line_each(cli, old_game):
    old_game()
    out = cli.ok("mail", "tick").stdout.splitlines()
    assert out == ["defaulted ani in old: commit (round 1, step 1) due 2020-01-01 01:00:00 UTC",
                   "defaulted alex in old: commit (round 1, step 1) due 2020-01-01 01:00:00 UTC"]
    log = cli.log("old")
    assert [e["data"]["player"] for e in log if e["kind"] == "nmr"] == ["ani", "alex"]
    assert cli.ok("mail", "tick").stdout == "nothing due\n"  # the new requests are due an hour from now
    again = cli.json("mail", "tick", "--game", "old")
    assert again["actions"] == [] and again["now"].endswith("Z")
    assert cli.log("old") == log


def test_tick_in_a_game_that_waits_tells_the_late_once_and_never_defaults(cli, old_game):
    old_game(on_late="wait")
    first = cli.json("mail", "tick")["actions"]
    assert [(a["action"], a["player"], a["kind"]) for a in first] == [("told late", "ani", "commit"),
                                                                      ("told late", "alex", "commit")]
    assert cli.ok("mail", "tick").stdout == "nothing due\n"
    assert not [e for e in cli.log("old") if e["kind"] in ("nmr", "default")]
    late = [r for r in cli.json("mail", "outbox") if r["kind"] == "reminder"]
    assert sorted(r["recipient"] for r in late) == ["alex@example.org", "ani@example.org"]


def test_a_failed_tick_action_is_a_line_and_exit_status_1(cli, old_game, pbem_db):
    old_game()
    conn = sqlite3.connect(pbem_db)
    conn.execute("update mail_players set address = 'alex at example' where player = 'alex'")
    conn.commit()
    conn.close()
    result = cli("mail", "tick")
    assert result.exit_code == 1
    assert result.stderr == "pbem: 1 action failed and will be tried again at the next tick\n"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("defaulted ani in old")
    assert lines[1].startswith("failed old alex: commit (round 1, step 1)") and "alex at example" in lines[1]
    assert [e["data"]["player"] for e in cli.log("old") if e["kind"] == "nmr"] == ["ani"]


def test_tick_of_a_game_without_addresses_is_refused(cli, old_game):
    old_game(addresses=False)
    cli.refused("old", "mail", "tick", "--game", "old", match="has no addresses")
    assert cli.ok("mail", "tick").stdout == "nothing due\n"  # and tick leaves it alone


def test_status_and_games_show_what_mail_waits_who_failed_and_who_is_late(cli, old_game, pbem_db):
    old_game()
    cli.ok("new", "quiet", "--players", "a,b", "--now")
    with Store(pbem_db) as store:
        rows = outbox.listing(store, "old")
        outbox.mark_failed(store, rows[0].id, "550 5.1.1 mailbox unavailable", PAST)
    report = cli.json("status", "old")
    assert report["overdue"] == ["alex", "ani"]
    assert report["mail"] == {"queued": len(rows), "failing": 1, "last_error": "550 5.1.1 mailbox unavailable",
                              "failed": 0, "undeliverable": [], "last_fetch": None}
    text = cli.ok("status", "old").stdout
    assert "OVERDUE" in text
    assert (f"mail: {len(rows)} queued, 1 failing (last error: 550 5.1.1 mailbox unavailable); "
            f"last mail fetch: none recorded") in text
    quiet = cli.json("status", "quiet")
    assert quiet["mail"] is None and quiet["overdue"] == []
    assert "mail:" not in cli.ok("status", "quiet").stdout
    games = {g["game"]: g for g in cli.json("games")["details"]}
    assert games["old"]["overdue"] == ["alex", "ani"]
    assert games["old"]["mail"] == {"queued": len(rows), "failing": 1, "last_error": "550 5.1.1 mailbox unavailable",
                                    "failed": 0, "undeliverable": []}
    assert games["quiet"]["mail"] is None
    lines = cli.ok("games").stdout.splitlines()
    assert lines[0] == (f"old: round 1, roll; waiting for alex, ani (OVERDUE: alex, ani); mail: {len(rows)} queued, "
                        f"1 failing (last error: 550 5.1.1 mailbox unavailable)")
    assert lines[1].startswith("quiet: ") and "mail" not in lines[1]
    assert lines[-1] == "last mail fetch: none recorded"
    cli.ok("mail", "send", "--to-dir", pbem_db.parent / "out")
    assert cli.json("status", "old")["mail"]["queued"] == 0
    assert "mail: 0 queued" in cli.ok("games").stdout


@pytest.mark.parametrize("point", ["append:after-insert", "commit:before"])
def test_tick_killed_mid_default_leaves_neither_the_event_nor_its_mail(cli, old_game, pbem_process, point):
    old_game(remind=1800)
    log, box = cli.log("old"), cli.json("mail", "outbox")
    child = pbem_process("mail", "tick", crash_at=point)
    assert child.wait(timeout=60) == 137
    assert (cli.log("old"), cli.json("mail", "outbox")) == (log, box)
    done = cli.json("mail", "tick")["actions"]  # run again: everything once
    assert [(a["action"], a["player"]) for a in done] == [("defaulted", "ani"), ("defaulted", "alex")]
    assert [e["data"]["player"] for e in cli.log("old") if e["kind"] == "nmr"] == ["ani", "alex"]
    assert cli.json("audit", "old")["ok"]


def test_tick_killed_while_telling_the_late_leaves_no_record_and_tells_them_later(cli, old_game, pbem_process):
    """A notice is queued with its record the way a reminder is (one transaction, one code path)."""
    old_game(on_late="wait")
    box = cli.json("mail", "outbox")
    child = pbem_process("mail", "tick", crash_at="commit:before")
    assert child.wait(timeout=60) == 137
    assert cli.json("mail", "outbox") == box
    assert [a["action"] for a in cli.json("mail", "tick")["actions"]] == ["told late", "told late"]
    assert sorted(r["recipient"] for r in cli.json("mail", "outbox") if r["kind"] == "reminder") == [
        "alex@example.org", "ani@example.org"]
    assert cli.json("mail", "tick")["actions"] == []


def test_status_and_games_name_a_failing_list_and_a_failing_moderator(cli, old_game, pbem_db):
    old_game()
    cli.ok("address", "old", "--list", "table@lists.example.org")
    cli.ok("address", "old", "--moderator", "mod@example.org")
    from pbem.mail import failures
    with Store(pbem_db) as store, store.transaction():
        failures.record(store, "table@lists.example.org", "550 5.1.1 no such list", PAST, certain=True)
        failures.record(store, "mod@example.org", "550 5.1.1 gone", PAST, certain=True)
    report = cli.json("status", "old")
    assert [(e["role"], e["player"], e["address"], e["marked"]) for e in report["mail"]["undeliverable"]] == [
        ("list", None, "table@lists.example.org", True), ("moderator", None, "mod@example.org", True)]
    text = cli.ok("status", "old").stdout
    assert ("mail cannot be delivered: the list <table@lists.example.org>: MAIL NOT DELIVERED; failing since "
            "2020-01-01 00:00:00 UTC") in text
    assert "mail cannot be delivered: the moderator <mod@example.org>: MAIL NOT DELIVERED;" in text
    assert "try: pbem address old --moderator NEW-ADDRESS" in text
    line = cli.ok("games").stdout.splitlines()[0]
    assert line.endswith("MAIL CANNOT BE DELIVERED to the list (not delivered), the moderator (not delivered)"), line
    # the moderator gives the list again: tried afresh
    cli.ok("address", "old", "--list", "table@lists.example.org")
    assert [e["role"] for e in cli.json("status", "old")["mail"]["undeliverable"]] == ["moderator"]


def test_status_says_a_player_below_the_threshold_still_gets_reminders(cli, old_game, pbem_db):
    """Issue 30: "(not delivered: no reminders)" only for a player marked so."""
    old_game()
    from pbem.mail import failures
    with Store(pbem_db) as store, store.transaction():
        failures.record(store, "ani@example.org", "451 4.2.1 busy", PAST)  # score 1 of 3
        assert not failures.is_dead(store, "ani@example.org")
    text = cli.ok("status", "old").stdout
    assert "MAIL CANNOT BE DELIVERED to ani (failing, bounce score 1 of 3; reminders still go)" in text, text
    assert "no reminders" not in text
    with Store(pbem_db) as store, store.transaction():
        failures.record(store, "ani@example.org", "550 5.1.1 gone", PAST, certain=True)
    assert "MAIL CANNOT BE DELIVERED to ani (not delivered: no reminders)" in cli.ok("status", "old").stdout


def test_a_wait_of_0m_is_none_as_0_is(cli):
    """--remind, --grace and --hold-answers take 0 or none for none; 0m, 0h and 0d are the
    same, not a usage error."""
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--deadline", "24h",
           "--remind", "6h", "--grace", "0h", "--now")
    assert cli.json("mail", "settings", "g1")["grace_seconds"] == 0
    cli.ok("mail", "settings", "g1", "--hold-answers", "0m", "--remind", "0d")
    settings = cli.json("mail", "settings", "g1")
    assert settings["hold_answers_seconds"] == 0 and settings["remind_seconds"] == 0
