"""One HTML body for a message made of several pieces.

A mail client that shows the HTML part of a ``multipart/alternative`` message shows nothing
of its text part, so the HTML part must say everything the text part says: a password notice
or an answer (plain text) above a private message or a summary (rendered HTML documents),
instructions below. ``document(*pieces)`` joins them: a ``str`` is plain text, kept as it is
in a ``<pre>``; an ``Html`` is a rendered document, of which the ``<body>`` is kept and the
``<head>`` styles once each.
"""

from __future__ import annotations

import html as htmllib
import re

_BODY = re.compile(r"<body\b[^>]*>(.*)</body>", re.S | re.I)
_STYLE = re.compile(r"<style\b[^>]*>.*?</style>", re.S | re.I)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>", re.S | re.I)
PRE = "white-space:pre-wrap;word-break:break-word;font-family:monospace;font-size:.95em"


class Html(str):
    """A rendered HTML document (or fragment), as opposed to plain text."""


def document(*pieces: str, ruled: bool = False) -> str:
    """One HTML document holding ``pieces`` in order (empty pieces are skipped); ``ruled``:
    a rule (``<hr>``) between them, as between the parts of a message's text."""
    styles: list[str] = []
    title = ""
    parts: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if isinstance(piece, Html):
            for style in _STYLE.findall(piece):
                if style not in styles:
                    styles.append(style)
            if not title and (found := _TITLE.search(piece)):
                title = found.group(1).strip()
            body = _BODY.search(piece)
            parts.append(body.group(1).strip() if body else piece)
        elif piece.strip():
            parts.append(f'<pre style="{PRE}">{htmllib.escape(piece.strip(chr(10)))}</pre>')
    head = "".join(styles)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{title or 'pbem'}</title>\n{head}\n</head>\n<body>\n" + ("\n<hr>\n" if ruled else "\n").join(parts)
            + "\n</body>\n</html>\n")
