"""canonical_json checks a value's types in one quick pass (exact types) and leaves the
rest to the full check: the bytes, and every refusal with its words, are as before."""

from __future__ import annotations

import enum
import json

from hypothesis import given, settings, strategies as st

from pbem.protocol.canonical import CanonicalError, _check, canonical_json


def reference(value) -> bytes:
    """canonical_json as it was: the full check first, then the text."""
    _check(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Name(str):
    pass


class Count(enum.IntEnum):
    ONE = 1


def outcome(function, value):
    try:
        return ("ok", function(value))
    except (CanonicalError, UnicodeEncodeError, TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


texts = st.one_of(st.text(max_size=6), st.sampled_from(["\ud800", "a\udfffb", "é", "\u2028"]))
leaves = st.one_of(st.none(), st.booleans(), st.integers(), texts, st.floats(allow_nan=False),
                   st.just(Name("sub")), st.just(Count.ONE), st.just(b"bytes"))
keys = st.one_of(texts, st.integers(), st.just(Name("k")))
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_same_bytes_or_the_same_refusal_as_the_full_check(value):
    assert outcome(canonical_json, value) == outcome(reference, value)


def test_a_lone_surrogate_deep_inside_is_named_where_it_is():
    value = {"a": [1, {"b": "ok", "c": "x\ud800"}]}
    assert outcome(canonical_json, value) == outcome(reference, value)
    assert outcome(canonical_json, value)[1].startswith("$.a[1].c: string is not valid Unicode")
