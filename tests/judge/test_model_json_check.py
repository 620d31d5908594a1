"""A private model is checked to survive JSON (else it is rendered at once): the check
answers plain data itself, and gives JSON's own answer, or error, for anything else."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from pbem.mail import letters
from pbem.protocol.canonical import plain

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                    st.floats(allow_nan=True, allow_infinity=True), st.builds(Markup, st.text(max_size=3)),
                    st.sampled_from([math.nan, -0.0, 10 ** 30, (), frozenset(), b"x"]))
keys = st.one_of(st.text(max_size=3), st.integers(-2, 2), st.booleans(), st.none(), st.sampled_from([1.5, ("t",)]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(keys, inner, max_size=4),
    st.dictionaries(st.text(max_size=3), inner, max_size=4)), max_leaves=25)


def round_trip(value):
    try:
        return json.loads(json.dumps(value)) == value
    except Exception as exc:  # noqa: BLE001 - the same error either way
        return (type(exc), str(exc))


def quick(value):
    try:
        return letters.survives_json(value)
    except Exception as exc:  # noqa: BLE001
        return (type(exc), str(exc))


@settings(max_examples=800, deadline=None)
@given(values)
def test_the_same_answer_as_a_json_round_trip(value):
    assert quick(value) == round_trip(value)


def test_plain_data_is_answered_without_json():
    model = {"a": [1, True, None, "x", {"b": []}], "c": {"d": "é"}}
    assert plain(model, tuples=False)
    for odd in ({"a": (1,)}, {1: "a"}, {"a": 1.5}, [Markup("x")], {"a": {"b": {1, 2}}}):
        assert not plain(odd, tuples=False)
