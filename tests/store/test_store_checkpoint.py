"""The checkpoint of a game's chain (pbem.store.damage): a new process checks the events after
the last one an earlier write checked, not the whole log, and still refuses to write on a
damaged log: an event changed after the checkpoint, a checkpoint that does not match its
event, a cut log; an event changed before it through SQLite makes it check the whole chain."""

from __future__ import annotations

import sqlite3

import pytest

from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.store import Store
from pbem.store.damage import start_of_check

AT = "2024-05-01T12:00:00Z"


def write(path, *items) -> None:
    """One write as a new process makes it: check, then append."""
    store = Store(path)
    with store.transaction():
        assert store.damage("g") is None
        for item in items:
            store.append("g", "note", {"i": item}, at=AT)
    store.close()


def fresh_damage(path):
    """``damage`` as the next process sees it, inside its writing transaction (rolled back)."""
    store = Store(path)
    try:
        with store.transaction():
            found = store.damage("g")
            raise LookupError
    except LookupError:
        return found
    finally:
        store.close()


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "g.db"
    write(path, 0, 1, 2, 3)  # events 1-4; the checkpoint is event 4
    write(path, 4, 5)  # events 5-6; the checkpoint is event 6
    return path


def raw(path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def checkpoint(path):
    return raw(path).execute("select checked, checked_hash, recheck from game_heads where game = 'g'").fetchone()


def test_each_write_moves_the_checkpoint_to_the_head_and_the_next_check_starts_there(path):
    store = Store(path)
    assert checkpoint(path) == (6, store.head("g")[1], 0)
    after, prev, mark = start_of_check(store.conn, "g")
    assert (after, prev, mark) == (5, None, store.head("g"))  # the checkpoint's event, then the tail
    assert fresh_damage(path) is None


def test_an_event_added_after_the_checkpoint_with_a_bad_hash_is_refused(path):
    store = Store(path)
    seq, head = store.head("g")
    body = '{"at":"2024-05-01T12:00:00Z","data":{"i":6},"game":"g","kind":"note","seq":7}'
    raw(path).execute("insert into events values ('g', 7, 'note', ?, ?, ?, ?)", [AT, body, head, "0" * 64])
    assert checkpoint(path)[2] == 0  # a row above the checkpoint: the fast check sees it anyway
    assert fresh_damage(path) == (7, "hash does not match its contents (stored 00000000…, computed "
                                     f"{event_hash(head, {'game': 'g', 'seq': 7, 'kind': 'note', 'at': AT, 'data': {'i': 6}})[:8]}…)")


def test_an_event_changed_after_the_checkpoint_is_refused_even_by_the_fast_check(path):
    write(path)  # nothing new: the checkpoint stays at 6
    store = Store(path)
    with store.transaction():  # two events written without the check, so past the checkpoint
        store.append("g", "note", {"i": 6}, at=AT)
        store.append("g", "note", {"i": 7}, at=AT)
    conn = raw(path)
    conn.execute("update events set body = replace(body, '\"i\":6', '\"i\":9') where seq = 7")
    assert checkpoint(path)[2] == 1
    assert fresh_damage(path)[0] == 7  # the whole chain was checked
    conn.execute("update game_heads set recheck = 0")  # the flag removed too: the tail is still checked
    assert start_of_check(store.conn, "g")[0] == 5
    assert fresh_damage(path)[0] == 7


def test_a_checkpoint_that_does_not_match_its_event_is_refused(path):
    conn = raw(path)
    conn.execute("update game_heads set checked_hash = ?", ["ab" * 32])
    found = fresh_damage(path)
    assert found[0] == 6 and "is not the one an earlier write checked there (abababab…)" in found[1]


def test_the_checkpoints_event_changed_is_refused_by_the_fast_check(path):
    conn = raw(path)
    conn.execute("update events set body = replace(body, '\"i\":5', '\"i\":8') where seq = 6")
    conn.execute("update game_heads set recheck = 0")
    found = fresh_damage(path)
    assert found[0] == 6 and found[1].startswith("hash does not match its contents")


@pytest.mark.parametrize("fast", [False, True], ids=["as-flagged", "flag-removed"])
def test_a_cut_log_is_refused(path, fast):
    conn = raw(path)
    conn.execute("delete from events where seq > 4")  # a valid chain of 4 events, cut short of 6
    if fast:
        conn.execute("update game_heads set recheck = 0")
    assert fresh_damage(path) == (5, "missing (the log ends at event 4, but an earlier write checked it "
                                     "up to event 6: the log was cut)")
    Store(path).verify("g")  # the chain alone is sound: only the checkpoint shows the cut


def test_a_log_with_every_event_deleted_is_refused(path):
    raw(path).execute("delete from events")
    assert fresh_damage(path)[1].startswith("missing (the log has no events, but an earlier write")


def test_an_event_changed_before_the_checkpoint_makes_the_next_write_check_the_whole_chain(path):
    raw(path).execute("update events set body = replace(body, '\"i\":1', '\"i\":9') where seq = 2")
    assert checkpoint(path)[2] == 1
    assert fresh_damage(path)[0] == 2


def test_a_consistent_rewrite_before_the_checkpoint_is_refused(path):
    """Every hash recomputed after a change at event 2: a valid chain, but not the one checked."""
    store = Store(path)
    events = store.events("g")
    conn = raw(path)
    prev = GENESIS_HASH
    for event in events:
        data = {"i": 9} if event.seq == 2 else event.data
        body = {"game": "g", "seq": event.seq, "kind": event.kind, "at": event.at, "data": data}
        digest = event_hash(prev, body)
        from pbem.protocol.canonical import canonical_text
        conn.execute("update events set body = ?, prev_hash = ?, hash = ? where seq = ?",
                     [canonical_text(body), prev, digest, event.seq])
        prev = digest
    store.verify("g")  # a sound chain
    found = fresh_damage(path)
    assert found[0] == 6 and "the event was changed after it was checked" in found[1]


def test_an_event_changed_with_the_triggers_dropped_is_found_through_the_schema(path):
    conn = raw(path)
    for name in ("insert", "update", "delete"):
        conn.execute(f"drop trigger chain_checks_{name}")
    conn.execute("update events set body = replace(body, '\"i\":1', '\"i\":9') where seq = 2")
    assert checkpoint(path)[2] == 0
    assert fresh_damage(path)[0] == 2


def test_what_only_the_audit_finds_an_edit_that_bypasses_sqlite(path):
    """The limit docs/protocol.md §8 states: an event before the checkpoint changed with the
    triggers dropped and the schema version put back (as a byte edit of the file would) is
    not seen by the check before a write; the audit's check of the whole chain finds it."""
    conn = raw(path)
    version = conn.execute("pragma schema_version").fetchone()[0]
    for name in ("insert", "update", "delete"):
        conn.execute(f"drop trigger chain_checks_{name}")
    conn.execute("update events set body = replace(body, '\"i\":1', '\"i\":9') where seq = 2")
    conn.execute("pragma writable_schema = on")
    conn.execute(f"pragma schema_version = {version}")
    conn.close()
    assert fresh_damage(path) is None
    store = Store(path)
    with pytest.raises(Exception) as found:
        store.verify("g")
    assert found.value.seq == 2


def test_a_write_after_a_full_check_clears_the_flag(path):
    conn = raw(path)
    conn.execute("update events set at = at where seq = 2")  # touched, not changed
    assert checkpoint(path)[2] == 1
    write(path, 6)
    assert checkpoint(path)[:1] == (7,) and checkpoint(path)[2] == 0


def test_a_refused_command_leaves_the_checkpoint_as_it_was(path):
    before = checkpoint(path)
    store = Store(path)
    with pytest.raises(RuntimeError):
        with store.transaction():
            assert store.damage("g") is None
            store.append("g", "note", {"i": 6}, at=AT)
            raise RuntimeError("refused")
    assert checkpoint(path) == before and store.head("g")[0] == 6
