"""Parse: the first step of the mail pipeline, the only one that touches a message's bytes.

``read_message`` turns the bytes of one RFC 5322 message into an ``Incoming``: plain values
(its identity, sender, subject, references, readable text, the headers screening needs)
that every later step takes without knowing MIME. It never raises anything but MailError,
whatever the bytes. ``submission_text`` does the same for a file given to ``pbem submit``:
a saved mail, a saved web page, or plain text.
"""

from __future__ import annotations

import email
import email.header
import email.message
import email.utils
import email.policy
import functools
import hashlib
import re
from dataclasses import dataclass

from .body import decode, readable_text
from .htmltext import html_to_text
from .limits import MAX_LINES, REFERENCES_KEPT, Exceeded, OverLimit
from .quoting import command_lines

__all__ = ["Incoming", "MailError", "command_lines", "html_to_text", "read_message", "submission_text"]

# Headers kept for screening (lower-case names); X-Loop keeps every value, joined by ", ".
SCREEN_HEADERS = ("auto-submitted", "precedence", "list-id", "list-unsubscribe", "x-loop",
                  "x-autoreply", "x-autorespond", "x-auto-response-suppress", "content-type", "from",
                  "sender", "reply-to")
_DIGEST = re.compile(rb"^content-type[ \t]*:[ \t]*(?:\r?\n[ \t]+)?multipart/digest", re.I | re.M)
_ANGLE_ID = re.compile(r"<([^<>]*)>")
_ADDRESS = re.compile(r"[^\s<>@\"',;:()]+@[^\s<>@\"',;:()]+")
# A From: value that is one bare address and nothing else (dot-atoms, RFC 5322 3.2.3):
# what email.utils.getaddresses reads as itself with no name, ~35 us sooner.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
BARE_ADDRESS = re.compile(rf"{_ATEXT}(?:\.{_ATEXT})*@{_ATEXT}(?:\.{_ATEXT})*")
_HEADER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*\Z")
# The message is taken apart with compat32 (``_Parsed``), whose header values stay the raw
# strings until read: the default policy parses a part's Content-Type into a header object
# each time it is read, several times per part, which costs several times the rest of the
# parse. What is read is read as the default policy reads it (see ``_Parsed``).
PARSE_POLICY = email.policy.compat32
# Headers whose meaning the parser and the body's reading take from the default policy's
# rendering of them (a damaged boundary parameter, say, is mended by it).
_MIME_HEADERS = frozenset(("content-type", "content-transfer-encoding", "content-disposition"))


class _Parsed(email.message.Message):
    """A part of a message parsed with compat32 whose MIME headers read as they read in a
    message parsed with the default policy: the text of the default policy's header object
    for the same raw value (what ``Message``'s methods make of it, as they take ``str()``
    of it), kept for the next message with the same value. So the parts, their types,
    boundaries, transfer encodings and file names are those the default policy gives."""

    def get(self, name, failobj=None):
        lower = name.lower()
        if lower not in _MIME_HEADERS:
            return super().get(name, failobj)
        for key, value in self._headers:
            if key.lower() == lower:
                return _as_default(key, value)
        return failobj


@functools.lru_cache(maxsize=512)
def _as_default(name: str, value: str) -> str:
    return str(email.policy.default.header_fetch_parse(name, value))


class MailError(ValueError):
    """A message that cannot be read at all: what was wrong, and what would be right."""


@dataclass(frozen=True)
class Incoming:
    """One received message, as plain values.

    ``key`` identifies it for idempotent ingest: its Message-ID without ``<>`` and
    whitespace, else ``"sha256:"`` and the hex digest of the raw bytes. ``message_id`` is the
    Message-ID in ``<>`` (None without one). ``return_path`` is None without a Return-Path
    header and "" for the null path ``<>`` (a bounce). ``text`` is the readable body
    (see ``pbem.mail.body``); ``attachments`` names the parts that were not read.
    ``digest`` says the message holds a ``multipart/digest`` part (a list's digest);
    ``over_limit`` names a limit of ``pbem.mail.limits`` that reading the body ran into
    (an HTML body too large to turn into text), else None.
    """

    key: str
    message_id: str | None
    sender: str
    sender_name: str
    return_path: str | None
    subject: str
    references: tuple[str, ...]
    text: str
    size: int
    headers: dict[str, str]
    attachments: tuple[str, ...]
    digest: bool = False
    over_limit: Exceeded | None = None


