"""The answer stage of an incoming message: what the judge says back, and its queueing.

An answer names each line of the mail with what became of it (applied, or refused with
why), ends with the game's status line and, when the mail had a move recorded, the judge's
signed receipts. An answer that only confirms moves may wait for the player's next message
(``CONFIRMED``; see ``pbem.mail.moment``).
"""

from __future__ import annotations

from ..protocol.receipts import issue
from ..store import outbox
from ..store.outbox import MESSAGE_ID_PATTERN
from .envelope import domain
from .moment import current
from .outcome import Result, Stop, reply_id, shortened
from .statusline import status_text

NO_GAME = "-"  # the outbox's game for an answer to a message that names no game of the sender
# What an answer that only confirms answers: moves, each applied. An answer to anything else
# (status, help, private, extend), or one that refuses or notes anything, goes at once.
CONFIRMED = ("seal", "commit", "reveal", "choice", "client-seed")


def conclude(store, row, result: Result, session, commands, ignored, broken, blocks, before: int,
             latest: dict) -> Stop:
    """The end of a mail that was applied: ``result``'s outcome, and the answer to send.
    ``commands``: those applied; ``ignored``: lines read past as no command; ``broken``: why
    a submission block could not be read, if one could not; ``before``: the game's head
    before the mail; ``latest``: what ``judge.one_mail`` read of the mail's events."""
    not_read = ", ".join(repr(shortened(c.line)) for c in dict.fromkeys(ignored))
    if not result.lines:
        text = "Nothing was done: no command found in your message"
        result.lines.append({"line": "", "ok": False, "note": True,
                             "text": text + (f" (not commands: {not_read})" if not_read else "")
                             + "; send 'help' for the list"})
    elif not_read and not any(line["ok"] for line in result.lines):
        result.lines.append({"line": "", "ok": True, "note": True, "text": f"Not read as commands: {not_read}"})
    failed = [line for line in result.lines if not line["ok"]]
    counted = [line for line in result.lines if not line.get("note")]  # a note is no command
    done = [line for line in counted if line["ok"]]
    result.outcome = "applied" if not failed else ("partly applied" if done else "refused")
    confirms = (not failed and not broken and not any(line.get("note") for line in result.lines)
                and all(c.verb in CONFIRMED for c in commands))
    # the head after the mail and its events, as one_mail read them (nothing is written since)
    head = latest.get("head") if latest.get("head", (None,))[0] == session.seq else None
    events = latest["events"] if head and latest["since"] == before else None
    return Stop(result.outcome, _answer_text(store, row, result, session, head)
                + _receipts(store, row, before, blocks, events, head if events is not None else None, result.early),
                confirms=confirms)


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
        out += ["", status_text(store, row.game, session, row.tz, head)]
    return "\n".join(out)


def _receipts(store, row, before: int, blocks, events=None, head=None, early=()) -> str:
    """The judge's signed receipts for what this mail had recorded, and for each reveal it
    held early (``early``: player, round, step; docs/protocol.md §12); ``events`` after
    ``before`` up to ``head``, when the caller has them."""
    players = {row.player} | {b["body"].get("player") for b in blocks if isinstance(b.get("body"), dict)}
    receipts = issue(store, row.game, before, players, events=events, head=head, early=early)
    if not receipts:
        return ""
    return ("\n\nKeep " + ("this receipt" if len(receipts) == 1 else "these receipts") + ": the judge signs that "
            "it recorded your move, at that place in the log" + (" (or, for a reveal sent early, that it holds "
            "the reveal of that commitment)" if early else "") + ". If the log ever says otherwise, "
            "'pbem audit --file EXPORT --receipt FILE' proves it.\n\n" + "\n".join(receipts).rstrip("\n"))


def queue(store, msg, result: Result, text: str, now: str, hold: bool = False) -> None:
    """The answer ``text`` to ``msg``: in the moment's message to a player of the game (held
    when ``hold`` and it goes alone: see ``pbem.mail.moment``), else into the outbox at once."""
    address = result.address or msg.sender
    clean = msg.subject if msg.subject.isprintable() else "".join(c for c in msg.subject if c.isprintable())
    subject = clean if clean.lower().startswith("re:") else f"Re: {clean}".strip()
    # the thread as RFC 5322 has it: the mail's own References, the message it answers (its
    # In-Reply-To, last of them: the judge's message, if it named one), then the mail itself;
    # cut from the front, so those two are always kept
    ids = [i for i in (*msg.references, msg.message_id) if i and MESSAGE_ID_PATTERN.fullmatch(i)]
    refs = tuple(reversed(dict.fromkeys(reversed(ids))))
    reply_to = reply_id(msg)
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
