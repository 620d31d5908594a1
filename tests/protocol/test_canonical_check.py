"""``canonical_json`` takes the fast way for values of plain types only; whatever the way,
it accepts and refuses exactly what the full check (``_check``) does, with its message."""

from __future__ import annotations

import enum
import json

import pytest
from hypothesis import given, strategies as st

from pbem.protocol.canonical import CanonicalError, _check, canonical_json


class Number(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=False),
                    st.sampled_from(["\ud800", "a\udfffb", Number.ONE, Text("t"), 2 ** 80]))
keys = st.one_of(st.text(max_size=4), st.sampled_from(["\udc00", 1, Text("k")]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


def _slow(value):
    _check(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@given(values)
def test_the_fast_way_accepts_and_refuses_exactly_what_the_full_check_does(value):
    try:
        expected = _slow(value)
    except (CanonicalError, TypeError) as exc:
        with pytest.raises(type(exc)) as raised:
            canonical_json(value)
        assert str(raised.value) == str(exc)
        return
    assert canonical_json(value) == expected


@pytest.mark.parametrize("value, message", [
    ({"a": [1, {"b": "\ud800"}]}, r"\$\.a\[1\]\.b: string is not valid Unicode"),
    ({"a": [1, 2.5]}, r"\$\.a\[1\]: floats are not allowed"),
    ({"\udc00": 1}, r"\$ key: string is not valid Unicode"),
    ({1: "x"}, "keys must be strings"),
])
def test_a_refusal_names_the_place(value, message):
    with pytest.raises(CanonicalError, match=message):
        canonical_json(value)
