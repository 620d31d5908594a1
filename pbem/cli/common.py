"""Shared pieces of the command line: options, opening the store, errors and output."""


import functools
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

try:  # newer typer raises the errors of its own copy of click
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - typer on the real click
    from click.exceptions import UsageError

from ..text import quote

DbOption = Annotated[
    Optional[Path],
    typer.Option("--db", help="SQLite file of the games (default: $PBEM_DB, else a per-user data file).",
                 show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (a stable contract) instead of text.")]
GameArg = Annotated[str, typer.Argument(help="The game's name, as given to 'pbem new'.", show_default=False)]
PlayerArg = Annotated[str, typer.Argument(help="A player's name, as listed at 'pbem new'.", show_default=False)]

_GLOBAL: dict = {"db": None, "json": False}


def default_db() -> Path:
    if os.environ.get("PBEM_DB"):
        return Path(os.environ["PBEM_DB"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "pbem" / "pbem.db"


def use_db(db: Optional[Path]) -> None:
    """The program's own --db (``pbem --db FILE COMMAND``): the database of a command given none."""
    _GLOBAL["db"] = db


def db_path(db: Optional[Path]) -> Path:
    return db or _GLOBAL["db"] or default_db()


def open_store(db: Optional[Path], create: bool = False):
    """The games database; only commands that start games (new, demo) may create it, so a
    mistyped --db is reported instead of leaving a stray empty database behind."""
    from ..mail import write_hook
    from ..store import Store
    store = Store(db_path(db), create=create)
    store.write_hooks.append(write_hook)  # writes to a game with addresses queue the mail they call for
    from ..render import publish
    publish.attach(store)  # and to a game that keeps its viewer in a folder, write it again
    _OPENED.append(store)
    if _KEPT is not None:
        _KEPT.append(store)
    return store


_OPENED: list = []  # the stores this command opened, whose page errors it reports
# The program's stores (``pbem``, one command per process: see entry.leave), closed at its
# end; None in-process (tests, the library), where a dropped store is freed as any object.
_KEPT: list | None = None


def keep_stores(keep: bool = True) -> None:
    """From now on, keep every store opened, for ``close_stores``: the program's own choice
    (a store dropped without close() keeps its connection open until the collector's next
    pass, as sqlite3 ties each connection in a cycle through its statement cache).
    ``keep=False``: keep none from now on (those kept are dropped, and freed as any object)."""
    global _KEPT
    _KEPT = [] if keep else None


def close_stores() -> None:
    """Close every store opened since ``keep_stores`` (the program's last act)."""
    for store in _KEPT or ():
        store.close()


def warn_page_errors() -> None:
    """A viewer the judge keeps in a folder that could not be written after a committed
    write: one warning line each on stderr. The command's own result stands (its write is
    committed), so the exit status does not change."""
    for store in _OPENED:
        errors, store.page_errors = getattr(store, "page_errors", []), []
        for message in errors:
            typer.echo(f"pbem: warning: {_one_line(Exception(message))}", err=True)
    _OPENED.clear()


def fail(message: str, code: int = 1):
    """Stop with a one-line reason on stderr; under --json also as one JSON object on stdout."""
    if _GLOBAL["json"]:
        json_error(message, code)
    typer.echo(f"pbem: {message}", err=True)
    raise typer.Exit(code)


def json_error(message: str, code: int) -> None:
    """A failure as a script reads it: one JSON document on stdout, whatever went wrong."""
    emit({"error": message, "code": code}, True)


def handled(func):
    """Turn the library's typed errors into a one-line reason on stderr and exit status 1
    (with --json, also ``{"error": ..., "code": 1}`` on stdout)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer, _GLOBAL["json"] = _GLOBAL["json"], bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            # typed ValueErrors too: those of the protocol modules (keys, salts, armour)
            if isinstance(exc, (*_typed_errors(), ValueError)):
                fail(_one_line(exc))
            if isinstance(exc, OSError):
                fail(f"{exc.strerror or exc}: {exc.filename}" if getattr(exc, "filename", None) else str(exc))
            if isinstance(exc, sqlite3.Error):  # the store turns the ones it expects into StoreError
                fail(f"the games database cannot be used: {_one_line(exc)}")
            raise
        finally:
            _GLOBAL["json"] = outer
            warn_page_errors()
    return wrapper


# The library's typed errors (module, class): looked up only when something was raised, and
# only in the modules already loaded, since an error can only come from a loaded module (a
# command that imports none of them, such as status, does not load them for its except).
_TYPED_ERRORS = (("pbem.protocol.errors", "ProtocolError"), ("pbem.store.errors", "StoreError"),
                 ("pbem.games", "UnknownGame"))


def _typed_errors() -> tuple[type, ...]:
    return tuple(getattr(sys.modules[module], name) for module, name in _TYPED_ERRORS if module in sys.modules)


def _wants_json(args) -> bool:
    args = list(args)
    return "--json" in (args[:args.index("--")] if "--" in args else args)


class JsonErrorsGroup(TyperGroup):
    """The command group. A usage error (exit 2) is one line on stderr, as a refusal is
    (``pbem: <what was wrong> (pbem COMMAND --help)``), not click's three-line block; with
    --json on the command line it is also one JSON object on stdout, as every other failure
    is (see ``handled``)."""

    def make_context(self, info_name, args, parent=None, **extra):
        wants = _wants_json(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except UsageError as exc:
            usage_error(exc, wants)
        ctx.meta["pbem.json"] = wants
        return ctx

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            usage_error(exc, ctx.meta.get("pbem.json"))


def usage_error(exc, as_json: bool):
    """A usage error as one line (and exit status 2, or the error's own)."""
    message = _one_line(Exception(exc.format_message()))
    if message.startswith("No such option: -") and message[len("No such option: -"):][:1].isdecimal():
        message += " (a negative number: a duration or a count cannot be negative)"
    where = getattr(exc, "ctx", None)
    if where is not None and not message.endswith(")"):
        message += f" (see: {where.command_path} --help)"
    if as_json:
        json_error(message, exc.exit_code)
    typer.echo(f"pbem: {message}", err=True)
    raise typer.Exit(exc.exit_code)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def emit(data, as_json: bool, text: str | None = None) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    elif text is not None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def parse_step(value: Optional[str]) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        r, s = value.split(".")
        return int(r), int(s)
    except ValueError:
        raise typer.BadParameter(f"{quote(value)}: give the sealed step as ROUND.STEP, e.g. 3.2") from None


def parse_round(value: Optional[str]) -> int | None:
    """A round number given as text (click's own int check would quote all of it)."""
    if value is None:
        return None
    if not digits(value.strip()):
        raise typer.BadParameter(f"{quote(value)} is not a round number; give one like 3")
    return int(value)


DURATION = "a whole number of minutes, hours or days from 1m to 365d, like 30m, 48h or 3d"
WIDE_DIGITS = "not a duration (its number in the digits 0 to 9)"


def digits(text: str) -> bool:
    """Whether ``text`` is a number in the digits 0 to 9 (str.isdecimal also takes ９ and ٩)."""
    return text.isascii() and text.isdecimal()


def _wide_digits(text: str) -> bool:
    return len(text) >= 2 and text[-1] in "mhd" and text[:-1].isdecimal() and not text[:-1].isascii()


def parse_duration(value: Optional[str]) -> int | None:
    """Seconds of a duration: 30m, 48h, 3d (from 1m to 365d); else a one-line usage error."""
    if value is None:
        return None
    units = {"m": 60, "h": 3600, "d": 86400}
    text = value.strip().lower()
    if text.startswith("-"):
        raise typer.BadParameter(f"{quote(value)}: a duration cannot be negative; give {DURATION}")
    if _wide_digits(text):
        raise typer.BadParameter(f"{quote(value)}: {WIDE_DIGITS}; give {DURATION}")
    if len(text) >= 2 and text[-1] in units and digits(text[:-1]) and int(text[:-1]) > 0:
        seconds = int(text[:-1]) * units[text[-1]]
        if seconds <= 365 * 86400:
            return seconds
        raise typer.BadParameter(f"{quote(value)}: a deadline of more than a year (365d) is not a deadline; "
                                 f"give {DURATION}")
    if len(text) >= 2 and text[-1] in units and digits(text[:-1]):  # 0m, 0h, 0d
        raise typer.BadParameter(f"{quote(value)}: a duration is at least 1m; give {DURATION}")
    raise typer.BadParameter(f"{quote(value)}: not a duration; give {DURATION}")


def parse_wait(value: Optional[str], option: str) -> int | None:
    """A reminder or grace period: a duration like 12h, or 0 / none for none."""
    if value is None:
        return None
    text = value.strip().lower()
    if _wide_digits(text):
        raise typer.BadParameter(f"{option} {quote(value)}: {WIDE_DIGITS}; give {DURATION}, or none")
    if text in ("0", "none") or (len(text) >= 2 and text[-1] in "mhd" and digits(text[:-1])
                                  and int(text[:-1]) == 0):  # 0m, 0h, 0d: none, as 0 is
        return 0
    try:
        return parse_duration(value)
    except typer.BadParameter:
        why = "a duration cannot be negative; give" if value.strip().startswith("-") else "give a duration,"
        raise typer.BadParameter(f"{option} {quote(value)}: {why} {DURATION}, or none") from None


def check_on_late(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in ("default", "wait"):
        raise typer.BadParameter(f"{quote(value)}: use default (apply the documented default, as pbem nmr does) "
                                 f"or wait (never default: remind and report only)")
    return value


RemindOption = Annotated[Optional[str], typer.Option(
    "--remind", help="Mail a reminder this long before a request is due, e.g. 12h ('none': no reminders).",
    show_default=False)]
GraceOption = Annotated[Optional[str], typer.Option(
    "--grace", help="Extra time after the deadline before a late player is defaulted, e.g. 1h ('none': no grace).",
    show_default=False)]
OnLateOption = Annotated[Optional[str], typer.Option(
    "--on-late", callback=check_on_late,
    help="Once a request is past its deadline (and grace): 'default' applies the documented default "
         "(pbem mail tick does it), 'wait' never defaults (the player is told, the game waits).",
    show_default=False)]


def safe(text: str) -> str:
    """A user-given string for a terminal line: control characters shown escaped."""
    text = str(text)
    if text.isprintable():  # nearly always: no need to look at each character
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _check_format(value: str) -> str:
    from ..render.escape import FORMATS
    if value not in FORMATS:
        raise typer.BadParameter(f"{quote(value)}: use one of {', '.join(FORMATS)}")
    return value


FormatOption = Annotated[str, typer.Option(
    "--format", callback=_check_format,
    help="text (email), markdown (Discord, Reddit), bbcode (BoardGameGeek, phpBB) or html; see docs/formats.md.")]


def due_text(entry: dict) -> str:
    if entry.get("paused"):
        return ", paused"
    if "due" not in entry:
        return ""
    return f", due {entry['due'].replace('T', ' ').replace('Z', ' UTC')}" + (" - OVERDUE" if entry.get("overdue") else "")


def seat_text(entry: dict) -> str:
    """Who plays a seat, as ``status`` says it (``reports.status``'s ``seats``)."""
    when = lambda at: str(at).replace("T", " ").replace("Z", " UTC")  # noqa: E731
    if entry.get("played_by") == "stand-in":
        text = "played by the stand-in"
        if entry.get("since"):
            n = entry.get("defaults", 0)
            text += f" since {when(entry['since'])} (after {n} default{'' if n == 1 else 's'} in a row)"
    else:
        text = "played by a person"
    if entry.get("replaced"):
        text += f"; replaced at {when(entry['replaced'])}" if entry.get("played_by") == "stand-in" \
            else f" (a new one: the seat was replaced at {when(entry['replaced'])})"
    return text


def status_text(r: dict) -> str:
    lines = [f"game {r['game']} ({r['type']}): players {', '.join(map(safe, r['players']))}"]
    if not r["started"]:
        lines.append(f"not started; client seeds from: {', '.join(map(safe, r['client_seeds'])) or 'nobody yet'}")
    else:
        start = f"; start player {safe(r['start_player'])}" if r.get("start_player") is not None else ""
        from ..games import round_word
        word = r.get("round_word") or round_word(r.get("type"))  # 1667's summaries say "turn"
        step = f", step {r['step']}" if word == "round" or r["step"] else ""
        lines.append(f"{word} {r['round']}{step}, phase {r['phase']}{start}")
        if r.get("paused"):
            lines.append(f"paused since {r['paused']['since'].replace('T', ' ').replace('Z', ' UTC')} "
                         f"({safe(r['paused']['reason'])}): no deadline runs until pbem resume {r['game']}")
        if r.get("seats"):
            lines.append("seats: " + "; ".join(f"{safe(p)} {seat_text(e)}" for p, e in r["seats"].items()))
        if r["waiting"]:
            lines.append("waiting for: " + "; ".join(
                f"{safe(w['player'])} ({w['kind']}{', sealed' if w['sealed'] else ''}"
                f"{due_text(w)})" for w in r["waiting"]))
    if r.get("seed_revealed") and not r["finished"] and r["started"]:
        lines.append("play has ended: the server seed was revealed before the end (reveal-seed --force)")
    if r["finished"]:
        lines.append("finished: " + ", ".join(f"{safe(p)} {s}" for p, s in r["scores"].items())
                     + f"; winner(s): {', '.join(map(safe, r['winners']))}")
    lines.append(f"chain head: event {r['chain_head']['seq']} {r['chain_head']['hash']}")
    return "\n".join(lines)
