"""The pbem command line. Commands live in one module per group; see 'pbem --help'."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import audit, game, judge, mail, play, tools
from .common import _GLOBAL, JsonErrorsGroup

app = typer.Typer(
    name="pbem",
    cls=JsonErrorsGroup,
    help="Adjudicate board games played by email or on a forum: sealed choices, provably fair dice, "
         "a hash-chained log anyone can audit. Start with: pbem demo",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _main(db: Annotated[Optional[Path], typer.Option("--db", envvar="PBEM_DB", help="SQLite file of the games (default: a per-user data file).", show_default=False)] = None):
    _GLOBAL["db"] = db


for group in (game, play, audit, tools, mail, judge):
    group.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # python -m pbem.cli.app ...
    main()
