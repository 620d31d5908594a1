"""Seats and time on the command line, finished (issue 29): deadlines and durations within
their bounds, one-line usage errors (also under --json), and what status and games show."""

from __future__ import annotations

import json

import pytest

DURATION = "a whole number of minutes, hours or days from 1m to 365d, like 30m, 48h or 3d"


def new_game(cli, *extra: str) -> None:
    cli.ok("new", "g1", "--players", "ani,alex,frank", "--deadline", "48h", "--now", *extra)


def test_a_deadline_past_a_year_is_refused_in_one_line(cli):
    new_game(cli)
    reason = cli.refused("g1", "extend", "g1", "ani", "--until", "9999-12-31 23:00", match="more than a year (365 days)")
    assert "the latest allowed is " in reason
    cli.refused("g1", "extend", "g1", "ani", "400d", code=2, match="more than a year (365d)")
    cli.ok("pause", "g1", "--reason", "a break")
    cli.refused("g1", "resume", "g1", "--until", "2999-01-01 10:00", match="more than a year (365 days)")
    cli.ok("resume", "g1")
    assert "paused" not in cli.json("status", "g1")


@pytest.mark.parametrize("args, words", [
    (("extend", "g1", "ani", "-5h"), "'-5h': a duration cannot be negative; give " + DURATION),
    (("extend", "g1", "-5h"), "'-5h': a duration cannot be negative; give " + DURATION),
    (("extend", "g1", "ani", "5x"), "'5x': not a duration; give " + DURATION),
    (("extend", "g1", "ani", "0h"), "'0h': a duration is at least 1m; give " + DURATION),
    # full-width digits (a phone's Japanese or Chinese keyboard) are not a duration's digits
    (("extend", "g1", "ani", "\uff19h"), "'\uff19h': not a duration (its number in the digits 0 to 9); give "
     + DURATION),
    (("mail", "settings", "g1", "--remind", "\uff10h"), "--remind '\uff10h': not a duration"),
    (("mail", "settings", "g1", "--remind", "\uff11\uff12h"), "--remind '\uff11\uff12h': not a duration"),
    (("extend", "g1", "ani", "0m"), "'0m': a duration is at least 1m; give " + DURATION),
    (("mail", "tick", "--at", "noon"), "--at 'noon' is not a time; give one in UTC like 2030-01-02T10:00:00Z"),
    (("mail", "settings", "g1", "--remind", "-1h"), "--remind '-1h': a duration cannot be negative"),
    (("status",), "Missing argument 'game'. (see: pbem status --help)"),
    (("stat", "g1"), "No such command 'stat'."),
    (("status", "g1", "--bogus"), "No such option: --bogus"),
    (("extend", "g1", "ani", "--until", "tomorrow"), "give a time in UTC like 2030-01-05T18:00:00Z"),
])
def test_usage_errors_are_one_line_and_say_what_would_be_right(cli, args, words):
    new_game(cli)
    reason = cli.refused("g1", *args, code=2)
    assert reason.startswith("pbem: ") and words in reason, reason
    assert "Usage:" not in reason and "Try '" not in reason
    result = cli(*args, "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["code"] == 2 and words in json.loads(result.stdout)["error"]
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_new_game_with_a_negative_deadline_is_one_line(cli):
    result = cli("new", "g2", "--players", "ani,alex", "--deadline", "-3h")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"pbem: Invalid value: '-3h': a duration cannot be negative; give {DURATION} " \
                                    f"(see: pbem new --help)"


def test_status_says_who_plays_each_seat(cli):
    new_game(cli, "--stand-in-after", "1")
    report = cli.json("status", "g1")
    assert report["seats"] == {p: {"played_by": "person"} for p in ("ani", "alex", "frank")}
    assert "seats: ani played by a person; alex played by a person; frank played by a person" in \
        cli.ok("status", "g1").stdout
    cli.ok("nmr", "g1", "ani", "--force")
    cli.ok("replace", "g1", "frank", "--reason", "frank left")
    log = cli.log("g1")
    nmr_at = next(e["at"] for e in log if e["kind"] == "nmr")
    replaced_at = next(e["at"] for e in log if e["kind"] == "replaced")
    seats = cli.json("status", "g1")["seats"]
    assert seats["ani"] == {"played_by": "stand-in", "since": nmr_at, "defaults": 1}
    assert seats["alex"] == {"played_by": "person"}
    assert seats["frank"] == {"played_by": "person", "replaced": replaced_at}
    assert "; the stand-in plays ani" in next(line for line in cli.ok("games").stdout.splitlines()
                                              if line.startswith("g1: "))
    assert cli.json("games")["details"][0]["stand_in"] == ["ani"]
    text = cli.ok("status", "g1").stdout
    shown = lambda at: at.replace("T", " ").replace("Z", " UTC")  # noqa: E731
    assert (f"seats: ani played by the stand-in since {shown(nmr_at)} (after 1 default in a row); "
            f"alex played by a person; frank played by a person (a new one: the seat was replaced at "
            f"{shown(replaced_at)})") in text


def test_games_shows_a_paused_game_as_paused_with_its_reason_and_since_when(cli):
    new_game(cli)
    cli.ok("new", "g2", "--players", "ani,alex", "--deadline", "48h", "--now")
    cli.ok("pause", "g1", "--reason", "summer holidays")
    since = cli.log("g1")[-1]["at"]
    lines = cli.ok("games").stdout.splitlines()
    g1 = next(line for line in lines if line.startswith("g1: "))
    g2 = next(line for line in lines if line.startswith("g2: "))
    assert f"PAUSED since {since.replace('T', ' ').replace('Z', ' UTC')} (summer holidays)" in g1
    assert "PAUSED" not in g2
    details = {d["game"]: d for d in cli.json("games")["details"]}
    assert details["g1"]["paused"] == {"since": since, "reason": "summer holidays"}
    assert details["g2"]["paused"] is None
    assert cli.json("status", "g1")["paused"]["since"] == since
    cli.ok("resume", "g1")
    assert "PAUSED" not in cli.ok("games").stdout


def test_the_moderator_takes_a_seat_only_when_they_say_so(cli):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org,frank=frank@example.org",
           "--deadline", "48h", "--list", "table@lists.example.org", "--moderator", "mod@example.org", "--now")
    cli.refused("g1", "replace", "g1", "frank", "--email", "table@lists.example.org", match="is the list of game g1")
    cli.refused("g1", "replace", "g1", "frank", "--email", "mod@example.org",
                match="mod@example.org is the moderator's address; to play the seat yourself say so with "
                      "--moderator-plays")
    cli.ok("replace", "g1", "frank", "--email", "mod@example.org", "--moderator-plays", "--reason", "frank left")
    assert cli.log("g1")[-1]["data"]["moderator"] is True
    assert "1 replacement (1 seat given to the moderator)" in cli.ok("audit", "g1").stdout
