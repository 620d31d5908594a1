"""Published chain heads, found in what the public kept (docs/protocol.md §13).

A head is ``event N HASH`` (64 hex characters), as every summary prints it. The file may be
a saved summary in any format, a text file of such lines, an mbox of the list's summaries
(only the messages that name the game are read) or a saved forum thread (HTML). Markup
between the words (HTML and BBCode tags, backticks, &nbsp;) is replaced by a space first
(docs/protocol.md §13, step 2), so `event<b>70</b>` still reads as a head.
"""

from __future__ import annotations

import re

HEAD = re.compile(r"\bevent\s+(\d+)\s+([0-9a-f]{64})\b", re.IGNORECASE)
_HTML_TAG = re.compile(r"<[^>]*>")
_BBCODE_TAG = re.compile(r"\[/?[A-Za-z]*\]")


class NoHeads(ValueError):
    """A file given as published heads holds none."""


def _plain(text: str) -> str:
    text = _HTML_TAG.sub(" ", text)
    text = _BBCODE_TAG.sub(" ", text)
    return text.replace("`", " ").replace("&nbsp;", " ").replace("&#160;", " ")


def names_game(text: str, game: str) -> bool:
    """Whether ``text`` names ``game`` as a whole word."""
    return re.search(r"(?<![A-Za-z0-9_-])" + re.escape(game) + r"(?![A-Za-z0-9_-])", text) is not None


def heads_in_text(text: str) -> list[tuple[int, str]]:
    """Every distinct head in ``text``, in order of first appearance."""
    found: dict[tuple[int, str], None] = {}
    for match in HEAD.finditer(_plain(text)):
        found.setdefault((int(match.group(1)), match.group(2).lower()), None)
    return list(found)


def _mbox_texts(raw: bytes, game: str) -> list[str]:
    import email
    import email.policy
    import mailbox  # noqa: F401 - the format; messages are split on "From " lines as mboxrd does

    texts = []
    for chunk in re.split(rb"(?m)^From (?=\S)", raw):
        if not chunk.strip():
            continue
        message = email.message_from_bytes(chunk.split(b"\n", 1)[1] if b"\n" in chunk else b"",
                                           policy=email.policy.default)
        parts = []
        for part in message.walk():
            if part.get_content_type() in ("text/plain", "text/html"):
                try:
                    parts.append(part.get_content())
                except (LookupError, ValueError):
                    parts.append(part.get_payload(decode=True).decode("utf-8", "replace"))
        text = str(message.get("subject", "")) + "\n" + "\n".join(parts)
        if names_game(text, game):
            texts.append(text)
    return texts


def heads_in_file(raw: bytes, game: str) -> list[tuple[int, str]]:
    """The published heads of ``game`` in a file's bytes; raise NoHeads when there is none."""
    if raw.startswith(b"From "):
        found: dict[tuple[int, str], None] = {}
        for text in _mbox_texts(raw, game):
            for head in heads_in_text(text):
                found.setdefault(head, None)
        heads = list(found)
    else:
        heads = heads_in_text(raw.decode("utf-8", "replace"))
    if not heads:
        raise NoHeads("no chain head in it: a head is 'event N' and the 64 hex characters of its hash, "
                      "as every summary prints it (e.g. 'Chain head: event 28 60b1b423...')")
    return heads


# ---------------------------------------------------------------------- time witnessed by others

TOLERANCE = 300  # seconds: the clock skew allowed between the judge and a server that stamped its mail
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
ZONES = {"ut": 0, "gmt": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6,
         "pst": -8, "pdt": -7}
# RFC 5322's date-time (§3.3, with its obsolete zone names): [day ","] d month yyyy hh:mm[:ss] zone
DATE_TIME = re.compile(r"(?:[A-Za-z]{3}\s*,\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?"
                       r"\s*([+-]\d{4}|UT|GMT|Z|[ECMP][SD]T)(?![A-Za-z0-9])", re.IGNORECASE)


def mail_time(text: str) -> str | None:
    """The first RFC 5322 date-time in ``text``, in UTC as the log writes times; None when
    there is none (or it names a day that does not exist)."""
    from datetime import datetime, timedelta
    found = DATE_TIME.search(text)
    if found is None or found.group(2).lower() not in MONTHS:
        return None
    day, month, year = int(found.group(1)), MONTHS.index(found.group(2).lower()) + 1, int(found.group(3))
    if not 1000 <= year <= 9998:  # a year the log's times can spell, whatever the zone
        return None
    zone = found.group(7).lower()
    offset = (int(zone[1:3]) * 60 + int(zone[3:])) * (-1 if zone[0] == "-" else 1) if zone[0] in "+-" \
        else ZONES[zone] * 60
    try:
        local = datetime(year, month, day, int(found.group(4)), int(found.group(5)), int(found.group(6) or 0))
    except ValueError:
        return None
    return (local - timedelta(minutes=offset)).strftime("%Y-%m-%dT%H:%M:%SZ")  # times.AT_FORMAT


def _header_lines(chunk: bytes) -> list[tuple[str, str]]:
    """A message's own header fields (name lowercased, value unfolded), read as latin-1."""
    head = re.split(rb"\r?\n\r?\n", chunk, maxsplit=1)[0].decode("latin-1")
    fields = []
    for line in re.split(r"\r?\n", re.sub(r"\r?\n[ \t]+", " ", head)):
        found = re.match(r"([^:\s]+)\s*:\s*(.*)$", line)
        if found:
            fields.append((found.group(1).lower(), found.group(2)))
    return fields


def witnessed_mails(raw: bytes, game: str, name: str) -> list[dict]:
    """The mails of an mbox that name ``game`` and carry one of its heads, each with the
    earliest time a server or its sender stamped on it (docs/protocol.md §15): every
    ``Received:`` line's date (after its last ``;``) and the ``Date:``. Each is
    ``{"mail", "covers", "at", "by"}``: how to find the mail (its Message-ID, else its
    number in the file), the highest event its heads cover, that time, and where it is."""
    if not raw.startswith(b"From "):
        return []
    mails = []
    chunks = [c for c in re.split(rb"(?m)^From (?=\S)", raw) if c.strip()]
    for number, chunk in enumerate(chunks, start=1):
        body = chunk.split(b"\n", 1)[1] if b"\n" in chunk else b""
        texts = _mbox_texts(b"From " + chunk, game)
        covers = max((seq for text in texts for seq, _ in heads_in_text(text)), default=0)
        if not covers:
            continue
        fields = _header_lines(body)
        stamps = []
        received = [value for field, value in fields if field == "received"]
        for index, value in enumerate(received, start=1):
            at = mail_time(value.rsplit(";", 1)[1]) if ";" in value else None
            if at is not None:
                stamps.append((at, f"its Received line {index}"))
        date = next((value for field, value in fields if field == "date"), None)
        at = mail_time(date) if date is not None else None
        if at is not None:
            stamps.append((at, "its Date"))
        if not stamps:
            continue
        at, by = min(stamps, key=lambda stamp: stamp[0])
        message_id = next((value.strip() for field, value in fields if field == "message-id" and value.strip()), None)
        mails.append({"mail": f"mail {message_id}" if message_id else f"mail {number} of {name}",
                      "covers": covers, "at": at, "by": by})
    return mails
