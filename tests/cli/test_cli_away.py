"""pbem pause, resume, extend and replace on the command line: what each prints, and the bad
input each refuses in one line (exit 1, or 2 for a usage error) with the log unchanged."""

from __future__ import annotations


def new_game(cli, *extra: str) -> None:
    cli.ok("new", "g1", "--players", "ani,alex,frank", "--deadline", "48h", "--now", *extra)


def test_pause_and_resume(cli):
    new_game(cli)
    cli.refused("g1", "resume", "g1", match="game g1 is not paused, so there is nothing to resume")
    cli.refused("g1", "pause", "g1", code=2, match="give the reason the players will read")
    out = cli.ok("pause", "g1", "--reason", "summer holidays").stdout
    assert out.startswith("game g1 is paused (no deadline runs) since ")
    status = cli.ok("status", "g1").stdout
    assert "paused since" in status and "(summer holidays): no deadline runs until pbem resume g1" in status
    assert "ani (commit, sealed, paused)" in status
    assert cli.json("status", "g1")["paused"]["reason"] == "summer holidays"
    cli.refused("g1", "pause", "g1", "--reason", "again", match="already paused")
    cli.refused("g1", "nmr", "g1", "ani", match="is paused")
    cli.refused("g1", "resume", "g1", "--until", "tomorrow", code=2, match="give a time in UTC")
    # a time within a year (docs/protocol.md §16's bound) of the game's start
    until = f"{int(cli.log('g1')[0]['at'][:4]) + 1}-01-01 10:00"
    done = cli.json("resume", "g1", "--until", until)
    assert {w["due"] for w in done["waiting"]} == {until.replace(" ", "T") + ":00Z"}
    assert [e["kind"] for e in cli.log("g1")][-2:] == ["paused", "resumed"]


def test_extend(cli):
    new_game(cli)
    cli.refused("g1", "extend", "g1", code=2, match="give a DURATION")
    cli.refused("g1", "extend", "g1", "ani", "24h", "--until", "2099-01-01 10:00", code=2, match="one of the two")
    cli.refused("g1", "extend", "g1", "bob", "24h", match="no player 'bob' in game g1; players: ani, alex, frank")
    cli.refused("g1", "extend", "g1", "ani", "--until", "2001-01-01 10:00", match="moves a deadline later")
    before = {w["player"]: w["due"] for w in cli.json("status", "g1")["waiting"]}
    done = cli.json("extend", "g1", "ani", "24h", "--reason", "travelling")
    [request] = done["requests"]
    assert request["from"] == before["ani"] and request["player"] == "ani"
    after = {w["player"]: w["due"] for w in cli.json("status", "g1")["waiting"]}
    assert after["alex"] == before["alex"] and after["ani"] == request["until"] > before["ani"]
    event = cli.log("g1")[-1]
    assert event["kind"] == "extended" and event["data"]["reason"] == "travelling"
    out = cli.ok("extend", "g1", "12h").stdout
    assert len(out.splitlines()) == 3  # every player's open request


def test_extensions_need_a_deadline(cli):
    cli.ok("new", "g2", "--players", "ani,alex,frank", "--now")
    cli.refused("g2", "extend", "g2", "ani", "24h", match="has no deadline")
    result = cli("new", "g3", "--players", "ani,alex", "--extensions", "2")
    assert result.exit_code == 1 and "give the game a deadline too" in result.stderr


def test_replace(cli):
    new_game(cli)
    cli.refused("g1", "replace", "g1", "bob", match="no player 'bob' in game g1; players: ani, alex, frank")
    cli.refused("g1", "replace", "g1", "frank", "--key", "not-a-key", match="the new key of frank")
    done = cli.json("replace", "g1", "frank", "--reason", "frank left")
    assert done["seat"] == "frank" and done["address"] is None
    event = cli.log("g1")[-1]
    assert event["kind"] == "replaced" and event["data"] == {"seat": "frank", "by": "moderator",
                                                             "reason": "frank left"}
    audit = cli.ok("audit", "g1").stdout
    assert ("the judge's discretion, each logged with who asked and why: no client seed: the judge alone chose "
            "the deal, 1 replacement") in audit


def test_replace_in_a_game_by_mail(cli):
    cli.ok("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org,frank=frank@example.org",
           "--deadline", "48h", "--now")
    cli.refused("g1", "replace", "g1", "frank", match="give the new player's address")
    cli.refused("g1", "replace", "g1", "frank", "--email", "alex@example.org",
                match="alex@example.org already plays alex in game g1")
    out = cli.ok("replace", "g1", "frank", "--email", "maria@example.org").stdout
    assert "the welcome for maria@example.org is queued (pbem mail send)" in out
    assert "maria" not in cli.ok("export", "g1").stdout


def test_a_resume_never_shortens_a_deadline_unless_forced(cli):
    """pbem resume --until a time before the deadline in force is refused in one line; with
    --force it is taken, marked forced, and the audit's verdict names it."""
    from datetime import datetime, timedelta, timezone
    new_game(cli)
    cli.ok("pause", "g1", "--reason", "a public holiday")
    # hours ahead of the clock (so that a slow machine never reaches it), days before the deadline
    soon = (datetime.now(timezone.utc) + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cli.refused("g1", "resume", "g1", "--until", soon, match=f"--until {soon} is earlier than ani's deadline in force ")
    done = cli.json("resume", "g1", "--until", soon, "--force")
    assert {w["due"] for w in done["waiting"]} == {soon}
    assert cli.log("g1")[-1]["data"]["forced"] is True
    line = cli("audit", "g1").stdout.splitlines()[0]
    assert line.endswith("; the judge's discretion: no client seed: the judge alone chose the deal, "
                         "1 forced resume that shortened deadlines, 1 pause"), line
