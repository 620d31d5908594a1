"""``pbem export GAME --format sqlite``: the public record as tables, browsed through
Datasette's own JSON API (its in-process test client: no server, no network), and nothing
outside the public record in it."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.render import public_db

TABLES = ["game", "players", "events", "commitments", "reveals", "rounds", "votes", "results"]
VIEWS = ["decisions", "defaults"]


def datasette_pages(path) -> dict:
    """A page of every table and view through Datasette's JSON API."""
    pytest.importorskip("datasette", reason="datasette is a test extra: pip install -e '.[test]'")
    from datasette.app import Datasette

    async def fetch():
        ds = Datasette([str(path)])
        await ds.invoke_startup()
        out = {}
        for name in TABLES + VIEWS:
            response = await ds.client.get(f"/{path.stem}/{name}.json?_shape=objects&_size=20")
            assert response.status_code == 200, (name, response.text[:300])
            out[name] = response.json()["rows"]
        return out
    return asyncio.run(fetch())


def test_a_finished_1667_game_browses_in_datasette(pages, tmp_path, monkeypatch):
    db = tmp_path / "games.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    runner = CliRunner()
    done = runner.invoke(app, ["demo", "--game", "tortuga1667", "--game-name", "d", "--bot-seed", "dbtest"])
    assert done.exit_code == 0, done.stderr
    out = tmp_path / "public.db"
    result = runner.invoke(app, ["export", "d", "--format", "sqlite", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    rows = datasette_pages(out)
    events = runner.invoke(app, ["log", "d", "--json"])
    log = json.loads(events.stdout)
    assert rows["game"][0]["events"] == len(log) and rows["game"][0]["finished"] == 1
    assert [e["hash"] for e in rows["events"]] == [e["hash"] for e in log[:20]]
    assert len(rows["players"]) == 5 and rows["results"] and rows["rounds"]
    assert rows["votes"], "the demo game had no vote to show"
    assert rows["votes"][0]["played"] is not None  # disclosed at the end
    kinds = {r["how"] for r in rows["reveals"]}
    assert "held" in kinds
    assert rows["decisions"]


def test_format_sqlite_needs_a_file_and_a_known_format(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_DB", str(tmp_path / "g.db"))
    runner = CliRunner()
    assert runner.invoke(app, ["new", "g", "--players", "ani,alex", "--now"]).exit_code == 0
    no_file = runner.invoke(app, ["export", "g", "--format", "sqlite"])
    assert no_file.exit_code == 2 and "-o public.db" in no_file.stderr
    unknown = runner.invoke(app, ["export", "g", "--format", "csv"])
    assert unknown.exit_code == 2 and "jsonl" in unknown.stderr


def everything_in(path) -> str:
    """Every table's name, columns and values, as one text."""
    conn = sqlite3.connect(path)
    parts = []
    for (name, sql) in conn.execute("select name, sql from sqlite_master"):
        parts.append(f"{name} {sql}")
        if sql and sql.startswith("CREATE TABLE"):
            parts += [repr(row) for row in conn.execute(f"select * from {name}")]
    conn.close()
    return "\n".join(parts)


@pytest.mark.parametrize("kind", ["tortuga", "tortuga1667"])
def test_the_public_db_of_a_game_in_play_holds_no_secret(pages, tmp_path, kind):
    if kind == "tortuga":
        store, game, secrets = pages.tortuga_in_play()
    else:
        store, game, secrets, _private = pages.t1667_in_play()
    out = tmp_path / f"{kind}.db"
    public_db.write_store_game(store, game, out)
    text = everything_in(out)
    for secret in secrets:
        assert secret not in text, "a seed, an unrevealed salt or a held vote is in the public database"
    assert "@example.org" not in text and "password" not in text.lower()
    for private_table in ("secrets", "snapshots", "outbox", "mail_players", "page_folders"):
        assert f"CREATE TABLE {private_table}" not in text
    conn = sqlite3.connect(out)
    assert conn.execute("select seed_revealed from game").fetchone()[0] is None
    assert conn.execute("select count(*) from reveals where how = 'held' and (choice is not null or salt is not null)"
                        ).fetchone()[0] == 0


def test_the_readme_shows_the_public_database_and_the_datasette_command():
    """README: the public database is documented where users look, with the command that
    browses it and every table and view the export writes (public_db.SCHEMA)."""
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The public database", 1)[1].split("\n## ", 1)[0]
    assert "pbem export g1 --format sqlite -o g1-public.db" in section
    assert "datasette g1-public.db" in section
    for name in TABLES + VIEWS:
        assert f"`{name}`" in section, name
        assert name in public_db.SCHEMA
    # the example query runs on a real export's schema
    db = sqlite3.connect(":memory:")
    db.executescript(public_db.SCHEMA)
    query = section.split("For example, every default and why: `", 1)[1].split("`", 1)[0]
    db.execute(query).fetchall()
