"""html_to_text: mail bodies and forum pages become lines; armoured blocks survive."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.message import command_lines, html_to_text
from pbem.protocol.armour import extract_blocks
from pbem.protocol.offline import submission_block
from pbem.protocol.signing import generate_keypair

HASH = "6ba2c455e9867799af69e2e788fbab5a4810c6e2de3be46adc0cf59f649017ac"


@pytest.fixture(scope="module")
def block():
    text = submission_block("g1", "commit", {"player": "ani", "round": 1, "step": 1, "commitment": HASH,
                                             "by": "player"}, generate_keypair()[0])
    return text, extract_blocks(text)[0]


def test_blocks_lines_breaks_and_entities():
    html = ("<!DOCTYPE html><html><head><title>Thread</title><style>p {color: red}</style>"
            "<script>var x = '<p>not text</p>';</script></head><body>"
            "<h1>Round&nbsp;2</h1><div>first<div>second</div></div>"
            "<p>a &amp; b &lt;tag&gt; &#233;&eacute; &#x2014;<br>next line<br/>"
            "<br>after a blank</p><ul><li>one</li><li>two</li></ul>"
            "<table><tr><td>ani</td><td>3</td></tr><tr><td>alex</td><td>5</td></tr></table>"
            "<!-- a comment --><p>end</p></body></html>")
    assert html_to_text(html) == ("Round 2\n\nfirst\nsecond\n\na & b <tag> éé \u2014\nnext line\n\n"
                                  "after a blank\n\none\ntwo\n\nani 3\nalex 5\n\nend\n")


def test_blockquote_lines_are_quoted_at_every_depth():
    html = ("<p>seal A</p><div>On Monday the judge wrote:</div><blockquote><p>commit x<br>reveal y</p>"
            "<blockquote>older</blockquote>back</blockquote><p>status</p>")
    text = html_to_text(html)
    assert text == ("seal A\n\nOn Monday the judge wrote:\n\n> commit x\n> reveal y\n\n> > older\n\n"
                    "> back\n\nstatus\n")
    assert command_lines(text) == ["seal A", "status"]


def test_pre_and_code_keep_their_lines():
    html = "<p>look:</p><pre>  indented\n\tcolumns  a   b\n\n</pre><code>x = 1\ny  =  2</code>"
    assert html_to_text(html) == "look:\n\n  indented\n\tcolumns  a   b\n\nx = 1\ny  =  2\n"


def test_outlook_markup_and_broken_sections_leave_no_markup():
    html = ("<p class=MsoListParagraph><![if !supportLists]>1.<![endif]>seal A<o:p></o:p></p>"
            "<![foo bar]><p>after</p><p>x</p")
    assert html_to_text(html) == "1.seal A\n\nafter\n\nx\n"


def test_empty_and_invisible_only():
    assert html_to_text("") == ""
    assert html_to_text("<html><body><p>&nbsp;</p><div>\u200b</div></body></html>") == ""


def test_block_inside_pre(block):
    text, payload = block
    page = f"<html><body><div class='post'><pre>{text}</pre></div></body></html>"
    assert extract_blocks(html_to_text(page)) == [payload]


def test_block_inside_paragraph_with_br(block):
    text, payload = block
    page = "<p>My commitment:<br>\n" + "<br>\n".join(text.splitlines()) + "</p>"
    assert extract_blocks(html_to_text(page)) == [payload]


def test_block_in_divs_with_entities_and_invisible_breaks(block):
    """Gmail writes one <div> per line; forums slip zero-width spaces, <wbr> and soft hyphens
    into long words and write '/' '+' '=' as entities."""
    text, payload = block
    lines = []
    for line in text.splitlines():
        line = line.replace("/", "&#x2F;").replace("=", "&#61;").replace("+", "&plus;")
        lines.append(f"<div>{line[:20]}\u200b{line[20:40]}<wbr>{line[40:50]}&shy;{line[50:]}</div>")
    page = '<div dir="ltr">' + "".join(lines) + "</div>"
    assert re.search(r"[+/=]", re.sub(r"<[^>]*>", "", page).split("-----")[2]) is None  # all entities
    assert extract_blocks(html_to_text(page)) == [payload]


def test_block_quoted_in_a_forum_reply(block):
    text, payload = block
    page = ("<blockquote><cite>ani wrote:</cite><div class='codebox'><pre><code>" + text
            + "</code></pre></div></blockquote><p>Thanks, got it.</p>")
    out = html_to_text(page)
    assert out.startswith("> ani wrote:\n") and extract_blocks(out) == [payload]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/!-[]&;#x0 abpredivbrscriptquote=\"'\n")), max_size=300))
def test_any_markup_never_crashes(html):
    out = html_to_text(html)
    assert out == "" or (out.endswith("\n") and not out.startswith("\n") and "\n\n\n" not in out)


def test_text_that_is_not_displayed_is_never_read():
    from pbem.mail.htmltext import html_to_text
    page = ("<html><head><title>seal X</title></head><body><div>seal A</div>"
            "<div style=\"display: none\"><div>seal B</div><p>x</p>commit ff</div>"
            "<p hidden>status</p><!-- seal C --><span style=\"color:red;visibility:hidden\">help</span>"
            "<div style='mso-hide:all'>seal D</div><div>ok<br>end</div></body></html>")
    assert html_to_text(page) == "seal A\nok\nend\n"


def test_a_hidden_element_ends_where_it_ends_even_with_children_of_its_kind():
    from pbem.mail.htmltext import html_to_text
    page = "<div hidden><div>seal B</div><div><br>x</div></div><div>seal A</div>"
    assert html_to_text(page) == "seal A\n"
