"""read_message on a corpus of messages shaped as real clients write them (built here with
the ``email`` package): what the judge reads, and what it leaves out."""

import email
import email.policy
import hashlib
from email.message import EmailMessage
from email.mime.base import MIMEBase
from email.mime.message import MIMEMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.message import Incoming, MailError, command_lines, read_message
from pbem.protocol.armour import extract_blocks
from pbem.protocol.offline import submission_block
from pbem.protocol.signing import generate_keypair

JUDGE = "judge@pbem.example.org"
HASH = "6ba2c455e9867799af69e2e788fbab5a4810c6e2de3be46adc0cf59f649017ac"
SALT = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def mail(sender: str, subject: str, message_id: str, **headers) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = f"Tortuga Judge <{JUDGE}>"
    msg["Subject"] = subject
    msg["Date"] = "Mon, 06 Jan 2025 10:00:00 +0100"
    msg["Message-ID"] = message_id
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    return msg


def judge_quote() -> str:
    return ("Round 2, step 1: your roll is A B C D E.\n"
            f"Reply with seal CHOICE, or send: commit {HASH}\n")


def quoted(text: str) -> str:
    return "".join("> " + line + "\n" if line else ">\n" for line in text.splitlines())


def a_block(signed: bool = True) -> tuple[str, dict]:
    secret = generate_keypair()[0] if signed else None
    block = submission_block("g1", "commit", {"player": "ani", "round": 2, "step": 1, "commitment": HASH,
                                              "by": "player"}, secret)
    return block, extract_blocks(block)[0]


# ---------------------------------------------------------------------- the corpus


def thunderbird_plain() -> bytes:
    """Thunderbird 115: text/plain, format=flowed (no DelSp), 7bit, a signature."""
    msg = mail("Ani Example <ani@example.org>", "[g1] my move", "<5f1c2a7e-1b2c-4d3e@example.org>",
               User_Agent="Mozilla Thunderbird")
    msg.set_content("Hello judge, here are my choices for this round; I thought about them for a \n"
                    "long time.\n\nseal B,C\nstatus\n\n-- \nAni Example\n",
                    cte="7bit", params={"format": "flowed"})
    return bytes(msg)


def test_thunderbird_plain_flowed():
    msg = read_message(thunderbird_plain())
    assert msg == Incoming(
        key="5f1c2a7e-1b2c-4d3e@example.org", message_id="<5f1c2a7e-1b2c-4d3e@example.org>",
        sender="ani@example.org", sender_name="Ani Example", return_path=None, subject="[g1] my move",
        references=(),
        text=("Hello judge, here are my choices for this round; I thought about them for a long time.\n"
              "\nseal B,C\nstatus\n\n-- \nAni Example\n"),
        size=len(thunderbird_plain()),
        headers={"from": "Ani Example <ani@example.org>",
                 "content-type": 'text/plain; charset="utf-8"; format="flowed"'},
        attachments=())
    assert command_lines(msg.text) == [
        "Hello judge, here are my choices for this round; I thought about them for a long time.",
        "seal B,C", "status"]


def apple_flowed_delsp() -> bytes:
    """Apple Mail: format=flowed; delsp=yes; a word broken across lines, a stuffed line,
    quoted flowed lines at two depths."""
    msg = mail("Alex <alex@example.net>", "Re: [g1] reveal", "<A1B2C3D4-E5F6@example.net>",
               In_Reply_To="<judge.7.1@pbem.example.org>")
    msg.set_content(f"reveal B,C {SALT[:60]} \n{SALT[60:]}\n"
                    " From here on, a stuffed line\n\n"
                    "> The judge wrote a long quoted line that was  \n> flowed.\n"
                    ">> Deeper quote.\n",
                    cte="7bit", params={"format": "flowed", "delsp": "yes"})
    return bytes(msg)


