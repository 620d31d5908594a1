"""Limits: cheap byte-level checks that run before the standard ``email`` parser sees a message.

The standard parser is thorough, and slow on shapes no mail client makes: twenty thousand
RFC 2047 encoded words in one ``From:`` take it most of a minute and gigabytes of memory,
sixty thousand MIME parts or a ``Content-Type`` with twenty thousand parameters take it
seconds. So before parsing, ``check`` counts what makes it slow, with regular expressions
over the bytes (linear, in C), and names the first limit a message is past. Such a message
is not parsed: ``skeleton`` keeps only the few headers that the later steps need to screen,
route and answer it (each cut short), and the judge answers that one limit, or nothing when
the mail is automatic.

Every limit is far above what a mail program writes (the numbers are documented in
docs/email.md, "Limits on a message"); each one alone keeps a message under half a second
and a hundred megabytes (``benchmarks/bench_hostile_mail.py`` measures it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BYTES = 1 << 20  # the whole message
MAX_HEADER_BYTES = 100 * 1024  # the header block (as Postfix's header_size_limit)
MAX_HEADER_FIELDS = 1000  # header lines (Received, DKIM, ... a forwarded mail has ~100)
MAX_ENCODED_WORDS = 200  # RFC 2047 =?charset?x?...?= words in all headers together
MAX_PARAMETERS = 50  # ;-separated parameters in one Content-* header (RFC 2231 pieces count)
MAX_ALL_PARAMETERS = 200  # the same in all Content-* headers together
MAX_PARTS = 100  # MIME parts (a body, its alternatives, attachments, inline pictures)
MAX_DEPTH = 30  # multiparts and attached messages nested in one another (real mail: 5 or so)
MAX_LINES = 20_000  # lines (1 MiB of base64 is 13,800 lines)
MAX_HTML_BYTES = 512 * 1024  # an HTML body the judge has to read (no plain-text alternative)
MAX_HTML_TAGS = 10_000  # tags in such an HTML body
REFERENCES_KEPT = 100  # In-Reply-To and References: the last ids kept (to thread the answer)

_FIELD_START = re.compile(rb"^[^ \t\r\n]", re.M)
_MIME_HEADER = re.compile(rb"^content-[a-z0-9-]*[ \t]*:[^\n]*(?:\n[ \t][^\n]*)*", re.I | re.M)
_MULTIPART = re.compile(rb"^[ \t]*multipart/", re.I)
_MESSAGE = re.compile(rb"^[ \t]*message/", re.I)
_BOUNDARY = re.compile(rb"""[;\s]boundary[ \t]*=[ \t]*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))""", re.I)
_FOLD = re.compile(rb"\r?\n(?=[ \t])")


@dataclass(frozen=True)
class Exceeded:
    """The first limit a message is past: its ``name`` ("MIME parts", "header block"), what
    the message has (``found``, at least ``limit + 1``), the ``limit`` and their ``unit``."""

    name: str
    found: int
    limit: int
    unit: str = ""

    def _figure(self, number: int) -> str:
        return f"{number:,}{self.unit}"

    @property
    def outcome(self) -> str:
        return f"refused: past a limit: {self.name} {self._figure(self.found)}, at most {self._figure(self.limit)}"

    def answer(self) -> str:
        return (f"Nothing was done: your message is past one of the judge's limits: {self.name} "
                f"{self._figure(self.found)}, at most {self._figure(self.limit)}. Send your commands again "
                f"in a plain message (no attachments, no forwarded mail).")


class OverLimit(Exception):
    """Raised while reading a parsed message (an HTML body past its limits); carries the limit."""

    def __init__(self, exceeded: Exceeded):
        super().__init__(exceeded.name)
        self.exceeded = exceeded


def check(raw: bytes) -> Exceeded | None:
    """The first limit ``raw`` is past, or None. Linear in the size of the message."""
    if len(raw) > MAX_BYTES:
        return Exceeded("size", -(-len(raw) // 1024), MAX_BYTES // 1024, " KiB")
    head_end = _header_end(raw)
    if head_end > MAX_HEADER_BYTES:
        return Exceeded("header block", -(-head_end // 1024), MAX_HEADER_BYTES // 1024, " KiB")
    lines = raw.count(b"\n") + 1
    if lines > MAX_LINES:
        return Exceeded("lines", lines, MAX_LINES)
    head = raw[:head_end]
    fields = len(_FIELD_START.findall(head))
    if fields > MAX_HEADER_FIELDS:
        return Exceeded("header lines", fields, MAX_HEADER_FIELDS)
    mime = [(m.start(), m.group(0)) for m in _MIME_HEADER.finditer(raw)]
    words = head.count(b"=?") + sum(value.count(b"=?") for start, value in mime if start >= head_end)
    if words > MAX_ENCODED_WORDS:
        return Exceeded("encoded words (=?...?=)", words, MAX_ENCODED_WORDS)
    counts = [value.count(b";") for _, value in mime]
    if max(counts, default=0) > MAX_PARAMETERS:
        return Exceeded("parameters in one Content- header", max(counts), MAX_PARAMETERS)
    structure = _structure(raw, mime)
    if structure is not None:
        return structure
    if sum(counts) > MAX_ALL_PARAMETERS:
        return Exceeded("parameters in all Content- headers", sum(counts), MAX_ALL_PARAMETERS)
    return None


def _structure(raw: bytes, mime: list[tuple[int, bytes]]) -> Exceeded | None:
    """MIME parts and nesting depth, from the multipart declarations, the delimiter lines of
    their boundaries (RFC 2046: a line starting ``--boundary``) and the attached messages
    (message/rfc822 and the like, which the parser takes apart as messages of their own)."""
    declared: list[tuple[int, object]] = []  # (where, boundary bytes, or ("message", where))
    for start, value in mime:
        name, _, rest = value.partition(b":")
        if name.strip().lower() != b"content-type":
            continue
        if _MESSAGE.match(rest):
            declared.append((start, ("message", start)))
        elif _MULTIPART.match(rest):
            found = _BOUNDARY.search(b" " + _FOLD.sub(b"", rest))
            if found:
                declared.append((start, (found.group(1) or found.group(2)).rstrip()))
    if len(declared) + 1 > MAX_PARTS:
        return Exceeded("MIME parts", len(declared) + 1, MAX_PARTS)
    names = sorted({b for _, b in declared if isinstance(b, bytes)}, key=len, reverse=True)
    if not declared:
        return None
    events = [(start, 0, token, False) for start, token in declared]
    parts = 1 + sum(1 for _, token in declared if not isinstance(token, bytes))
    if names:
        pattern = re.compile(rb"^--(" + b"|".join(re.escape(b) for b in names) + rb")(--)?", re.M)
        for m in pattern.finditer(raw):
            closing = m.group(2) is not None
            parts += not closing
            events.append((m.start(), 1, m.group(1), closing))
    if parts > MAX_PARTS:
        return Exceeded("MIME parts", parts, MAX_PARTS)
    events.sort(key=lambda event: event[0])
    depth: dict = {None: 0}
    parent: dict = {}
    context = None  # the boundary (or attached message) whose part we are in; None: the top
    deepest = 0
    for _, kind, token, closing in events:
        if kind == 0:  # a boundary declared again (hostile) nests deeper again, as in the parser
            depth[token], parent[token] = depth[context] + 1, context
            deepest = max(deepest, depth[token])
            if not isinstance(token, bytes):  # an attached message: what follows is inside it
                context = token
        elif token in depth:
            context = parent.get(token) if closing else token
    if deepest > MAX_DEPTH:
        return Exceeded("nesting depth", deepest, MAX_DEPTH)
    return None


def html_exceeded(html: str) -> Exceeded | None:
    """An HTML body that would take long to turn into text (checked before html.parser runs)."""
    size = len(html.encode("utf-8", "surrogatepass")) if not html.isascii() else len(html)
    if size > MAX_HTML_BYTES:
        return Exceeded("HTML body", -(-size // 1024), MAX_HTML_BYTES // 1024, " KiB")
    tags = html.count("<")
    if tags > MAX_HTML_TAGS:
        return Exceeded("HTML tags", tags, MAX_HTML_TAGS)
    return None


# ---------------------------------------------------------------------- the skeleton

_KEPT = (b"from", b"sender", b"reply-to", b"return-path", b"message-id", b"subject", b"in-reply-to",
         b"references", b"auto-submitted", b"precedence", b"list-id", b"list-unsubscribe", b"x-loop",
         b"x-autoreply", b"x-autorespond", b"x-auto-response-suppress", b"content-type", b"date", b"to")
_KEPT_FIELD = re.compile(rb"^(" + b"|".join(_KEPT) + rb")[ \t]*:([^\n]*(?:\n[ \t][^\n]*)*)", re.I | re.M)
_ADDRESS_HEADERS = (b"from", b"sender", b"reply-to", b"return-path")
_ADDRESS = re.compile(rb"[^\s<>@\"',;:()]{1,200}@[^\s<>@\"',;:()]{1,255}")
_ANGLE_ID = re.compile(rb"<[^<>\s]{1,250}>")
_VALUE_BYTES = 998  # RFC 5322's longest line
_WORDS_KEPT = 20
_SEEN_BYTES = 32 * 1024


def skeleton(raw: bytes) -> bytes:
    """The few header lines of ``raw`` that screening, routing and the answer need, each cut
    to a size the parser takes at once, and no body: what the judge reads of a message that
    is past a limit. Works on any bytes (the header block may be huge or unending)."""
    head = raw[: _header_end(raw, 2 * MAX_BYTES)]
    out: list[bytes] = []
    counts: dict[bytes, int] = {}
    for m in _KEPT_FIELD.finditer(head):
        name = m.group(1).lower()
        counts[name] = counts.get(name, 0) + 1
        if counts[name] > (_WORDS_KEPT if name == b"x-loop" else 1):
            continue
        value = m.group(2)
        if len(value) > 2 * _SEEN_BYTES:  # only its two ends matter (an address, the last ids)
            value = value[:_SEEN_BYTES] + b" " + value[-_SEEN_BYTES:]
        value = _FOLD.sub(b"", value).replace(b"\r", b"").strip()
        out.append(name + b": " + _cut(name, value))
    return b"\n".join(out) + b"\n\n"


def _cut(name: bytes, value: bytes) -> bytes:
    if name in (b"in-reply-to", b"references"):
        return b" ".join(_ANGLE_ID.findall(value)[-REFERENCES_KEPT:])
    if name == b"content-type":
        return value.split(b";")[0][:100]  # its type only: a multipart without its parts
    too_long = len(value) > _VALUE_BYTES or value.count(b"=?") > _WORDS_KEPT
    if name in _ADDRESS_HEADERS and too_long:
        if name == b"return-path" and value.replace(b" ", b"") == b"<>":
            return b"<>"
        found = _ADDRESS.findall(value)
        return b"<" + found[-1] + b">" if found else b""
    if value.count(b"=?") > _WORDS_KEPT:
        value = value[: _nth(value, b"=?", _WORDS_KEPT)]
    return value[:_VALUE_BYTES]


def _header_end(raw: bytes, stop: int | None = None) -> int:
    """Where the header block ends (before its blank line), or the end of ``raw[:stop]``."""
    stop = len(raw) if stop is None else min(stop, len(raw))
    found = [i for i in (raw.find(b"\n\n", 0, stop), raw.find(b"\n\r\n", 0, stop)) if i >= 0]
    if not found:
        return stop
    end = min(found)
    return end - 1 if end and raw[end - 1:end] == b"\r" else end


def _nth(value: bytes, needle: bytes, n: int) -> int:
    at = -1
    for _ in range(n + 1):
        at = value.find(needle, at + 1)
        if at < 0:
            return len(value)
    return at
