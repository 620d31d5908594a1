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
