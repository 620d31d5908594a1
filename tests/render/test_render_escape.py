"""The escaping rules of each format, on their own (docs/formats.md)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.render import escape
from pbem.render.escape import WORD_JOINER as WJ

MARKDOWN_SPECIAL = set("!#$&()*+-.:<=>@[\\]^_`{|}~")


@pytest.mark.parametrize("value, expected", [
    ("ani", "ani"),
    ("a\nb", "a\\nb"),
    ("tab\there", "tab\\there"),
    ("esc\x1b[31m", "esc\\x1b[31m"),
    ("rtl\u202eevil", "rtl\\u202eevil"),
    (None, ""),
    (7, "7"),
])
def test_control_characters_are_shown_escaped(value, expected):
    assert escape.show_controls(value) == expected
    assert escape.text(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("*a*_b_|c|", "\\*a\\*\\_b\\_\\|c\\|"),
    ("<script>x</script>", "\\<script\\>x\\</script\\>"),
    ("[url=x]y[/url]", "\\[url\\=x\\]y\\[/url\\]"),
    ("{{7*7}}", "\\{\\{7\\*7\\}\\}"),
    ("# 1. - x", "\\# 1\\. \\- x"),
    ("&amp; @everyone", "\\&amp; \\@everyone"),
    ("a\nb", "a\\\\nb"),
    ("Mary's, \"quoted\"/50%; ok?", "Mary's, \"quoted\"/50%; ok?"),
])
def test_markdown_backslash_escapes_its_syntax(value, expected):
    assert escape.markdown(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("[url=x]y[/url]", f"[{WJ}url=x{WJ}]y[{WJ}/url{WJ}]"),
    ("*a*_b_|c|", "*a*_b_|c|"),
    ("a\nb", "a\\nb"),
])
def test_bbcode_neutralises_brackets(value, expected):
    assert escape.bbcode(value) == expected


def test_finalize_leaves_already_safe_values_alone():
    finalize = escape.finalizer("markdown")
    assert finalize("*x*") == "\\*x\\*"
    assert finalize(escape.Raw("*x*")) == "*x*"


@pytest.mark.parametrize("value, expected", [
    ("B,C", "`B,C`"),
    ("board:a`b:red", "``board:a`b:red``"),
    ("`x``", "``` `x`` ```"),
    ("a\nb", "`a\\nb`"),
])
def test_markdown_code_spans_are_literal_and_cannot_be_closed_early(value, expected):
    assert escape.code_span("markdown")(value) == expected


def test_code_in_other_formats():
    assert escape.code_span("text")("a\nb") == "a\\nb"
    assert escape.code_span("bbcode")("[b]") == f"[{WJ}b{WJ}]"
    assert str(escape.code_span("html")("<b>")) == "<code>&lt;b&gt;</code>"


def test_verbatim_markdown_cannot_close_a_fence():
    assert "```" not in escape.verbatim("markdown")("x```y~~~z")


def test_shell_words_are_quoted():
    assert escape.shell_word("B,C") == "B,C"
    assert escape.shell_word("x; rm -rf ~") == "'x; rm -rf ~'"
    assert escape.shell_word("examples/games/a b.jsonl") == "'examples/games/a b.jsonl'"


def test_strong_escapes_then_marks_bold():
    assert escape.strong("markdown")("*a*") == "**\\*a\\***"
    assert escape.strong("bbcode")("[b]") == f"[b][{WJ}b{WJ}][/b]"
    assert escape.strong("text")("a\nb") == "a\\nb"
    assert str(escape.strong("html")("<i>")) == "<b>&lt;i&gt;</b>"


@given(st.text())
def test_every_escaped_value_is_printable_on_one_line(value):
    for fmt in escape.FORMATS:
        out = escape.ESCAPERS[fmt](value)
        assert "\n" not in out and "\r" not in out
        assert out.replace(WJ, "").isprintable()


@given(st.text())
def test_markdown_leaves_no_special_character_unescaped(value):
    out = escape.markdown(value)
    bare = re.sub(r"\\.", "", out)  # drop every escaped pair
    assert not MARKDOWN_SPECIAL & set(bare)


@given(st.text())
def test_bbcode_leaves_no_bracket_that_could_open_or_close_a_tag(value):
    out = escape.bbcode(value)
    assert re.search(f"\\[(?!{WJ})", out) is None
    assert re.search(f"(?<!{WJ})\\]", out) is None
    assert out.replace(WJ, "") == escape.show_controls(value)


def _commonmark_code_span(span: str) -> str:
    """The content CommonMark shows for a code span that is the whole of ``span``."""
    fence = re.match(r"`+", span).group(0)
    assert span.endswith(fence) and len(span) >= 2 * len(fence)
    inner = span[len(fence):-len(fence)]
    runs = [len(r) for r in re.findall(r"`+", inner)]
    assert len(fence) not in runs  # no run inside could close the span early
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    return inner


@given(st.text(min_size=1))
def test_markdown_code_span_shows_the_value_exactly(value):
    span = escape.code_span("markdown")(value)
    assert _commonmark_code_span(span) == escape.show_controls(value)