def test_format_flowed_with_delsp_stuffing_and_quotes():
    msg = read_message(apple_flowed_delsp())
    assert msg.text == (f"reveal B,C {SALT}\nFrom here on, a stuffed line\n\n"
                        "> The judge wrote a long quoted line that was flowed.\n>> Deeper quote.\n")
    assert msg.references == ("<judge.7.1@pbem.example.org>",)
    assert command_lines(msg.text) == [f"reveal B,C {SALT}", "From here on, a stuffed line"]


GMAIL_PLAIN = ("seal B,C\n\nOn Mon, 6 Jan 2025 at 10:00, Tortuga Judge <judge@pbem.example.org>\n"
               "wrote:\n\n" + quoted(judge_quote()))
GMAIL_HTML = ('<div dir="ltr">seal B,C</div><br><div class="gmail_quote"><div dir="ltr" '
              'class="gmail_attr">On Mon, 6 Jan 2025 at 10:00, Tortuga Judge &lt;<a href="mailto:'
              'judge@pbem.example.org">judge@pbem.example.org</a>&gt; wrote:<br></div><blockquote '
              'class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid '
              'rgb(204,204,204);padding-left:1ex"><div dir="ltr">Round 2, step 1: your roll is A B C D E.'
              f'<br>Reply with seal CHOICE, or send: commit {HASH}</div></blockquote></div>\n')


def gmail_alternative() -> bytes:
    """Gmail: multipart/alternative, a plain part (attribution wrapped onto two lines) and an
    HTML part (QP), top-posted above the quoted judge's message."""
    msg = mail("Frank Gmail <frank.player@gmail.com>", "Re: [g1] your move",
               "<CAFk3x=Qm+9rT@mail.gmail.com>", In_Reply_To="<judge.7.2@pbem.example.org>",
               References="<judge.7.1@pbem.example.org> <judge.7.2@pbem.example.org>")
    msg.set_content(GMAIL_PLAIN)
    msg.add_alternative(GMAIL_HTML, subtype="html", cte="quoted-printable")
    return bytes(msg)


def test_gmail_alternative_prefers_plain_and_drops_the_quote():
    msg = read_message(gmail_alternative())
    assert msg.text == GMAIL_PLAIN
    assert msg.key == "CAFk3x=Qm+9rT@mail.gmail.com"
    assert msg.references == ("<judge.7.1@pbem.example.org>", "<judge.7.2@pbem.example.org>")  # In-Reply-To last
    assert command_lines(msg.text) == ["seal B,C"]


def test_gmail_html_part_alone_reads_the_same_commands():
    only_html = gmail_alternative().replace(b"multipart/alternative", b"multipart/mixed")
    msg = EmailMessage()
    msg["From"] = "frank.player@gmail.com"
    msg.set_content(GMAIL_HTML, subtype="html", cte="quoted-printable")
    text = read_message(bytes(msg)).text
    assert text == ("seal B,C\n\nOn Mon, 6 Jan 2025 at 10:00, Tortuga Judge <judge@pbem.example.org> wrote:\n\n"
                    "> Round 2, step 1: your roll is A B C D E.\n"
                    f"> Reply with seal CHOICE, or send: commit {HASH}\n")
    assert command_lines(text) == ["seal B,C"]
    # both alternatives read when they are not alternatives: still only the new text counts
    assert command_lines(read_message(only_html).text) == ["seal B,C", "seal B,C"]


OUTLOOK_HTML = (
    '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv=Content-Type '
    'content="text/html; charset=windows-1252"><style><!-- p.MsoNormal {margin:0cm;} --></style>'
    '<!--[if gte mso 9]><xml><o:shapedefaults spidmax="1026" /></xml><![endif]--></head>'
    '<body lang=EN-GB><div class=WordSection1>'
    '<p class=MsoNormal>Here\u2019s my decision \u2013 finally:<o:p></o:p></p>'
    '<p class=MsoNormal>decide skull:raid<o:p></o:p></p>'
    '<p class=MsoNormal><o:p>&nbsp;</o:p></p>'
    '<p class=MsoNormal>Ren&eacute;<o:p></o:p></p>'
    '<p class=MsoNormal><o:p>&nbsp;</o:p></p>'
    '<p class=MsoNormal>-----Original Message-----<br>From: Tortuga Judge &lt;judge@pbem.example.org&gt; '
    '<br>Sent: Monday, January 6, 2025 10:00 AM<br>To: Ren\u00e9 &lt;rene@example.com&gt;<br>'
    'Subject: [g1] your move<o:p></o:p></p>'
    '<p class=MsoNormal>decide skull:hunt<o:p></o:p></p></div></body></html>')


