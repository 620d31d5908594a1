"""One message per recipient per moment: how the judge's mail is put together.

A moment is whatever one incoming mail, one action of ``pbem mail tick`` or one command
causes. Everything it causes for one player goes to them as ONE message, in this order:

    1. the answer to their mail (only for the player who sent it),
    2. what happened: the public summaries the moment produced (or the final result),
    3. what they owe now: their private message (with a notice on top, such as a welcome).

The list address gets the summaries alone. With ``pbem mail settings GAME
--player-summaries no`` a game with a list leaves the round summaries to the list: its
players get the final result, and otherwise only answers and private messages.

Summaries and private messages are rendered when the message is sent, not in the moment's
transaction. A summary replays the log up to the head it names, so its text is the same
whenever it is rendered; a private message keeps its model (the player's view as of the
moment, all its templates receive: ``pbem.render.summary.private_model``), so it shows
what the player owed then, not what they owe when it goes. A message that carries either
is queued as what to render: ``{"parts": [...]}``, each part ``{"text": ...}``, ``{"spec":
...}`` (see ``pbem.mail.letters.queue_summary``) or ``{"private": ...}`` (see
``pbem.mail.letters.queue_private``). ``pbem.mail.letters.render_row`` makes its bodies,
at send time (``pbem.mail.send.render_pending``); the HTML alternative (when a part has
HTML: a summary, a private message) is built in ``html_of`` alone, by
``pbem.mail.htmlmail.document``.
A message with a secret in it (a welcome with its password) is rendered when queued, so
that the outbox can cut the secret out of its bodies once it is sent.

An answer that only confirms moves (every line applied, nothing refused, nothing asked for,
and to a player of the game) is not sent at once when it would go alone: it is queued HELD
(``outbox.held_until``: the moment plus the game's ``--hold-answers`` time, 10 minutes
unless set), and the next message this player gets within that time carries it, first,
threaded under their mail. Two held answers to the same player join, in order, keeping the
first one's time. With nothing to carry it, the held answer goes out alone when its time
comes (``pbem mail send``/``run`` send it then). Holding, joining and carrying happen in the
moment's own transaction: a crash leaves either the held row or the message carrying it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field

RULE = "=" * 66
LATE = ("You were late: the judge applied the documented default for you (the summary, or the\n"
        "next one, says what it was).\n\n")
EXPORT_TYPE = "application/x-ndjson"
REFERENCES = 20  # Message-IDs at most in a message's References (the answered mails kept first)


@dataclass
class Moment:
    at: str
    game: str | None = None
    answer: dict | None = None
    summaries: list[dict] = field(default_factory=list)  # {"spec", "subject", "kind"}, in order
    privates: dict[str, dict] = field(default_factory=dict)  # player -> {"text", "subject", "address"}
    defaulted: set = field(default_factory=set)  # players to whom a default was applied

    def add_answer(self, game: str, player: str | None, address: str, text: str, subject: str,
                   in_reply_to: str | None, references: tuple, hold: bool = False) -> None:
        """``hold``: the answer only confirms (see ``flush``): it may wait for the player's
        next message, within the game's --hold-answers time."""
        _check(address)
        self.game = self.game or game
        self.answer = {"game": game, "player": player, "address": address, "text": text, "subject": subject,
                       "in_reply_to": in_reply_to, "references": list(references), "hold": hold}

    def add_summary(self, game: str, spec: dict, subject: str, kind: str, addresses=()) -> None:
        for address in addresses:  # everyone it goes to: a bad address fails the action that caused it
            _check(address)
        self.game = self.game or game
        key = (spec["what"], spec.get("round"))
        # a later summary of the same round shows all the earlier one did, and more
        self.summaries = [s for s in self.summaries if (s["spec"]["what"], s["spec"].get("round")) != key]
        self.summaries.append({"spec": spec, "subject": subject, "kind": kind})

    def add_private(self, game: str, player: str, address: str, subject: str, part: dict) -> None:
        """``part``: the private message as a part of a message (see ``flush``): rendered
        (``{"text", "html"?}``; ``html``, the message's own HTML document if it has one,
        else the HTML alternative shows its text), or what to render it from when it is
        sent (``{"private": spec}``, from ``pbem.mail.letters.queue_private``)."""
        _check(address)
        self.game = self.game or game
        self.privates[player] = {"part": part, "subject": subject, "address": address}


