"""Appending and reading events, transactions, secrets and snapshots."""

from __future__ import annotations

import re

import pytest

from pbem.protocol.canonical import GENESIS_HASH, canonical_text, event_hash
from pbem.store import Event, Store, StoreError

AT = "2024-05-01T12:00:00Z"


def test_append_then_events_round_trip(store):
    with store.transaction():
        first = store.append("g", "new", {"players": ["ani", "alex"]}, at=AT)
        second = store.append("g", "roll", {"dice": [1, 6], "note": "ünïcode"}, at=AT)
    assert store.events("g") == [first, second]
    assert first == Event("g", 1, "new", AT, {"players": ["ani", "alex"]}, GENESIS_HASH, first.hash)
    assert first.hash == event_hash(GENESIS_HASH, first.as_dict())
    assert second.prev_hash == first.hash
    assert second.hash == event_hash(first.hash, second.as_dict())
    assert store.events("g", after=1) == [second]
    assert store.events("g", after=2) == []
    body = store.db.execute("select body from events where seq = 2").fetchone()[0]
    assert body == canonical_text(second.as_dict())


def test_event_dicts_and_from_dict():
    event = Event("g", 3, "roll", AT, {"d": 4}, "a" * 64, "b" * 64)
    assert event.as_dict() == {"game": "g", "seq": 3, "kind": "roll", "at": AT, "data": {"d": 4}}
    assert event.export_dict() == {**event.as_dict(), "prev_hash": "a" * 64, "hash": "b" * 64}
    assert Event.from_dict(event.export_dict()) == event


def test_default_time_is_utc_seconds(store):
    with store.transaction():
        event = store.append("g", "new", {})
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event.at)


def test_returned_event_does_not_alias_callers_data(store):
    data = {"list": [1]}
    with store.transaction():
        event = store.append("g", "new", data, at=AT)
    data["list"].append(2)
    assert event.data == {"list": [1]}
    assert store.events("g")[0].data == {"list": [1]}


def test_an_event_appended_without_reading_it_back_is_stored_the_same(store):
    """``read_back=False`` (the protocol's writes, which never use the returned Event)
    stores the same row, hash and chain; the store's checked head moves past it too."""
    data = [{"players": ["ani", "alex"]}, {"dice": [1, 6], "note": "ünïcode"}, {"deep": {"a": [None, True]}}]
    with store.transaction():
        read = [store.append("r", "tick", item, at=AT) for item in data]
    with store.transaction():
        assert [store.append("n", "tick", item, at=AT, read_back=False) for item in data] == [None] * 3
    assert [e._replace(game="r", prev_hash="", hash="") for e in store.events("n")] == \
        [e._replace(prev_hash="", hash="") for e in read]
    rows = "select seq, kind, at, body from events where game = ? order by seq"
    assert [tuple(r) for r in store.conn.execute(rows, ["n"])] == \
        [(s, k, a, b.replace('"game":"r"', '"game":"n"')) for s, k, a, b in store.conn.execute(rows, ["r"])]
    assert store.damage("n") is None and store.events("n")[-1].hash == event_hash(
        store.events("n")[-2].hash, store.events("n")[-1].as_dict())
    with store.transaction():
        assert store.damage("n") is None and store.checked_head("n") == store.head("n")
        store.append("n", "tick", {}, at=AT, read_back=False)
        assert store.checked_head("n") == store.head("n")


def test_two_games_interleaved_have_their_own_gapless_sequences(store):
    for n in range(5):
        with store.transaction():
            store.append("a", "tick", {"n": n}, at=AT)
            store.append("b", "tick", {"n": n}, at=AT)
            if n % 2:
                store.append("b", "extra", {"n": n}, at=AT)
    assert [e.seq for e in store.events("a")] == [1, 2, 3, 4, 5]
    assert [e.seq for e in store.events("b")] == list(range(1, 8))
    assert store.events("a")[0].prev_hash == store.events("b")[0].prev_hash == GENESIS_HASH
    assert store.head("a") == (5, store.events("a")[-1].hash)
    assert store.head("b") == (7, store.events("b")[-1].hash)
    assert store.games() == ["a", "b"]
    assert (store.count("a"), store.count("b"), store.count("c")) == (5, 7, 0)
    assert store.has_game("a") and not store.has_game("c")
    store.verify("a")
    store.verify("b")


def test_empty_game(store):
    assert store.head("none") == (0, GENESIS_HASH)
    assert store.events("none") == []
    assert store.games() == []
    store.verify("none")


