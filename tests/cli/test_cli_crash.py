"""Crash safety: a writing command killed at any point of its transaction (PBEM_CRASH_AT,
see pbem/store/faults.py) leaves the log exactly as before or exactly as after; the file
passes SQLite's integrity check, the audit passes, and the command can simply be repeated."""

from __future__ import annotations

import random
import sqlite3

import pytest

POINTS = [  # (crash point, whether the command's events survive)
    ("append:before-insert", False),
    ("append:after-insert", False),
    ("commit:before", False),
    ("commit:after", True),
]
NEW_EVENT = ("seq", "kind", "data")


def _setup_step(cli, new_game, helpers, last: str):
    """Game "g" in its first sealed step; frank and lothar sent their choices to the
    moderator (commit --choice). With ``last="commit"`` alex has still to commit: that
    commit completes the step and brings the two moderator reveals with it. With
    ``last="reveal"`` everyone committed and all but alex revealed: alex's reveal
    resolves the step. Returns the argv of that last command."""
    new_game("g")
    rnd = random.Random(7)
    held = {}
    for player in helpers.PLAYERS:
        request = cli.json("private", "g", player)["requests"][0]
        choice = helpers.pick(request, rnd)
        if player in ("frank", "lothar"):
            cli.ok("commit", "g", player, "--choice", choice)
        else:
            held[player] = cli.json("seal", "g", player, choice)
    cli.ok("commit", "g", "ani", held["ani"]["commitment"])
    if last == "commit":
        return ["commit", "g", "alex", held["alex"]["commitment"]]
    cli.ok("commit", "g", "alex", held["alex"]["commitment"])
    cli.ok("reveal", "g", "ani", held["ani"]["choice"], held["ani"]["salt"])
    return ["reveal", "g", "alex", held["alex"]["choice"], held["alex"]["salt"]]


def _copy_db(source, target) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()


def _integrity(path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def _new_events(log, before) -> list[tuple]:
    return [tuple(row[k] for k in NEW_EVENT) for row in log[len(before):]]


@pytest.mark.parametrize("last", ["commit", "reveal", "final decision"])
@pytest.mark.parametrize("point, survives", POINTS)
def test_crash_leaves_the_log_before_or_after(cli, new_game, helpers, pbem_db, pbem_process, tmp_path,
                                              request, point, survives, last):
    if last == "final decision":  # the decision that ends the game: it also publishes the seed
        template, argv = request.getfixturevalue("last_move_template")
        _copy_db(template, pbem_db)
    else:
        argv = _setup_step(cli, new_game, helpers, last)
    game = argv[1]
    before_text, before_head, _, _ = cli.snapshot(game)
    before = cli.log(game)

    # what the command writes when nothing goes wrong, on a copy of the database
    reference_db = tmp_path / "reference.db"
    _copy_db(pbem_db, reference_db)
    cli.ok(*argv, "--db", reference_db)
    expected = _new_events(cli.json("log", game, "--db", reference_db), before)
    assert len(expected) >= {"commit": 3, "reveal": 1, "final decision": 2}[last], expected
    if last == "final decision":
        assert [e[1] for e in expected] == ["decide", "seed_revealed"]

    child = pbem_process(*argv, crash_at=point)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 137, (child.returncode, out, err)

    assert _integrity(pbem_db) == "ok"
    after = cli.log(game)
    if survives:
        assert after[: len(before)] == before and _new_events(after, before) == expected
    else:
        assert cli.ok("log", game, "--json").stdout == before_text
        assert cli.json("status", game)["chain_head"] == before_head
    report = cli.json("audit", game)
    assert report["ok"] and report["replay"] == "full", report

    # repeating the command: it goes through if it had not; if it had, it is the very same
    # submission again, a no-op (a moderator may safely repeat it): the log stays as it was
    if survives:
        logged = cli.log(game)
        result = cli.ok(*argv)
        assert "already recorded; nothing changed" in result.stdout
        assert cli.log(game) == logged
    else:
        cli.ok(*argv)
        assert _new_events(cli.log(game), before) == expected
    assert cli.json("audit", game)["ok"]
    assert _integrity(pbem_db) == "ok"


def test_crash_during_new_leaves_no_half_game(cli, pbem_db, pbem_process):
    """``new`` writes the seed (a secret) and the first events together: all or nothing."""
    cli.ok("new", "other", "--players", "ani,alex")
    child = pbem_process("new", "g", "--players", "ani,alex,frank", "--now", crash_at="commit:before")
    assert child.wait(timeout=60) == 137
    assert cli.json("games")["games"] == ["other"]
    conn = sqlite3.connect(pbem_db)
    assert conn.execute("select count(*) from secrets where game = 'g'").fetchone()[0] == 0
    conn.close()
    cli.ok("new", "g", "--players", "ani,alex,frank", "--now")
    assert cli.json("audit", "g")["ok"]