def _check(address: str) -> None:
    """The outbox's own check, when a part is added (inside the savepoint of what caused
    it), not only when the moment's messages are queued at its end."""
    from ..store.outbox import check_address
    check_address(address, "recipient")


@contextmanager
def moment(store, at: str):
    """Collect the mail of one moment; queue it, one message per recipient, at the end of
    the block (inside the caller's transaction). Nested moments are the outer one."""
    outer = getattr(store, "moment", None)
    if outer is not None:
        yield outer
        return
    memo = getattr(store, "memo", None)  # what the moment reads once (pbem.store.judge._kept)
    if memo is not None:
        memo.clear()
        store.memo_on = True
    current = store.moment = Moment(at)
    try:
        yield current
        store.moment = None
        flush(store, current)
    finally:
        store.moment = None
        if memo is not None:
            store.memo_on = False
            memo.clear()


def current(store) -> Moment | None:
    return getattr(store, "moment", None)


def flush(store, m: Moment) -> list[str]:
    """Queue the moment's messages; returns their Message-IDs."""
    from ..store import judge as tables
    from ..store import outbox
    from .envelope import domain
    if m.game is None and m.answer is None:
        return []
    ids = []
    specs = [s for s in m.summaries]
    final = [s for s in specs if s["spec"]["what"] == "result"]
    listed = tables.list_address(store, m.game) if m.game and specs else None
    shared = specs if (not listed or tables.player_summaries(store, m.game)) else final
    players = tables.mail_players(store, m.game) if m.game else {}
    order = sorted(set(players) if shared else set())
    order += sorted(p for p in m.privates if p not in order)
    answered = m.answer["player"] if m.answer else None
    if answered is not None and answered not in order:
        order.insert(0, answered)
    if m.answer is not None and answered is None:  # an answer to someone who plays no game here
        ids.append(queue_message(store, outbox, m.answer["game"], "answer", m.answer["address"], m.answer["subject"],
                          [{"text": m.answer["text"]}], m.at, domain(store), m.answer))
    window = tables.hold_answers(store, m.game) if m.game else 0
    held_by, asked = None, set()  # the game's held answers, read once for all its recipients
    for player in order:
        parts, answer = [], None
        if m.answer is not None and player == answered:
            answer = m.answer
            parts.append({"text": answer["text"]})
        parts += [{"spec": s["spec"]} for s in shared]
        private = m.privates.get(player)
        if private is not None:
            part = dict(private["part"])
            if player in m.defaulted and "text" in part:
                part["text"] = LATE + part["text"]
            elif player in m.defaulted:
                part["late"] = True
            parts.append(part)
        if not parts:
            continue
        address = (answer or private or {}).get("address") or players[player].address
        if address.lower() in asked:  # an address twice (never, as addresses are checked): read afresh
            held = outbox.held(store, m.game, address, m.at)
        else:
            if held_by is None:
                held_by = outbox.held_by_recipient(store, m.game, m.at)
            held = held_by.get(address.lower(), [])
            asked.add(address.lower())
        if answer is not None and len(parts) == 1 and answer.get("hold") and window > 0:
            ids.append(_hold(store, outbox, m, answer, held, window))
            continue
        if answer is not None:
            kind, subject = "answer", answer["subject"]
        elif shared:
            kind = shared[-1]["kind"]
            subject = shared[-1]["subject"] + ("; and your private message" if private else "")
        else:
            kind, subject = "private", private["subject"]
        if held:  # answers that waited for this message travel in it, first, in the order of the mails;
            # it is a reply to those mails, under its own subject (what is new: a summary, the result)
            outbox.take_held(store, [row.id for row in held])
            parts = [{"text": row.body_text} for row in held] + parts
            answer = _threaded([_as_answer(row) for row in held] + ([answer] if answer else []))
            kind = "answer"
        ids.append(queue_message(store, outbox, m.game, kind, address, subject, parts, m.at, domain(store), answer))
    if listed:
        ids.append(queue_message(store, outbox, m.game, specs[-1]["kind"], listed, specs[-1]["subject"],
                          [{"spec": s["spec"]} for s in specs], m.at, domain(store), None))
    return ids


