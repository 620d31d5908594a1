"""A store keeps each game's session (and the chain ``damage`` passed) across its own
transactions, so a long-running judge reads a game once, not at every write. What it keeps
is dropped when another connection commits, when a transaction or savepoint is undone, and
when a row it rests on is changed through its own connection in a way pbem never does
(raw SQL, even inside one of its own transactions): the next write reads the file afresh."""

from __future__ import annotations

import sqlite3

import pytest

from pbem.protocol import commands, loading
from pbem.protocol.errors import Damaged
from pbem.store import Store
from pbem.store.audit import audit_store

AT = "2030-01-01T10:00:00Z"
PLAYERS = ["ani", "bo", "cy", "dee", "eve"]


def _step(store, name: str, bots: dict) -> None:
    """One write (a decision, or one player's commit or reveal), as a bot plays it."""
    session = loading.load(store, name)
    step = session.sealed
    if step is not None:
        owes = step.owes_commit()
        if owes:
            player = owes[0]
            sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
            store.info = getattr(store, "info", {})
            store.info[player] = sealed
            commands.commit(store, name, player, sealed["commitment"], (sealed["round"], sealed["step"]), at=AT)
            return
        player = step.owes_reveal()[0]
        sealed = store.info.pop(player)
        commands.reveal(store, name, player, sealed["choice"], sealed["salt"], at=AT)
        return
    request = session.pending()[0]
    commands.decide(store, name, request.player, bots[request.player].choose(session.state, request.player,
                                                                             request.kind), at=AT)


@pytest.fixture
def game(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga1667", PLAYERS, {}, start=True, at=AT)
    session = loading.load(store, "g")
    bots = {p: session.rules.bot(f"kept/{p}", "random") for p in session.players}
    return store, bots


def _fresh(path) -> dict:
    """The game as another process reads it: replayed from the log alone."""
    other = Store(path)
    with other.transaction():
        other.conn.execute("delete from snapshots")
    session = loading.load(other, "g")
    other.close()
    return session.to_json()


def test_the_session_is_kept_across_our_own_transactions_and_equals_a_replay(game):
    store, bots = game
    _step(store, "g", bots)
    kept = store.sessions["g"]
    for _ in range(12):
        _step(store, "g", bots)
        assert store.sessions["g"] is kept  # read once, carried from write to write
    assert kept.seq == store.head("g")[0] and store._checked["g"] == store.head("g")
    assert kept.to_json() == _fresh(store.path)
    assert audit_store(store, "g")["ok"]


def test_a_commit_by_another_connection_makes_the_store_read_the_game_again(game):
    store, bots = game
    _step(store, "g", bots)
    kept = store.sessions["g"]
    other = sqlite3.connect(store.path)
    with other:
        other.execute("insert into secrets (game, name, value) values ('other', 'note', 'by hand')")
    other.close()
    _step(store, "g", bots)
    assert store.sessions["g"] is not kept
    assert store.sessions["g"].to_json() == _fresh(store.path)


@pytest.mark.parametrize("change, found", [
    ("update events set body = 'x' where game = 'g' and seq = 2", "event 2: hash does not match"),
    ("delete from events where game = 'g' and seq = (select max(seq) from events where game = 'g')",
     "missing .the log ends at event 4, but an earlier write checked it up to event 5: the log was cut"),
    ("update secrets set value = '{}' where game = 'g' and name = 'server_seed'".format("00" * 32),
     "does not match the published seed hash"),
    ("delete from secrets where game = 'g' and name = 'server_seed'", "server seed of this game is missing"),
    ("insert into events (game, seq, kind, at, body, prev_hash, hash) select 'g', seq + 1, 'decide', at, '{}', "
     "hash, 'abc' from events where game = 'g' order by seq desc limit 1", "event 6: hash does not match"),
])
def test_a_change_by_hand_inside_our_own_transaction_is_found_before_the_next_write(game, change, found):
    store, bots = game
    for _ in range(3):
        _step(store, "g", bots)
    assert store.sessions and store._checked
    with store.transaction():
        store.conn.execute(change)
        if not change.startswith("insert"):
            assert store.sessions == {} and store._checked == {}  # forgotten at once
    with pytest.raises(Damaged, match=found):
        commands.decide(store, "g", "ani", "anything", at=AT)


def test_a_snapshot_deleted_or_changed_by_hand_is_noticed(game):
    store, bots = game
    for _ in range(3):
        _step(store, "g", bots)
    with store.transaction():
        store.conn.execute("update snapshots set state = replace(state, '\"seq\"', '\"seq\" ') where game = 'g'")
    assert store.sessions == {}
    with pytest.raises(Damaged, match="changed after it was written"):
        commands.decide(store, "g", "ani", "anything", at=AT)
    with store.transaction():
        store.conn.execute("delete from snapshots where game = 'g'")
    _step(store, "g", bots)  # replayed from the log
    assert store.sessions["g"].to_json() == _fresh(store.path)


def test_our_own_snapshot_writes_and_secrets_forget_nothing(game):
    store, bots = game
    _step(store, "g", bots)
    kept = store.sessions["g"]
    with store.transaction():
        store.put_secret("g", "held/9/9/ani", "{}")
        store.conn.execute("delete from secrets where name = 'held/9/9/ani'")
    _step(store, "g", bots)
    assert store.sessions["g"] is kept


def test_a_store_keeps_the_sessions_of_the_games_it_read_last(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "KEPT_SESSIONS", 2)
    store = Store(tmp_path / "g.db")
    for name in ("a", "b", "c"):
        commands.create_game(store, name, "tortuga1667", PLAYERS, {}, start=True, at=AT)
    assert list(store.sessions) == ["b", "c"]
    with store.transaction():
        loading.load(store, "a")
    assert list(store.sessions) == ["c", "a"]
    with store.transaction():
        loading.load(store, "c")
    assert list(store.sessions) == ["a", "c"]



def test_a_store_nobody_closes_lets_go_of_its_file_when_dropped(tmp_path):
    """The watch's triggers call back into the store through a weak reference. A strong one
    (the connection holding a function that holds the store) is a cycle the collector cannot
    see through, so a store dropped without close() kept its database open for good: a
    full test run once ran out of file descriptors this way."""
    import gc
    import os

    def open_files():
        return sum(1 for fd in os.listdir("/proc/self/fd")
                   if os.path.realpath(f"/proc/self/fd/{fd}").startswith(str(tmp_path)))

    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga1667", PLAYERS, {}, start=True, at=AT)
    assert store._watching and open_files() > 0
    del store
    gc.collect()
    assert open_files() == 0
