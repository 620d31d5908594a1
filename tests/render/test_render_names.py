"""Hostile names and client seeds print literally in every format, never as markup or code.

For each format the rendered summaries (every round, then the result) and each player's
private message must hold every name escaped by that format's rule, and no name in a form
the format would read as markup: no HTML element but the templates' own, no BBCode tag but
the templates' own, no unescaped markdown outside code, no raw control character.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from pbem.protocol import loading, offline
from pbem.render import escape, summary

FORMATS = ("text", "markdown", "bbcode", "html")
HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "small", "section",
             "p", "b", "br", "ul", "li", "table", "tr", "th", "td", "div", "figure", "figcaption",
             "code", "pre", "span", "svg", "g", "rect", "text", "polygon", "line", "circle", "path"}
BBCODE_TAGS = {"b", "u", "list", "*", "code"}


class _Html(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def _html(doc: str) -> _Html:
    parser = _Html()
    parser.feed(doc)
    parser.close()
    return parser


def _strip_markdown_code(doc: str) -> str:
    doc = re.sub(r"^```.*?^```", "", doc, flags=re.S | re.M)
    return re.sub(r"(`+).*?\1", "", doc)


def check_literal(doc: str, fmt: str, names) -> None:
    """Every name is in ``doc`` in its escaped form, and nowhere as markup."""
    for name in names:
        shown = escape.show_controls(name)
        if shown != name:
            assert name not in doc, f"{name!r} printed with raw control characters ({fmt})"
        if fmt == "text":
            assert shown in doc
        elif fmt == "markdown":
            assert escape.markdown(name) in doc, f"{name!r} not escaped for markdown"
            if escape.markdown(name) != name:
                bare = re.search(r"(?<!\\)" + re.escape(name), _strip_markdown_code(doc))
                assert bare is None, f"{name!r} unescaped in markdown"
        elif fmt == "bbcode":
            assert escape.bbcode(name) in doc, f"{name!r} not escaped for bbcode"
            if "[" in name:
                assert name not in doc
        else:
            parsed = _html(doc)
            assert shown in "".join(parsed.text), f"{name!r} not shown as text in html"
    if fmt == "bbcode":
        tags = {m.group(2).lower() for m in re.finditer(r"\[(/?)([A-Za-z*]+)[^\]]*\]", doc)}
        assert tags <= BBCODE_TAGS, f"unexpected bbcode tags {tags - BBCODE_TAGS}"
    if fmt == "html":
        parsed = _html(doc)
        assert parsed.tags <= HTML_TAGS, f"unexpected html elements {parsed.tags - HTML_TAGS}"
        assert not any(k.startswith("on") or k in ("src", "href") for k, _ in parsed.attrs)
        assert "<script" not in doc.lower()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("game", ["hostile", "odd"])
def test_summaries_and_result_print_names_literally(games, game, fmt):
    record = games.record(game)
    names = games.HOSTILE if game == "hostile" else games.ODD
    _models, doc = summary.render_all(record, fmt)
    assert record.finished
    check_literal(doc, fmt, names)
    seeds = [games.HOSTILE_SEED] if game == "hostile" else ["line one\nline two"]
    check_literal(doc, fmt, seeds)
    for number in range(1, record.rounds[-1].number + 1):
        check_literal(summary.render_public(record, number, fmt)[1], fmt, record.players[:1])
    _model, result = summary.render_result(record, fmt)
    check_literal(result, fmt, names)


@pytest.mark.parametrize("fmt", FORMATS)
def test_template_code_in_a_name_is_never_evaluated(games, fmt):
    _models, doc = summary.render_all(games.record("hostile"), fmt)
    literal = escape.markdown("{{7*7}}") if fmt == "markdown" else "{{7*7}}"
    assert literal in doc


@pytest.mark.parametrize("fmt", FORMATS)
def test_live_summary_with_waiting_list_prints_names_literally(games, fmt):
    record = games.record("hostile-live")
    model, doc = summary.render_public(record, None, fmt)
    assert model["rounds"][0]["waiting"], "the live game should be waiting for someone"
    check_literal(doc, fmt, games.HOSTILE)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("game", ["hostile-live", "hostile", "odd"])
def test_private_messages_print_names_literally(games, game, fmt):
    session = loading.load(games.store, game)
    for player in session.players:
        _model, doc = summary.render_private(session, player, fmt)
        others = [p for p in session.players if p != player]
        check_literal(doc, fmt, [player, *others] if session.started and not session.finished else [player])


def test_a_private_message_holds_a_ready_sealing_line(games):
    session = loading.load(games.store, "hostile-live")
    step = session.sealed
    player = step.owes_commit()[0]
    model, doc = summary.render_private(session, player, "text")
    assert model["can_seal"] and model["context"]
    line = next(l.strip() for l in doc.splitlines() if "pbem seal --context" in l)
    example = line.rpartition("; e.g. ")[2]  # the example, filled in (pbem.render.asks)
    token, choice = example.split()[3:5]
    assert token == model["context"]
    sealed = offline.seal_offline(token, choice)  # the line works as printed
    assert sealed["player"] == player and sealed["round"] == step.round and sealed["step"] == step.step
    for option in model["requests"][0]["options"]:
        assert option in doc


def test_markdown_tables_keep_their_columns_with_a_pipe_in_a_name(games):
    _models, doc = summary.render_all(games.record("hostile"), "markdown")
    rows = [l for l in doc.splitlines() if l.startswith("| ")]
    assert rows
    header = rows[0]
    for row in rows:
        if row.startswith("| action") or row.startswith("| player"):
            header = row
        cells = len(re.findall(r"(?<!\\)\|", row))
        assert cells == len(re.findall(r"(?<!\\)\|", header)), row
