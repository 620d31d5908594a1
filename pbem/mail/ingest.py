"""The email judge's pipeline for one incoming message: the stages, in their order.

    limits (bytes) -> read (bytes -> Incoming: ``message``) -> seen? -> screen (loops,
    bounces, lists: ``screen``) -> bounces (what the screen turned away is read for
    addresses that failed: ``bounces``) -> route (the sender, then the game and player:
    ``route``) -> refuse what is past a limit (size, parts, lines, ... see ``limits``;
    command lines) -> authenticate (password or signatures: ``authenticate``) -> apply
    (the protocol's own commands, one savepoint each: ``apply``) -> answer (``answer``,
    into the moment: ``moment``) -> mark seen

All of it is one transaction (or, for a batch from an mbox or Maildir, one savepoint in the
batch's transaction): the events, the answer and every message the events call for
(``pbem.mail.judge``), and the record that the message was seen. Each stage takes plain
values and returns plain values or ends the message with a ``Stop`` (``outcome``); no stage
imports another. ``now`` is a parameter: nothing here reads the clock.
"""

from __future__ import annotations

import hashlib

from ..protocol import loading
from ..protocol.armour import ArmourError, extract_blocks
from ..protocol.errors import ProtocolError
from ..store import judge as tables
from . import answer, apply, failures, judge, limits, route
from .authenticate import authenticate
from .lines import MAX_COMMANDS, read_lines
from .message import MailError, read_message
from .moment import moment
from .outcome import Result, Stop, one_line
from .quoting import command_lines
from .screen import screen

# (imported here, not in the functions: ingest runs them for every message, and each
# import statement in a function costs 1-3 us; nothing here is imported at start-up)


class _Screened(Stop):
    """The screen's verdict: automatic mail, never answered (the bounce step reads it)."""


def ingest(store, raw: bytes, now: str, judge_addresses: tuple[str, ...] = ()) -> Result:
    """Act on one message (RFC 5322 bytes) once, in one transaction; see the module docstring."""
    return ingest_many(store, [raw], lambda: now, judge_addresses)[0]


def ingest_many(store, messages, clock, judge_addresses: tuple[str, ...] = (), batch: int = 200,
                on_commit=None, before_commit=None) -> list[Result]:
    """Act on many messages, up to ``batch`` of them in one transaction (one commit, one
    disk flush), each message in a savepoint of its own: a message's events, answers and
    seen-record stand or fall together, and a crash leaves the whole batch undone (so it is
    read again, from the same mbox or Maildir, and acted on once). ``clock()`` gives each
    message's time; ``before_commit(results)`` runs inside each batch's transaction, for a
    record that must commit with the batch (an IMAP folder's last UID);
    ``on_commit(results)`` runs after each batch is committed (a Maildir moves those
    messages to cur/ then)."""
    judge.attach(store, judge_addresses[0] if judge_addresses else None)
    results: list[Result] = []
    pending: list[Result] = []
    items = iter(messages)
    while True:
        chunk = [raw for _, raw in zip(range(batch), items)]
        if not chunk:
            break
        with store.transaction():
            for raw in chunk:
                now = clock()
                try:
                    with store.atomic():
                        pending.append(_one(store, raw, now, judge_addresses, read_message, MailError, screen))
                except Exception as exc:  # noqa: BLE001 - one message must never stop the judge's mail
                    with store.atomic():  # its savepoint is undone; record it, so it is not read forever
                        pending.append(_failed(store, raw, now, exc))
            if before_commit is not None:
                before_commit(pending)
        results += pending
        if on_commit is not None:
            on_commit(pending)
        pending = []
    return results


def _failed(store, raw: bytes, now: str, exc: Exception) -> Result:
    """A message the judge could not act on for a reason of its own (a bug, a damaged
    database): nothing of it stays, it is recorded as seen by its bytes (a copy the sender
    makes again is read again), and the moderator reads why in the command's output."""
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    result = Result(digest, f"failed: {one_line(exc)[:300]}")
    if not tables.seen(store, [digest]):
        tables.mark_seen(store, [digest], None, "", now, result.outcome[:200])
    return result


