"""Escaping of user-given text (player names, game names, client seeds), one rule per format.

Every value a template prints with ``{{ ... }}`` passes through the format's escaping
function (Jinja's ``finalize``, and for html Jinja's autoescape after it), so a template
author cannot forget it. The rules, also in docs/formats.md:

    all formats  control and other non-printable characters are shown escaped (a newline as
                 ``\\n``, ESC as ``\\x1b``, a right-to-left override as ``\\u202e``), so no
                 value can start a new line, move the cursor or reorder the text
    text         nothing more: plain email is not interpreted
    markdown     ASCII punctuation that markdown (CommonMark, GFM, Discord, Reddit) could read
                 as syntax is backslash-escaped: ``*a*_b_|c|`` -> ``\\*a\\*\\_b\\_\\|c\\|``
                 (so ``|`` cannot split a table cell either)
    bbcode       ``[`` and ``]`` get an invisible WORD JOINER (U+2060) inside, so
                 ``[url=x]`` is shown as written but is no tag for phpBB or BoardGameGeek
    html         Jinja autoescape (``& < > " '`` become entities)

Values a filter has already made safe for its format are ``Raw`` strings; the ``finalize``
functions leave those alone. Only the filters below create them. This module imports nothing
heavy (no jinja2), so the escaping rules can be tested and used on their own.
"""

from __future__ import annotations

import shlex

FORMATS = ("text", "markdown", "bbcode", "html")
EXTENSIONS = {"text": "txt", "markdown": "md", "bbcode": "bbcode", "html": "html"}

# ASCII punctuation that never means anything in markdown, left as is for readability.
_MARKDOWN_PLAIN = set(",'\"/%;?")
_MARKDOWN_SPECIAL = {c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"} - _MARKDOWN_PLAIN
WORD_JOINER = "\u2060"


class Raw(str):
    """Text already escaped for the format it is printed in (made only by this module)."""


def show_controls(value) -> str:
    """``value`` as text with every non-printable character shown as its Python escape."""
    text = "" if value is None else str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def text(value) -> str:
    return show_controls(value)


def markdown(value) -> str:
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in show_controls(value))


def bbcode(value) -> str:
    return show_controls(value).replace("[", "[" + WORD_JOINER).replace("]", WORD_JOINER + "]")


def html(value) -> str:
    """Only the control characters: Jinja's autoescape does the rest (see ``environment``)."""
    return show_controls(value)


ESCAPERS = {"text": text, "markdown": markdown, "bbcode": bbcode, "html": html}


def finalizer(fmt: str):
    """Jinja ``finalize`` for ``fmt``: escape every printed value unless it is already safe."""
    escape = ESCAPERS[fmt]

    def finalize(value):
        if isinstance(value, Raw) or hasattr(value, "__html__"):
            return value  # made safe by a filter below, or by Jinja itself (html macros)
        return escape(value)

    if escape is text or escape is html:  # show_controls alone: the common values the quick way
        def quick(value):
            kind = type(value)
            if kind is str:
                return value if value.isprintable() else show_controls(value)
            if kind is int:
                return str(value)
            return finalize(value)
        return quick
    return finalize


# ------------------------------------------------------------------------- filters

def code_span(fmt: str):
    """Filter: a value to be copied exactly (a choice in the syntax to send), marked as code.

    In markdown a code span shows its content literally, so nothing is backslash-escaped;
    its backtick fence is made longer than any run of backticks inside.
    """
    def code(value):
        body = show_controls(value)
        if fmt == "markdown":
            longest = run = 0
            for c in body:
                run = run + 1 if c == "`" else 0
                longest = max(longest, run)
            if not body:
                return Raw("")
            fence = "`" * (longest + 1)
            # CommonMark strips one space from each end when both ends have one (and the
            # content is not all spaces): pad so that what is shown is the value exactly
            stripped = body.startswith(" ") and body.endswith(" ") and body.strip(" ")
            pad = " " if body.startswith("`") or body.endswith("`") or stripped else ""
            return Raw(f"{fence}{pad}{body}{pad}{fence}")
        if fmt == "bbcode":
            return Raw(bbcode(body))
        if fmt == "html":
            from markupsafe import Markup, escape
            return Markup("<code>") + escape(body) + Markup("</code>")
        return Raw(body)

    return code


def verbatim(fmt: str):
    """Filter: a value inside a code block (markdown ``` fence, bbcode [code], html <pre>).

    Code blocks show their content literally, so no backslash escapes; a run of three
    backticks or tildes is broken with a WORD JOINER so the value cannot close the fence.
    """
    def block(value):
        body = show_controls(value)
        if fmt == "markdown":
            for fence in ("```", "~~~"):
                while fence in body:
                    body = body.replace(fence, fence[0] + WORD_JOINER + fence[1:])
            return Raw(body)
        if fmt == "bbcode":
            return Raw(bbcode(body))
        if fmt == "html":
            return body  # autoescape applies
        return Raw(body)

    return block


def shell_word(value) -> str:
    """Filter: a value quoted for a POSIX shell command line (then escaped by its context)."""
    return shlex.quote(show_controls(value))


def strong(fmt: str):
    """Filter: a value escaped for ``fmt`` and shown in bold (plain in text)."""
    def bold(value):
        if fmt == "html":
            from markupsafe import Markup, escape
            return Markup("<b>") + escape(show_controls(value)) + Markup("</b>")
        body = ESCAPERS[fmt](value)
        return Raw({"markdown": f"**{body}**", "bbcode": f"[b]{body}[/b]"}.get(fmt, body))

    return bold


# ------------------------------------------------------------------------- markup

# The markup of the three plain formats, for templates that share one body among them
# and html (Tortuga 1667): ``{{ MARK.li }}`` starts a list item (``end_li`` ends it, html
# only), ``list`` / ``end_list`` wrap a list (bbcode, html), ``b`` / ``end_b`` wrap bold
# text, ``p`` / ``end_p`` a paragraph (html only). All are the template's own markup (Raw,
# or Markup in html), never user text.
_PLAIN = {"p": "", "end_p": "", "end_li": ""}
_MARKS = {
    "text": {**_PLAIN, "li": "  - ", "list": "", "end_list": "", "b": "", "end_b": ""},
    "markdown": {**_PLAIN, "li": "- ", "list": "", "end_list": "", "b": "**", "end_b": "**"},
    "bbcode": {**_PLAIN, "li": "[*]", "list": "[list]", "end_list": "[/list]", "b": "[b]", "end_b": "[/b]"},
    "html": {"p": "<p>", "end_p": "</p>", "li": "<li>", "end_li": "</li>", "list": "<ul>", "end_list": "</ul>",
             "b": "<b>", "end_b": "</b>"},
}


def marks(fmt: str) -> dict:
    if fmt == "html":
        from markupsafe import Markup
        return {name: Markup(value) for name, value in _MARKS[fmt].items()}
    return {name: Raw(value) for name, value in _MARKS[fmt].items()}


def heading(fmt: str):
    """Filter: a value as a heading of ``level`` 1 or 2 (text: underlined with = or -)."""
    def head(value, level: int = 1):
        body = ESCAPERS[fmt](value)
        if fmt == "markdown":
            return Raw("#" * (level + 1) + " " + body)
        if fmt == "bbcode":
            return Raw(f"[b][u]{body}[/u][/b]" if level == 1 else f"[b]{body}[/b]")
        if fmt == "html":
            from markupsafe import Markup, escape
            return Markup(f"<h{level + 1}>") + escape(body) + Markup(f"</h{level + 1}>")
        return Raw(body + "\n" + ("=" if level == 1 else "-") * len(body))

    return head