def read_message(raw: bytes, limited: bool = True) -> Incoming:
    """Read one RFC 5322 message; MailError when the bytes are no message at all. With
    ``limited`` (the judge's mail), an HTML body or a text past the limits of
    ``pbem.mail.limits`` is not read (``over_limit`` says which); a file given to ``pbem
    submit`` by its own player is read whole."""
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise TypeError(f"read_message takes the raw bytes of a message, got {type(raw).__name__}")
    raw = bytes(raw)
    if not raw.strip():
        raise MailError("the message is empty: expected an email message (header lines such as "
                        "From: and Subject:, a blank line, then the body)")
    try:
        msg = email.message_from_bytes(raw, _class=_Parsed if PARSE_POLICY is email.policy.compat32 else None,
                                       policy=PARSE_POLICY)
        fields = _raw_headers(msg)
    except Exception as exc:  # the email package gave up: nothing to read
        raise MailError(f"not a readable email message ({type(exc).__name__}); expected header "
                        f"lines such as From: and Subject:, a blank line, then the body") from None
    if not any(_HEADER_NAME.match(name) for name in fields):
        raise MailError("not an email message: it starts with no header lines (From:, Subject:, "
                        "...); save or pipe the whole message, headers included")
    message_id, key = _identity(fields.get("message-id", [""])[0], raw)
    sender, sender_name = read_sender(msg, fields)
    over_limit = None
    try:
        text, attachments = readable_text(msg, limited)
    except OverLimit as exc:
        text, attachments, over_limit = "", (), exc.exceeded
    except Exception:  # readable_text skips bad parts; this only guards the unforeseen
        text, attachments = "", ("unreadable body",)
    lines = text.count("\n") + 1
    if limited and lines > MAX_LINES:  # short lines packed into base64 or quoted-printable
        text, over_limit = "", Exceeded("lines of text", lines, MAX_LINES)
    return Incoming(
        key=key,
        message_id=message_id,
        sender=sender,
        sender_name=sender_name,
        return_path=_return_path(fields),
        subject=" ".join(_decoded(msg, fields, "subject").split()),
        references=_references(fields),
        text=text,
        size=len(raw),
        headers=_screen_headers(msg, fields),
        attachments=attachments,
        digest=_DIGEST.search(raw) is not None,
        over_limit=over_limit,
    )


def submission_text(data: bytes) -> str:
    """The text of a file given to ``pbem submit``: the readable text of a saved mail (.eml),
    the text of an HTML page (a forum thread saved from a browser), else the file as text."""
    text = _file_text(data)
    if _looks_like_message(text):
        try:
            return read_message(data, limited=False).text
        except MailError:
            return text
    if _looks_like_html(text):
        return html_to_text(text)
    return text


# ---------------------------------------------------------------------- headers


def _raw_headers(msg) -> dict[str, list[str]]:
    """Lower-case name -> the raw values, unfolded and safe to store (no lone surrogates)."""
    fields: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        fields.setdefault(name.strip().lower(), []).append(_clean(" ".join(str(value).split())))
    return fields


def _clean(text: str) -> str:
    """Undecodable bytes the email package kept as surrogates become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _decoded(msg, fields: dict[str, list[str]], name: str) -> str:
    """The first value of a header, RFC 2047 words and 8-bit text decoded."""
    values = fields.get(name)
    if not values:
        return ""
    value = values[0]
    if "=?" not in value and value.isascii():
        return value
    try:
        return _clean(" ".join(str(_fetched(msg, name)).split()))
    except Exception:
        return value


def _fetched(msg, name: str):
    """``msg[name]`` as a message parsed with the default policy gives it: the first such
    header, decoded (RFC 2047 words) by the default policy's header registry."""
    for key, value in msg.raw_items():
        if key.lower() == name:
            return email.policy.default.header_fetch_parse(key, value)
    return None


