"""Bounces: the pipeline step after screening that reads mail that came back to the judge.

The screen keeps the judge from answering automatic mail; this step reads such mail for
the addresses that failed, with flufl.bounce (the detector Mailman 3 uses: RFC 3464
delivery status notifications first, then the formats of Postfix, Exim, qmail, Yahoo,
Microsoft and others), and records each permanent failure of an address the judge mails
(``pbem.mail.failures``: a bounce score, the moderator told). A bounce is never answered
and never changes a game; a message that names no address of the judge's players changes
nothing at all. A temporary failure (a DSN whose action is "delayed") is reported, not
counted, as Mailman 3 does: the server is still trying.

``read(raw)`` takes bytes (flufl.bounce walks the MIME tree of the standard library's
classic message object, which the parse step does not keep) and returns plain values;
``record(store, bounce, at)`` writes, inside the caller's transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# What the detectors read of a bounce: its beginning. The report comes first and the
# returned message last, its headers (the Message-ID) before its body, so the start holds
# all that matters; the cut keeps a hostile "bounce" from costing the line-by-line
# heuristic detectors seconds (benchmarks/bench_bounces.py measures it).
MAX_BOUNCE_BYTES = 64 * 1024
MAX_BOUNCE_LINES = 2000
MAX_BOUNCE_MULTIPARTS = 32  # a real bounce has a handful (Gmail's: 3); deep nesting costs the walk
_CONTINUED = re.compile(r"(?<=\S) \d{3}[- ]\d\.\d{1,3}\.\d{1,3} +")
_MESSAGE_ID = re.compile(rb"(?im)^[ \t]*Message-ID:[ \t]*(<[^<>\s]+@[^<>\s]+>)")


@dataclass(frozen=True)
class Failure:
    address: str
    permanent: bool
    answer: str  # the server's words about it (Diagnostic-Code, or the bounce's own line)


@dataclass(frozen=True)
class Bounce:
    failures: tuple[Failure, ...]
    message_ids: tuple[str, ...] = field(default=())  # Message-IDs of the returned message(s)

    def as_dict(self) -> dict:
        return {"failures": [f.__dict__ for f in self.failures], "message_ids": list(self.message_ids)}


def read(raw: bytes) -> Bounce | None:
    """The failures a bounce reports (read from its first ``MAX_BOUNCE_BYTES`` and
    ``MAX_BOUNCE_LINES``), or None when it reports none."""
    raw = b"".join(raw[:MAX_BOUNCE_BYTES].splitlines(keepends=True)[:MAX_BOUNCE_LINES])
    if raw.lower().count(b"multipart/") > MAX_BOUNCE_MULTIPARTS:
        return None
    import email
    import logging

    from flufl.bounce import all_failures
    # a detector that fails is logged by flufl.bounce with its traceback; here it only
    # means that detector found nothing, so nothing of it reaches the judge's output
    quiet = logging.getLogger("flufl.bounce")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    try:
        msg = email.message_from_bytes(raw)
        temporary, permanent = all_failures(msg)
    except Exception:  # noqa: BLE001 - a detector that chokes on odd mail finds nothing in it
        return None
    addresses = {_address(a): True for a in permanent}
    for a in temporary:
        addresses.setdefault(_address(a), False)
    addresses.pop("", None)
    if not addresses:
        return None
    statuses = _dsn_fields(msg)
    text = _text(msg)
    failures = tuple(Failure(address, permanent, statuses.get(address) or _words_near(text, address))
                     for address, permanent in sorted(addresses.items()))
    own = (msg.get("Message-ID") or "").strip()
    ids = tuple(dict.fromkeys(m.decode("ascii", "replace") for m in _MESSAGE_ID.findall(raw)
                              if m.decode("ascii", "replace") != own))
    return Bounce(failures, ids)


def record(store, bounce: Bounce, at: str) -> list[str]:
    """Record each failure of an address a player of this judge has; return one short
    phrase per failure read (for the ingest outcome). Inside the caller's transaction."""
    from ..store import judge as tables
    from ..store import outbox
    from . import failures
    said = []
    for failure in bounce.failures:
        players = tables.players_at(store, failure.address)
        if not failure.permanent:
            said.append(f"{failure.address} delayed (not counted)")
            continue
        if not players:
            said.append(f"{failure.address} failed (no player's address: nothing changed)")
            continue
        # one of the judge's own messages to that very address, quoted back: no doubt left
        returned = [row for mid in bounce.message_ids
                    if (row := outbox.fail_sent(store, mid, failure.address, failure.answer, at)) is not None]
        entry = failures.record(store, failure.address, failure.answer, at, certain=bool(returned),
                                message=bool(returned))
        state = "marked mail not delivered" if entry["dead_since"] else f"score {entry['score']:g}"
        said.append(f"{failure.address} failed ({state})")
    return said


def _address(value) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return text.strip().strip("<>").strip().lower()


def _dsn_fields(msg) -> dict[str, str]:
    """address -> "Status 5.1.1: Diagnostic-Code" from every message/delivery-status part."""
    out = {}
    for part in msg.walk():
        if part.get_content_type() != "message/delivery-status":
            continue
        for block in part.get_payload() if part.is_multipart() else []:
            recipient = block.get("Final-Recipient") or block.get("Original-Recipient") or ""
            address = _address(recipient.rpartition(";")[2])
            words = " ".join((block.get("Diagnostic-Code") or "").partition(";")[2].split())
            words = _CONTINUED.sub(" ", words)  # a multi-line reply reads as one sentence
            status = (block.get("Status") or "").strip()
            if address:
                out[address] = " ".join(x for x in (words, f"(status {status})" if status else "") if x)
    return out


def _text(msg) -> str:
    chunks = []
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            payload = part.get_payload(decode=True) or b""
            chunks.append(payload.decode(part.get_content_charset() or "utf-8", "replace"))
    return "\n".join(chunks)


def _words_near(text: str, address: str) -> str:
    """The server's words about ``address`` in a bounce without a DSN: the line that names
    it and those after it, up to a blank line (at most four)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if address in line.lower():
            chunk = []
            for following in lines[index:index + 4]:
                if chunk and not following.strip():
                    break
                chunk.append(following.strip())
            return " ".join(" ".join(chunk).split())[:200]
    return "a bounce named this address"
