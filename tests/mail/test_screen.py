"""screen: the judge never answers bounces, automatic replies, list mail, or itself."""

from email.message import EmailMessage

import pytest

from pbem.mail.message import read_message
from pbem.mail.screen import screen

JUDGES = ("judge@pbem.example.org", "Tortuga@Judge.Example.NET")


def incoming(body: str = "seal A\n", **headers):
    msg = EmailMessage()
    msg["From"] = headers.pop("From", "Ani <ani@example.org>")
    msg["To"] = "judge@pbem.example.org"
    msg["Subject"] = headers.pop("Subject", "[g1] move")
    msg["Message-ID"] = "<m1@example.org>"
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return read_message(bytes(msg))


def test_a_player_is_answered():
    assert screen(incoming(), JUDGES) is None
    assert screen(incoming(Auto_Submitted="no"), JUDGES) is None
    assert screen(incoming(Precedence="first-class", X_Loop="other@example.org"), JUDGES) is None


def test_autoresponder():
    msg = incoming("I am away until Monday.\n", Auto_Submitted="auto-replied", X_Auto_Response_Suppress="All",
                   Subject="Automatic reply: [g1] your move")
    assert screen(msg, JUDGES) == "an automatic message (Auto-Submitted: auto-replied, RFC 3834)"
    assert screen(incoming(Auto_Submitted="Auto-Generated (vacation)"), JUDGES) == (
        "an automatic message (Auto-Submitted: auto-generated, RFC 3834)")
    assert screen(incoming(X_Autoreply="yes"), JUDGES) == "an automatic reply (X-Autoreply: yes)"


def test_mailing_list_copy():
    mailman = incoming(List_Id="Tortuga games <pbem-tortuga.lists.example.org>", Precedence="list",
                       List_Unsubscribe="<mailto:pbem-tortuga-leave@lists.example.org>")
    assert screen(mailman, JUDGES) == "bulk or list mail (Precedence: list)"
    assert screen(incoming(List_Id="<pbem-tortuga.lists.example.org>"), JUDGES) == (
        "a mailing-list copy (List-Id: <pbem-tortuga.lists.example.org>)")
    assert screen(incoming(List_Unsubscribe="<https://news.example.com/u>"), JUDGES) == (
        "a mailing-list or newsletter copy (List-Unsubscribe)")


@pytest.mark.parametrize("value", ["bulk", "Junk", "list", "auto_reply"])
def test_precedence(value):
    assert screen(incoming(Precedence=value), JUDGES) == f"bulk or list mail (Precedence: {value.lower()})"


def test_bounces():
    assert screen(incoming(Return_Path="<>"), JUDGES) == "a bounce: the return path is empty (<>)"
    daemon = incoming(From="Mail Delivery System <MAILER-DAEMON@mx.example.org>")
    assert screen(daemon, JUDGES) == "a bounce or mail-system notice from mailer-daemon@mx.example.org"
    assert screen(incoming(From="postmaster@example.org"), JUDGES) == (
        "a bounce or mail-system notice from postmaster@example.org")
    report = EmailMessage()
    report["From"] = "Ani <ani@example.org>"
    report.set_content("Your message was read.\n")
    report.make_mixed()
    report.replace_header("Content-Type", 'multipart/report; report-type=disposition-notification; boundary="x"')
    assert screen(read_message(bytes(report)), JUDGES) == (
        "a delivery or read report (Content-Type: multipart/report)")
    # an ordinary return path is no bounce
    assert screen(incoming(Return_Path="<ani@example.org>"), JUDGES) is None


def test_the_judges_own_mail():
    assert screen(incoming(From="Tortuga Judge <TORTUGA@judge.example.net>"), JUDGES) == (
        "sent from the judge's own address tortuga@judge.example.net (a mail loop)")
    looped = incoming(X_Loop="judge@pbem.example.org")
    assert screen(looped, JUDGES) == (
        "X-Loop names the judge's address judge@pbem.example.org: it has already passed the judge")
    # X-Loop is checked in every value, not only the first
    msg = EmailMessage()
    msg["From"] = "ani@example.org"
    msg["X-Loop"] = "procmail@example.org"
    msg["X-Loop"] = "<Judge@PBEM.example.org>"
    msg.set_content("x\n")
    assert screen(read_message(bytes(msg)), JUDGES).startswith("X-Loop names the judge's address")
    # a longer address that merely contains the judge's is not the judge
    assert screen(incoming(X_Loop="judge@pbem.example.org.evil.example"), JUDGES) is None
