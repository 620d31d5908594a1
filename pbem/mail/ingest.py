"""The email judge's pipeline for one incoming message:

    limits (bytes) -> read (bytes -> Incoming) -> seen? -> screen (loops, bounces, lists)
    -> bounces (what the screen turned away is read for addresses that failed: pbem.mail.bounces)
    -> rate limits -> route (game, player) -> refuse what is past a limit (size, parts,
    lines, ... see ``pbem.mail.limits``; command lines) -> authenticate (password or signatures)
    -> the protocol's own commands, one savepoint each -> answer (outbox) -> mark seen

All of it is one transaction (or, for a batch from an mbox or Maildir, one savepoint in the
batch's transaction): the events, the answer and every message the events call for
(``pbem.mail.judge``), and the record that the message was seen. A refused command rolls
back alone and is named in the answer with the same one-line reason the command line gives.
``now`` is a parameter: nothing here reads the clock.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from ..games import round_word
from ..games.base import ChoiceError
from ..protocol import commands
from ..protocol.armour import ArmourError, extract_blocks
from ..protocol.errors import ProtocolError
from ..protocol.receipts import issue
from ..protocol.reports import waiting
from ..protocol.times import shift
from ..render.times import shown
from ..store import judge as tables
from ..store import outbox
from ..store.outbox import MESSAGE_ID_PATTERN
from . import failures, judge, letters, limits
from .away import former_refusal
from .envelope import domain
from .limits import MAX_BYTES
from .lines import MAX_COMMANDS, read_lines
from .message import MailError, read_message
from .moment import current, moment
from .passwords import check_password
from .quoting import command_lines
from .screen import screen

# (imported here, not in the functions: ingest runs them for every message, and each
# import statement in a function costs 1-3 us; nothing here is imported at start-up)

NO_GAME = "-"  # the outbox's game for an answer to a message that names no game of the sender
PASSWORD_STRIKES = 5  # wrong passwords from one address within an hour, before it is ignored
GAME_TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")
HELP = """The judge reads the lines of your message above the signature ('-- '); lines quoted
with '>' are never read, and greetings, sign-offs and other lines that are not commands are
read past. One command a line:
  password WORD          your mail password (from your first private message)
  seal CHOICE            the judge seals your choice on receipt, e.g. seal {sealed}
  commit HASH            a commitment made with: pbem seal --context TOKEN CHOICE
  reveal CHOICE SALT     its reveal, once every commitment is in
  CHOICE                 an open decision, e.g. {open}
  client-seed TEXT       your client seed, before the game starts
  extend 24h             more time for what you owe now (the game allows it once, up to 24h, unless
                         its moderator set otherwise), before your deadline passes
  status                 who owes what
  private                your private message again
  help                   this text
Signed blocks (-----BEGIN PBEM SUBMISSION-----) may be pasted anywhere in the message.
Put the game in the subject as [GAME] or in a line 'game GAME'."""


def help_text(rules=None) -> str:
    """The help answer, with examples in the syntax of the game asked about (Tortuga's
    when the message names no game)."""
    examples = getattr(rules, "EXAMPLES", None) or {"sealed": "B,C", "open": "skull:raid"}
    return HELP.format(**examples)


@dataclass
class Result:
    """What became of one message (also the ``--json`` form of ``pbem mail ingest``)."""

    key: str
    outcome: str  # applied | refused | duplicate | not answered: ... | ...
    sender: str = ""
    game: str | None = None
    player: str | None = None
    address: str | None = None  # where the answer went: the player's registered address
    answered: bool = False
    lines: list = field(default_factory=list)  # {"line", "ok", "text"}
    bounced: list = field(default_factory=list)  # what a bounce reported, one phrase an address

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class _Stop(Exception):
    """End the pipeline with an answer (or none) and an outcome. ``confirms``: the answer
    only confirms moves (see ``CONFIRMED``), so it may wait for the player's next message."""

    def __init__(self, outcome: str, answer: str | None = None, confirms: bool = False):
        super().__init__(outcome)
        self.outcome, self.answer, self.confirms = outcome, answer, confirms


# What an answer that only confirms answers: moves, each applied. An answer to anything else
# (status, help, private, extend), or one that refuses or notes anything, goes at once.
CONFIRMED = ("seal", "commit", "reveal", "choice", "client-seed")


