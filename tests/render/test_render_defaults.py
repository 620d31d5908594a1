"""Public summaries say when a default was applied instead of a player's own choice."""

import json

from typer.testing import CliRunner

from pbem.cli.program import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_a_late_players_default_is_named_in_every_format(tmp_path):
    db = tmp_path / "g.db"
    run("new", "g", "--players", "ani,bob", "--now", "--db", db)
    assert run("nmr", "g", "ani", "--force", "--db", db).exit_code == 0
    option = json.loads(run("private", "g", "bob", "--db", db, "--json").stdout)["requests"][0]["options"][0]
    sealed = json.loads(run("seal", "g", "bob", option, "--db", db, "--json").stdout)
    run("commit", "g", "bob", sealed["commitment"], "--db", db)
    run("reveal", "g", "bob", sealed["choice"], sealed["salt"], "--db", db)
    default = next(e for e in json.loads(run("log", "g", "--db", db, "--json").stdout) if e["kind"] == "default")
    assert default["data"]["sealed"] is True
    text = run("show", "g", "--db", db).stdout
    assert f"ani: no commitment in time; the documented default {default['data']['choice']} applies" in text
    for fmt in ("markdown", "bbcode", "html"):
        assert "no commitment in time; the documented default" in run("show", "g", "--format", fmt, "--db", db).stdout
