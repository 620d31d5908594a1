"""The pbem command line as a typer program: every command group, or for a command that one
group registers alone (``pbem status g``) only that group. Commands live in one module per
group; see 'pbem --help'. The program is started by entry.main, which handles Ctrl-C first."""

from importlib import import_module
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..store.faults import maybe_crash

maybe_crash("imports")  # a test's SIGINT lands here, half-way through the imports
from .common import JsonErrorsGroup, use_db  # noqa: E402

# The group of each top-level command that one group registers alone: ``pbem status g``
# builds only that group's commands (typer converts every registered command's options
# on each run, a cost at every start-up). Anything else gets the whole program.
GROUPS = ("game", "play", "audit", "tools")
SOLO = {name: group for group, names in {
    "game": ("new", "client-seed", "key", "start", "games", "status", "private"),
    "play": ("seal", "commit", "reveal", "decide", "submit", "nmr"),
    "audit": ("show", "log", "export", "audit", "check-restore", "replay", "reveal-seed"),
    "tools": ("keygen", "demo"),
}.items() for name in names}


def _main(db: Annotated[Optional[Path], typer.Option("--db", envvar="PBEM_DB", help="SQLite file of the games (default: a per-user data file).", show_default=False)] = None):
    use_db(db)


def build(only: str | None = None, command: str | None = None) -> typer.Typer:
    """The program: every command group, or only the group named ``only`` (see ``SOLO``),
    and of it only ``command`` when one is named."""
    new = typer.Typer(
        name="pbem",
        cls=JsonErrorsGroup,
        help="Adjudicate board games played by email or on a forum: sealed choices, provably fair dice, "
             "a hash-chained log anyone can audit. Start with: pbem demo",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    new.callback()(_main)
    if only is not None:
        import_module(f"{__package__}.{only}").register(new)
        if command is not None:
            new.registered_commands = [c for c in new.registered_commands if c.name == command]
        return new
    from . import audit, away, deadlines, game, judge, mail, pages, play, run, tools
    for group in (game, play, audit, tools, pages, mail, judge, deadlines, run, away):
        group.register(new)
    return new


def _solo_command(args: list[str]) -> str | None:
    """The command named in ``args`` when it is one of ``SOLO`` (after any --db)."""
    k = 0
    while k < len(args) and (args[k] == "--db" or args[k].startswith("--db=")):
        k += 2 if args[k] == "--db" else 1
    return args[k] if k < len(args) and args[k] in SOLO else None


def __getattr__(name: str):
    """``app``, the whole program, is built on first use (``main`` may need one group only)."""
    if name == "app":
        globals()["app"] = built = build()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    import sys
    command = _solo_command(sys.argv[1:])
    build(SOLO[command], command)() if command else build()()