class _Screened(_Stop):
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
    result = Result(digest, f"failed: {_one_line(exc)[:300]}")
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
        except _Stop as stop:
            result.outcome = stop.outcome
            # automatic mail: read it for bounces, never answer it; a message past the limits
            # is no mail system's report (those are small), and reading it would parse it
            if isinstance(stop, _Screened) and exceeded is None:
                result.bounced = _bounces(store, raw, now)
                if result.bounced:
                    result.outcome += f"; bounce: {', '.join(result.bounced)}"
            if stop.answer is not None:
                _answer(store, msg, result, stop.answer, now, hold=stop.confirms)
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
    if not msg.sender:
        raise _Stop("not answered: no sender address")
    registered = tables.players_at(store, msg.sender)
    lines = command_lines(msg.text)  # read once, for _former and the commands
    _former(store, msg, registered, now, lines)
    if not registered:
        if tables.strikes_since(store, msg.sender, "unknown", _earlier(now, 86400)):
            raise _Stop("not answered: unknown sender (already answered today)")
        if not _deliverable(msg.sender):  # ani@example.org. and the like: no answer can reach it
            raise _Stop(f"not answered: unknown sender at an address that cannot be answered ({msg.sender[:80]})")
        tables.strike(store, msg.sender, "unknown", now)
        raise _Stop("unknown sender", f"The address {msg.sender} is not registered with this judge for any game, "
                                      f"so nothing was done. Ask your moderator to register it "
                                      f"(pbem address GAME PLAYER EMAIL).")
    _alive(store, msg.sender)
    reading = read_lines(lines, limit=MAX_COMMANDS)
    row = _route(store, msg, reading, registered)
    result.game, result.player = row.game, row.player
    result.address = row.address
    if exceeded is not None:
        raise _Stop(exceeded.outcome, exceeded.answer())
    if len(reading.commands) > MAX_COMMANDS:
        raise _Stop("refused: too many lines", f"Your message has more than {MAX_COMMANDS} command lines; the judge "
                                               f"takes at most {MAX_COMMANDS} in one message. Nothing was done.")
    try:
        blocks = extract_blocks(msg.text)
    except ArmourError as exc:
        blocks, broken = [], str(exc)
    else:
        broken = None
    try:
        session = commands.load(store, row.game)
    except ProtocolError as exc:  # a damaged game takes no moves until the moderator repairs it
        raise _Stop("refused: game cannot be read", f"Nothing was done: {_one_line(exc)}. Your moderator "
                                                    f"has to look at it; send your move again later.") from None
    signed_game = bool(session.meta.get("require_signatures"))
    # a line that is neither a command word nor looks like a choice of the game (a greeting,
    # a name, a line of chat) is read past, never refused; it is named only when nothing applied
    looks = getattr(session.rules, "looks_like_choice", None)
    ignored = [c for c in reading.commands if c.verb == "choice" and looks is not None and not looks(c.args[0])]
    reading.commands = [c for c in reading.commands if c not in ignored]
    acting = [c for c in reading.commands if c.verb not in ("status", "private", "help")]
    if signed_game:
        # nothing but a signed block can show who sent it: a From: header is easy to forge
        for command in acting:
            result.lines.append({"line": command.line[:200], "ok": False,
                                 "text": "this game takes moves only as signed blocks (pbem seal / pbem decide "
                                         "--key YOUR.key); paste the block into your mail"})
        reading.commands = [c for c in reading.commands if c not in acting]
    elif acting or blocks:
        _authenticate(store, msg, reading, row, now)
    elif _locked_out(store, msg.sender, now):
        raise _Stop("not answered: too many wrong passwords from this address in the last hour")
    if broken:
        result.lines.append({"line": "(submission block)", "ok": False, "text": broken})
    before = store.head(row.game)[0]
    with judge.one_mail(store, session, now) as latest:  # private messages as they stand after the whole mail
        if blocks:
            _apply_blocks(store, row, msg.text, blocks, signed_game, now, result)
            session = commands.load(store, row.game)
        for command in reading.commands:
            ok, text, after = _apply(store, row, command, now, msg, session)
            session = after or session
            result.lines.append({"line": command.line[:200], "ok": ok, "text": text})
        latest["session"] = session
    not_read = ", ".join(repr(_shown(c.line)) for c in dict.fromkeys(ignored))
    if not result.lines:
        text = "Nothing was done: no command found in your message"
        result.lines.append({"line": "", "ok": False, "note": True,
                             "text": text + (f" (not commands: {not_read})" if not_read else "")
                             + "; send 'help' for the list"})
    elif not_read and not any(line["ok"] for line in result.lines):
        result.lines.append({"line": "", "ok": True, "note": True, "text": f"Not read as commands: {not_read}"})
    failed = [line for line in result.lines if not line["ok"]]
    result.outcome = "applied" if not failed else ("refused" if len(failed) == len(result.lines) else "partly applied")
    confirms = (not failed and not broken and not any(line.get("note") for line in result.lines)
                and all(c.verb in CONFIRMED for c in reading.commands))
    # the head after the mail and its events, as one_mail read them (nothing is written since)
    head = latest.get("head") if latest.get("head", (None,))[0] == session.seq else None
    events = latest["events"] if head and latest["since"] == before else None
    raise _Stop(result.outcome, _answer_text(store, row, result, session, head)
                + _receipts(store, row, before, blocks, events, head if events is not None else None),
                confirms=confirms)


