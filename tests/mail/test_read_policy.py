"""The judge takes mail apart with compat32 (ten times cheaper than the default policy, which
parses every Content-Type into header objects), and decodes the few headers it reads as the
default policy does: every message reads exactly as it read with the default policy (the
same ``Incoming``, or the same refusal), over every message the tests know, damaged copies
of them, and, where this Python has them, the odd messages of CPython's own email tests."""

from __future__ import annotations

import email.policy
import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pbem.mail import message
from pbem.mail.message import MailError, read_message

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import hostile_shapes  # noqa: E402


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_reading = _load("pbem_tests_mail_read_message", TESTS / "mail" / "test_read_message.py")
CPYTHON = Path(email.__file__).resolve().parents[1] / "test" / "test_email" / "data"


def corpus() -> dict[str, bytes]:
    found = {f"reading/{number}": make() for number, make in enumerate(_reading.CORPUS)}
    for name, (build, _expected) in hostile_shapes.SHAPES.items():
        found[f"hostile/{name}"] = build(hostile_shapes.SMALL // 4, "53zj5-ppv32-xk97k")
    for path in sorted((TESTS / "judge" / "bounces").glob("*.eml")):
        found[f"bounce/{path.name}"] = path.read_bytes()
    found["encoded"] = ("From: =?utf-8?q?Ani_M=C3=BCller?= <ani@example.org>\nTo: judge@example.org\n"
                        "Subject: =?iso-8859-1?q?R=E9ponse?= =?utf-8?b?w6k=?= [g1]\n"
                        "List-Id: =?utf-8?q?Liste_=C3=A9?= <l.example.org>\nMessage-ID: <e@x>\n"
                        "Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/plain\n\nseal A\n"
                        "--b\nContent-Type: application/pdf\nContent-Disposition: attachment; "
                        "filename=\"=?utf-8?q?caf=C3=A9.pdf?=\"\n\nxx\n--b\nContent-Type: text/plain; name*=utf-8''r%C3%A9.txt\n"
                        "Content-Disposition: attachment\n\nyy\n--b--\n").encode()
    return found


def read_with(policy, raw: bytes):
    saved = message.PARSE_POLICY
    message.PARSE_POLICY = policy
    try:
        return ("read", read_message(raw))
    except MailError as exc:
        return ("refused", str(exc))
    finally:
        message.PARSE_POLICY = saved


def same_as_default(raw: bytes) -> None:
    assert read_with(email.policy.compat32, raw) == read_with(email.policy.default, raw)


KNOWN = corpus()


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_every_known_message_reads_as_with_the_default_policy(name):
    same_as_default(KNOWN[name])


def test_encoded_words_and_attachment_names_are_decoded_as_before():
    kind, got = read_with(email.policy.compat32, KNOWN["encoded"])
    assert kind == "read"
    assert got.subject == "Réponseé [g1]" and got.sender_name == "Ani Müller"
    assert got.headers["list-id"] == "Liste é <l.example.org>"
    assert got.attachments == ("café.pdf", "ré.txt") and got.text == "seal A\n"


@pytest.mark.skipif(not CPYTHON.is_dir(), reason="this Python has no test_email data")
def test_cpython_odd_messages_read_as_with_the_default_policy():
    paths = sorted(CPYTHON.glob("msg_*.txt"))
    assert len(paths) > 40
    for path in paths:
        same_as_default(path.read_bytes())


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(KNOWN)), st.data())
def test_damaged_messages_read_as_with_the_default_policy(name, data):
    raw = bytearray(KNOWN[name][:20000])
    cut = data.draw(st.integers(0, len(raw)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, max(0, cut - 1)), st.integers(0, 255)), max_size=8))
    raw = raw[:cut]
    for position, value in flips:
        if raw:
            raw[position] = value
    same_as_default(bytes(raw))
