"""submission_text: what ``pbem submit`` reads in a saved mail, a saved page, or plain text."""

from email.message import EmailMessage

import pytest

from pbem.mail.message import submission_text
from pbem.protocol.armour import ArmourError, extract_blocks
from pbem.protocol.offline import submission_block

HASH = "6ba2c455e9867799af69e2e788fbab5a4810c6e2de3be46adc0cf59f649017ac"


@pytest.fixture(scope="module")
def block():
    text = submission_block("g1", "commit", {"player": "ani", "round": 1, "step": 1, "commitment": HASH,
                                             "by": "player"}, None)
    return text, extract_blocks(text)[0]


def eml(body: str, **content) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Ani <ani@example.org>"
    msg["Subject"] = "[g1] my commitment"
    msg["Message-ID"] = "<saved@example.org>"
    msg.set_content(body, **content)
    return bytes(msg)


@pytest.mark.parametrize("content", [{"cte": "quoted-printable"}, {"cte": "base64"},
                                     {"subtype": "html", "cte": "quoted-printable"}], ids=["qp", "base64", "html"])
def test_saved_mail_is_decoded(block, content):
    text, payload = block
    body = text if "subtype" not in content else "<div>" + "<br>".join(text.splitlines()) + "</div>"
    raw = eml("Here it is:\n" + body, **content)
    assert _blocks_as_bytes_read(raw) is None  # undecoded, no block can be read
    assert extract_blocks(submission_text(raw)) == [payload]


def _blocks_as_bytes_read(raw: bytes):
    try:
        return extract_blocks(raw.decode("ascii")) or None
    except ArmourError:
        return None


def test_saved_mail_from_an_mbox_with_crlf(block):
    text, payload = block
    raw = b"From ani@example.org Mon Jan  6 10:00:00 2025\r\n" + eml(text, cte="base64").replace(b"\n", b"\r\n")
    assert extract_blocks(submission_text(raw)) == [payload]


def test_saved_page(block):
    text, payload = block
    page = ("<!DOCTYPE html>\n<html><head><title>Tortuga g1 - Page 3</title></head><body>"
            f"<div class='post'><p>ani wrote:</p><pre>{text}</pre></div></body></html>")
    assert submission_text(page.encode()) == f"ani wrote:\n\n{text}"
    fragment = "<div class='post'><p>My move<br>" + "<br>".join(text.splitlines()) + "</p></div>"
    assert extract_blocks(submission_text(fragment.encode())) == [payload]


def test_page_saved_as_mhtml(block):
    """Chrome saves "Webpage, Single File" as MHTML: a MIME message holding the page."""
    text, payload = block
    msg = EmailMessage()
    msg["From"] = "<Saved by Blink>"
    msg["Snapshot-Content-Location"] = "https://forum.example.org/viewtopic.php?t=42"
    msg["Subject"] = "Tortuga g1"
    msg.set_content("<html><body><pre>" + text + "</pre></body></html>", subtype="html", cte="quoted-printable")
    msg.make_related()
    assert extract_blocks(submission_text(bytes(msg))) == [payload]


def test_plain_text_and_its_encodings(block):
    text, payload = block
    assert submission_text(("note: my block\n" + text).encode()) == "note: my block\n" + text
    assert submission_text(("> " + text.replace("\n", "\r\n> ")).encode()).count("\r") == 0
    assert extract_blocks(submission_text(text.encode("utf-16"))) == [payload]
    assert extract_blocks(submission_text(b"\xef\xbb\xbf" + text.encode())) == [payload]
    assert submission_text(b"caf\xe9 \xff\n") == "caf\ufffd \ufffd\n"
    assert submission_text(b"") == ""


def test_header_like_text_without_a_blank_line_stays_text(block):
    text, payload = block
    data = ("Subject: my move\n" + text).encode()
    assert submission_text(data) == data.decode()
