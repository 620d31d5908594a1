"""The transactional outbox: what the judge will send, kept as rows before it is sent.

A message is queued with ``queue()`` inside the same ``store.transaction()`` as the events
that caused it, so a crash never loses a message and never sends one for something that
did not happen. Sending is a separate step (``pbem.mail.send``) that picks the rows that
are ``due()``, ``claim()``s each one just before handing it to the server and marks it
``mark_sent()`` (or ``mark_failed()``, which sets the time of the next try).

A row's Message-ID is fixed when it is queued: a message sent again after a crash between
the server's acceptance and the mark carries the same Message-ID, and mail clients show it
once.

The outbox holds players' private messages: it is never part of an export or an audit.
Times are strings of the event log's form, ``2024-05-01T12:00:00Z``, passed in by the
caller; nothing here reads the clock.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
from dataclasses import asdict, dataclass
from typing import Iterable

from .errors import StoreError
from pbem.protocol.times import shift

from .event import AT_PATTERN

KINDS = ("answer", "private", "summary", "result", "notice", "reminder")
QUEUED, SENT = "queued", "sent"
# A message no server will take (a permanent refusal, or temporary ones for longer than
# RETRY_LIMIT_SECONDS), and a reminder dropped because its request was settled before it went.
FAILED, DROPPED = "failed", "dropped"
# RFC 3834: an answer to a player's message is auto-replied; everything else the judge
# sends of its own accord is auto-generated. Either way, other robots do not answer it.
AUTO_REPLIED, AUTO_GENERATED = "auto-replied", "auto-generated"

FIRST_RETRY_SECONDS = 60
LONGEST_RETRY_SECONDS = 3600
# A message that the server keeps refusing for a while (4xx) is failed once this long has
# passed since its first such answer: Postfix's default queue lifetime is 5 days, a game's
# deadline is often 2; three days is the documented compromise (docs/email.md).
RETRY_LIMIT_SECONDS = 3 * 86400
ERROR_LENGTH = 200
# A claimed row is left alone by other senders for this long: far more than one message
# can take (every SMTP step has a timeout), short enough that a sender killed mid-message
# does not hold its row for long.
CLAIM_SECONDS = 15 * 60
# What a sent message's secret (its ``redact``) becomes in the stored bodies.
REDACTED = "[removed from the judge's database once sent]"

# One address, ASCII, no display name: what goes into the envelope and the To header.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*"
ADDRESS_PATTERN = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_DOMAIN}")
DOMAIN_PATTERN = re.compile(_DOMAIN)
# <left@right> with no space, no angle bracket and no control character inside.
MESSAGE_ID_PATTERN = re.compile(r"<[!-;=?-~]+@[!-;=?-~]+>")

_COLUMNS = ("id", "game", "kind", "recipient", "message_id", "subject", "in_reply_to", "refs",
            "auto_submitted", "body_text", "body_html", "queued_at", "state", "attempts",
            "next_try_at", "last_error", "sent_at", "render", "attachments",
            "claimed_at", "deferred_since", "failed_at", "held_until", "expires_at")


@dataclass(frozen=True)
class OutboxRow:
    """One queued (or sent) message, as stored. ``references`` is the ``refs`` column split."""

    id: int
    game: str
    kind: str
    recipient: str
    message_id: str
    subject: str
    in_reply_to: str | None
    references: tuple[str, ...]
    auto_submitted: str
    body_text: str
    body_html: str | None
    queued_at: str
    state: str
    attempts: int
    next_try_at: str
    last_error: str | None
    sent_at: str | None
    render: str | None = None  # what to render the bodies from, until they are rendered
    attachments: str | None = None  # JSON [{"filename", "content_type", "text"}]: files sent along
    claimed_at: str | None = None  # handed to the SMTP server at (cleared by a failed try)
    deferred_since: str | None = None  # the first temporary refusal of this message
    failed_at: str | None = None  # when it was given up (state "failed") or dropped
    held_until: str | None = None  # an answer held for the player's next message until then (``held``)
    expires_at: str | None = None  # dropped, not sent, from then on (a reminder: its deadline)

    def as_dict(self, bodies: bool = False) -> dict:
        """A JSON-ready dict; the bodies (players' private text) only when asked for."""
        data = asdict(self)
        data["references"] = list(self.references)
        if not bodies:
            del data["body_text"], data["body_html"]
            data["render"] = public_render(self.render)
        return data


def public_render(render: str | None) -> str | None:
    """What a row is rendered from, with only its public parts (the summaries' specs): an
    answer's text and a private message's model (the player's view) become ``{"private":
    true}``."""
    import json
    if render is None:
        return None
    data = json.loads(render)
    if "parts" not in data:  # a row queued before moments: one summary spec alone
        return render
    return json.dumps({"parts": [part if set(part) == {"spec"} else {"private": True} for part in data["parts"]]})


# -- queueing (inside the caller's transaction) ---------------------------------------------


def queue(store, *, game: str, kind: str, recipient: str, subject: str, text: str,
          html: str | None = None, in_reply_to: str | None = None,
          references: Iterable[str] = (), at: str, domain: str = "pbem.invalid",
          message_id: str | None = None, render: str | None = None, redact: str | None = None,
          attachments: str | None = None, held_until: str | None = None,
          expires_at: str | None = None) -> str:
    """Queue one message to one recipient; return its Message-ID (``<...@domain>``).

    Must run inside ``store.transaction()``, so the message commits (or rolls back) with
    the events that caused it. ``message_id`` may be given to fix it from outside;
    otherwise a random one is drawn. ``render`` (with empty bodies) names what the bodies
    are to be rendered from before the message is sent (see ``to_render``). ``redact`` is a
    secret in the bodies (a mail password) that ``mark_sent`` replaces by ``REDACTED`` once
    the server has the message: the database keeps it no longer than the message waits.
    ``held_until``: an answer that may travel inside the recipient's next message queued
    before then (see ``held``); it is not due before that time. ``expires_at``: a message
    that is no longer true from then on (a reminder, at the deadline it names): a sender
    that comes to it at or after that time drops it instead (``claim``). Raises ``StoreError`` for
    anything that could not be sent as given (header injection, two addresses, a malformed
    Message-ID).
    """
    store.require_transaction("outbox.queue()")
    if not isinstance(game, str) or not game:
        raise StoreError(f"game must be a non-empty string, got {game!r}")
    if kind not in KINDS:
        raise StoreError(f"unknown outbox message kind {kind!r}; use one of {', '.join(KINDS)}")
    recipient = check_address(recipient, "recipient")
    subject = _header_value(subject, "subject")
    _check_time(at, "at")
    for name, value in (("held_until", held_until), ("expires_at", expires_at)):
        if value is not None:
            _check_time(value, name)
    for name, body in (("text", text), ("html", html)):
        if body is None and name == "html":
            continue
        if not isinstance(body, str):
            raise StoreError(f"the {name} body must be a string, got {type(body).__name__}")
        try:
            body.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(f"the {name} body cannot be encoded as UTF-8 ({exc.reason})") from None
    if in_reply_to is not None:
        in_reply_to = check_message_id(in_reply_to, "in_reply_to")
    if isinstance(references, str):
        references = references.split()
    refs = [check_message_id(ref, "references") for ref in references]
    if message_id is None:
        if not isinstance(domain, str) or not DOMAIN_PATTERN.fullmatch(domain):
            raise StoreError(f"Message-ID domain {domain!r} is not a host name like example.org")
        message_id = f"<pbem.{secrets.token_hex(16)}@{domain}>"
    else:
        message_id = check_message_id(message_id, "message_id")
    try:
        store.conn.execute(
            "insert into outbox (game, kind, recipient, message_id, subject, in_reply_to, refs,"
            " auto_submitted, body_text, body_html, queued_at, state, attempts, next_try_at, render, redact,"
            " attachments, held_until, expires_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
            [game, kind, recipient, message_id, subject, in_reply_to, " ".join(refs),
             AUTO_REPLIED if kind == "answer" else AUTO_GENERATED, text, html, at, QUEUED, held_until or at, render,
             redact or None, attachments, held_until, expires_at],
        )
    except sqlite3.IntegrityError:  # the only constraint a checked row can break
        raise StoreError(f"a message with Message-ID {message_id} is queued already") from None
    return message_id


def check_address(value: object, what: str = "address") -> str:
    """``value`` if it is one plain email address (``ani@example.org``), else ``StoreError``."""
    if not isinstance(value, str) or not ADDRESS_PATTERN.fullmatch(value) or len(value) > 254:
        raise StoreError(f"{what} {value!r} is not one email address; give a single address "
                         "such as ani@example.org (no name, no comma, no line break)")
    return value


def check_message_id(value: object, what: str = "Message-ID") -> str:
    if not isinstance(value, str) or not MESSAGE_ID_PATTERN.fullmatch(value):
        raise StoreError(f"{what} {value!r} is not a Message-ID; give one like <abc123@example.org>")
    return value


# Every character of Unicode categories Cc (controls), Zl and Zp (line and paragraph
# separators) but the tab: what a header value may not hold.
_NOT_IN_HEADER = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def _header_value(value: object, what: str) -> str:
    # A line break in a header value would start a new header (or the body): injection.
    if not isinstance(value, str):
        raise StoreError(f"{what} must be a string, got {type(value).__name__}")
    found = _NOT_IN_HEADER.search(value)
    bad = found.group() if found else None
    if bad is not None:
        raise StoreError(f"{what} {value!r} holds a control character ({bad!r}); "
                         "a header is one line of text")
    return value


def _check_time(value: object, what: str) -> str:
    if not isinstance(value, str) or not AT_PATTERN.fullmatch(value):
        raise StoreError(f"{what} must look like 2024-05-01T12:00:00Z, got {value!r}")
    return value


# -- reading ----------------------------------------------------------------------------------


def _rows(store, where: str, params: list, limit: int | None = None) -> list[OutboxRow]:
    sql = f"select {', '.join(_COLUMNS)} from outbox where {where} order by id"
    if limit is not None:
        sql += f" limit {int(limit)}"
    rows = []
    for values in store.conn.execute(sql, params).fetchall():
        row = dict(zip(_COLUMNS, values))
        row["references"] = tuple(row.pop("refs").split())
        rows.append(OutboxRow(**row))
    return rows


def due(store, now: str, limit: int | None = None) -> list[OutboxRow]:
    """Queued rows whose next try is at or before ``now``, oldest first."""
    _check_time(now, "now")
    return _rows(store, "state = ? and next_try_at <= ?", [QUEUED, now], limit)


def pending(store, game: str | None = None) -> list[OutboxRow]:
    """Every row not sent yet (due or waiting for a retry), oldest first."""
    return listing(store, game)


def listing(store, game: str | None = None, include_sent: bool = False,
            include_failed: bool = False) -> list[OutboxRow]:
    """The rows of one game (or all games), oldest first: the queued ones, the failed ones
    too with ``include_failed``, every row (sent and dropped included) with ``include_sent``."""
    if include_sent:
        where, params = "1", []
    elif include_failed:
        where, params = "state in (?, ?)", [QUEUED, FAILED]
    else:
        where, params = "state = ?", [QUEUED]
    if game is not None:
        where, params = f"{where} and game = ?", [*params, game]
    return _rows(store, where, params)


def drop_queued(store, game: str, recipient: str) -> int:
    """Drop what waits for ``recipient`` in ``game`` (an address replaced before its mail
    went); returns how many messages were dropped."""
    store.require_transaction("outbox.drop_queued()")
    return store.conn.execute("delete from outbox where game = ? and recipient = ? and state = ?",
                              [game, recipient, QUEUED]).rowcount


def drop_stale(store, game: str, message_ids, reason: str, at: str) -> int:
    """Drop the queued reminders ``message_ids`` of ``game`` whose request was settled,
    unless they were handed to the SMTP server already (claimed: they may have gone)."""
    store.require_transaction("outbox.drop_stale()")
    ids = list(message_ids)
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    return store.conn.execute(
        f"update outbox set state = ?, failed_at = ?, last_error = ? where game = ? and state = ? "
        f"and claimed_at is null and message_id in ({marks})",
        [DROPPED, at, one_line(reason), game, QUEUED, *ids]).rowcount


def held(store, game: str, recipient: str, at: str) -> list[OutboxRow]:
    """The answers to ``recipient`` in ``game`` held for their next message and still
    within their window at ``at`` (never tried: a row handed to the server is left alone),
    oldest first."""
    _check_time(at, "at")
    return _rows(store, "game = ? and lower(recipient) = ? and state = ? and held_until is not null "
                        "and held_until > ? and attempts = 0 and claimed_at is null",
                 [game, recipient.lower(), QUEUED, at])


def held_by_recipient(store, game: str, at: str) -> dict[str, list[OutboxRow]]:
    """``held`` for every recipient in ``game`` at once: {lower-cased recipient: rows}."""
    _check_time(at, "at")
    out: dict[str, list[OutboxRow]] = {}
    for row in _rows(store, "game = ? and state = ? and held_until is not null and held_until > ? "
                            "and attempts = 0 and claimed_at is null", [game, QUEUED, at]):
        out.setdefault(row.recipient.lower(), []).append(row)
    return out


def held_waiting(store, now: str) -> list[OutboxRow]:
    """Every answer still held at ``now`` (not due yet), oldest first."""
    _check_time(now, "now")
    return _rows(store, "state = ? and held_until is not null and held_until > ? and attempts = 0", [QUEUED, now])


def take_held(store, row_ids) -> int:
    """Remove held answers whose text now travels inside another message (queued in the
    same transaction); a row a sender took meanwhile stays (it may be on its way)."""
    store.require_transaction("outbox.take_held()")
    ids = list(row_ids)
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    return store.conn.execute(f"delete from outbox where state = ? and held_until is not null and attempts = 0 "
                              f"and claimed_at is null and id in ({marks})", [QUEUED, *ids]).rowcount


def add_to_held(store, row_id: int, text: str, subject: str, in_reply_to: str | None,
                references: Iterable[str]) -> None:
    """One more answer to the same player, joined to a held one (``text`` is the whole new
    body); it keeps the held one's time, so the first answer waits no longer than it would."""
    store.require_transaction("outbox.add_to_held()")
    refs = [check_message_id(ref, "references") for ref in references]
    if in_reply_to is not None:
        in_reply_to = check_message_id(in_reply_to, "in_reply_to")
    store.conn.execute("update outbox set body_text = ?, subject = ?, in_reply_to = ?, refs = ? "
                       "where id = ? and state = ?",
                       [text, _header_value(subject, "subject"), in_reply_to, " ".join(refs), row_id, QUEUED])


def to_render(store) -> list[OutboxRow]:
    """Queued rows whose bodies are still to be rendered, oldest first."""
    return _rows(store, "state = ? and render is not null", [QUEUED])


def set_bodies(store, render: str, game: str, text: str, html: str | None) -> None:
    """Fill in the bodies of every queued row of ``game`` that waits for ``render``."""
    store.require_transaction("outbox.set_bodies()")
    store.conn.execute("update outbox set body_text = ?, body_html = ?, render = null"
                       " where game = ? and render = ? and state = ?", [text, html, game, render, QUEUED])


def set_row_bodies(store, row_id: int, text: str, html: str | None, attachments: str | None = None) -> None:
    """Fill in the bodies (and files) of one queued row that waited to be rendered."""
    store.require_transaction("outbox.set_row_bodies()")
    store.conn.execute("update outbox set body_text = ?, body_html = ?, attachments = ?, render = null"
                       " where id = ? and state = ?", [text, html, attachments, row_id, QUEUED])


def get(store, row_id: int) -> OutboxRow | None:
    found = _rows(store, "id = ?", [row_id])
    return found[0] if found else None


# -- marking (each its own small transaction) -------------------------------------------------


def claim(store, row_id: int, now: str, seconds: int = CLAIM_SECONDS) -> bool:
    """Take a due row for sending: True when this caller may send it now.

    The row's next try moves ``seconds`` ahead, so a second sender running at the same
    time (two cron jobs overlapping) skips it instead of sending it too. A sender killed
    after its claim leaves the row queued: it is tried again once the claim runs out.
    """
    _check_time(now, "now")
    with store.transaction():
        return _claim(store, row_id, now, seconds)


def mark_sent(store, row_id: int, at: str) -> None:
    """Record that the server accepted row ``row_id`` at ``at``; the secret it was queued
    with (``redact``) leaves its bodies in the same transaction."""
    _check_time(at, "at")
    with store.transaction():
        _mark_sent(store, row_id, at)


def mark_sent_and_claim(store, row_id: int, at: str, next_id: int, now: str,
                        seconds: int = CLAIM_SECONDS) -> bool:
    """``mark_sent(row_id, at)`` and ``claim(next_id, now, seconds)`` in one transaction (one
    commit, one wait for the disk, per message sent); returns the claim's answer. A crash
    leaves what the two alone leave after the claim: the one sent, the next claimed."""
    _check_time(at, "at")
    _check_time(now, "now")
    with store.transaction():
        _mark_sent(store, row_id, at)
        return _claim(store, next_id, now, seconds)


EXPIRED = "its time passed before it could go"


def _claim(store, row_id: int, now: str, seconds: int) -> bool:
    store.conn.execute(  # checked as it is sent: a reminder never goes out after the deadline it names
        "update outbox set state = ?, failed_at = ?, last_error = ?, claimed_at = null "
        "where id = ? and state = ? and expires_at is not null and expires_at <= ?",
        [DROPPED, now, EXPIRED, row_id, QUEUED, now])
    cursor = store.conn.execute(
        "update outbox set next_try_at = ?, claimed_at = ? where id = ? and state = ? and next_try_at <= ?",
        [_later(now, seconds), now, row_id, QUEUED, now],
    )
    return cursor.rowcount == 1


def _mark_sent(store, row_id: int, at: str) -> None:
    cursor = store.conn.execute(
        "update outbox set state = ?, sent_at = ?, attempts = attempts + 1, last_error = null,"
        " body_text = case when redact is null then body_text else replace(body_text, redact, ?) end,"
        " body_html = case when redact is null then body_html else replace(body_html, redact, ?) end,"
        " redact = null where id = ? and state = ?",
        [SENT, at, REDACTED, REDACTED, row_id, QUEUED],
    )
    if cursor.rowcount != 1:
        raise StoreError(f"outbox message {row_id} is not queued (unknown or sent already)")


def mark_failed(store, row_id: int, error: str, at: str, permanent: bool = False,
                deferred: bool = False, on_given_up=None, give_up_at: str | None = None) -> str | None:
    """Record a failed try at ``at``; return the time of the next one, or None when the
    message is given up (state "failed").

    ``permanent``: the server refused it for good (5xx): it is failed at once. ``deferred``:
    the server answered for this message with a temporary refusal (4xx); once such answers
    have gone on for ``RETRY_LIMIT_SECONDS`` it is failed too, or sooner, at ``give_up_at``
    (the caller's: the recipient's next deadline), whichever comes first. Otherwise (the server could
    not be reached) it waits: 1 minute, 2, 4, ... at most an hour, for as long as it takes.
    ``on_given_up(row, error)`` runs inside the same transaction when the message is failed
    (the moderator's notice is queued with it).
    """
    _check_time(at, "at")
    with store.transaction():
        found = store.conn.execute(
            "select attempts, deferred_since from outbox where id = ? and state = ?", [row_id, QUEUED]
        ).fetchone()
        if found is None:
            raise StoreError(f"outbox message {row_id} is not queued (unknown or sent already)")
        attempts, since = found[0] + 1, found[1]
        if deferred and since is None:
            since = at
        error = one_line(error)
        if deferred and not permanent and at >= _later(since, RETRY_LIMIT_SECONDS):
            permanent = True
            error = one_line(f"refused for {RETRY_LIMIT_SECONDS // 86400} days, last: {error}")
        elif deferred and not permanent and give_up_at is not None and at >= give_up_at:
            permanent = True
            error = one_line(f"refused since {since.replace('T', ' ').replace('Z', ' UTC')}, given up at the "
                             f"recipient's deadline, last: {error}")
        if permanent:
            # given up: its secret (a welcome's password) leaves the bodies, as when it is sent
            store.conn.execute(
                "update outbox set state = ?, attempts = ?, last_error = ?, failed_at = ?, deferred_since = ?, "
                "claimed_at = null,"
                " body_text = case when redact is null then body_text else replace(body_text, redact, ?) end,"
                " body_html = case when redact is null then body_html else replace(body_html, redact, ?) end,"
                " redact = null where id = ?", [FAILED, attempts, error, at, since, REDACTED, REDACTED, row_id])
            if on_given_up is not None:
                on_given_up(get(store, row_id), error)
            return None
        next_try = _later(at, retry_delay(attempts))
        store.conn.execute(
            "update outbox set attempts = ?, next_try_at = ?, last_error = ?, deferred_since = ?, "
            "claimed_at = null where id = ?", [attempts, next_try, error, since, row_id],
        )
    return next_try


def fail_sent(store, message_id: str, recipient: str, error: str, at: str) -> OutboxRow | None:
    """A message the judge sent to ``recipient`` came back (a bounce): mark it failed, with
    the server's words; None when no sent message of that Message-ID went to that address."""
    store.require_transaction("outbox.fail_sent()")
    cursor = store.conn.execute(
        "update outbox set state = ?, failed_at = ?, last_error = ? where message_id = ? and lower(recipient) = ? "
        "and state in (?, ?)", [FAILED, at, one_line(error), message_id, recipient.lower(), SENT, QUEUED])
    if cursor.rowcount != 1:
        return None
    return _rows(store, "message_id = ?", [message_id])[0]


def retry_delay(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed try (1 → 60, 2 → 120, ... ≤ 3600)."""
    if attempts < 1:
        raise ValueError(f"attempts counts from 1, got {attempts}")
    # Past 2**6 minutes the cap holds anyway; stop the exponent from growing without end.
    return min(FIRST_RETRY_SECONDS * 2 ** min(attempts - 1, 12), LONGEST_RETRY_SECONDS)


def one_line(error: object, limit: int = ERROR_LENGTH) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _later(at: str, seconds: int) -> str:
    return shift(at, seconds)