def _identity(value: str, raw: bytes) -> tuple[str | None, str]:
    match = _ANGLE_ID.search(value)
    key = "".join((match.group(1) if match else value).split()).strip("<>")
    if not key:
        return None, "sha256:" + hashlib.sha256(raw).hexdigest()
    return f"<{key}>", key


def read_sender(msg, fields: dict[str, list[str]]) -> tuple[str, str]:
    """(lower-case addr-spec, display name) of the first From address; ("", "") if none.

    Parsed from the raw value with ``email.utils`` (the header registry's full parse costs
    more than the rest of a message), RFC 2047 words in the name decoded."""
    if not fields.get("from"):
        return "", ""
    raw = fields["from"][0]
    if BARE_ADDRESS.fullmatch(raw):
        return raw.lower(), ""
    try:
        name, spec = email.utils.getaddresses([raw])[0]
    except Exception:
        name, spec = "", ""
    if "@" in spec and spec != "<>":
        if "=?" in name:
            try:
                name = str(email.header.make_header(email.header.decode_header(name)))
            except Exception:
                pass
        return _clean(spec).lower(), _clean(name)
    found = _ADDRESS.search(raw)
    return (found.group(0).lower() if found else ""), ""


def _return_path(fields: dict[str, list[str]]) -> str | None:
    values = fields.get("return-path")
    if values is None:
        return None
    value = values[0].strip()
    match = _ANGLE_ID.search(value)
    return ("".join(match.group(1).split()) if match else value).lower()


def _references(fields: dict[str, list[str]]) -> tuple[str, ...]:
    """References' ids, then In-Reply-To's (the message this one answers, last, as RFC 5322
    orders a thread: so it is kept whatever is cut), each once (a set, not a list: a message
    may carry tens of thousands), the last ``REFERENCES_KEPT`` of them."""
    found: dict[str, None] = {}
    for name in ("references", "in-reply-to"):
        for value in fields.get(name, ()):
            for match in _ANGLE_ID.finditer(value):
                ident = "<" + "".join(match.group(1).split()) + ">"
                if ident != "<>":
                    if name == "in-reply-to":  # the answered message goes last; a repeat elsewhere keeps its place
                        found.pop(ident, None)
                    found.setdefault(ident, None)
    return tuple(found)[-REFERENCES_KEPT:]


def _screen_headers(msg, fields: dict[str, list[str]]) -> dict[str, str]:
    headers = {name: _decoded(msg, fields, name) for name in SCREEN_HEADERS if name in fields}
    if "x-loop" in fields:
        headers["x-loop"] = ", ".join(fields["x-loop"])
    return headers


# ---------------------------------------------------------------------- files for pbem submit

_KNOWN_HEADERS = frozenset((
    "from", "to", "cc", "subject", "date", "message-id", "mime-version", "content-type",
    "content-transfer-encoding", "received", "return-path", "delivered-to", "reply-to",
    "in-reply-to", "references", "user-agent", "x-mailer", "snapshot-content-location",
))
_FIELD = re.compile(r"([!-9;-~]+):")
_HTML_TAG = re.compile(
    r"</?(?:a|b|blockquote|body|br|code|div|h[1-6]|head|html|i|li|meta|ol|p|pre|span|table|td|tr|ul)\b[^>]*>",
    re.IGNORECASE,
)


def _file_text(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # saved as "Unicode" by a Windows editor
        return decode(data, "utf-16")
    return decode(data, "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8")


def _looks_like_message(text: str) -> bool:
    """Header lines (at least one a mail header) up to a blank line, as in a saved .eml."""
    lines = text.split("\n")
    if lines and lines[0].startswith("From "):  # the separator line of an mbox
        lines = lines[1:]
    known = False
    for number, line in enumerate(lines):
        if not line.strip():
            return known and number > 0
        if line[0] in " \t":
            if number == 0:
                return False
            continue
        field = _FIELD.match(line)
        if field is None:
            return False
        known = known or field.group(1).lower() in _KNOWN_HEADERS
    return False


def _looks_like_html(text: str) -> bool:
    start = text.lstrip()[:15].lower()
    if start.startswith(("<!doctype html", "<html")):
        return True
    return len(_HTML_TAG.findall(text, 0, 200_000)) >= 3