def _receipts(store, row, before: int, blocks, events=None, head=None) -> str:
    """The judge's signed receipts for what this mail had recorded (docs/protocol.md §12);
    ``events`` after ``before`` up to ``head``, when the caller has them."""
    players = {row.player} | {b["body"].get("player") for b in blocks if isinstance(b.get("body"), dict)}
    receipts = issue(store, row.game, before, players, events=events, head=head)
    if not receipts:
        return ""
    return ("\n\nKeep " + ("this receipt" if len(receipts) == 1 else "these receipts") + ": the judge signs that "
            "it recorded your move, at that place in the log. If the log ever says otherwise, "
            "'pbem audit --file EXPORT --receipt FILE' proves it.\n\n" + "\n".join(receipts).rstrip("\n"))


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


def _former(store, msg, registered, now: str, lines: list[str]) -> None:
    """Mail from someone who left a seat (pbem replace) for the game it names, or from an
    address that plays no game here now: refused with why (once a day). ``lines``: the
    message's command lines (``command_lines(msg.text)``)."""
    named = read_lines(lines).game or next(
        (m.group(1) for m in GAME_TAG.finditer(msg.subject) if _has_game(store, m.group(1))), None)
    if registered and (named is None or named in {row.game for row in registered}):
        return
    answer = former_refusal(store, msg.sender, named)
    if answer is None:
        return
    if tables.strikes_since(store, msg.sender, "former", _earlier(now, 86400)):
        raise _Stop("not answered: former player (already answered today)")
    tables.strike(store, msg.sender, "former", now)
    raise _Stop("refused: former player", answer)


def _has_game(store, game: str) -> bool:
    """``store.has_game``: whether ``game`` has an event, asked of its last one (an index
    lookup) rather than by counting them all."""
    return store.head(game)[0] > 0


def _route(store, msg, reading, registered):
    games = {row.game: row for row in registered}
    tags = [m.group(1) for m in GAME_TAG.finditer(msg.subject)]
    named = reading.game or next((tag for tag in tags if tag in games), None)
    if named is None:  # a tag like [SPAM] is no game; a tag naming a game elsewhere is a wrong address
        named = next((tag for tag in tags if _has_game(store, tag)), None)
    if named is not None:
        if named not in games:
            raise _Stop("refused: not a player of that game",
                        f"{msg.sender} plays no game named {named!r} here; your games: {', '.join(sorted(games))}.")
        return games[named]
    if len(games) == 1:
        return next(iter(games.values()))
    raise _Stop("refused: which game?", f"{msg.sender} plays several games here ({', '.join(sorted(games))}): "
                                        f"put the game in the subject as [GAME], or add a line 'game GAME'.")


def _authenticate(store, msg, reading, row, now: str) -> None:
    if not reading.password:
        if _locked_out(store, msg.sender, now):
            raise _Stop("not answered: too many wrong passwords from this address in the last hour")
        raise _Stop("refused: no password", "Nothing was done: the password is missing. Add a line 'password "
                                            "YOUR-MAIL-PASSWORD' (from your first private message of this game) "
                                            "to every message that changes something.")
    if not check_password(reading.password, row.password_hash):
        locked = _locked_out(store, msg.sender, now)  # five answered already: a guesser is not
        tables.strike(store, msg.sender, "password", now)
        if locked:
            raise _Stop("not answered: too many wrong passwords from this address in the last hour")
        raise _Stop("refused: wrong password", "Nothing was done: the password is not the one of this game. "
                                               "It is in your first private message; ask the moderator for a new "
                                               "one (pbem address ... --new-password) if it is lost.")


def _deliverable(address: str) -> bool:
    from ..store.outbox import ADDRESS_PATTERN
    return len(address) <= 254 and ADDRESS_PATTERN.fullmatch(address) is not None


