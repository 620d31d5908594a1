"""The readable text of a parsed message: which MIME parts are read and how they are decoded.

Read: text/plain (preferred in multipart/alternative) and text/html (turned into text) that
are not attachments, in every nested multipart. Not read, only named: attachments, other
types, and forwarded messages (message/*), whose text is someone else's and must never be
taken as the sender's commands. Decoding never fails: transfer encodings as the ``email``
package undoes them, charsets with replacement characters, an unknown or missing charset as
UTF-8 if it is valid and Windows-1252 otherwise.
"""

from __future__ import annotations

import codecs
from email.message import Message

from .htmltext import html_to_text
from .limits import MAX_DEPTH, OverLimit, html_exceeded

# Labels that in practice mean "whatever the client had": try UTF-8, else Windows-1252.
_GUESS = frozenset(("", "us-ascii", "ascii", "unknown", "unknown-8bit", "x-unknown", "x-user-defined"))
# WHATWG: ISO-8859-1 as labelled in mail is Windows-1252 (0x80-0x9F are its punctuation).
_AS_WINDOWS_1252 = frozenset(("iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "iso_8859-1"))


def readable_text(msg: Message, limited: bool = True) -> tuple[str, tuple[str, ...]]:
    """(the text of the readable parts, the names of the parts that were not read)."""
    ignored: list[str] = []
    return _part_text(msg, ignored, 0, limited), tuple(ignored)


def decode(data: bytes, charset: str | None) -> str:
    """Bytes in a declared charset as text, never failing; line ends become newlines."""
    name = (charset or "").strip().strip('"').lower()
    text = None
    if name in _AS_WINDOWS_1252:
        name = "cp1252"
    if name not in _GUESS:
        try:
            codecs.lookup(name)
            text = data.decode(name, errors="replace")
        except (LookupError, ValueError, TypeError):  # unknown, or not a text codec (base64...)
            text = None
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def unflow(text: str, delsp: bool) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines of the same quote depth, remove
    space-stuffing; quoted lines come back as ``>`` marks (one per depth) and a space."""
    out: list[str] = []
    depth, pieces = 0, None
    for line in text.split("\n"):
        marks = len(line) - len(line.lstrip(">"))
        content = line[marks:]
        if content.startswith(" "):
            content = content[1:]  # stuffed (or the space after the quote marks)
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        if pieces is not None and marks != depth:  # a flowed line before a depth change is fixed
            out.append(_quoted(depth, pieces))
            pieces = None
        if pieces is None:
            depth, pieces = marks, []
        pieces.append(content)
        if not flowed:
            out.append(_quoted(depth, pieces))
            pieces = None
    if pieces is not None:
        out.append(_quoted(depth, pieces))
    return "\n".join(out)


def _quoted(depth: int, pieces: list[str]) -> str:
    line = "".join(pieces)
    return ">" * depth + (" " + line if line else "") if depth else line


def _part_text(part: Message, ignored: list[str], depth: int, limited: bool = True) -> str:
    try:
        head = _head(part)
        kind = head.get_content_type()
        if kind.startswith("message/"):  # a forwarded mail or a delivery report: not the sender's
            ignored.append(_name(part, kind))
            return ""
        if part.is_multipart():
            if depth >= MAX_DEPTH:
                ignored.append(kind)
                return ""
            # EmailMessage.iter_parts: the parts of a multipart (its type read as the default policy reads it)
            children = list(part.get_payload()) if part.get_content_maintype() == "multipart" else []
            if kind == "multipart/alternative":
                return _alternative(children, ignored, depth + 1, limited)
            return _join(_part_text(child, ignored, depth + 1, limited) for child in children)
        if head.get_content_disposition() == "attachment" or kind not in ("text/plain", "text/html"):
            ignored.append(_name(part, kind))
            return ""
        data = part.get_payload(decode=True) or b""
        text = decode(data, head.get_content_charset())
        if kind == "text/html":
            exceeded = html_exceeded(text) if limited else None
            if exceeded is not None:
                raise OverLimit(exceeded)
            return html_to_text(text)
        if (head.get_param("format") or "").lower() == "flowed":
            text = unflow(text, (head.get_param("delsp") or "").lower() == "yes")
        return text
    except OverLimit:
        raise
    except Exception:  # a part the email package cannot take apart: skip it, read the rest
        ignored.append("unreadable part")
        return ""


def _head(part: Message) -> Message:
    """The part's Content-Type and Content-Disposition in a compat32 message (the judge
    parses with compat32: ``pbem.mail.message.PARSE_POLICY``), whose plain string
    parameters are read many times faster than the default policy's header objects (which
    it builds anew on every access); the values are the same for the ones read here."""
    head = Message()
    head.set_default_type(part.get_default_type())
    for name, value in part.raw_items():
        if name.lower() in ("content-type", "content-disposition") and name not in head:
            head[name] = value
    return head


def _alternative(children: list[Message], ignored: list[str], depth: int, limited: bool) -> str:
    """The plain alternative if it has any text, else the richer ones in turn."""
    ranked = sorted((rank, number) for number, child in enumerate(children)
                    if (rank := _rank(child)) is not None)
    for _, number in ranked:
        own: list[str] = []
        text = _part_text(children[number], own, depth, limited)
        if text.strip():
            ignored.extend(own)
            return text
    return ""


def _rank(part: Message) -> int | None:
    head = _head(part)
    kind = head.get_content_type()
    if head.get_content_disposition() == "attachment":
        return None
    if kind == "text/plain":
        return 0
    if kind == "text/html":
        return 2
    if kind.startswith("multipart/"):
        kinds = {_head(p).get_content_type() for p in part.walk()}
        return 1 if "text/plain" in kinds else 3
    return None


def _join(texts) -> str:
    texts = [t if t.endswith("\n") else t + "\n" for t in texts if t]
    return "".join(texts)


def _name(part: Message, kind: str) -> str:
    try:
        return part.get_filename() or kind
    except Exception:
        return kind
