"""Sending the outbox: compose each due row, hand it to an SMTP server (or write it as a
.eml file), and mark it sent the moment it is delivered.

The send step can be killed at any moment and run again: a row is sent only while it is
queued and due, it is claimed (``outbox.claim``) just before it goes out so that two
senders running at once do not both send it, and it is marked sent right after the server
accepts it (in one transaction with the claim of the next row: one commit per message). One
window remains: a crash (or a lost connection) after the server accepted a
message but before the mark. That message is sent again on a later run, with the same
Message-ID, which mail clients use to show it once.

Standard library only (``smtplib``, ``ssl``, ``email``), imported when first needed.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from pbem.store import outbox
from pbem.store.faults import maybe_crash

from .config import MailConfig, check_sendable

SENT, FAILED = "sent", "failed"


@dataclass(frozen=True)
class SendResult:
    """What became of one row in a run. ``next_try_at`` is set for a failure, ``path`` for a file."""

    id: int
    game: str
    kind: str
    recipient: str
    subject: str
    message_id: str
    outcome: str  # "sent" or "failed"
    error: str | None = None
    next_try_at: str | None = None
    path: str | None = None
    given_up: bool = False  # failed for good (a permanent refusal, or the retry limit): not tried again


@dataclass
class SendReport:
    """One run of the sender. ``stopped`` says why the run ended early (the connection could
    not be made or was lost); ``left`` counts the due rows it did not try, untouched."""

    on_result: Callable[[SendResult], None] | None = field(default=None, repr=False, compare=False)
    results: list[SendResult] = field(default_factory=list)
    stopped: str | None = None
    left: int = 0
    notes: list[str] = field(default_factory=list)  # for the moderator: e.g. why no board pictures

    def add(self, result: SendResult) -> None:
        self.results.append(result)
        if self.on_result is not None:
            self.on_result(result)

    @property
    def sent(self) -> list[SendResult]:
        return [r for r in self.results if r.outcome == SENT]

    @property
    def failed(self) -> list[SendResult]:
        return [r for r in self.results if r.outcome == FAILED]

    @property
    def ok(self) -> bool:
        """True when everything due was delivered (or nothing was due)."""
        return not self.failed and self.stopped is None and not self.left

    def as_dict(self) -> dict:
        return {"results": [asdict(r) for r in self.results], "sent": len(self.sent),
                "failed": len(self.failed), "left": self.left, "stopped": self.stopped,
                "ok": self.ok, "notes": list(self.notes)}


# -- composing ---------------------------------------------------------------------------------


def compose(row: outbox.OutboxRow, from_address: str, plain: bool = False):
    """The message of ``row`` (an ``email.message.EmailMessage``, policy ``default``, each
    header value parsed once: ``sendpolicy``).

    Plain text, plus an HTML alternative when the row has one and ``plain`` is false (the
    recipient's choice: ``pbem address ... --plain``); the boards drawn in the HTML as SVG
    go as PNG pictures beside it (``multipart/related``, see ``pictures``). UTF-8, in a
    transfer encoding that needs no 8BITMIME from the server. ``Date`` is the time it was
    queued: the moment the judge decided to say it, whenever it is delivered.
    """
    from datetime import datetime, timezone
    from email.message import EmailMessage
    from email.utils import format_datetime

    from pbem.store.event import AT_FORMAT

    from .sendpolicy import SEND_POLICY

    message = EmailMessage(policy=SEND_POLICY)
    message["From"] = from_address
    message["To"] = row.recipient
    message["Subject"] = row.subject
    queued = datetime.strptime(row.queued_at, AT_FORMAT).replace(tzinfo=timezone.utc)
    message["Date"] = format_datetime(queued)
    message["Message-ID"] = row.message_id
    if row.in_reply_to:
        message["In-Reply-To"] = row.in_reply_to
    if row.references:
        message["References"] = " ".join(row.references)
    message["Auto-Submitted"] = row.auto_submitted
    message.set_content(row.body_text, charset="utf-8", cte=_transfer_encoding(row.body_text))
    if row.body_html is not None and not plain:
        from . import pictures
        domain = row.message_id.strip("<>").rpartition("@")[2] or "pbem.invalid"
        html, images = pictures.inline(row.body_html, domain)
        message.add_alternative(html, subtype="html", charset="utf-8", cte=_transfer_encoding(html))
        part = message.get_payload()[-1]
        for image in images:  # the HTML part becomes multipart/related: the page and its pictures
            if part.get_content_type() != "multipart/related":
                part.make_related()
            part.attach(_picture_part(image, type(part), part.policy))
    if row.attachments:
        import json
        for item in json.loads(row.attachments):
            maintype, _, subtype = item["content_type"].partition("/")
            message.add_attachment(item["text"].encode("utf-8"), maintype=maintype, subtype=subtype,
                                   filename=item["filename"])
    _fixed_boundaries(message, row.message_id)
    return message


def _picture_part(image, kind, policy):
    """The MIME part of a board picture, as ``add_related`` makes it (a ``kind`` part:
    base64, inline, its Content-ID and file name), made once per picture: a summary's board
    goes to every player, and encoding the PNG and parsing the part's headers cost more than
    the rest of the message. Each message gets its own copy (with its own list of headers)."""
    import copy
    key = (image, kind, policy)
    made = _picture_parts.get(key)
    if made is None:
        made = kind(policy=policy)
        made.set_content(image.png, "image", "png", cid=image.cid, disposition="inline", filename=image.name)
        if len(_picture_parts) >= _PICTURE_PARTS:
            _picture_parts.pop(next(iter(_picture_parts)))
        _picture_parts[key] = made
    part = copy.copy(made)
    part._headers = list(made._headers)
    part.defects = []
    return part


_PICTURE_PARTS = 64  # the parts kept: a run's boards (the oldest made goes first)
_picture_parts: dict = {}


def _fixed_boundaries(message, message_id: str) -> None:
    # A message sent again (after a crash before its mark) is byte for byte the same: its
    # MIME boundaries come from its Message-ID, not from chance.
    import hashlib
    for number, part in enumerate(p for p in message.walk() if p.is_multipart()):
        digest = hashlib.sha256(f"{message_id} {number}".encode()).hexdigest()[:32]
        part.set_boundary(f"=_pbem_{digest}")


def _note_pictures(report: SendReport, rows, plain: set) -> None:
    problem = picture_problem([row for row in rows if (row.game, row.recipient) not in plain])
    if problem:
        report.notes.append(problem)


def plain_recipients(store) -> set[tuple[str, str]]:
    """(game, address) of every recipient who asked for plain text only."""
    from pbem.store import judge as tables
    return tables.plain_addresses(store)


def picture_problem(rows) -> str | None:
    """Why the board pictures of ``rows`` cannot be drawn (None if they can, or none has any)."""
    if not any(row.body_html and "<svg" in row.body_html for row in rows):
        return None
    from . import pictures
    return pictures.problem()


def _transfer_encoding(text: str) -> str:
    # ASCII with short lines travels as it is; anything else as quoted-printable, which
    # every server carries (8bit would need the server's 8BITMIME) and stays readable.
    if text.isascii() and all(len(line) <= 998 for line in text.splitlines()):
        return "7bit"
    return "quoted-printable"


# -- sending over SMTP -----------------------------------------------------------------------


def open_smtp(config: MailConfig, context=None):
    """A connected, secured and logged-in ``smtplib.SMTP`` (or ``SMTP_SSL``).

    Certificates are verified against the system's trust store (or ``config.ca_file``)
    unless a different ``ssl.SSLContext`` is passed. STARTTLS, when configured, is
    required: a server that does not offer it is an error, never a fall-back to plain text.
    """
    import smtplib
    import ssl

    if context is None and config.security != "plain":
        context = ssl.create_default_context(cafile=str(config.ca_file) if config.ca_file else None)
    if config.security == "tls":
        smtp = smtplib.SMTP_SSL(config.smtp_host, config.port, timeout=config.timeout, context=context)
    else:
        smtp = smtplib.SMTP(config.smtp_host, config.port, timeout=config.timeout)
    try:
        smtp.ehlo()
        if config.security == "starttls":
            if not smtp.has_extn("starttls"):
                raise smtplib.SMTPNotSupportedError("the server does not offer STARTTLS; "
                                                    "use security 'tls' if it speaks SMTPS")
            smtp.starttls(context=context)
            smtp.ehlo()
        if config.smtp_user:
            smtp.login(config.smtp_user, config.smtp_password or "")
    except BaseException:
        smtp.close()
        raise
    return smtp


def send_due(store, config: MailConfig, now: str,
             connect: Callable[[MailConfig], object] | None = None,
             clock: Callable[[], str] | None = None,
             should_stop: Callable[[], bool] | None = None,
             claim_seconds: int = outbox.CLAIM_SECONDS,
             on_result: Callable[[SendResult], None] | None = None) -> SendReport:
    """Deliver the rows due at ``now`` over one SMTP connection; mark each as it goes.

    A refusal of one message marks that row and the run goes on: a permanent one (5xx for
    its recipient or its data) fails it for good, with the server's words, and records the
    failure against the address (``pbem.mail.failures``: the moderator is told, in the same
    transaction); a temporary one (4xx) is retried later, until ``outbox.RETRY_LIMIT_SECONDS``
    after the first, and then failed too. A connection-level failure (refused,
    dropped, timed out, login refused, certificate not trusted) marks the row in hand
    failed, if any, and ends the run: the rest stay queued, untouched.
    ``connect(config)`` opens the connection (default: ``open_smtp``). ``clock()``, when
    given, times each claim and mark instead of ``now``: in a long run, a claim dated from
    the run's start could run out before its message goes, and a second sender take it.
    ``should_stop()``, when given, is asked before each message: once it says yes, the run
    ends there and the rest stay queued (counted in ``left``; ``stopped`` stays None, as
    nothing failed). ``claim_seconds`` is how long a claimed row is left alone by other
    senders; a caller that holds the database's send lock exclusively (``pbem mail run``)
    has no other sender to keep off, and passes 0, so that a row left in doubt by a killed
    predecessor goes out at once rather than when its claim runs out. ``on_result(result)``
    hears of each row the moment it is marked. With ``config.replica_barrier``, the due rows
    go only once Litestream's replica holds them (one ``pbem.mail.replica`` barrier for the
    batch); if it cannot, they all stay queued and ``stopped`` says why.
    """
    check_sendable(config)
    moment = clock or (lambda: now)
    render_pending(store)
    rows = outbox.due(store, now)
    report = SendReport(on_result=on_result)
    if not rows:
        return report
    if not _replica_holds(store, config, moment, report, rows):
        return report
    plain = plain_recipients(store)
    _note_pictures(report, rows, plain)
    try:
        smtp = (connect or open_smtp)(config)
    except Exception as exc:
        if not _is_mail_failure(exc):
            raise
        report.stopped = f"{config.server}: {describe(exc)}"
        report.left = len(rows)
        return report
    try:
        tried = {row.id for row in rows}
        # After a message is sent, should_stop() is asked for the next row and, unless it says
        # stop, the mark of the one sent and the claim of the next go in one transaction:
        # ``asked`` and ``claimed`` carry those answers to the next row's turn.
        asked = claimed = None
        for index, row in enumerate(_and_notices(store, rows, tried, report, moment, config)):
            stop = asked if asked is not None else should_stop is not None and should_stop()
            asked = None
            if stop:
                report.left = len(rows) - index
                break
            if claimed is None:
                claimed = outbox.claim(store, row.id, moment(), claim_seconds)
            took, claimed = claimed, None
            if not took:
                continue  # another sender took it (or sent it) since we looked
            maybe_crash("send:after-claim")
            try:
                _hand_over(smtp, compose(row, config.judge_address, (row.game, row.recipient) in plain),
                           config.judge_address, row.recipient)
            except Exception as exc:
                if not _is_mail_failure(exc):
                    raise
                error = describe(exc)
                report.add(_failed(store, row, error, moment(), *verdict(exc)))
                if getattr(smtp, "sock", True) is None:  # smtplib closes a connection it lost
                    report.stopped = f"{config.server}: connection lost ({error})"
                    report.left = len(rows) - index - 1
                    break
            else:
                maybe_crash("send:after-accept")
                following = rows[index + 1] if index + 1 < len(rows) else None
                if following is not None:
                    asked = should_stop is not None and should_stop()
                if following is None or asked:
                    outbox.mark_sent(store, row.id, moment())
                else:
                    claimed = outbox.mark_sent_and_claim(store, row.id, moment(), following.id, moment(),
                                                         claim_seconds)
                maybe_crash("send:after-mark")
                report.add(_result(row, SENT))
    finally:
        _close(smtp)
    return report


def _hand_over(smtp, message, sender: str, recipient: str) -> None:
    """``smtp.send_message(message, sender, [recipient])``, with the message flattened by
    ``sendpolicy.wire_bytes`` (the same bytes, faster) where the addresses are ASCII (else
    smtplib decides about SMTPUTF8 itself)."""
    if (sender + recipient).isascii():
        from .sendpolicy import wire_bytes
        smtp.sendmail(sender, [recipient], wire_bytes(message))
    else:
        smtp.send_message(message, from_addr=sender, to_addrs=[recipient])


def _and_notices(store, rows: list, tried: set, report: SendReport, moment, config: MailConfig | None = None):
    """``rows``, then the moderators' notices that failures in this run queued (told within
    the same run, not one run later); ``rows`` grows as they are added. Under the replica
    barrier they go only once the replica holds them too (else at the next run)."""
    index = 0
    while index < len(rows):
        yield rows[index]
        index += 1
        if index == len(rows) and any(r.given_up for r in report.results):
            fresh = [row for row in outbox.due(store, moment()) if row.id not in tried and row.kind == "notice"]
            if fresh and config is not None and config.replica_barrier:
                from . import replica
                if replica.guard(config, store.path, moment()) is not None:
                    return
            tried.update(row.id for row in fresh)
            rows.extend(fresh)


def _replica_holds(store, config: MailConfig | None, moment, report: SendReport, rows: list) -> bool:
    """Under the replica barrier (``pbem.mail.replica``), one barrier for the whole batch
    ``rows``: True once the replica holds every transaction committed so far (the events
    behind these rows among them); else the batch stays queued, untouched, and ``report``
    says why. Without the barrier, True at once."""
    if config is None or not config.replica_barrier:
        return True
    from . import replica
    problem = replica.guard(config, store.path, moment())
    if problem is None:
        return True
    report.stopped, report.left = problem, len(rows)
    return False


RENDER_BATCH = 200  # rendered rows held before they are written: one commit for most runs,
# and after a long outage no more than this many bodies (with their boards) in memory at once


def render_pending(store) -> int:
    """Render the bodies of rows queued as what to render (public summaries, each once for
    all its recipients; private messages, from the model kept when queued); returns how
    many summaries were rendered."""
    from .letters import render_row
    cache: dict = {}
    records: dict = {}  # the replay of each game's round as of its last summary, to go on from
    rendered: list = []

    def write() -> None:  # in one transaction (one commit), the rendering done outside it
        if rendered:
            with store.transaction():
                for row_id, text, html, files in rendered:
                    outbox.set_row_bodies(store, row_id, text, html, files)
            rendered.clear()
    try:
        for row in outbox.to_render(store):
            rendered.append((row.id, *render_row(store, row.game, row.render, cache, records)))
            if len(rendered) >= RENDER_BATCH:
                write()
    finally:
        write()
    return len(cache)


def _result(row: outbox.OutboxRow, outcome: str, **extra) -> SendResult:
    return SendResult(row.id, row.game, row.kind, row.recipient, row.subject, row.message_id,
                      outcome, **extra)


def _failed(store, row: outbox.OutboxRow, error: str, now: str, permanent: bool = False,
            deferred: bool = False, certain: bool = False) -> SendResult:
    def given_up(failed: outbox.OutboxRow, words: str) -> None:
        from . import failures
        failures.record(store, failed.recipient, words, now, certain=certain, first=failed.deferred_since)
    give_up_at = None
    if deferred and not permanent:  # by the recipient's next deadline, if sooner than the outbox's limit
        from .reminders import give_up_by
        give_up_at = give_up_by(store, row.game, row.recipient, row.deferred_since or now)
    next_try = outbox.mark_failed(store, row.id, error, now, permanent=permanent, deferred=deferred,
                                  on_given_up=given_up, give_up_at=give_up_at)
    if next_try is None:  # the words kept may say more (how long it was refused for)
        error = outbox.get(store, row.id).last_error or error
    return _result(row, FAILED, error=outbox.one_line(error), next_try_at=next_try, given_up=next_try is None)


def verdict(exc: BaseException) -> tuple[bool, bool, bool]:
    """(permanent, deferred, certain) for a failure to send one message (RFC 5321: a 5xx
    reply is permanent, a 4xx temporary). ``certain``: the server refused the recipient
    itself, so the address is dead. A refused sender (the judge's own address) or a lost
    connection is the judge's trouble, not the player's: neither permanent nor counted."""
    import smtplib

    if isinstance(exc, smtplib.SMTPRecipientsRefused) and exc.recipients:
        code = next(iter(exc.recipients.values()))[0]
        return (500 <= code < 600, 400 <= code < 500, 500 <= code < 600)
    if isinstance(exc, smtplib.SMTPDataError):
        return (500 <= exc.smtp_code < 600, 400 <= exc.smtp_code < 500, False)
    return (False, False, False)


def _is_mail_failure(exc: BaseException) -> bool:
    import smtplib

    return isinstance(exc, (smtplib.SMTPException, OSError))


def describe(exc: BaseException) -> str:
    """One line for a failure, with the server's code and words where it gave them."""
    import smtplib
    import ssl

    if isinstance(exc, smtplib.SMTPRecipientsRefused) and exc.recipients:
        code, words = next(iter(exc.recipients.values()))
        return f"recipient refused: {code} {_text(words)}"
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"login refused: {exc.smtp_code} {_text(exc.smtp_error)}"
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return f"sender refused: {exc.smtp_code} {_text(exc.smtp_error)}"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate not trusted ({exc.verify_message}); set ca_file for a private CA"
    if isinstance(exc, TimeoutError):
        return "timed out waiting for the server"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running, and is the port right?)"
    return outbox.one_line(exc)


