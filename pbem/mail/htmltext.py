"""HTML to plain text, small and forgiving: enough for mail bodies and forum pages.

Block elements and ``<br>`` end lines, ``<blockquote>`` lines start with ``> `` (so they count
as quoted), ``<pre>``/``<code>`` keep their lines, script/style/head and comments are dropped
and entities decoded. Text that a mail program does not display (an element with ``hidden``,
or a style of ``display:none``, ``visibility:hidden`` or ``mso-hide:all``) is dropped too: a
reader must never act on what the sender could not see. Invisible characters that forums and editors slip into long words (zero-width space,
word joiner, soft hyphen, byte-order mark) are removed, so an armoured block's base64 lines
come out as they went in.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCK = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol p pre section "
    "summary table tbody tfoot thead tr ul".split()
)
# a blank line around these, as a browser leaves a margin
_PARAGRAPH = frozenset("blockquote dl h1 h2 h3 h4 h5 h6 hr ol p pre table ul".split())
_SKIP = frozenset("head noscript script select style svg template title".split())
_KEEP_LINES = frozenset("code listing plaintext pre textarea xmp".split())
_CELL = frozenset(("td", "th"))
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_HIDING_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden|mso-hide\s*:\s*all)\b",
                           re.IGNORECASE)


def _not_displayed(attrs) -> bool:
    """An element a mail program does not show: ``hidden``, or a style of display:none,
    visibility:hidden or Outlook's mso-hide:all. Its text is never read as commands."""
    for name, value in attrs:
        if name == "hidden" or (name == "style" and value and _HIDING_STYLE.search(value)):
            return True
    return False
_INVISIBLE = {0x200B: None, 0x2060: None, 0x00AD: None, 0xFEFF: None, 0x00A0: " "}
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")
_CUT_TAG = re.compile(r"<[a-zA-Z/!][^<>]*\Z")  # a tag cut off at the end of a truncated page


def html_to_text(html: str) -> str:
    """The readable text of an HTML mail body or saved page: one line per block, ``> `` before
    quoted lines, lines ending with a newline ("" when there is no text)."""
    parser = _TextParser()
    try:
        parser.feed(_CUT_TAG.sub("", html))
        parser.close()
    except Exception:  # html.parser has rare internal assertions; never let a page crash a read
        import html as entities
        return _finish([" ".join(line.split()) for line in
                        entities.unescape(_TAGS.sub("\n", html)).translate(_INVISIBLE).splitlines()])
    return _finish(parser.lines)


def _finish(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):  # at most one blank line in a row, none at the start
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.pieces: list[str] = []  # the line being built
        self.piece_kept = False  # the line holds text from <pre>: keep its spacing
        self.quote = 0
        self.keep = 0
        self.skip: list[str] = []
        self.hidden: list[str] = []  # open elements from one that is not displayed inwards

    def handle_starttag(self, tag: str, attrs) -> None:
        if self.hidden:  # inside an element nobody sees: count its children, read nothing
            if tag not in _VOID:
                self.hidden.append(tag)
            return
        if tag not in _VOID and _not_displayed(attrs):
            self.hidden.append(tag)
            return
        if tag == "body":  # a page without </head>
            self.skip.clear()
        if self.skip or tag in _SKIP:
            if tag in _SKIP:
                self.skip.append(tag)
            return
        if tag == "br":
            self._end_line(force=True)
            return
        if tag in _BLOCK:
            self._block(tag in _PARAGRAPH)
        if tag == "blockquote":
            self.quote += 1
        elif tag in _KEEP_LINES:
            self.keep += 1
        elif tag in _CELL:
            self.pieces.append(" ")

    def handle_startendtag(self, tag: str, attrs) -> None:
        self.handle_starttag(tag, attrs)  # <br/>, <hr/>: no end tag to handle

    def handle_endtag(self, tag: str) -> None:
        if self.hidden:
            if tag in self.hidden:
                del self.hidden[len(self.hidden) - 1 - self.hidden[::-1].index(tag):]
            return
        if self.skip:
            if tag in self.skip:
                del self.skip[len(self.skip) - 1 - self.skip[::-1].index(tag):]
            return
        if tag in _BLOCK:
            self._block(tag in _PARAGRAPH)
        if tag == "blockquote" and self.quote:
            self.quote -= 1
        elif tag in _KEEP_LINES and self.keep:
            self.keep -= 1

    def handle_data(self, data: str) -> None:
        if self.skip or self.hidden:
            return
        data = data.translate(_INVISIBLE)
        if not self.keep:
            self.pieces.append(_SPACES.sub(" ", data))
            return
        for number, part in enumerate(data.replace("\r\n", "\n").replace("\r", "\n").split("\n")):
            if number:
                self._end_line(force=True)
            self.pieces.append(part)
            self.piece_kept = True

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:  # "<![foo": not a section html.parser knows; skip the tag
            end = self.rawdata.find(">", i)
            return len(self.rawdata) if end < 0 else end + 1

    def close(self) -> None:
        super().close()
        self._end_line(force=False)

    def _block(self, paragraph: bool) -> None:
        self._end_line(force=False)
        if paragraph and self.lines and self.lines[-1]:
            self.lines.append("")

    def _end_line(self, force: bool) -> None:
        text = "".join(self.pieces)
        text = text.rstrip() if self.piece_kept else " ".join(text.split())
        self.pieces, self.piece_kept = [], False
        if not text.strip():
            if force:
                self.lines.append("")
            return
        self.lines.append("> " * self.quote + text)