def _reply_id(msg) -> str | None:
    return msg.message_id if msg.message_id and MESSAGE_ID_PATTERN.fullmatch(msg.message_id) else None


def _locked_out(store, address: str, now: str) -> bool:
    """Five wrong passwords from one address within an hour: the judge stops answering
    mail from it that lacks the right password (mail with it is still acted on: a forger
    must not be able to lock a player out of their own game)."""
    return tables.strikes_since(store, address, "password", _earlier(now, 3600)) >= PASSWORD_STRIKES


def _apply_blocks(store, row, text: str, blocks, signed_game: bool, now: str, result: Result) -> None:
    strangers = sorted({b.get("body", {}).get("player") for b in blocks if isinstance(b.get("body"), dict)}
                       - {row.player})
    if strangers and not signed_game:
        result.lines.append({"line": "(submission blocks)", "ok": False,
                             "text": f"blocks for {', '.join(map(str, strangers))}: in this game each player "
                                     f"sends only their own blocks"})
        return
    try:
        done = commands.submit(store, row.game, text, at=now)
    except _ERRORS as exc:
        result.lines.append({"line": "(submission blocks)", "ok": False, "text": _one_line(exc)})
        return
    for item in done:
        note = " (already recorded, nothing changed)" if item.get("already_recorded") else ""
        result.lines.append({"line": "(submission block)", "ok": True, "text": f"{item['kind']} of {item['player']} recorded{note}"})


def _apply(store, row, command, now: str, msg, session) -> tuple[bool, str, object]:
    """Apply one command; (ok, what to say, the session after it or None)."""
    game, player = row.game, row.player
    try:
        if command.verb == "help":
            return True, help_text(session.rules), None
        if command.verb == "status":
            return True, _status_text(store, game, session, row.tz), None
        if command.verb == "private":
            letters.queue_private(store, session, player, now, in_reply_to=_reply_id(msg))
            return True, "your private message is on its way again", None
        before = store.head(game)
        step = session.sealed
        replacing = (command.verb in ("commit", "seal") and step is not None and player in step.commits)
        anonymous = step is not None and getattr(step, "anonymous", False)
        if command.verb == "commit":
            after = commands.commit(store, game, player, command.args[0], at=now)
            done = "commitment recorded"
        elif command.verb == "reveal":
            after = commands.reveal(store, game, player, command.args[0], command.args[1], at=now)
            done = ("reveal accepted and held by the judge alone: nobody sees who played what until the game ends"
                    if anonymous else "reveal accepted")
        elif command.verb == "seal":
            after = commands.commit_for_player(store, game, player, command.args[0], at=now)
            done = ("sealed on receipt (the judge keeps the salt; once every commitment is in it checks your choice "
                    "and holds it, unseen by the others, until the game ends)" if anonymous else
                    "sealed on receipt (the judge keeps the salt and reveals it once every commitment is in)")
        elif command.verb == "extend":
            return _extend(store, row, command.args[0], now)
        elif command.verb == "client-seed":
            after = commands.add_client_seed(store, game, player, command.args[0], at=now)
            done = "client seed recorded"
        else:
            step = session.sealed
            owes_open = any(not r.sealed for r in session.requests_of(player))
            if step is not None and player in step.owes_commit() and not owes_open:
                try:
                    session.rules.normalize(step.kind, command.args[0])
                except ChoiceError as exc:
                    if getattr(session.rules, "looks_like_choice", None) is None:
                        return True, "ignored: not a command", None  # a game that cannot tell: read past it
                    return False, (f"not now: you owe a sealed choice, sent as 'seal CHOICE' "
                                   f"({_one_line(exc)})"), None
                return False, (f"not a command; you owe a sealed choice: send 'seal {_shown(command.args[0])}' "
                               f"to have the judge seal it (or commit HASH with pbem seal)"), None
            # named to the step it answers: a bare choice by mail repeats only a decision of this
            # step (the same mail twice is caught by its Message-ID); an earlier decision with the
            # same text must not make an illegal choice now look "already recorded"
            state = session.state
            after = commands.decide(store, game, player, command.args[0],
                                    round_step=(state.round, state.step) if state is not None else None, at=now)
            done = "decision recorded"
        if store.head(game) == before:
            return True, "already recorded; nothing changed", after
        if replacing:
            done += "; it replaces your earlier choice for this step (until every commitment is in, the last one counts)"
        return True, done, after
    except _ERRORS as exc:
        return False, _one_line(exc), None