def outlook_html_only() -> bytes:
    """Outlook 16: HTML only, windows-1252, quoted-printable, the old mail below
    "-----Original Message-----" and not quoted at all."""
    msg = mail("=?windows-1252?Q?Ren=E9_Dupont?= <Rene.Dupont@example.com>", "RE: [g1] your move",
               "<DB9PR01MB1234.eurprd01.prod.outlook.com>", X_Mailer="Microsoft Outlook 16.0")
    msg.set_content(OUTLOOK_HTML, subtype="html", charset="windows-1252", cte="quoted-printable")
    return bytes(msg)


def test_outlook_html_only_windows_1252():
    raw = outlook_html_only()
    assert b"=92" in raw and b"=96" in raw  # the curly apostrophe and the dash in windows-1252
    msg = read_message(raw)
    assert (msg.sender, msg.sender_name) == ("rene.dupont@example.com", "René Dupont")
    assert msg.text == ("Here\u2019s my decision \u2013 finally:\n\ndecide skull:raid\n\nRené\n\n"
                        "-----Original Message-----\nFrom: Tortuga Judge <judge@pbem.example.org>\n"
                        "Sent: Monday, January 6, 2025 10:00 AM\nTo: René <rene@example.com>\n"
                        "Subject: [g1] your move\n\ndecide skull:hunt\n")
    assert command_lines(msg.text) == ["Here\u2019s my decision \u2013 finally:", "decide skull:raid", "René"]


APPLE_PLAIN = (f"commit {HASH}\n\nCheers,\nLothar\n\n"
               "On 6 Jan 2025, at 10:00, Tortuga Judge <judge@pbem.example.org> wrote:\n\n"
               + quoted(judge_quote()))


def apple_top_posted() -> bytes:
    """Apple Mail (macOS): top-posted reply, plain part QP, the judge's message quoted below
    "On ... wrote:"."""
    msg = mail("Lothar <lothar@icloud.com>", "Re: [g1] your move", "<8E3F1A2B-77C4-4D1E-9A0B@icloud.com>",
               In_Reply_To="<judge.7.3@pbem.example.org>", X_Mailer="Apple Mail (2.3774.200.91.1.1)")
    msg.set_content(APPLE_PLAIN, cte="quoted-printable")
    msg.add_alternative("<html><body><div>commit " + HASH + "</div><div><br></div><div>Cheers,</div>"
                        "<div>Lothar</div></body></html>", subtype="html", cte="quoted-printable")
    return bytes(msg)


def test_apple_mail_top_posted_reply_quoting_the_judge():
    msg = read_message(apple_top_posted())
    assert msg.text == APPLE_PLAIN
    assert command_lines(msg.text) == [f"commit {HASH}"]  # the sign-off and the name are not read


def test_iphone_reply_with_a_quoted_attribution():
    text = ("seal A\n\nSent from my iPhone\n\n> On 6 Jan 2025, at 10:00, Tortuga Judge "
            "<judge@pbem.example.org> wrote:\n>\n" + quoted(judge_quote()))
    assert command_lines(text) == ["seal A"]  # nor the client's footer


def qp_long_block() -> tuple[bytes, dict]:
    """A signed block whose base64 a client joined into one long line; quoted-printable
    breaks it with soft line breaks, and every '=' travels as =3D."""
    block, payload = a_block(signed=True)
    lines = block.splitlines()
    joined = "\n".join([lines[0], "".join(lines[1:-2]), lines[-2], lines[-1]])
    msg = mail("ani@example.org", "[g1] block", "<qp-block@example.org>")
    msg.set_content(f"My commitment:\n\n{joined}\n\nAni\n", cte="quoted-printable")
    return bytes(msg), payload


