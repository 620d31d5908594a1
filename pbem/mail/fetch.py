"""Fetching players' mail from an IMAP folder: fetch, ingest, and only then mark.

One run: log in (TLS by default, or STARTTLS; plain text only to this machine), select the
folder, and take the messages not yet processed, oldest first: those with a UID above the
last one ingested, or, the first time (or after the server rebuilt the folder), the unseen
ones. Each message's bytes are fetched with ``BODY.PEEK[]`` (which leaves it unread) and
ingested by ``ingest_many``, a batch per transaction; the folder's UIDVALIDITY and last UID
are written in that same transaction. Only after the commit is each message marked
processed on the server: flagged ``\\Seen``, or moved to another folder.

So a run killed at any moment applies nothing twice: killed before the commit, nothing of
the batch happened and the messages are fetched again; killed after it, the record says
they are done, and the next run only marks them. Ingest's own de-duplication (Message-ID,
else the bytes) holds besides, even when the record is lost with a rebuilt folder.

Standard library only (``imaplib``, ``ssl``), imported when first needed.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field

from pbem.store import imap as record
from pbem.store.faults import maybe_crash

from .config import MailConfig, check_fetchable

# Read as 'pbem mail ingest' reads a message: anything past this is cut (and the judge
# answers that the message is too large), so one huge attachment cannot fill the memory.
MAX_FETCH = 10 * 1024 * 1024 + 1
BATCH = 50  # messages per transaction: each batch's bytes are held in memory at once
STOPPED = "asked to stop"  # report.stopped when should_stop() ended the run


class FetchError(Exception):
    """The server could not be reached, refused the login, or lacks a folder; one line."""


@dataclass
class FetchReport:
    """One run: ``results`` are (uid, ingest Result) in order; ``marked_late`` counts the
    messages ingested by an earlier run that was stopped before it marked them."""

    account: str
    folder: str
    uidvalidity: int = 0
    results: list = field(default_factory=list)
    marked_late: int = 0
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None

    def as_dict(self) -> dict:
        return {"account": self.account, "folder": self.folder, "uidvalidity": self.uidvalidity,
                "messages": [{"uid": uid, **result.as_dict()} for uid, result in self.results],
                "marked_late": self.marked_late, "notes": self.notes, "stopped": self.stopped}


def account_name(config: MailConfig) -> str:
    """The key of the account in the fetch record: the user at the host (not the port,
    which may change from 993 to 143 without changing the mailbox)."""
    return f"{config.imap_user}@{(config.imap_host or '').lower()}"


# -- connecting ----------------------------------------------------------------------------------


def open_imap(config: MailConfig, context=None):
    """A connected, secured and logged-in ``imaplib.IMAP4`` (or ``IMAP4_SSL``).

    Certificates are verified against the system's trust store (or ``config.ca_file``)
    unless another ``ssl.SSLContext`` is passed. STARTTLS, when configured, is required: a
    server that does not offer it is an error, never a fall-back to plain text.
    """
    import imaplib
    import ssl

    check_fetchable(config)
    host, port = config.imap_host, config.imap_port_or_default
    if context is None and config.imap_security != "plain":
        context = ssl.create_default_context(cafile=str(config.ca_file) if config.ca_file else None)
    try:
        if config.imap_security == "tls":
            imap = imaplib.IMAP4_SSL(host, port, ssl_context=context, timeout=config.timeout)
        else:
            imap = imaplib.IMAP4(host, port, timeout=config.timeout)
    except Exception as exc:
        raise FetchError(f"{config.imap_server}: {describe(exc)}") from None
    try:
        if config.imap_security == "starttls":
            if "STARTTLS" not in imap.capabilities:
                raise FetchError(f"{config.imap_server}: the server does not offer STARTTLS; "
                                 "use security 'tls' (port 993) if it speaks IMAPS")
            imap.starttls(ssl_context=context)
        _login(imap, config)
    except FetchError:
        _close(imap)
        raise
    except Exception as exc:
        _close(imap)
        raise FetchError(f"{config.imap_server}: {describe(exc)}") from None
    return imap


def _login(imap, config: MailConfig) -> None:
    user, password = config.imap_user, config.imap_password or ""
    try:
        if "AUTH=PLAIN" in imap.capabilities:  # takes any characters, unlike LOGIN's atoms
            imap.authenticate("PLAIN", lambda _: f"\0{user}\0{password}".encode())
        else:
            imap.login(user, password)
    except imap.error as exc:
        if isinstance(exc, imap.abort):
            raise
        raise FetchError(f"{config.imap_server}: login refused for {user}: {_words(exc)}") from None


def describe(exc: BaseException) -> str:
    """One line for a failure to reach or talk to the server."""
    import imaplib
    import socket
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate not trusted ({exc.verify_message}); set ca_file for a private CA"
    if isinstance(exc, ssl.SSLError):
        return (f"TLS failed ({exc.reason or exc}); if this port speaks plain IMAP first, "
                "use --starttls (port 143)")
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running, and is the port right?)"
    if isinstance(exc, TimeoutError):
        return "timed out waiting for the server"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror})"
    if isinstance(exc, imaplib.IMAP4.abort):
        return f"connection lost ({_words(exc)})"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return _words(exc)


def _words(exc: BaseException) -> str:
    """The server's own words from an imaplib error such as ``b'[ALERT] ...'``."""
    text = str(exc)
    found = re.search(r"""b(['"])(.*)\1""", text)
    return " ".join((found.group(2) if found else text).split()) or type(exc).__name__