def _extend(store, row, text: str, now: str) -> tuple[bool, str, object]:
    """A player's own extension (``extend 24h``), within the game's allowance."""
    from ..protocol import away as absence
    from ..protocol.errors import Refused
    seconds = _duration(text)
    if seconds is None:
        raise Refused(f"extend {_shown(text)}: give a duration like 12h or 1d, e.g. extend 24h")
    outcome: dict = {}
    after = absence.extend(store, row.game, row.player, seconds=seconds, by="player", reason="asked by mail",
                              at=now, outcome=outcome)
    dues = "; ".join(f"your {r['kind']} (round {r['round']}, step {r['step']}) is now due {shown(r['until'], row.tz)}"
                     for r in outcome["requests"])
    return True, f"extension granted: {dues}", after


def _duration(text: str) -> int | None:
    units = {"m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    if len(text) >= 2 and text[-1] in units and text[:-1].isdecimal() and 0 < int(text[:-1]) <= 10000:
        return int(text[:-1]) * units[text[-1]]
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def _status_text(store, game: str, session, tz: str | None = None, head=None) -> str:
    report = _status(store, session, head or store.head(game))
    waiting = "; ".join(f"{w['player']} ({w['kind']}" + (f", due {shown(w['due'], tz, seconds=False)}" if "due" in w else "")
                        + ")" for w in report["waiting"]) or "nobody"
    word = round_word(report.get("type"))  # the game's own word for a round: 1667 says "turn"
    step = f", step {report['step']}" if word == "round" or report["step"] else ""
    where = f"{word} {report['round']}{step}, {report['phase']}" if report["started"] else "not started"
    if report.get("paused"):
        where += f"; PAUSED since {shown(report['paused']['since'], tz, seconds=False)} (no deadline runs)"
    return f"{game}: {where}; waiting for: {waiting}; chain head {report['chain_head']['seq']} {report['chain_head']['hash'][:16]}"


def _status(store, session, head: tuple[int, str]) -> dict:
    """What the status line reads of ``reports.status(session, head)``, the same values,
    without the rest of the report (scores, sealed step, seeds); the public view as the
    moment made it (``letters.public_view``)."""
    report = {"type": session.meta.get("game_type"), "started": session.started, "round": None, "step": None,
              "phase": "waiting for client seeds" if not session.started else None,
              "chain_head": {"seq": head[0], "hash": head[1]}, "waiting": []}
    if session.paused:
        report["paused"] = dict(session.paused)
    if session.state is not None:
        view = letters.public_view(store, session)
        report.update(round=view.get("round", session.state.round), step=view.get("step", session.state.step),
                      phase=view["phase"], waiting=waiting(session))
    return report


def _answer_text(store, row, result: Result, session, head=None) -> str:
    out = [f"The judge's answer for {row.player} in game {row.game}:", ""]
    for line in result.lines:
        if line.get("note"):
            out.append(line["text"])
            continue
        if line["line"]:
            out.append(f"> {line['line']}")
        out.append(("  " if line["ok"] else "  REFUSED: ") + line["text"].replace("\n", "\n  "))
    if not any(line["line"].lower() == "status" for line in result.lines):
        out += ["", _status_text(store, row.game, session, row.tz, head)]
    return "\n".join(out)


def _answer(store, msg, result: Result, text: str, now: str, hold: bool = False) -> None:
    address = result.address or msg.sender
    clean = msg.subject if msg.subject.isprintable() else "".join(c for c in msg.subject if c.isprintable())
    subject = clean if clean.lower().startswith("re:") else f"Re: {clean}".strip()
    ids = [i for i in (*msg.references, msg.message_id) if i and MESSAGE_ID_PATTERN.fullmatch(i)]
    refs = tuple(dict.fromkeys(ids))
    reply_to = _reply_id(msg)
    m = current(store)
    if m is not None and result.game and result.player:
        m.add_answer(result.game, result.player, address, text + "\n", subject[:200], reply_to, refs[-10:],
                     hold=hold)
        result.answered = True
        return
    outbox.queue(store, game=result.game or NO_GAME, kind="answer", recipient=address, subject=subject[:200],
                 text=text + "\n", in_reply_to=reply_to, references=refs[-10:], at=now,
                 domain=domain(store))
    result.answered = True


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__


def _earlier(at: str, seconds: int) -> str:
    return shift(at, -seconds)


def _errors():
    from ..store.errors import StoreError
    return (ProtocolError, StoreError, ChoiceError, ValueError)


_ERRORS = _errors()