def test_long_block_broken_by_quoted_printable_soft_breaks():
    raw, payload = qp_long_block()
    assert b"=\n" in raw and b"=3D" in raw
    msg = read_message(raw)
    assert extract_blocks(msg.text) == [payload]
    assert command_lines(msg.text)[0] == "My commitment:"


def test_base64_body():
    msg = mail("Zoë <zoe@example.org>", "=?utf-8?b?W2cxXSBtb3ZlIMOg?=", "<b64@example.org>")
    msg.set_content("Zoë here.\nseal B,C\n", cte="base64")
    raw = bytes(msg)
    assert b"Wm/DqyBoZXJlLgpzZWFsIEIsQwo=" in raw
    got = read_message(raw)
    assert (got.text, got.subject, got.sender_name) == ("Zoë here.\nseal B,C\n", "[g1] move à", "Zoë")


def test_iso_8859_1_body_and_accented_name():
    msg = mail("=?iso-8859-1?q?J=F6rg_M=FCller?= <joerg@example.de>", "[g1] Zug", "<latin1@example.de>")
    msg.set_content("Grüße aus Köln\nseal A,B\n\n-- \nJörg\n", charset="iso-8859-1", cte="8bit")
    raw = bytes(msg)
    assert "Grüße".encode("latin-1") in raw
    got = read_message(raw)
    assert (got.sender, got.sender_name) == ("joerg@example.de", "Jörg Müller")
    assert got.text == "Grüße aus Köln\nseal A,B\n\n-- \nJörg\n"
    assert command_lines(got.text) == ["Grüße aus Köln", "seal A,B"]


def test_crlf_line_endings():
    raw = EmailMessage(policy=email.policy.SMTP)
    for name, value in (("From", "ani@example.org"), ("Subject", "[g1] crlf"), ("Message-ID", "<crlf@x>")):
        raw[name] = value
    raw.set_content("seal B,C\nstatus\n> old\n", cte="quoted-printable")
    data = bytes(raw)
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    got = read_message(data)
    assert got.text == "seal B,C\nstatus\n> old\n"
    assert command_lines(got.text) == ["seal B,C", "status"]


def with_attachments() -> bytes:
    msg = mail("ani@example.org", "[g1] with files", "<att@example.org>")
    msg.set_content("seal B,C\n")
    msg.add_attachment(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n", maintype="application",
                       subtype="pdf", filename="rules.pdf")
    msg.add_attachment(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", maintype="image", subtype="png",
                       filename="board.png")
    msg.add_attachment(f"commit {HASH}\n", filename="notes.txt")  # text/plain, disposition attachment
    return bytes(msg)


def test_attachments_are_named_not_read():
    got = read_message(with_attachments())
    assert got.text == "seal B,C\n"
    assert got.attachments == ("rules.pdf", "board.png", "notes.txt")


def test_nested_mixed_holding_alternative():
    msg = mail("ani@example.org", "[g1] nested", "<nested@example.org>")
    msg.set_content("seal B,C\n")
    msg.add_alternative("<p>seal B,C</p>", subtype="html")
    msg.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="a.pdf")
    raw = bytes(msg)
    assert b"multipart/mixed" in raw and b"multipart/alternative" in raw
    got = read_message(raw)
    assert (got.text, got.attachments) == ("seal B,C\n", ("a.pdf",))


def test_empty_plain_alternative_falls_back_to_html():
    msg = mail("ani@example.org", "[g1]", "<empty-plain@example.org>")
    msg.set_content("\n")
    msg.add_alternative("<div>seal A</div>", subtype="html")
    assert read_message(bytes(msg)).text == "seal A\n"


