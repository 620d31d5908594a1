"""The email judge's commands: address (who gets mail) and mail ingest (mail in)."""


import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from .common import DbOption, GameArg, JsonOption, emit, fail, handled, open_store, safe

def register(app: typer.Typer) -> None:
    from .mail import app as mail_app
    app.command("address")(address)
    mail_app.command("ingest")(ingest)


@handled
def address(game: GameArg,
            player: Annotated[Optional[str], typer.Argument(help="The player.", show_default=False)] = None,
            email: Annotated[Optional[str], typer.Argument(help="Their address, e.g. ani@example.org.", show_default=False)] = None,
            new_password: Annotated[bool, typer.Option("--new-password", help="Make and mail a new mail password (the old one stops working).")] = False,
            list_address: Annotated[Optional[str], typer.Option("--list", help="Set the address (forum, list) that also gets every public summary; 'none' to remove it.")] = None,
            moderator: Annotated[Optional[str], typer.Option("--moderator", help="Set the moderator's address, told when mail to a player cannot be delivered; 'none' to remove it.", show_default=False)] = None,
            tz: Annotated[Optional[str], typer.Option("--tz", help="The player's time zone (an IANA name such as Europe/Prague): times in their mail are shown in it too, next to UTC; 'none' to remove it.", show_default=False)] = None,
            plain: Annotated[Optional[bool], typer.Option("--plain/--html", help="--plain: mail them plain text only; --html: text and an HTML part with the board as a picture (the default).", show_default=False)] = None,
            db: DbOption = None, as_json: JsonOption = False):
    """Set or change a player's email address (the judge mails them a password if they have none).

    \b
    Example: pbem address g1 ani ani@example.org
    Example: pbem address g1 ani ani@example.org --new-password   (a lost password)
    Example: pbem address g1 ani ani@example.org --tz Europe/Prague
    Example: pbem address g1 ani --plain        (plain text only, no HTML, no pictures)
    Example: pbem address g1 --list g1-table@lists.example.org
    Example: pbem address g1 --moderator me@example.org
    """
    from ..mail import addresses as judge
    from ..protocol.commands import now_utc
    store = open_store(db)
    if moderator is not None:
        if player or email or tz is not None or list_address is not None:
            fail("give either PLAYER EMAIL, --list ADDRESS or --moderator ADDRESS", 2)
        chosen = judge.set_moderator(store, game, None if moderator.lower() == "none" else moderator)
        emit({"game": game, "moderator": chosen}, as_json,
             f"the moderator of {game} is told at {chosen} when mail to a player cannot be delivered" if chosen
             else f"game {game} has no moderator address now")
        return
    if list_address is not None:
        if player or email or tz is not None:
            fail("give either PLAYER EMAIL or --list ADDRESS", 2)
        chosen = judge.set_list(store, game, None if list_address.lower() == "none" else list_address, plain)
        emit({"game": game, "list": chosen}, as_json,
             f"public summaries of {game} also go to {chosen}{_how(plain)}" if chosen else f"game {game} has no list address now")
        return
    if player and not email and plain is not None and not new_password and tz is None:
        done = judge.set_plain(store, game, player, plain)
        emit(done, as_json, f"{safe(player)} in {game} gets mail{_how(plain)}")
        return
    if not player or not email:
        fail("give GAME PLAYER EMAIL, e.g. pbem address g1 ani ani@example.org (or GAME PLAYER --plain)", 2)
    if tz is not None and tz.strip().lower() == "none":
        tz = ""
    done = judge.register(store, game, player, email, at=now_utc(), new_password=new_password, tz=tz, plain=plain)
    text = f"{safe(player)} in {game}: {done['address']}" + (f", time zone {done['tz']}" if done["tz"] else "")
    text += ", plain text only" if done["plain"] else ""
    if done["password_sent"]:
        text += "; a new mail password and their private message are queued for them (pbem mail send)"
    elif done["private_queued"]:
        text += "; their private message is queued for the new address (pbem mail send)"
    if done["dropped"]:
        text += f"; {done['dropped']} message(s) not yet sent to the old address were dropped"
    emit(done, as_json, text)


