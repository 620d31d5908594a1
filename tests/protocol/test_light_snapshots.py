"""Light snapshots: the status report is cached at every event, the whole state every
``FULL_SNAPSHOT_EVERY`` events. A game is loaded from the newest full snapshot and at most
that many events, to the same session as a full replay; the audit checks both kinds; a
changed light snapshot is found; dropping either kind changes nothing but speed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pbem.cli.game import _cached_status
from pbem.protocol import commands, loading, reports, writing
from pbem.protocol.cache import FULL_SNAPSHOT_EVERY
from pbem.protocol.errors import Damaged
from pbem.protocol.session import Session
from pbem.protocol.snapshot import SNAPSHOT_VERSION
from pbem.store import Store, audit
from pbem.store.snapshots import snapshot_digest

AT = "2024-05-01T12:00:00Z"
PLAYERS = {"tortuga": ["ani", "alex", "frank"], "tortuga1667": ["ani", "bo", "cy", "dee", "eve"]}


def fresh(store, game="g") -> Session:
    seed = bytes.fromhex(store.get_secret(game, loading.SEED))
    return Session.replay(game, store.events(game), seed, held=loading.held_source(store, game))


def commands_of_a_game(store, game_type: str, seed: str):
    """Play a whole bot game one write at a time; yield after each write."""
    from pbem.games import get
    commands.create_game(store, "g", game_type, PLAYERS[game_type], {}, start=True, at=AT)
    yield
    session = loading.load(store, "g")
    bots = {p: get(game_type).bot(f"{seed}/{p}", "random") for p in session.players}
    while not session.finished:
        step = session.sealed
        if step is not None:
            held = {}
            for player in step.owes_commit():
                held[player] = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
                session = commands.commit(store, "g", player, held[player]["commitment"], at=AT)
                yield
            for player, sealed in held.items():
                session = commands.reveal(store, "g", player, sealed["choice"], sealed["salt"], at=AT)
                yield
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            session = commands.decide(store, "g", request.player, choice, at=AT)
            yield


def rows(store, game="g") -> list[tuple[int, int, int | None]]:
    return store.conn.execute("select seq, full, round from snapshots where game = ? order by seq", [game]).fetchall()


@pytest.mark.parametrize("game_type", sorted(PLAYERS))
def test_loaded_from_its_snapshots_a_game_is_its_full_replay_at_every_event(tmp_path, game_type):
    """After every write another connection (which keeps nothing) loads the game: the same
    session as a replay of the whole log, from the newest full snapshot and fewer than
    FULL_SNAPSHOT_EVERY events; its cached status is the replay's; at most one light
    snapshot, the newest, at the head."""
    path = tmp_path / "g.db"
    store = Store(path)
    writes = lights = 0
    for _ in commands_of_a_game(store, game_type, "light"):
        writes += 1
        head = store.head("g")
        kept = rows(store)
        assert kept[-1][0] == head[0], "a snapshot at the head"
        assert [seq for seq, full, _round in kept if not full] in ([], [head[0]]), kept
        lights += not kept[-1][1]
        newest_full = max(seq for seq, full, _round in kept if full)
        assert head[0] - newest_full < FULL_SNAPSHOT_EVERY, kept
        other = Store(path)
        read_after = []
        real = other.events
        other.events = lambda game, after=0, upto=None: (read_after.append(after), real(game, after, upto))[1]
        loaded = loading.load(other, "g", for_write=True)
        replayed = fresh(store)
        assert loaded.to_json() == replayed.to_json()
        assert read_after == [newest_full], "the events after the newest full snapshot, no more"
        assert _cached_status(other, "g") == json.loads(json.dumps(reports.status(replayed, head)))
        other.close()
    assert writes > 20 and lights > writes / 2
    report = audit.audit_store(store, "g")
    assert report["ok"] and report["snapshot"] == store.head("g")[0], report


def test_the_last_full_snapshot_of_each_earlier_round_is_kept(tmp_path):
    store = Store(tmp_path / "g.db")
    for _ in commands_of_a_game(store, "tortuga1667", "rounds"):
        kept = rows(store)
        full = [(seq, round_) for seq, kind, round_ in kept if kind]
        rounds = [round_ for _seq, round_ in full]
        assert len(rounds) == len(set(rounds)), f"one full snapshot per round: {kept}"
        assert store.snapshot_before_round("g", 10**6, store.head("g")[0]).full
    assert len(full) >= 4


@pytest.fixture
def played(tmp_path):
    store = Store(tmp_path / "g.db")
    for count, _ in enumerate(commands_of_a_game(store, "tortuga1667", "tamper")):
        if count == 12:
            break
    seq, full, _round = rows(store)[-1]
    assert not full, "the head snapshot is a light one"
    return store, seq


def test_a_light_snapshot_with_another_status_is_found_by_the_audit(played):
    """A changed status with a digest that fits: only the replay can tell."""
    store, seq = played
    text = store.latest_snapshot("g")[1]
    data = json.loads(text)
    assert data["v"] == SNAPSHOT_VERSION and data["light"] is True and set(data) == {"v", "light", "status"}
    data["status"]["phase"] = "over"
    changed = json.dumps(data)
    store.conn.execute("update snapshots set state = ?, digest = ? where game = 'g' and seq = ?",
                       [changed, snapshot_digest("g", seq, store.hash_at("g", seq), changed), seq])
    report = audit.audit_store(store, "g")
    assert not report["ok"] and report["bad_seq"] == seq and "snapshot differs" in report["problem"], report


def test_a_light_snapshot_changed_without_its_digest_stops_reads_and_writes(played):
    store, seq = played
    text = store.latest_snapshot("g")[1]
    store.conn.execute("update snapshots set state = ? where game = 'g' and seq = ?",
                       [text.replace('"phase":"play"', '"phase":"over"'), seq])
    assert _cached_status(store, "g") is None
    with pytest.raises(Damaged, match=f"event {seq}: the cached snapshot"):
        loading.load(store, "g", for_write=True)
    report = audit.audit_store(store, "g")
    assert not report["ok"] and report["bad_seq"] == seq and "changed after it was written" in report["problem"]


@pytest.mark.parametrize("text", ['{"v":3,"light":true}', '{"v":3,"light":true,"status":{},"meta":{}}',
                                  '{"v":3,"light":1,"status":{}}'])
def test_a_light_snapshot_that_is_not_one_is_damage(played, text):
    """Written through the store, so its digest fits: its shape is what is wrong."""
    store, seq = played
    store.put_snapshot("g", seq, text, full=False)
    assert _cached_status(store, "g") is None
    with pytest.raises(Damaged, match=f"event {seq}: the cached snapshot cannot be read"):
        loading.load(store, "g", for_write=True)
    report = audit.audit_store(store, "g")
    assert not report["ok"] and report["bad_seq"] == seq and "cannot be read" in report["problem"], report


def test_a_snapshot_marked_with_the_wrong_kind_is_found(played):
    store, seq = played
    store.conn.execute("update snapshots set full = 1 where game = 'g' and seq = ?", [seq])
    with pytest.raises(Damaged, match=f"event {seq}: the cached snapshot cannot be read"):
        loading.load(store, "g", for_write=True)
    report = audit.audit_store(store, "g")
    assert not report["ok"] and report["bad_seq"] == seq and "snapshot differs" in report["problem"], report
    store.conn.execute("update snapshots set full = 0 where game = 'g'")  # every one light now
    report = audit.audit_store(store, "g")
    assert not report["ok"] and "cannot be read" in report["problem"], report


def test_a_summary_never_starts_from_a_light_snapshot_marked_full(played):
    """The kind is not under the digest: a light row marked full has a digest that fits,
    and a round's record is then replayed without it, to the same record (not a KeyError
    out of the summary's mail)."""
    from pbem.render import record
    store, seq = played
    round_ = rows(store)[-1][2]
    head = store.head("g")
    copy = Path(store.path).parent / "bare.db"
    store.conn.execute("vacuum into ?", [str(copy)])
    bare = Store(copy)
    bare.conn.execute("delete from snapshots")
    plain = lambda rec: (dataclasses.replace(rec, session=None), rec.session.to_json())  # noqa: E731
    expected = plain(record.for_round(bare, "g", round_ + 1, *head))
    store.conn.execute("update snapshots set full = 1 where game = 'g' and seq = ?", [seq])
    assert store.snapshot_before_round("g", round_ + 1, head[0]).seq == seq
    assert plain(record.for_round(store, "g", round_ + 1, *head)) == expected


