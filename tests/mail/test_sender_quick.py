"""A From: that is one bare address is read without ``email.utils.getaddresses``: the same
(address, name) as the full parse, for any such address, and anything else still parsed."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail import message

ATEXT = "abcXYZ019!#$%&'*+/=?^_`{|}~-"
atom = st.text(ATEXT, min_size=1, max_size=6)
dot_atom = st.lists(atom, min_size=1, max_size=3).map(".".join)
bare = st.builds(lambda local, domain: f"{local}@{domain}", dot_atom, dot_atom)
near = st.one_of(bare, st.text(ATEXT + ".@ <>\"(),;:[]\\é", max_size=30),
                 st.builds(lambda a, b: a + b, bare, st.sampled_from([".", " ", ">", "<", ",x@y", " (c)", "é"])),
                 st.builds(lambda a, b: a + b, st.sampled_from(["<", " ", ".", "\"a\" ", "=?utf-8?q?x?= "]), bare))


def slow(raw: str):
    """message.read_sender with the quick path taken away."""
    pattern = message.BARE_ADDRESS
    message.BARE_ADDRESS = re.compile(r"(?!)")
    try:
        return message.read_sender(None, {"from": [raw]})
    finally:
        message.BARE_ADDRESS = pattern


@settings(max_examples=500, deadline=None)
@given(bare)
def test_a_bare_address_is_read_as_getaddresses_reads_it(raw):
    assert message.BARE_ADDRESS.fullmatch(raw)
    assert message.read_sender(None, {"from": [raw]}) == slow(raw) == (raw.lower(), "")


@settings(max_examples=500, deadline=None)
@given(near)
def test_anything_else_as_before(raw):
    assert message.read_sender(None, {"from": [raw]}) == slow(raw)


def test_the_usual_forms():
    for raw in ("Ani <ani@example.org>", "ani@example.org (Ani)", '"a b"@example.org', "ani@[127.0.0.1]",
                "ani@example.org.", "=?utf-8?q?Ani?= <ani@example.org>", "ANI@Example.ORG"):
        assert message.read_sender(None, {"from": [raw]}) == slow(raw)
    assert message.read_sender(None, {"from": ["ANI@Example.ORG"]}) == ("ani@example.org", "")
