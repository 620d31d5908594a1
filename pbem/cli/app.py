"""The pbem command line. Commands live in one module per group; see 'pbem --help'."""


if __name__ == "__main__":  # python -m pbem.cli.app: handle Ctrl-C before the imports below
    from pbem.cli.entry import install

    install()

from pathlib import Path  # noqa: E402
from typing import Annotated, Optional

import typer

from ..store.faults import maybe_crash

maybe_crash("imports")  # a test's SIGINT lands here, half-way through the imports
from . import audit, away, deadlines, game, judge, mail, play, run, tools  # noqa: E402
from .common import _GLOBAL, JsonErrorsGroup  # noqa: E402

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


for group in (game, play, audit, tools, mail, judge, deadlines, run, away):
    group.register(app)


def main() -> None:
    app()


if __name__ == "__main__":  # python -m pbem.cli.app ...
    main()
