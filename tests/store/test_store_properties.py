"""Properties: append, export, read back and verify, for any small JSON data."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.store import ChainError, Store, export_lines, read_export, verify_chain

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
events = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=10),
        st.dictionaries(st.text(max_size=5), json_values, max_size=4),
    ),
    max_size=8,
)


def stored(entries):
    store = Store(":memory:")
    with store.transaction():
        for kind, data in entries:
            store.append("game-1", kind, data, at="2024-05-01T12:00:00Z")
    return store


@settings(max_examples=60, deadline=None)
@given(events)
def test_append_export_read_verify_round_trip(entries):
    with stored(entries) as store:
        text = "".join(export_lines(store.events("game-1")))
        rows = read_export(text)
        verify_chain(rows, expected_head=store.head("game-1"))
        store.verify("game-1")
        assert [(row["kind"], row["data"]) for row in rows] == entries
        assert [row["seq"] for row in rows] == list(range(1, len(entries) + 1))


@settings(max_examples=40, deadline=None)
@given(events.filter(bool), st.data())
def test_any_changed_data_is_found_at_its_event(entries, draw):
    with stored(entries) as store:
        rows = read_export("".join(export_lines(store.events("game-1"))))
    index = draw.draw(st.integers(0, len(rows) - 1))
    rows[index]["data"] = {**rows[index]["data"], "\x00forged": True}
    try:
        verify_chain(rows)
    except ChainError as error:
        assert error.seq == index + 1
    else:
        raise AssertionError("a forged event passed verification")