def test_forwarded_message_attachment_is_not_read():
    inner = mail("Ani <ani@example.org>", "my move", "<inner@example.org>")
    inner.set_content(f"commit {HASH}\n")
    msg = mail("Frank <frank@example.org>", "Fwd: my move", "<outer@example.org>")
    msg.set_content("Ani's move, forwarded as she asked.\n")
    msg.add_attachment(inner, filename="my move.eml")
    got = read_message(bytes(msg))
    assert got.text == "Ani's move, forwarded as she asked.\n"
    assert got.attachments == ("my move.eml",)


def test_inline_forward_stops_the_commands():
    msg = mail("frank@example.org", "Fwd: my move", "<fwd-inline@example.org>")
    msg.set_content("status\n\n---------- Forwarded message ---------\nFrom: Ani <ani@example.org>\n"
                    f"Date: Mon, 6 Jan 2025 at 09:00\nSubject: my move\n\ncommit {HASH}\n")
    assert command_lines(read_message(bytes(msg)).text) == ["status"]


def bounce() -> bytes:
    """Postfix: a delivery status notification (multipart/report) for a judge's message."""
    original = mail(f"Tortuga Judge <{JUDGE}>", "[g1] your move", "<judge.7.4@pbem.example.org>")
    original.set_content(f"commit {HASH}\n")
    report = MIMEMultipart("report", report_type="delivery-status")
    for name, value in (("Return-Path", "<>"), ("From", "MAILER-DAEMON@mx.example.org (Mail Delivery System)"),
                        ("To", JUDGE), ("Subject", "Undelivered Mail Returned to Sender"),
                        ("Message-ID", "<20250106090001.3F2A1@mx.example.org>"), ("Auto-Submitted", "auto-replied")):
        report[name] = value
    report.attach(MIMEText("This is the mail system at host mx.example.org.\n\nI'm sorry to have to inform "
                           "you that your message could not\nbe delivered to one or more recipients.\n"))
    status = MIMEBase("message", "delivery-status")
    status.set_payload([email.message_from_string("Reporting-MTA: dns; mx.example.org\n"),
                        email.message_from_string("Final-Recipient: rfc822; gone@example.org\n"
                                                  "Action: failed\nStatus: 5.1.1\n")])
    report.attach(status)
    report.attach(MIMEMessage(original))
    return report.as_bytes()


def test_bounce_reads_only_the_notice():
    got = read_message(bounce())
    assert got.return_path == ""
    assert got.sender == "mailer-daemon@mx.example.org"
    assert got.text == ("This is the mail system at host mx.example.org.\n\nI'm sorry to have to inform "
                        "you that your message could not\nbe delivered to one or more recipients.\n")
    assert got.attachments == ("message/delivery-status", "message/rfc822")
    assert got.headers["content-type"].startswith('multipart/report; report-type="delivery-status"')
    assert got.headers["auto-submitted"] == "auto-replied"


def test_headers_kept_for_screening():
    msg = mail('"Ani (via list)" <pbem-tortuga@lists.example.org>', "[g1] move", "<list@example.org>",
               Sender="pbem-tortuga-bounces@lists.example.org", Reply_To="ani@example.org",
               List_Id="Tortuga games <pbem-tortuga.lists.example.org>",
               List_Unsubscribe="<mailto:pbem-tortuga-leave@lists.example.org>", Precedence="list",
               X_Loop="pbem-tortuga@lists.example.org", Return_Path="<PBEM-Tortuga-Bounces@lists.example.org>")
    msg["X-Loop"] = JUDGE
    msg.set_content("seal A\n")
    got = read_message(bytes(msg))
    assert got.headers == {
        "from": '"Ani (via list)" <pbem-tortuga@lists.example.org>',
        "sender": "pbem-tortuga-bounces@lists.example.org",
        "reply-to": "ani@example.org",
        "list-id": "Tortuga games <pbem-tortuga.lists.example.org>",
        "list-unsubscribe": "<mailto:pbem-tortuga-leave@lists.example.org>",
        "precedence": "list",
        "x-loop": f"pbem-tortuga@lists.example.org, {JUDGE}",
        "content-type": 'text/plain; charset="utf-8"',
    }
    assert got.return_path == "pbem-tortuga-bounces@lists.example.org"
    assert got.sender_name == "Ani (via list)"


