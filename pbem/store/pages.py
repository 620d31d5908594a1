"""Where the judge keeps a game's viewer page (``pbem page GAME --folder DIR``): one row per
game in ``page_folders``, the moderator's private setting (never exported)."""

from __future__ import annotations


def page_folder(store, game: str) -> str | None:
    rows = store.conn.execute("select folder from page_folders where game = ?", (game,)).fetchall()
    return rows[0][0] if rows else None


def set_page_folder(store, game: str, folder: str | None) -> None:
    """Keep the viewer of ``game`` in ``folder`` (None: no more). Call inside a transaction."""
    store.require_transaction("set_page_folder()")
    if folder is None:
        store.conn.execute("delete from page_folders where game = ?", (game,))
    else:
        store.conn.execute("insert or replace into page_folders (game, folder) values (?, ?)", (game, folder))
