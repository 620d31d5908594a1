"""The test SMTP server's Mailroom parses each header value once (``conftest.ReadOnce``): a
message must read exactly as ``email.policy.default`` reads it, part by part and header by
header, the first time a value is seen and every time after."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.mail.send import compose
from pbem.store import outbox

BOUNCES = Path(__file__).with_name("bounces")


def reading(message) -> list:
    """Everything a mail program (or a test) reads of a message, part by part."""
    seen = []
    for part in message.walk():
        headers = [(name, str(value), type(value).__name__, [type(d).__name__ for d in value.defects],
                    dict(getattr(value, "params", {}))) for name, value in part.items()]
        seen.append((part.get_content_type(), part.get_content_maintype(), part.get_params(),
                     part.get_filename(), part.get_boundary(), part.is_multipart(), headers,
                     [type(d).__name__ for d in part.defects],
                     None if part.is_multipart() else content(part)))
    return seen


def content(part):
    try:
        return part.get_content()
    except (LookupError, KeyError) as exc:  # an unknown charset or content manager: the same error
        return type(exc).__name__, str(exc)


def judge_mail(game) -> list[bytes]:
    """The judge's own messages: a welcome, summaries with their board pictures, privates."""
    for player in ("ani", "alex"):
        game.send(player, f"password {game.passwords[player]}\norder 1 2 3")
    rows = [outbox.get(game.store, row["id"]) for row in game.outbox()]
    return [compose(row, "judge@example.org").as_bytes() for row in rows[:12]]


def odd_mail() -> list[bytes]:
    message = EmailMessage()
    message["From"] = "Ani Müller <ani@example.org>"
    message["To"] = "judge@example.org, Frank <frank@example.org>"
    message["Subject"] = "Réponse [g1] " + "a long subject " * 8
    message.set_content("seal ✓\n")
    message.add_alternative("<p>seal ✓</p>", subtype="html")
    message.add_attachment(b"xx", maintype="application", subtype="pdf", filename="café.pdf")
    encoded = ("From: =?utf-8?q?Ani_M=C3=BCller?= <ani@example.org>\nTo: judge@example.org\n"
               "Subject: =?iso-8859-1?q?R=E9ponse?= =?utf-8?b?w6k=?= [g1]\nMessage-ID: <e@x>\n"
               "Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/plain\n\nseal A\n"
               "--b\nContent-Type: text/plain; name*=utf-8''r%C3%A9.txt\nContent-Disposition: attachment\n\n"
               "yy\n--b\nContent-Type: text/plain; charset=\"bogus\n\nbroken\n--b--\n")
    return [message.as_bytes(), encoded.encode()]


@pytest.fixture
def corpus(game) -> list[bytes]:
    found = judge_mail(game)
    found += odd_mail()
    found += [path.read_bytes() for path in sorted(BOUNCES.glob("*.eml"))]
    return found


@pytest.fixture
def read_once(smtp_mailroom):
    """The Mailroom's policy class (conftest.ReadOnce)."""
    return type(smtp_mailroom[1].policy)


def test_every_message_reads_as_with_the_default_policy(corpus, read_once):
    policy = read_once()  # one for all: the later messages meet values parsed for the earlier ones
    for _ in range(2):
        for raw in corpus:
            assert reading(email.message_from_bytes(raw, policy=policy)) == \
                reading(email.message_from_bytes(raw, policy=email.policy.default))


def test_the_judge_mail_has_pictures_and_the_corpus_is_not_empty(corpus, read_once):
    types = {part.get_content_type() for raw in corpus
             for part in email.message_from_bytes(raw, policy=read_once()).walk()}
    assert {"image/png", "multipart/related", "multipart/alternative", "message/delivery-status"} <= types