def _text(words: bytes | str) -> str:
    return words.decode("utf-8", "replace") if isinstance(words, bytes) else str(words)


def _close(smtp) -> None:
    try:
        smtp.quit()
    except Exception:  # the connection is gone already; nothing is left to tidy
        try:
            smtp.close()
        except Exception:
            pass


# -- writing .eml files instead ------------------------------------------------------------------


def write_due(store, folder: Path, now: str, from_address: str | None = None,
              clock: Callable[[], str] | None = None, config: MailConfig | None = None) -> SendReport:
    """Write each row due at ``now`` as ``FOLDER/<id>-<message-id>.eml`` and mark it sent.

    For a moderator who sends by hand. Each file appears whole (written under a temporary
    name, then renamed); a crash before the mark rewrites the same file on the next run.
    ``from_address`` defaults to ``judge@`` the Message-ID's domain; ``clock`` is as for
    ``send_due``; ``config``, when given, brings its replica barrier (``_replica_holds``).
    """
    moment = clock or (lambda: now)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = SendReport()
    render_pending(store)
    rows = outbox.due(store, now)
    if rows and not _replica_holds(store, config, moment, report, rows):
        return report
    plain = plain_recipients(store)
    _note_pictures(report, rows, plain)
    for index, row in enumerate(rows):
        if not outbox.claim(store, row.id, moment()):
            continue
        message = compose(row, from_address or _default_from(row.message_id), (row.game, row.recipient) in plain)
        target = folder / f"{row.id}-{safe_name(row.message_id)}.eml"
        temporary = folder / f".{target.name}.tmp"
        try:
            with open(temporary, "wb") as handle:
                handle.write(message.as_bytes(policy=message.policy.clone(linesep="\r\n")))
                handle.flush()
                os.fsync(handle.fileno())
            maybe_crash("write:before-rename")
            os.replace(temporary, target)
            maybe_crash("write:after-rename")
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            error = f"cannot write {target}: {exc.strerror or exc}"
            report.results.append(_failed(store, row, error, moment()))
            report.stopped, report.left = error, len(rows) - index - 1
            break
        outbox.mark_sent(store, row.id, moment())
        report.results.append(_result(row, SENT, path=str(target)))
    return report


def safe_name(message_id: str) -> str:
    """A Message-ID as part of a file name: brackets dropped, odd characters replaced."""
    return re.sub(r"[^A-Za-z0-9._@-]", "_", message_id.strip("<>"))[:120]


def _default_from(message_id: str) -> str:
    domain = message_id.strip("<>").rpartition("@")[2]
    try:
        return outbox.check_address(f"judge@{domain}")
    except Exception:
        return "judge@pbem.invalid"
