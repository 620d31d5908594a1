"""Problems a new user hit, pinned: each is one clear line, exit 1, and nothing written."""

import json

from pbem.cli.app import app
from typer.testing import CliRunner

runner = CliRunner()


def run(*args, **env):
    return runner.invoke(app, [str(a) for a in args], env=env or None)


def test_a_directory_or_a_non_database_file_as_db(tmp_path):
    result = run("games", "--db", tmp_path)
    assert result.exit_code == 1 and result.stderr == f"pbem: {tmp_path} is a directory, not a games database file\n"
    junk = tmp_path / "notes.txt"
    junk.write_text("hello, not a database\n" * 50)
    result = run("status", "g", "--db", junk)
    assert result.exit_code == 1 and "cannot use" in result.stderr and "not a database" in result.stderr
    assert result.stderr.count("\n") == 1


def test_read_only_commands_do_not_create_a_database(tmp_path):
    missing = tmp_path / "typo" / "games.db"
    for args in (("games",), ("status", "g"), ("log", "g"), ("private", "g", "ani")):
        result = run(*args, "--db", missing)
        assert result.exit_code == 1 and "no games database at" in result.stderr
    assert not missing.exists() and not missing.parent.exists()


def test_a_signed_game_does_not_start_without_every_key(tmp_path):
    db = tmp_path / "g.db"
    assert run("new", "g", "--players", "ani,alex", "--require-signatures", "--db", db).exit_code == 0
    result = run("start", "g", "--db", db)
    assert result.exit_code == 1 and "has no key for ani, alex" in result.stderr
    assert json.loads(run("status", "g", "--db", db, "--json").stdout)["started"] is False


def test_a_reveal_may_be_spelled_as_the_player_typed_it(tmp_path):
    db = tmp_path / "g.db"
    run("new", "g", "--players", "ani,alex", "--now", "--db", db)
    sealed = {}
    for p in ("ani", "alex"):
        options = json.loads(run("private", "g", p, "--db", db, "--json").stdout)["requests"][0]["options"]
        choice = max(options, key=len)  # e.g. "C,D"
        sealed[p] = json.loads(run("seal", "g", p, choice, "--db", db, "--json").stdout)
        assert run("commit", "g", p, sealed[p]["commitment"], "--db", db).exit_code == 0
    messy = " , ".join(reversed(sealed["ani"]["choice"].lower().split(",")))  # "d , c"
    result = run("reveal", "g", "ani", messy, sealed["ani"]["salt"], "--db", db)
    assert result.exit_code == 0, result.stderr
    log = json.loads(run("log", "g", "--db", db, "--json").stdout)
    assert log[-1]["kind"] == "reveal" and log[-1]["data"]["choice"] == sealed["ani"]["choice"]
    assert run("audit", "g", "--db", db).exit_code == 0
