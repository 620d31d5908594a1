"""``Store.damage`` checks only newer events a second time inside one transaction (the
email judge writes hundreds of times in one), and never trusts what a rollback undid."""

from __future__ import annotations

import pytest

from pbem.store import Store

AT = "2024-05-01T12:00:00Z"


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "g.db")
    with store.transaction():
        for i in range(3):
            store.append("g", "note", {"i": i}, at=AT)
    return store


def test_inside_a_transaction_later_checks_see_new_events_and_pass(store):
    with store.transaction():
        assert store.damage("g") is None
        store.append("g", "note", {"i": 3}, at=AT)
        assert store.damage("g") is None
        assert store._checked["g"][0] == 4


def test_a_savepoint_rolled_back_leaves_no_false_alarm(store):
    with store.transaction():
        assert store.damage("g") is None
        with pytest.raises(RuntimeError):
            with store.atomic():
                store.append("g", "note", {"i": "undone"}, at=AT)
                assert store.damage("g") is None  # the check now covers the undone event
                raise RuntimeError("the message failed")
        store.append("g", "note", {"i": "kept"}, at=AT)
        assert store.damage("g") is None


def test_a_change_made_between_transactions_is_found(store):
    with store.transaction():
        assert store.damage("g") is None
    store.conn.execute("update events set body = replace(body, '\"i\":1', '\"i\":9') where seq = 2")
    with store.transaction():
        assert store.damage("g")[0] == 2


def test_across_our_own_transactions_only_new_events_are_checked_again(store):
    with store.transaction():
        assert store.damage("g") is None
    with store.transaction():
        assert store._checked["g"][0] == 3  # nobody wrote since: what was checked stays checked
        store.append("g", "note", {"i": 3}, at=AT)
        assert store.damage("g") is None and store._checked["g"][0] == 4


def test_a_change_by_another_connection_between_transactions_is_found(store):
    import sqlite3
    with store.transaction():
        assert store.damage("g") is None
    other = sqlite3.connect(store.path)
    with other:
        other.execute("update events set body = replace(body, '\"i\":1', '\"i\":9') where seq = 2")
    other.close()
    with store.transaction():
        assert "g" not in store._checked
        assert store.damage("g")[0] == 2


def test_a_rolled_back_transaction_forgets_what_it_checked(store):
    with pytest.raises(RuntimeError):
        with store.transaction():
            assert store.damage("g") is None
            raise RuntimeError("the command failed")
    assert store._checked == {} and store.sessions == {}
