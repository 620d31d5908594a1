"""Tampering with a stored or exported log is found, and named by its first bad event."""

from __future__ import annotations

import pytest

from pbem.protocol.canonical import canonical_text, event_hash
from pbem.store import ChainError, read_export, export_lines, verify_chain


def body(store, seq):
    return store.db.execute("select body from events where seq = ?", [seq]).fetchone()[0]


def set_column(store, seq, column, value):
    store.db.execute(f"update events set {column} = ? where seq = ?", [value, seq])


def first_bad(check) -> ChainError:
    with pytest.raises(ChainError) as caught:
        check()
    assert "\n" not in str(caught.value)
    return caught.value


def test_untouched_log_verifies(filled):
    filled.verify("g")
    filled.verify("g", expected_head=filled.head("g"))
    verify_chain([event.export_dict() for event in filled.events("g")], filled.head("g"))


def test_one_byte_of_a_body_changed(filled):
    set_column(filled, 3, "body", body(filled, 3).replace('"n":3', '"n":4'))
    error = first_bad(lambda: filled.verify("g"))
    assert error.seq == 3
    assert str(error).startswith("event 3: hash does not match its contents (stored ")


def test_body_made_invalid_json(filled):
    set_column(filled, 4, "body", body(filled, 4)[:-1])
    error = first_bad(lambda: filled.verify("g"))
    assert (error.seq, str(error)) == (4, "event 4: stored body is not valid JSON")


def test_body_rewritten_in_non_canonical_form(filled):
    set_column(filled, 2, "body", body(filled, 2).replace(",", ", "))
    error = first_bad(lambda: filled.verify("g"))
    assert (error.seq, str(error)) == (2, "event 2: stored body is not in canonical JSON form")


def test_column_disagrees_with_body(filled):
    set_column(filled, 5, "kind", "forged")
    error = first_bad(lambda: filled.verify("g"))
    assert error.seq == 5
    assert str(error) == "event 5: stored body says kind 'tick' but the row says 'forged'"


def test_stored_hash_changed(filled):
    set_column(filled, 3, "hash", "f" * 64)
    error = first_bad(lambda: filled.verify("g"))
    assert error.seq == 3
    assert "hash does not match its contents (stored ffffffff…" in str(error)


def test_prev_hash_changed(filled):
    set_column(filled, 4, "prev_hash", "e" * 64)
    error = first_bad(lambda: filled.verify("g"))
    assert error.seq == 4
    assert str(error).startswith("event 4: prev_hash does not match event 3 (stored eeeeeeee…")


def test_middle_row_deleted(filled):
    filled.db.execute("delete from events where seq = 4")
    error = first_bad(lambda: filled.verify("g"))
    assert (error.seq, str(error)) == (4, "event 4: missing (event 3 is followed by event 5)")


def test_first_row_deleted(filled):
    filled.db.execute("delete from events where seq = 1")
    error = first_bad(lambda: filled.verify("g"))
    assert (error.seq, str(error)) == (1, "event 1: missing (the log starts at event 2)")


def test_bodies_of_two_rows_swapped(filled):
    two, five = body(filled, 2), body(filled, 5)
    set_column(filled, 2, "body", five)
    set_column(filled, 5, "body", two)
    error = first_bad(lambda: filled.verify("g"))
    assert (error.seq, str(error)) == (2, "event 2: stored body says seq 5 but the row says 2")


def test_earliest_damage_is_reported_first(filled):
    set_column(filled, 5, "body", "garbage")
    set_column(filled, 2, "hash", "0" * 64)
    assert first_bad(lambda: filled.verify("g")).seq == 2


def test_truncated_tail_found_against_published_head(filled):
    published = filled.head("g")
    filled.db.execute("delete from events where seq > 4")
    filled.verify("g")  # a shortened chain is still a chain: only the head shows the cut
    error = first_bad(lambda: filled.verify("g", expected_head=published))
    assert (error.seq, str(error)) == (5, "event 5: missing (the log ends at event 4, but the published head is event 6)")


def test_consistent_rewrite_found_against_published_head(filled):
    published = filled.head("g")
    rows = [event.export_dict() for event in filled.events("g")]
    # Forge event 5 and re-hash everything after it: the chain alone looks fine.
    rows[4]["data"] = {"n": 500}
    for index in range(4, len(rows)):
        rows[index]["prev_hash"] = rows[index - 1]["hash"]
        event = {name: rows[index][name] for name in ("game", "seq", "kind", "at", "data")}
        rows[index]["hash"] = event_hash(rows[index]["prev_hash"], event)
    verify_chain(rows)
    error = first_bad(lambda: verify_chain(rows, expected_head=published))
    assert error.seq == 6
    assert "differs from the published head" in str(error)


def test_a_log_that_grew_past_the_published_head_verifies(filled):
    published = (3, filled.events("g")[2].hash)
    filled.verify("g", expected_head=published)


# -- the same checks on exported dicts -----------------------------------------------


@pytest.fixture
def rows(filled):
    text = "".join(export_lines(filled.events("g")))
    return read_export(text)


def test_exported_data_changed(rows):
    rows[2]["data"]["n"] = 99
    error = first_bad(lambda: verify_chain(rows))
    assert error.seq == 3
    assert str(error).startswith("event 3: hash does not match its contents (stored ")


def test_exported_hash_changed(rows):
    rows[1]["hash"] = "a" * 64
    assert first_bad(lambda: verify_chain(rows)).seq == 2


def test_exported_row_deleted(rows):
    del rows[3]
    error = first_bad(lambda: verify_chain(rows))
    assert (error.seq, str(error)) == (4, "event 4: missing (event 3 is followed by event 5)")


def test_exported_rows_swapped(rows):
    rows[2], rows[4] = rows[4], rows[2]
    error = first_bad(lambda: verify_chain(rows))
    assert (error.seq, str(error)) == (3, "event 3: out of order (it comes after event 5)")


def test_exported_row_duplicated(rows):
    rows.insert(3, dict(rows[2]))
    error = first_bad(lambda: verify_chain(rows))
    assert (error.seq, str(error)) == (3, "event 3: appears more than once")


def test_exported_row_from_another_game(rows):
    rows[3]["game"] = "other"
    error = first_bad(lambda: verify_chain(rows))
    assert (error.seq, str(error)) == (4, "event 4: belongs to game 'other', not 'g'")


def test_exported_tail_truncated(rows):
    published = (rows[-1]["seq"], rows[-1]["hash"])
    error = first_bad(lambda: verify_chain(rows[:2], expected_head=published))
    assert (error.seq, str(error)) == (3, "event 3: missing (the log ends at event 2, but the published head is event 6)")
    error = first_bad(lambda: verify_chain([], expected_head=published))
    assert str(error) == "event 1: missing (the log ends at event 0, but the published head is event 6)"


def test_exported_row_with_float_data(rows):
    rows[1]["data"] = {"x": 0.5}
    error = first_bad(lambda: verify_chain(rows))
    assert error.seq == 2
    assert "no canonical JSON form" in str(error)


def test_export_line_is_canonical(rows, filled):
    lines = list(export_lines(filled.events("g")))
    assert lines[0] == canonical_text(rows[0]) + "\n"