def _close(imap) -> None:
    try:
        imap.logout()
    except Exception:  # the connection is gone already; nothing is left to tidy
        try:
            imap.shutdown()
        except Exception:
            pass


# -- folder names ---------------------------------------------------------------------------------


def quoted(name: str) -> str:
    """A folder name as an IMAP quoted string, in modified UTF-7 (RFC 3501 5.1.3)."""
    out, run = [], []

    def flush():
        if run:
            packed = base64.b64encode("".join(run).encode("utf-16-be")).decode().rstrip("=")
            out.append("&" + packed.replace("/", ",") + "-")
            run.clear()
    for char in name:
        if " " <= char <= "~":
            flush()
            out.append("&-" if char == "&" else char)
        else:
            run.append(char)
    flush()
    text = "".join(out)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unutf7(text: str) -> str:
    """A folder name as IMAP sends it (modified UTF-7, RFC 3501 5.1.3), decoded."""
    def one(found):
        packed = found.group(1).replace(",", "/")
        if not packed:
            return "&"
        return base64.b64decode(packed + "=" * (-len(packed) % 4)).decode("utf-16-be", "replace")
    return re.sub(r"&([A-Za-z0-9+,]*)-", one, text)


def folders(imap) -> list[str]:
    """The names of the account's folders, for a message that says which exist."""
    typ, data = imap.list()
    names = []
    for line in data if typ == "OK" else []:
        if isinstance(line, bytes):
            found = re.match(rb'\([^)]*\) (?:"(?:[^"\\]|\\.)*"|NIL) (.+)$', line)
            if found:
                name = found.group(1).decode("utf-8", "replace")
                if name.startswith('"'):
                    name = re.sub(r"\\(.)", r"\1", name[1:-1])
                names.append(unutf7(name))
    return sorted(names, key=lambda n: (n.upper() != "INBOX", n.lower()))


def _missing(imap, config: MailConfig, name: str, purpose: str) -> FetchError:
    there = ", ".join(folders(imap)[:20]) or "none"
    return FetchError(f"{config.imap_server}: no folder {name!r} {purpose} for {config.imap_user}; "
                      f"folders there: {there}")


# -- one run ---------------------------------------------------------------------------------------


def fetch(store, config: MailConfig, clock, judge_addresses: tuple[str, ...] = (),
          batch: int = BATCH, connect=None, should_stop=None, on_message=None) -> FetchReport:
    """Fetch, ingest and mark the folder's new messages; see the module docstring.

    ``clock()`` gives the time of each message and record (nothing here reads the clock).
    A failure to connect, to secure the connection, to log in, or to find the folders
    raises ``FetchError`` before anything is written; so does any other failure before the
    first message is fetched. A failure later ends the run with ``report.stopped`` set:
    what was committed stays, and the next run goes on from there.
    ``connect(config)`` opens the connection (default: ``open_imap``). ``should_stop()``,
    when given, is asked before each message is fetched: once it says yes, the messages
    in hand are committed and marked and the run ends there (``report.stopped`` says so),
    so a stop request never leaves a message half-done. ``on_message(uid, result)`` hears
    of each message the moment its batch is committed.
    """
    import imaplib

    from .ingest import ingest_many

    config = check_fetchable(config)
    account, folder, move_to = account_name(config), config.imap_folder, config.imap_done_folder
    report = FetchReport(account, folder)
    imap = (connect or open_imap)(config)
    try:
        try:
            uidvalidity, uidnext = _select(imap, config, folder)
            if move_to is not None and imap.status(quoted(move_to), "(MESSAGES)")[0] != "OK":
                raise _missing(imap, config, move_to, "to move fetched mail to")
            report.uidvalidity = uidvalidity
            candidates = _prepare(store, imap, config, account, uidvalidity, clock, report)
        except (imaplib.IMAP4.error, OSError) as exc:
            if isinstance(exc, imaplib.IMAP4.abort) or not isinstance(exc, imaplib.IMAP4.error):
                raise FetchError(f"{config.imap_server}: {describe(exc)}") from None
            raise FetchError(f"{config.imap_server}: {_words(exc)}") from None

        in_hand: list[int] = []  # UIDs fetched for the batch being ingested
        done: list[list[int]] = []

        def messages():
            for uid in candidates:
                if should_stop is not None and should_stop():
                    report.stopped = STOPPED
                    return
                raw = _fetch_one(imap, uid)
                if raw is not None:  # None: deleted by someone else meanwhile
                    in_hand.append(uid)
                    yield raw

        def before_commit(results):
            uids = in_hand[:len(results)]
            del in_hand[:len(results)]
            record.record_ingested(store, account, folder, uidvalidity, uids, clock())
            done.append(uids)

        def on_commit(results):
            uids = done.pop()
            report.results.extend(zip(uids, results))
            if on_message is not None:
                for uid, result in zip(uids, results):
                    on_message(uid, result)
            maybe_crash("fetch:after-commit")
            _mark(store, imap, config, account, uids)

        try:
            ingest_many(store, messages(), clock, judge_addresses, batch=batch,
                        on_commit=on_commit, before_commit=before_commit)
        except (imaplib.IMAP4.error, OSError) as exc:
            report.stopped = f"{config.imap_server}: {describe(exc)}"
            return report
        if report.stopped == STOPPED:  # the folder was not read through: its newest UIDs are not done
            return report
        with store.transaction():
            record.record_checked(store, account, folder, uidvalidity, max(uidnext - 1, 0), clock())
    finally:
        _close(imap)
    return report


