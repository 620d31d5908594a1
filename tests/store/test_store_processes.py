"""Crash safety and concurrent writers, with real child processes on a real file."""

from __future__ import annotations

import time

import pytest

from pbem.store import Store

APPEND_FIVE = """
    import sys
    from pbem.store import Store
    store = Store(sys.argv[1])
    with store.transaction():
        for i in range(5):
            store.append("g", "tick", {"i": i})
    print("committed")
"""

WRITER = """
    import os, sys, time
    from pbem.store import Store
    path, worker, go = sys.argv[1], sys.argv[2], sys.argv[3]
    store = Store(path)
    while not os.path.exists(go):  # start together, so the writers really contend
        time.sleep(0.005)
    for i in range(200):
        with store.transaction():
            store.append("g", "tick", {"worker": worker, "i": i})
"""


@pytest.mark.parametrize(
    "point, survives",
    [
        ("append:before-insert", False),
        ("append:after-insert", False),
        ("commit:before", False),
        ("commit:after", True),
        (None, True),
    ],
)
def test_crash_leaves_all_or_nothing(db_path, run_child, point, survives):
    with Store(db_path) as store:
        with store.transaction():
            store.append("g", "new", {})
            store.append("g", "start", {})
        before = store.head("g")

    child = run_child(APPEND_FIVE, str(db_path), crash_at=point)
    out, err = child.communicate(timeout=30)
    if point is None:
        assert (child.returncode, out) == (0, "committed\n"), err
    else:
        assert (child.returncode, out) == (137, ""), err

    with Store(db_path) as store:
        assert store.integrity_check() == "ok"
        if survives:
            assert store.count("g") == 7
            assert [e.data for e in store.events("g", after=2)] == [{"i": i} for i in range(5)]
        else:
            assert store.count("g") == 2
            assert store.head("g") == before
        store.verify("g")
        with store.transaction():
            after = store.append("g", "again", {})
        assert after.seq == store.count("g")
        store.verify("g")


def test_two_processes_appending_to_one_game(tmp_path, run_child):
    path, go = tmp_path / "shared.db", tmp_path / "go"
    writers = [run_child(WRITER, str(path), name, str(go)) for name in ("w1", "w2")]
    time.sleep(0.3)  # let both open the (new) database and migrate it concurrently
    go.touch()
    for writer in writers:
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err

    with Store(path) as store:
        events = store.events("g")
        assert [e.seq for e in events] == list(range(1, 401))
        for name in ("w1", "w2"):
            # Each writer's own appends stay in its order, none lost or doubled.
            mine = [e.data["i"] for e in events if e.data["worker"] == name]
            assert mine == list(range(200))
        store.verify("g", expected_head=store.head("g"))
        assert store.integrity_check() == "ok"
        assert [row["name"] for row in store.db.query("select name from _migrations")] == [
            "m001_events_and_secrets",
            "m002_indexes",
            "m003_outbox",
            "m004_judge",
        ]