@handled
def ingest(file: Annotated[Optional[List[Path]], typer.Option("--file", help="A saved message (.eml); repeatable.")] = None,
           mbox: Annotated[Optional[Path], typer.Option("--mbox", help="An mbox file: every message in it.")] = None,
           maildir: Annotated[Optional[Path], typer.Option("--maildir", help="A Maildir: messages in new/ are read, then moved to cur/.")] = None,
           judge_address: Annotated[Optional[str], typer.Option("--judge", help="The judge's own address, never answered (default: judge_address in the config file).", show_default=False)] = None,
           config_file: Annotated[Optional[Path], typer.Option("--config", help="Mail config file (default: $PBEM_MAIL_CONFIG, else ~/.config/pbem/mail.toml).", show_default=False)] = None,
           db: DbOption = None, as_json: JsonOption = False):
    """Read players' mail and act on it: one message on standard input (an MTA pipe), or files.

    Each message is acted on once (by Message-ID, else by its bytes) and answered through
    the outbox; send the answers with 'pbem mail send'. Exit status 0 even for refused
    commands (they are answered), so an MTA never bounces a player's mail.

    \b
    Example: pbem mail ingest < message.eml          (Postfix: "|pbem mail ingest")
    Example: pbem mail ingest --maildir ~/Maildir
    """
    from ..mail import ingest as pipeline
    from ..protocol.commands import now_utc
    from .mail import ingest_line
    sources = sum(x is not None and x != [] for x in (file, mbox, maildir))
    if sources > 1:
        fail("give one of --file, --mbox or --maildir (or a message on standard input)", 2)
    import os
    from ..mail.config import load_config
    judge_address = judge_address or load_config(config_file, os.environ).judge_address
    store = open_store(db)
    judges = tuple(a for a in [judge_address] if a)
    callbacks = []

    def raws():
        for raw, done in _messages(file, mbox, maildir):
            callbacks.append(done)
            yield raw

    def committed(batch):
        for _ in batch:
            callbacks.pop(0)()
    results = pipeline.ingest_many(store, raws(), now_utc, judges, on_commit=committed)
    rows = [r.as_dict() for r in results]
    emit({"messages": rows}, as_json, "\n".join(ingest_line(r) for r in results) or "no messages")


def _how(plain) -> str:
    if plain is None:
        return ""
    return " as plain text only" if plain else " as text and HTML, with the board as a picture"


def _messages(files, mbox, maildir):
    """(raw bytes, a callback once it is processed) for every message of the source."""
    nothing = lambda: None  # noqa: E731
    if files:
        for path in files:
            yield _read_capped(path.open("rb"), str(path)), nothing
    elif mbox is not None:
        import mailbox
        if not mbox.is_file():
            fail(f"{mbox} is not an mbox file")
        with mbox.open("rb") as head:
            start = head.read(5)
        if start and start != b"From ":
            fail(f"{mbox} is not an mbox file (an mbox starts with a 'From ' line); for one saved message use --file")
        box = mailbox.mbox(str(mbox), create=False)
        for key in box.iterkeys():
            yield box.get_bytes(key), nothing
    elif maildir is not None:
        yield from _maildir(maildir)
    else:
        yield _read_capped(sys.stdin.buffer, "standard input"), nothing


def _read_capped(handle, name: str) -> bytes:
    from ..mail.maildir import NotAMessage, read_capped
    try:
        return read_capped(handle, name)
    except NotAMessage as exc:
        fail(str(exc))


def _maildir(folder: Path):
    """Messages in new/, oldest first; each moves to cur/ (seen) once it is processed."""
    from ..mail.maildir import MaildirError, check, messages
    try:
        check(folder)
    except MaildirError as exc:
        fail(str(exc))
    yield from messages(folder)
