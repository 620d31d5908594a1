"""The judge keeps a game's viewer up to date: with ``pbem page GAME --folder DIR`` set, every
committed write to the game (from the command line or from mail) writes ``DIR/GAME.html``
again, once per transaction and only after it commits, so the page never shows an event
that was rolled back. A page that cannot be written does not undo the write: the reason is
kept in ``store.page_errors``; the command line prints each as a warning on stderr."""

from __future__ import annotations


def attach(store) -> None:
    """Make every write to ``store`` refresh the viewer of games that keep one (once per store)."""
    if watch not in store.write_hooks:
        store.write_hooks.append(watch)
    if not hasattr(store, "page_errors"):
        store.page_errors = []


def watch(store, session):
    from ..store.pages import page_folder
    folder = page_folder(store, session.game_id)
    if folder is None:
        return None
    game = session.game_id

    def after(_session, _at: str) -> None:
        pending = store.__dict__.setdefault("_pages_due", set())
        if game not in pending:
            pending.add(game)
            store.on_commit.append(lambda: _refresh(store, game, folder))
    return after


def _refresh(store, game: str, folder: str) -> None:
    from pathlib import Path

    from ..protocol.errors import ProtocolError
    from . import viewer
    store.__dict__.get("_pages_due", set()).discard(game)
    try:
        viewer.write_atomically(Path(folder) / f"{game}.html", viewer.from_store(store, game))
    except (OSError, ProtocolError) as exc:
        store.page_errors.append(f"the viewer of {game} was not written to {folder}: {exc} (the command's own "
                                 f"write stands; pbem page {game} --folder DIR sets another folder, --no-folder "
                                 f"stops it)")
