"""Snapshots are a cache of the replay: loading from one equals a fresh replay, and audit
notices a snapshot that disagrees with the log."""

import json

import pytest

from pbem.protocol import commands
from pbem.store import audit
from pbem.render.demo import play_bots
from pbem.protocol.session import Session
from pbem.store import Store


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("snap") / "games.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex", "frank"], {}, start=True)
    play_bots(store, "g", "snapshot-test")
    return store


def fresh(store, upto=None):
    seed = bytes.fromhex(store.get_secret("g", commands.SEED))
    events = store.events("g")
    return Session.replay("g", events[:upto] if upto else events, seed)


def test_loading_from_the_snapshot_equals_a_fresh_replay(finished):
    assert finished.latest_snapshot("g")[0] == finished.head("g")[0]
    assert commands.load(finished, "g").to_json() == fresh(finished).to_json()


def test_a_snapshot_behind_the_head_is_brought_forward(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, start=True)
    seq, text = store.latest_snapshot("g")
    session = commands.load(store, "g")
    step = session.sealed
    sealed = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    commands.commit(store, "g", "ani", sealed["commitment"])
    store.put_snapshot("g", seq, text)  # an old snapshot: newest is now behind... put it back
    store.db.execute("delete from snapshots where game = 'g' and seq > ?", [seq])
    loaded = commands.load(store, "g")
    assert loaded.to_json() == fresh(store).to_json()
    assert "ani" in loaded.sealed.commits and step.round == loaded.sealed.round


def test_audit_finds_a_snapshot_that_disagrees(finished):
    assert audit.audit_store(finished, "g")["ok"]
    seq, text = finished.latest_snapshot("g")
    data = json.loads(text)
    data["state"]["boards"][0]["boat"] = 1 if data["state"]["boards"][0]["boat"] != 1 else 2
    finished.put_snapshot("g", seq, json.dumps(data))
    report = audit.audit_store(finished, "g")
    assert not report["ok"] and report["bad_seq"] == seq
    assert "snapshot differs" in report["problem"]
    finished.put_snapshot("g", seq, text)
    assert audit.audit_store(finished, "g")["ok"]