def _select(imap, config: MailConfig, folder: str) -> tuple[int, int]:
    typ, data = imap.select(quoted(folder))
    if typ != "OK":
        there = folders(imap)
        if folder in there or (folder.upper() == "INBOX" and "INBOX" in there):
            # it exists, and the server would not open it: its own words say why
            raise FetchError(f"{config.imap_server}: the server would not open {folder} for {config.imap_user}: "
                             f"{_words(imap.error(data))}")
        raise _missing(imap, config, folder, "to fetch mail from")
    validity = imap.response("UIDVALIDITY")[1][0]
    if not validity:
        raise FetchError(f"{config.imap_server}: the server named no UIDVALIDITY for {folder}, "
                         "so its UIDs cannot be trusted from one run to the next")
    found = imap.response("UIDNEXT")[1][0]
    return int(validity), int(found) if found else 0


def _prepare(store, imap, config: MailConfig, account: str, uidvalidity: int, clock,
             report: FetchReport) -> list[int]:
    """Mark what an earlier run ingested but did not mark; return the UIDs to ingest now."""
    folder = config.imap_folder
    state = record.folder_state(store, account, folder)
    if state is not None and state.uidvalidity != uidvalidity:
        report.notes.append(f"the UIDVALIDITY of {folder} changed from {state.uidvalidity} to {uidvalidity}: "
                            "the server rebuilt the folder, so its old UIDs mean nothing; taking its unseen "
                            "messages, and those ingested before are recognised and skipped")
        with store.transaction():
            record.start_over(store, account, folder, uidvalidity, clock())
        state = None
    late = record.unmarked(store, account, folder)
    if late:
        _mark(store, imap, config, account, late)
        report.marked_late = len(late)
    if state is None:
        return _search(imap, "UNSEEN")
    return [uid for uid in _search(imap, f"UID {state.last_uid + 1}:*") if uid > state.last_uid]


def _search(imap, criteria: str) -> list[int]:
    typ, data = imap.uid("SEARCH", criteria)
    if typ != "OK":
        raise imap.error(f"SEARCH {criteria}: {data}")
    return sorted({int(n) for n in b" ".join(d for d in data if d).split()})


def _fetch_one(imap, uid: int) -> bytes | None:
    typ, data = imap.uid("FETCH", str(uid), f"(BODY.PEEK[]<0.{MAX_FETCH}>)")
    if typ != "OK":
        raise imap.error(f"FETCH {uid}: {data}")
    for item in data:
        if isinstance(item, tuple) and b"BODY[" in item[0].upper():
            return item[1]
    return None


def _mark(store, imap, config: MailConfig, account: str, uids: list[int]) -> None:
    """Flag ``uids`` \\Seen, or move them to the done folder; then forget them as unmarked."""
    if not uids:
        return
    targets = ",".join(map(str, uids))
    move_to = config.imap_done_folder
    if move_to is None:
        _ok(imap.uid("STORE", targets, "+FLAGS.SILENT", r"(\Seen)"), "STORE")
    elif "MOVE" in _capabilities(imap):
        _ok(imap.uid("MOVE", targets, quoted(move_to)), "MOVE")
    else:  # RFC 6851's fall-back; a crash before the expunge leaves a second copy, never a second ingest
        _ok(imap.uid("COPY", targets, quoted(move_to)), "COPY")
        _ok(imap.uid("STORE", targets, "+FLAGS.SILENT", r"(\Deleted)"), "STORE")
        if "UIDPLUS" in _capabilities(imap):
            _ok(imap.uid("EXPUNGE", targets), "UID EXPUNGE")
        else:
            _ok(imap.expunge(), "EXPUNGE")
    with store.transaction():
        record.record_marked(store, account, config.imap_folder, uids)


def _ok(answer, what: str):
    import imaplib
    typ, data = answer
    if typ != "OK":
        raise imaplib.IMAP4.error(f"{what} refused: {data}")
    return data


def _capabilities(imap) -> set[str]:
    # The list sent at login may grow after it (MOVE, UIDPLUS): ask once and keep it.
    cached = getattr(imap, "_pbem_capabilities", None)
    if cached is None:
        typ, data = imap.capability()
        words = b" ".join(d for d in data if isinstance(d, bytes)).decode("ascii", "replace").upper().split()
        cached = set(words) | set(imap.capabilities)
        imap._pbem_capabilities = cached
    return cached