def _hold(store, outbox, m: Moment, answer: dict, held: list, window: int) -> str:
    """An answer that only confirms: held (``window`` seconds at most) for the player's next
    message to carry; joined to an answer already held for them, if there is one."""
    from ..protocol.times import shift
    from .envelope import domain
    if held:
        last = held[-1]
        both = _threaded([_as_answer(last), answer])
        outbox.add_to_held(store, last.id, join([last.body_text, answer["text"]]), answer["subject"][:200],
                           both["in_reply_to"], both["references"])
        return last.message_id
    return outbox.queue(store, game=m.game, kind="answer", recipient=answer["address"], subject=answer["subject"][:200],
                        text=join([answer["text"]]), in_reply_to=answer["in_reply_to"],
                        references=answer["references"][-REFERENCES:], at=m.at, domain=domain(store),
                        held_until=shift(m.at, window))


def _as_answer(row) -> dict:
    return {"subject": row.subject, "in_reply_to": row.in_reply_to, "references": list(row.references)}


def _threaded(answers: list[dict]) -> dict:
    """One answer's threading for several (in order): in reply to the latest mail, with every
    answered mail and the judge's message each answered in its References (those kept
    first, should the list be cut)."""
    replied = [a["in_reply_to"] for a in answers if a.get("in_reply_to")]
    # kept first: each answered mail and the judge's message it answered (the last two of
    # an answer's References: pbem.mail.answer.queue)
    kept = set(replied) | {ref for a in answers for ref in a["references"][-2:]}
    refs = list(dict.fromkeys(ref for a in answers for ref in a["references"]))
    while len(refs) > REFERENCES and any(ref not in kept for ref in refs):
        refs.remove(next(ref for ref in refs if ref not in kept))
    return {**answers[-1], "in_reply_to": replied[-1] if replied else None, "references": refs}


def queue_message(store, outbox, game, kind, address, subject, parts, at, domain, answer) -> str:
    """One of the moment's messages into the outbox: its bodies now when every part is text,
    else what to render them from when it is sent."""
    rendered = all("text" in p for p in parts)
    text = join([p["text"] for p in parts]) if rendered else ""
    html = html_of([p["text"] for p in parts], [p.get("html") for p in parts]) if rendered else None
    return outbox.queue(store, game=game, kind=kind, recipient=address, subject=subject[:200], text=text, html=html,
                        render=None if rendered else json.dumps({"parts": parts}),
                        in_reply_to=answer["in_reply_to"] if answer else None,
                        references=answer["references"][-REFERENCES:] if answer else (), at=at, domain=domain)


def join(texts: list[str]) -> str:
    """The text parts of one message, each ruled off from the next."""
    texts = [t.rstrip("\n") + "\n" for t in texts if t.strip()]
    return ("\n" + RULE + "\n\n").join(texts)


def html_of(texts: list[str], htmls: list[str | None]) -> str | None:
    """The HTML alternative of a message (None when no part has HTML of its own): each part
    where it stands, its HTML or its text (an answer, a notice), ruled off from the next as
    in the text part; ``pbem.mail.htmlmail.document`` joins them."""
    from .htmlmail import Html, document
    if not any(htmls):
        return None
    return document(*[Html(doc) if doc else text for text, doc in zip(texts, htmls)], ruled=True)