def _one(store, raw: bytes, now: str, judge_addresses, read_message, MailError, screen) -> Result:
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    exceeded = limits.check(raw)
    try:
        # past a limit, the parser sees only the few header lines needed to screen and answer
        msg = read_message(limits.skeleton(raw) if exceeded else raw)
    except MailError as exc:
        result = Result(digest, f"not answered: unreadable ({exc})")
        if not tables.seen(store, [digest]):
            tables.mark_seen(store, [digest], None, "", now, result.outcome)
        return result
    keys = sorted({msg.key, digest})
    result = Result(msg.key, "", sender=msg.sender)
    if tables.seen(store, keys):
        result.outcome = "duplicate"
        return result
    with moment(store, now):  # one message per player for all this mail causes, the answer first
        try:
            _pipeline(store, msg, exceeded or msg.over_limit, now, judge_addresses, screen, result)
        except Stop as stop:
            result.outcome = stop.outcome
            # automatic mail: read it for bounces, never answer it; a message past the limits
            # is no mail system's report (those are small), and reading it would parse it
            if isinstance(stop, _Screened) and exceeded is None:
                result.bounced = _bounces(store, raw, now)
                if result.bounced:
                    result.outcome += f"; bounce: {', '.join(result.bounced)}"
            if stop.answer is not None:
                answer.queue(store, msg, result, stop.answer, now, hold=stop.confirms)
    if result.outcome.startswith("not answered: ") and not result.game:
        # a list's or a robot's copy is known by its bytes alone: the player's own copy
        # of the same message (the same Message-ID) is still read when it arrives
        keys = [digest]
    tables.mark_seen(store, keys, result.game, msg.sender, now, result.outcome[:200])
    return result


def _pipeline(store, msg, exceeded, now: str, judge_addresses, screen, result: Result) -> None:
    reason = screen(msg, tuple(a.lower() for a in judge_addresses))
    if reason:
        raise _Screened(f"not answered: {reason}")
    lines = command_lines(msg.text)  # read once, for the route and the commands
    registered = route.sender(store, msg, lines, now)
    _alive(store, msg.sender)
    reading = read_lines(lines)  # every line: chat is read past below, and only commands count
    row = route.seat(store, msg, reading, registered)
    result.game, result.player = row.game, row.player
    result.address = row.address
    if exceeded is not None:
        raise Stop(exceeded.outcome, exceeded.answer())
    try:
        blocks = extract_blocks(msg.text)
    except ArmourError as exc:
        blocks, broken = [], str(exc)
    else:
        broken = None
    try:
        session = loading.load(store, row.game)
    except ProtocolError as exc:  # a damaged game takes no moves until the moderator repairs it
        raise Stop("refused: game cannot be read", f"Nothing was done: {one_line(exc)}. Your moderator "
                                                   f"has to look at it; send your move again later.") from None
    signed_game = bool(session.meta.get("require_signatures"))
    ignored = _read_past(session, reading)
    if len(reading.commands) > MAX_COMMANDS:  # chat read past does not count; the byte and line limits stay
        raise Stop("refused: too many lines", f"Your message has more than {MAX_COMMANDS} command lines; the judge "
                                              f"takes at most {MAX_COMMANDS} in one message. Nothing was done.")
    authenticate(store, msg, reading, row, signed_game, blocks, now, result)
    if broken:
        result.lines.append({"line": "(submission block)", "ok": False, "text": broken})
    before = store.head(row.game)[0]
    session, latest = apply.apply_mail(store, row, session, reading, blocks, signed_game, msg, now, result)
    raise answer.conclude(store, row, result, session, reading.commands, ignored, broken, blocks, before, latest)


def _read_past(session, reading) -> list:
    """Take out of ``reading`` the lines that are neither a command word nor look like a
    choice of the game (a greeting, a name, a line of chat): read past, never refused;
    they are named only when nothing applied. Returns them."""
    looks = getattr(session.rules, "looks_like_choice", None)
    ignored = [c for c in reading.commands if c.verb == "choice" and looks is not None and not looks(c.args[0])]
    reading.commands = [c for c in reading.commands if c not in ignored]
    return ignored


def _bounces(store, raw: bytes, now: str) -> list[str]:
    """The bounce step: automatic mail is read for the addresses that failed (and never
    answered); see ``pbem.mail.bounces``."""
    from . import bounces
    found = bounces.read(raw)
    return bounces.record(store, found, now) if found is not None else []


def _alive(store, address: str) -> None:
    """A player's address that mails the judge works again: its failures are forgotten, and
    reminders go to it again (``pbem.mail.failures``)."""
    failures.clear(store, address)