# ---------------------------------------------------------------------- identity and odd input


def test_without_message_id_the_key_is_the_hash_of_the_bytes():
    raw = b"From: ani@example.org\nSubject: hi\n\nseal A\n"
    got = read_message(raw)
    assert (got.key, got.message_id) == ("sha256:" + hashlib.sha256(raw).hexdigest(), None)


def test_message_id_normalised():
    raw = b"From: ani@example.org\nMessage-ID:\n <abc.def@\n example.org>\n\nx\n"
    got = read_message(raw)
    assert (got.key, got.message_id) == ("abc.def@example.org", "<abc.def@example.org>")


def test_missing_or_unknown_charset_degrades_gracefully():
    utf8 = b"From: a@example.org\nContent-Type: text/plain\n\nZo\xc3\xab\n"
    latin = b"From: a@example.org\n\nZo\xeb \x93quoted\x94\n"
    unknown = b"From: a@example.org\nContent-Type: text/plain; charset=x-klingon\n\nZo\xc3\xab\n"
    lying = b"From: a@example.org\nContent-Type: text/plain; charset=utf-8\n\nZo\xeb\n"
    assert [read_message(r).text for r in (utf8, latin, unknown, lying)] == [
        "Zoë\n", "Zoë \u201cquoted\u201d\n", "Zoë\n", "Zo\ufffd\n"]


def test_8bit_header_with_undecodable_bytes_is_safe_to_store():
    got = read_message(b"From: J\xf6rg <j@example.de>\nSubject: Gr\xfc\xdfe\n\nx\n")
    assert got.sender == "j@example.de"
    for value in (got.subject, got.sender_name, *got.headers.values()):
        value.encode("utf-8")  # no lone surrogates left from the raw bytes


def test_empty_input_is_a_mail_error():
    for raw in (b"", b"\r\n  \n"):
        with pytest.raises(MailError, match="^the message is empty: expected an email message"):
            read_message(raw)


def test_garbage_bytes_are_a_mail_error():
    with pytest.raises(MailError, match=r"^not an email message: it starts with no header lines"):
        read_message(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")


def test_truncated_message_is_read_as_far_as_it_goes():
    raw = gmail_alternative()
    cut = raw[: raw.index(b"gmail_quote")]  # inside the HTML part: the plain part is whole
    got = read_message(cut)
    assert (got.text, got.sender) == (GMAIL_PLAIN, "frank.player@gmail.com")
    in_headers = raw[: raw.index(b"Subject:") + 12]
    got = read_message(in_headers)
    assert (got.sender, got.subject, got.text) == ("frank.player@gmail.com", "Re:", "")


CORPUS = [thunderbird_plain, apple_flowed_delsp, gmail_alternative, outlook_html_only, apple_top_posted,
          lambda: qp_long_block()[0], with_attachments, bounce]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CORPUS), st.data())
def test_damaged_messages_never_crash(make, data):
    raw = bytearray(make())
    cut = data.draw(st.integers(0, len(raw)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, max(0, cut - 1)), st.integers(0, 255)), max_size=8))
    raw = raw[:cut]
    for position, value in flips:
        if raw:
            raw[position] = value
    _read_or_refuse(bytes(raw))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_never_crash(raw):
    _read_or_refuse(raw)


def _read_or_refuse(raw: bytes) -> None:
    try:
        got = read_message(raw)
    except MailError as exc:
        assert "\n" not in str(exc)
        return
    assert got.size == len(raw)
    for value in (got.key, got.sender, got.sender_name, got.subject, got.text, *got.headers.values()):
        value.encode("utf-8")
    assert "\r" not in got.text
    command_lines(got.text)
