"""``sendpolicy.SEND_POLICY`` keeps one header object per (name, value): the same text under
another header name (an address header, Subject, Message-ID, References) or in another
letter case must give that header's own object, and the message the default policy's bytes;
a value with a line break is refused under every name, as by the default policy."""

from __future__ import annotations

import io
import random
from email.generator import BytesGenerator
from email.message import EmailMessage
from email.policy import default

import pytest

from pbem.mail.sendpolicy import HeadersOnce, wire_bytes

VALUES = ["judge@example.org", "Ä Ärger <a@example.org>", "=?utf-8?q?x?= <a@example.org>", "x, y@example.org",
          '"q, r" <a@example.org>', "From a@example.org", "<id@example.org>", "Ünïcödé " * 20, ""]
NAMES = [("To", "Subject"), ("Subject", "To"), ("subject", "TO", "Cc"), ("Reply-To", "Message-ID"),
         ("References", "In-Reply-To", "Comments")]


def build(policy, pairs) -> EmailMessage:
    random.seed(7)  # the same multipart boundary under both policies
    message = EmailMessage(policy=policy)
    for name, value in pairs:
        message[name] = value
    message.set_content("From me\nhi\n" + "x" * 1000)
    message.add_alternative("<p>From</p>", subtype="html")
    return message


def flat(message) -> bytes:
    out = io.BytesIO()
    BytesGenerator(out).flatten(message, linesep="\r\n")  # as smtplib.send_message
    return out.getvalue()


def outcome(make):
    """The bytes, or the error (some values cannot be written under some names at all)."""
    try:
        return make()
    except Exception as exc:  # the default policy's own refusal
        return f"{type(exc).__name__}: {exc}"


def test_one_value_under_many_names_is_each_names_own_header():
    kept = HeadersOnce()  # one cache for every message, as in a run
    for value in VALUES:
        for names in NAMES:
            pairs = [(name, value) for name in names]
            expected = outcome(lambda: flat(build(default, pairs)))
            assert outcome(lambda: flat(build(kept, pairs))) == expected, (value, names)
            assert outcome(lambda: wire_bytes(build(kept, pairs))) == expected, (value, names)
            message = build(kept, pairs)
            for name in names:
                assert type(message[name]).__name__ == type(build(default, pairs)[name]).__name__
                assert message[name].name == name


@pytest.mark.parametrize("value", ["x\r\nBcc: e@example.org", "x\nY: z", "x\rY", "x\x0bY", "x\x85Y", "x\u2028Y"])
@pytest.mark.parametrize("name", ["Subject", "To", "References"])
def test_a_line_break_is_refused_as_by_the_default_policy(name, value):
    kept = HeadersOnce()
    kept_message, plain = EmailMessage(policy=kept), EmailMessage(policy=default)
    with pytest.raises(ValueError) as refused:
        plain[name] = value
    with pytest.raises(ValueError) as also:
        kept_message[name] = value
    assert str(also.value) == str(refused.value)