@pytest.mark.parametrize("drop", ["full = 1", "full = 0", "1"])
def test_dropping_snapshots_changes_nothing_but_speed(played, drop):
    store, seq = played
    before = (loading.load(Store(store.path), "g").to_json(), _cached_status(store, "g"))
    store.conn.execute(f"delete from snapshots where {drop}")
    other = Store(store.path)
    assert loading.load(other, "g", for_write=True).to_json() == before[0] == fresh(store).to_json()
    assert _cached_status(other, "g") in (before[1], None)  # None: read the long way
    assert audit.audit_store(other, "g")["ok"]
    session = loading.load(other, "g")
    request = session.pending()[0]
    if request.sealed:
        sealed = commands.seal(session, request.player, request.default)
        commands.commit(other, "g", request.player, sealed["commitment"], at=AT)
    else:
        commands.decide(other, "g", request.player, request.default, at=AT)
    assert loading.load(Store(store.path), "g").to_json() == fresh(store).to_json()
    assert audit.audit_store(other, "g")["ok"]


def test_a_write_that_adds_no_event_keeps_the_full_snapshot_at_the_head(tmp_path):
    """A command that records nothing new (e.g. the same decision again) writes the
    snapshot at the head again: a full one there stays full, a light one light."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga1667", PLAYERS["tortuga1667"], {}, start=True, at=AT)
    assert rows(store) == [(2, 1, 1)]
    writing.write(store, "g", lambda session: [], AT)
    assert rows(store) == [(2, 1, 1)]
    session = loading.load(store, "g")
    request = session.pending()[0]
    commands.decide(store, "g", request.player, request.default, at=AT)
    assert [full for _seq, full, _round in rows(store)] == [1, 0]
    writing.write(store, "g", lambda session: [], AT)
    assert [full for _seq, full, _round in rows(store)] == [1, 0]
    assert audit.audit_store(store, "g")["ok"]


def test_snapshots_written_before_light_ones_existed_are_full(tmp_path):
    """A database of the version before m022: its snapshots held the whole state, and after
    the migration the game is loaded from them."""
    path = tmp_path / "old.db"
    store = Store(path)
    for count, _ in enumerate(commands_of_a_game(store, "tortuga", "old")):
        if count == 3:
            break
    store.close()
    import sqlite3
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("delete from snapshots where full = 0")
        conn.execute("alter table snapshots drop column full")
        conn.execute("delete from _migrations where name = 'm022_light_snapshots'")
    conn.close()
    store = Store(path)
    assert [full for _seq, full, _round in rows(store)] == [1]
    seq = rows(store)[0][0]
    other_events = []
    real = store.events
    store.events = lambda game, after=0, upto=None: (other_events.append(after), real(game, after, upto))[1]
    loaded = loading.load(store, "g")
    assert other_events == [seq]
    assert loaded.to_json() == fresh(store).to_json() and audit.audit_store(store, "g")["ok"]



def test_the_scale_bench_measures_copies_of_games_with_light_snapshots(tmp_path):
    """benchmarks/bench_scale.py copies played games under new names and moves in them: a
    copy must be loaded as its template was (its snapshots' kinds kept, nothing of the
    template's replayed under the copy's name, which draws other dice), or no figure is
    printed at all. Small sizes: this runs the bench, it does not time it."""
    import importlib.util
    import sys
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scale.py"
    spec = importlib.util.spec_from_file_location("bench_scale_under_test", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    folder = tmp_path / "judges"
    assert bench.main(["--games", "6", "--in-play", "2", "--small", "2", "--repeat", "1", "--keep", str(folder)]) == 0
    big = Store(folder / "big.db")
    assert rows(big, "f00002") == rows(Store(folder / "templates.db"), "Tfin2")  # a copy, as it was copied
