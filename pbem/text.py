"""Quoting user-given text in messages, shared by every layer (it imports nothing).

A refusal names what it refuses, but a name, a choice or a field can be as long as the
input that carried it (a 10 MiB submission, a 1 MiB export line), and a message must stay
one readable line. So a message quotes at most ``QUOTE_LIMIT`` characters of a value.
"""

from __future__ import annotations

QUOTE_LIMIT = 80


def shorten(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as a string of at most ``limit`` characters, cut with an ellipsis."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of a user-given value, shortened first: control characters show escaped."""
    return repr(shorten(text, limit)) if isinstance(text, str) else shorten(repr(text), limit)
