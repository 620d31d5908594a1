"""Snapshots are a cache of the replay: loading from one equals a fresh replay, and audit
notices a snapshot that disagrees with the log."""

import json

import pytest

from pbem.protocol import commands, loading
from pbem.store import audit
from pbem.render.demo import play_bots
from pbem.protocol.session import Session
from pbem.store import Store
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("snap") / "games.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex", "frank"], {}, start=True, at=AT)
    play_bots(store, "g", "snapshot-test", at=AT)
    return store


def fresh(store, upto=None):
    seed = bytes.fromhex(store.get_secret("g", loading.SEED))
    events = store.events("g")
    return Session.replay("g", events[:upto] if upto else events, seed)


def test_loading_from_the_snapshot_equals_a_fresh_replay(finished):
    assert finished.latest_snapshot("g")[0] == finished.head("g")[0]
    assert loading.load(finished, "g").to_json() == fresh(finished).to_json()


def test_a_snapshot_behind_the_head_is_brought_forward(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, start=True, at=AT)
    seq, text = store.latest_snapshot("g")
    session = loading.load(store, "g")
    step = session.sealed
    sealed = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    commands.commit(store, "g", "ani", sealed["commitment"], at=AT)
    store.put_snapshot("g", seq, text)  # an old snapshot: newest is now behind... put it back
    store.db.execute("delete from snapshots where game = 'g' and seq > ?", [seq])
    loaded = loading.load(store, "g")
    assert loaded.to_json() == fresh(store).to_json()
    assert "ani" in loaded.sealed.commits and step.round == loaded.sealed.round


def test_audit_finds_a_snapshot_that_disagrees(finished):
    assert audit.audit_store(finished, "g")["ok"]
    seq, text, _problem, _full = finished.snapshot("g", full=True)
    data = json.loads(text)
    data["state"]["boards"][0]["boat"] = 1 if data["state"]["boards"][0]["boat"] != 1 else 2
    finished.put_snapshot("g", seq, json.dumps(data))
    report = audit.audit_store(finished, "g")
    assert not report["ok"] and report["bad_seq"] == seq
    assert "snapshot differs" in report["problem"]
    finished.put_snapshot("g", seq, text)
    assert audit.audit_store(finished, "g")["ok"]


def test_a_snapshot_of_another_version_is_never_read(tmp_path):
    """An older layout (v1 kept open times per player and kind) is ignored: the state and
    the status report are rebuilt from the events, never read from it."""
    from pbem.cli.game import _cached_status
    from pbem.protocol.snapshot import SNAPSHOT_VERSION

    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=3600, start=True,
                         at="2024-05-01T12:00:00Z")
    seq, text = store.latest_snapshot("g")
    data = json.loads(text)
    assert data["v"] == SNAPSHOT_VERSION
    data.update(v=1, opened_at=[["ani", "select", "2000-01-01T00:00:00Z"]])
    data["status"]["waiting"] = []
    store.put_snapshot("g", seq, json.dumps(data))
    assert _cached_status(store, "g") is None
    assert loading.load(store, "g").to_json() == fresh(store).to_json()
    assert audit.audit_store(store, "g")["ok"]
    session = loading.load(store, "g")
    sealed = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    commands.commit(store, "g", "ani", sealed["commitment"], at="2024-05-01T12:30:00Z")
    assert json.loads(store.latest_snapshot("g")[1])["v"] == SNAPSHOT_VERSION


def test_in_a_batch_the_head_snapshot_is_written_once_before_commit(tmp_path):
    """Writes inside a caller's transaction (the email judge's batch of mail) leave the
    snapshot to the end of the transaction: one write, of the last state, equal to a fresh
    replay; a write whose savepoint is undone is not snapshotted; audit agrees."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, start=True, at=AT)
    before = store.latest_snapshot("g")[0]
    written = []
    real = store.put_snapshot
    store.put_snapshot = lambda *args, **kwargs: (written.append(args[1]), real(*args, **kwargs))[1]
    with store.transaction():
        session = loading.load(store, "g")
        for player in ("ani", "alex"):
            sealed = commands.seal(session, player, session.rules.default(session.state, player, "select"))
            session = commands.commit(store, "g", player, sealed["commitment"], at=AT)
            assert store.latest_snapshot("g")[0] == before and written == []  # not yet
        with pytest.raises(RuntimeError):
            with store.atomic():  # a write undone: its state is never snapshotted
                commands.nmr(store, "g", "ani", force=True, at=AT)
                raise RuntimeError("undone")
        head = store.head("g")[0]
    assert written == [head] and store.latest_snapshot("g")[0] == head
    assert loading.load(store, "g").to_json() == fresh(store).to_json()
    assert store.head_row("g")[0] == head
    assert audit.audit_store(store, "g")["ok"]
