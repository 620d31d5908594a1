"""Pages for a browser: the verifier page and a game's viewer."""


import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import DbOption, JsonOption, emit, fail, handled, open_store


def register(app: typer.Typer) -> None:
    app.command("verify-page")(verify_page)
    app.command("page")(page)


@handled
def verify_page(output: Annotated[Path, typer.Option("-o", "--output", help="The folder to write verify.html into (made if missing).")],
                force: Annotated[bool, typer.Option("--force", help="Replace an existing verify.html there.")] = False,
                as_json: JsonOption = False):
    """Write a copy of pbem's verifier page: open it in a browser and give it a game's export.

    The page is the same file for everyone; compare its SHA-256 with the one printed in
    docs/protocol.md before you trust it.

    \b
    Example: pbem verify-page -o ~/pbem-verifier   (then open ~/pbem-verifier/verify.html)
    """
    from ..pages import verify_page_bytes, verify_page_sha256
    if output.exists() and not output.is_dir():
        fail(f"{output} is a file; give a folder to write verify.html into")
    target = output / "verify.html"
    if target.exists() and not force:
        fail(f"{target} exists; choose another folder, or add --force to replace it")
    output.mkdir(parents=True, exist_ok=True)
    target.write_bytes(verify_page_bytes())
    digest = verify_page_sha256()
    emit({"path": str(target), "sha256": digest}, as_json,
         f"wrote {target}\nsha256: {digest} (compare with the one in docs/protocol.md)")


@handled
def page(game: Annotated[Optional[str], typer.Argument(help="A game in the database.", show_default=False)] = None,
         output: Annotated[Optional[Path], typer.Option("-o", "--output", help="The HTML file to write (default: standard output).")] = None,
         file: Annotated[Optional[Path], typer.Option("--file", help="An exported log (JSON Lines, seed revealed) instead of a game in the database.")] = None,
         force: Annotated[bool, typer.Option("--force", help="Replace an existing output file.")] = False,
         folder: Annotated[Optional[Path], typer.Option("--folder", help="Keep GAME.html in this folder, written again after every committed event (the judge's setting for the game).")] = None,
         no_folder: Annotated[bool, typer.Option("--no-folder", help="Stop keeping the page in a folder.")] = False,
         db: DbOption = None, as_json: JsonOption = False):
    """Write a game's viewer: one self-contained HTML page of the whole game, from its public record.

    Every round or turn with its board and summary (previous/next buttons, arrow keys), the
    players, the seed hash and judge key, where the game stands, and the log with every hash.
    It makes no request: open it from a file, mail it, or put it on any web host.

    \b
    Example: pbem page g1 -o g1.html
    Example: pbem page --file g1.jsonl -o g1.html     (a finished game's export)
    Example: pbem page g1 --folder /var/www/games     (kept up to date after every move)
    """
    from ..render import viewer
    if (game is None) == (file is None):
        fail("give a GAME or --file FILE", 2)
    if folder is not None or no_folder:
        if game is None or output is not None or (folder is not None and no_folder):
            fail("give --folder DIR (or --no-folder) with a GAME alone, e.g. pbem page g1 --folder /var/www/games", 2)
        _keep_in_folder(game, None if no_folder else folder, db, as_json)
        return
    if output is not None:
        if output.exists() and output.is_dir():
            fail(f"{output} is a folder; give the name of the HTML file to write, e.g. {output / 'game.html'}")
        if output.exists() and not force:
            fail(f"{output} exists; choose another file name, or add --force to replace it")
    if file is not None:
        from .inputs import EXPORT, read_text
        html = viewer.from_export(read_text(file, EXPORT))
    else:
        html = viewer.from_store(open_store(db), game)
    if output is None:
        sys.stdout.write(html)
        return
    viewer.write_atomically(output, html)
    emit({"path": str(output), "bytes": len(html.encode("utf-8"))}, as_json, f"wrote {output} ({len(html.encode('utf-8'))} bytes)")


def _keep_in_folder(game: str, folder: Optional[Path], db, as_json: bool) -> None:
    """Set (or clear) the folder where the judge keeps the game's viewer, and write it now."""
    import os

    from ..protocol.loading import load
    from ..render import viewer
    from ..store.pages import set_page_folder
    store = open_store(db)
    load(store, game)  # the helpful unknown-game error
    if folder is not None:
        folder = folder.expanduser().resolve()
        if not folder.is_dir():
            fail(f"{folder} is not a folder; make it first (mkdir -p {folder}), or give another")
        if not os.access(folder, os.W_OK):
            fail(f"{folder} is not writable by you; give a folder you can write to")
    with store.transaction():
        set_page_folder(store, game, None if folder is None else str(folder))
    if folder is None:
        emit({"game": game, "folder": None}, as_json, f"the viewer of {game} is no longer kept in a folder")
        return
    target = folder / f"{game}.html"
    viewer.write_atomically(target, viewer.from_store(store, game))
    emit({"game": game, "folder": str(folder), "path": str(target)}, as_json,
         f"wrote {target}; it is written again after every committed event of {game}")
