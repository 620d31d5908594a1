"""The apply stage of an incoming message: its signed blocks, then its command lines, each
in a savepoint of its own, with the protocol's own commands.

A command that is refused rolls back alone and is named in the answer with the same
one-line reason the command line gives. The private messages the mail calls for are
queued once, as things stand after all of it (``pbem.mail.judge.one_mail``).
"""

from __future__ import annotations

import re

from ..games.base import ChoiceError
from ..protocol import commands, loading, submissions
from ..protocol.errors import ProtocolError
from ..render.times import shown
from . import judge
from .letters import queue_private
from .outcome import Result, one_line, reply_id, shortened
from .statusline import status_text

HELP = """The judge reads the lines of your message above the signature ('-- '); lines quoted
with '>' are never read, and greetings, sign-offs and other lines that are not commands are
read past. One command a line:
  password WORD          your mail password (from your first private message)
  seal CHOICE            the judge seals your choice on receipt, e.g. seal {sealed}
  commit HASH            a commitment made with: pbem seal --context TOKEN CHOICE
  reveal CHOICE SALT     its reveal, once every commitment is in (or on the line after the
                         commit: the judge holds it, unseen by the others, until then)
  CHOICE                 an open decision, e.g. {open}
  client-seed TEXT       your client seed, before the game starts
  extend 24h             more time for what you owe now (the game allows it once, up to 24h, unless
                         its moderator set otherwise), before your deadline passes
  back                   you are back: the stand-in stops playing your seat (in a game that has one)
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


def apply_mail(store, row, session, reading, blocks, signed_game: bool, msg, now: str, result: Result):
    """Apply the message's signed ``blocks`` and ``reading``'s commands to ``row``'s game,
    each line's outcome added to ``result``; (the session after them, and what
    ``judge.one_mail`` read of the mail's events: its ``head``, ``events`` and ``since``)."""
    with judge.one_mail(store, session, now) as latest:  # private messages as they stand after the whole mail
        if blocks:
            _apply_blocks(store, row, msg.text, blocks, signed_game, now, result)
            session = loading.load(store, row.game)
        refused = []  # reveal lines refused so far: one above its commit line is tried again after it
        for command in reading.commands:
            ok, text, after = _apply(store, row, command, now, msg, session)
            _held(result, row, ok, text, after)
            session = after or session
            result.lines.append({"line": command.line[:200], "ok": ok, "text": text})
            if command.verb == "reveal" and not ok:
                refused.append((result.lines[-1], command))
            elif command.verb == "commit" and ok and refused:  # a reveal sent early, pasted above its commitment
                for line, reveal in refused:
                    ok, text, after = _apply(store, row, reveal, now, msg, session)
                    _held(result, row, ok, text, after)
                    session = after or session
                    line.update(ok=ok, text=text)
                refused = []
        latest["session"] = session
    return session, latest


def _held(result: Result, row, ok: bool, text: str, after) -> None:
    """Note a reveal line the judge held early (its answer is EARLY), for its receipt: the
    step it is for is still the open one."""
    if ok and text.startswith(EARLY):
        result.early.append((row.player, after.sealed.round, after.sealed.step))


def _apply_blocks(store, row, text: str, blocks, signed_game: bool, now: str, result: Result) -> None:
    strangers = sorted({b.get("body", {}).get("player") for b in blocks if isinstance(b.get("body"), dict)}
                       - {row.player})
    if strangers and not signed_game:
        result.lines.append({"line": "(submission blocks)", "ok": False,
                             "text": f"blocks for {', '.join(map(str, strangers))}: in this game each player "
                                     f"sends only their own blocks"})
        return
    try:
        done = submissions.submit(store, row.game, text, at=now)
    except ERRORS as exc:
        result.lines.append({"line": "(submission blocks)", "ok": False, "text": one_line(exc)})
        return
    for item in done:
        if item.get("early"):
            result.early.append((item["player"], item["round"], item["step"]))
            result.lines.append({"line": "(submission block)", "ok": True, "text": EARLY})
            continue
        note = " (already recorded, nothing changed)" if item.get("already_recorded") else ""
        result.lines.append({"line": "(submission block)", "ok": True, "text": f"{item['kind']} of {item['player']} recorded{note}"})


