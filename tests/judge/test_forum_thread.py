"""A forum thread fed again after every page of posts: the blocks already recorded are
skipped, the new ones applied (pbem submit GAME thread.html)."""

from __future__ import annotations

import html

from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.protocol import commands, loading, offline
from pbem.store import Store


def page(blocks: list[str]) -> str:
    posts = "".join(f'<div class="post"><p>My move, folks:</p><pre>{html.escape(b)}</pre></div>' for b in blocks)
    return f"<!DOCTYPE html><html><head><title>g1 - Tortuga</title></head><body>{posts}</body></html>"


def test_a_growing_thread_applies_only_the_new_blocks(tmp_path, monkeypatch):
    db = tmp_path / "pbem.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    store = Store(db)
    commands.create_game(store, "g1", "tortuga", ["ani", "alex", "frank"], {}, start=True)
    session = loading.load(store, "g1")
    blocks = {}
    for player in ("ani", "alex"):
        sealed = commands.seal(session, player, session.rules.default(session.state, player, "select"))
        blocks[player] = offline.signed_blocks(sealed, None)["commit"]
    runner = CliRunner()
    thread = tmp_path / "thread.html"

    thread.write_text(page([blocks["ani"]]), encoding="utf-8")
    first = runner.invoke(app, ["submit", "g1", str(thread), "--json"])
    assert first.exit_code == 0, first.stderr
    count = store.count("g1")

    thread.write_text(page([blocks["ani"], blocks["alex"]]), encoding="utf-8")
    second = runner.invoke(app, ["submit", "g1", str(thread)])
    assert second.exit_code == 0, second.stderr
    assert "already recorded" in second.stdout
    assert store.count("g1") == count + 1
    assert store.events("g1")[-1].data["player"] == "alex"

    again = runner.invoke(app, ["submit", "g1", str(thread)])
    assert again.exit_code == 0 and store.count("g1") == count + 1