def test_exception_inside_transaction_rolls_back(filled):
    head = filled.head("g")
    with pytest.raises(RuntimeError, match="boom"):
        with filled.transaction():
            filled.append("g", "tick", {"n": 7}, at=AT)
            filled.put_secret("g", "seed", "s3cret")
            raise RuntimeError("boom")
    assert filled.count("g") == 6
    assert filled.head("g") == head
    assert filled.get_secret("g", "seed") is None
    with filled.transaction():
        assert filled.append("g", "tick", {"n": 7}, at=AT).seq == 7
    filled.verify("g")


def test_append_outside_transaction_is_refused(store):
    with pytest.raises(StoreError, match=r"append\(\) must run inside store.transaction\(\)"):
        store.append("g", "new", {}, at=AT)
    assert store.count("g") == 0


def test_nested_transaction_is_refused_and_rolls_back_the_outer(store):
    with pytest.raises(StoreError, match="do not nest"):
        with store.transaction():
            store.append("g", "new", {}, at=AT)
            with store.transaction():
                pass
    assert store.count("g") == 0
    with store.transaction():  # the store is usable again afterwards
        store.append("g", "new", {}, at=AT)
    assert store.count("g") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (("", "new", {}), "game must be a non-empty string"),
        (("g", "", {}), "kind must be a non-empty string"),
        (("g", "new", [1]), "data must be a dict"),
        (("g", "new", {"x": 1.5}), "no canonical JSON form.*floats"),
        (("g", "new", {1: "x"}), "no canonical JSON form.*keys must be strings"),
        (("g", "new", {}, "2024-05-01 12:00:00"), "event time must look like"),
    ],
)
def test_bad_appends_are_refused_and_change_nothing(store, args, message):
    with store.transaction():
        with pytest.raises(StoreError, match=message):
            store.append(*args)
    assert store.count("g") == 0


def test_secrets(store):
    assert store.get_secret("g", "seed") is None
    with store.transaction():
        store.put_secret("g", "seed", "abc")
        store.put_secret("g", "salt:ani", "xyz")
    store.put_secret("g", "seed", "def")  # outside a transaction: one autocommitted write
    store.put_secret("other", "seed", "zzz")
    assert store.get_secret("g", "seed") == "def"
    assert store.secret_names("g") == ["salt:ani", "seed"]
    assert store.get_secret("other", "seed") == "zzz"
    with pytest.raises(StoreError, match="must be a string"):
        store.put_secret("g", "seed", b"bytes")


def test_snapshots(filled):
    assert filled.latest_snapshot("g") is None
    filled.put_snapshot("g", 2, '{"round":1}')
    filled.put_snapshot("g", 5, '{"round":2}')
    filled.put_snapshot("g", 3, '{"round":1.5}')
    assert filled.latest_snapshot("g") == (5, '{"round":2}')
    filled.put_snapshot("g", 5, '{"round":3}')
    assert filled.latest_snapshot("g") == (5, '{"round":3}')
    with pytest.raises(StoreError, match="at event 7: the log has 6"):
        filled.put_snapshot("g", 7, "{}")
    assert filled.latest_snapshot("other") is None


def test_file_store_persists_and_creates_directories(db_path):
    with Store(db_path) as store:
        with store.transaction():
            store.append("g", "new", {"x": 1}, at=AT)
            store.put_secret("g", "seed", "s")
        assert store.integrity_check() == "ok"
    assert db_path.exists()
    with Store(db_path) as store:
        assert [e.data for e in store.events("g")] == [{"x": 1}]
        assert store.get_secret("g", "seed") == "s"
        store.verify("g")


def test_unreadable_body_is_reported_by_events(filled):
    filled.db.execute("update events set body = 'not json' where seq = 3")
    with pytest.raises(StoreError, match="event 3 of game 'g' has an unreadable body"):
        filled.events("g")


def test_writer_waits_for_the_lock_then_gives_up_with_a_store_error(db_path):
    with Store(db_path) as holder, Store(db_path, busy_timeout_ms=200) as waiter:
        with holder.transaction():
            holder.append("g", "new", {}, at=AT)
            with pytest.raises(StoreError, match="the database is busy"):
                with waiter.transaction():
                    waiter.append("g", "late", {}, at=AT)
            # Readers are not blocked by the writer (WAL), and do not see its open work.
            assert waiter.count("g") == 0
        assert waiter.count("g") == 1
        with waiter.transaction():
            assert waiter.append("g", "late", {}, at=AT).seq == 2
