"""``render_pending`` renders every row that waits for its bodies, then writes them in one
transaction (one per ``RENDER_BATCH`` rows after a long outage): the same bodies as one row
at a time, and a row that cannot be rendered stops it as before, with the rows rendered
before it written."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pbem.mail.letters import render_row
from pbem.mail.send import render_pending
from pbem.store import outbox


_spec = importlib.util.spec_from_file_location("private_later", Path(__file__).with_name("test_private_later.py"))
later = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(later)


def waiting(game) -> list:
    """Moves until at least three rows wait for their bodies (summaries and privates)."""
    for _ in range(20):
        rows = outbox.to_render(game.store)
        if len(rows) >= 3 and any("private" in row.render for row in rows):
            return rows
        game.send(*later.next_move(game))
    raise AssertionError(f"only {len(rows)} rows wait to be rendered")


def test_every_row_gets_its_bodies_in_one_commit(game):
    rows = waiting(game)
    expected = {row.id: render_row(game.store, row.game, row.render, {}) for row in rows}
    seen = []
    original = game.store.transaction

    def counted():
        seen.append(1)
        return original()
    game.store.transaction = counted
    try:
        assert render_pending(game.store) >= 1
    finally:
        del game.store.transaction
    assert len(seen) == 1
    assert outbox.to_render(game.store) == []
    for row_id, (text, html, files) in expected.items():
        row = outbox.get(game.store, row_id)
        assert (row.body_text, row.body_html, row.attachments, row.render) == (text, html, files, None)


def test_a_row_that_cannot_be_rendered_stops_it_after_the_ones_before(game):
    rows = waiting(game)
    broken = rows[1]
    with game.store.transaction():
        game.store.conn.execute("update outbox set render = ? where id = ?", [json.dumps({"parts": 7}), broken.id])
    with pytest.raises(TypeError):
        render_pending(game.store)
    assert outbox.get(game.store, rows[0].id).render is None and outbox.get(game.store, rows[0].id).body_text
    assert [row.id for row in outbox.to_render(game.store)] == [row.id for row in rows[1:]]


def test_a_long_queue_is_written_in_batches_with_the_same_bodies(game, monkeypatch):
    """After a long outage the queue may hold thousands of rows: they are written every
    ``RENDER_BATCH`` rows, so no more than that many bodies are held in memory at once."""
    from pbem.mail import send
    rows = waiting(game)
    expected = {row.id: render_row(game.store, row.game, row.render, {}) for row in rows}
    monkeypatch.setattr(send, "RENDER_BATCH", 2)
    seen = []
    original = game.store.transaction

    def counted():
        seen.append(len(outbox.to_render(game.store)))
        return original()
    game.store.transaction = counted
    try:
        render_pending(game.store)
    finally:
        del game.store.transaction
    assert len(seen) == (len(rows) + 1) // 2
    assert seen == [len(rows) - 2 * k for k in range(len(seen))]  # each batch written before the next is rendered
    assert outbox.to_render(game.store) == []
    for row_id, (text, html, files) in expected.items():
        row = outbox.get(game.store, row_id)
        assert (row.body_text, row.body_html, row.attachments, row.render) == (text, html, files, None)