def _apply(store, row, command, now: str, msg, session) -> tuple[bool, str, object]:
    """Apply one command; (ok, what to say, the session after it or None)."""
    game, player = row.game, row.player
    try:
        if command.verb == "help":
            return True, help_text(session.rules), None
        if command.verb == "status":
            return True, status_text(store, game, session, row.tz), None
        if command.verb == "private":
            queue_private(store, session, player, now, in_reply_to=reply_id(msg))
            return True, "your private message is on its way again", None
        before = store.head(game)
        step = session.sealed
        replacing = (command.verb in ("commit", "seal") and step is not None and player in step.commits)
        had_early = replacing and session.early_reveal_kept(player)  # the reveal sent early opens the earlier one
        anonymous = step is not None and getattr(step, "anonymous", False)
        if command.verb == "commit":
            after = commands.commit(store, game, player, command.args[0], at=now)
            done = "commitment recorded"
        elif command.verb == "reveal":
            outcome: dict = {}
            after = commands.reveal(store, game, player, command.args[0], command.args[1], at=now, outcome=outcome)
            if outcome.get("early"):
                return True, EARLY + (EARLY_ANONYMOUS if anonymous else ""), after
            done = ("reveal accepted and held by the judge alone: nobody sees who played what until the game ends"
                    if anonymous else "reveal accepted")
        elif command.verb == "seal":
            after = commands.commit_for_player(store, game, player, command.args[0], at=now)
            done = ("sealed on receipt (the judge keeps the salt; once every commitment is in it checks your choice "
                    "and holds it, unseen by the others, until the game ends)" if anonymous else
                    "sealed on receipt (the judge keeps the salt and reveals it once every commitment is in)")
        elif command.verb == "extend":
            return _extend(store, row, command.args[0], now)
        elif command.verb == "back":
            from ..protocol import away as absence
            after = absence.end_stand_in(store, game, player, by="player", at=now)
            done = ("your seat is yours again: the stand-in no longer plays it, and what the seat owes from now "
                    "on waits for you, with its deadline")
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
                                   f"({one_line(exc)})"), None
                return False, (f"not a command; you owe a sealed choice: send 'seal {shortened(command.args[0])}' "
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
            if had_early and not (after is not None and after.early_reveal_kept(player)):
                done += ("; the reveal you sent early opened the earlier one and no longer counts" +
                         ("" if command.verb == "seal" else ": send this one's reveal (now, or once every "
                                                            "commitment is in)"))
        return True, done, after
    except ERRORS as exc:
        return False, one_line(exc), None


EARLY = ("reveal held: it opens your commitment, and the judge keeps it unseen by the others until every "
         "commitment of the step is in, then records it as yours; nothing more to send for this step")
EARLY_ANONYMOUS = " (this vote is anonymous: the judge alone sees who played what until the game ends)"


_LOG_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b")  # a time as the log writes it


def _extend(store, row, text: str, now: str) -> tuple[bool, str, object]:
    """A player's own extension (``extend 24h``), within the game's allowance."""
    from ..protocol import away as absence
    from ..protocol.errors import Refused
    seconds = duration(text)
    if seconds is None:
        raise Refused(f"extend {shortened(text)}: a duration is a whole number of minutes, hours or days "
                      f"from 1m to 365d, like 12h or 1d, e.g. extend 24h")
    outcome: dict = {}
    try:
        after = absence.extend(store, row.game, row.player, seconds=seconds, by="player", reason="asked by mail",
                               at=now, outcome=outcome)
    except Refused as exc:  # the bound's times as the rest of the player's mail shows them
        raise Refused(_LOG_TIME.sub(lambda m: shown(m.group(0), row.tz), str(exc))) from None
    dues = "; ".join(f"your {r['kind']} (round {r['round']}, step {r['step']}) is now due {shown(r['until'], row.tz)}"
                     for r in outcome["requests"])
    return True, f"extension granted: {dues}", after


def duration(text: str) -> int | None:
    """Seconds of an ``extend`` duration (12h, 1d, 90m; from 1m to 365d), or None."""
    units = {"m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    number = text[:-1]  # in the digits 0 to 9 only (str.isdecimal takes ９ too)
    if len(text) >= 2 and text[-1] in units and number.isascii() and number.isdecimal() \
            and 0 < int(number) <= 365 * 1440:
        seconds = int(text[:-1]) * units[text[-1]]
        return seconds if seconds <= 365 * 86400 else None
    return None


def _errors():
    from ..store.errors import StoreError
    return (ProtocolError, StoreError, ChoiceError, ValueError)


ERRORS = _errors()
