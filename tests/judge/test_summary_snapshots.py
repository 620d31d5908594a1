"""A round's public summary is replayed from the snapshot kept before that round began, not
from the first event. The snapshots are a cache: the text is the one a full replay gives,
dropping every snapshot changes nothing but speed, and audit checks each kept snapshot."""

from __future__ import annotations

import json

import pytest

from pbem.mail import addresses, letters
from pbem.protocol.loading import SEED, held_source
from pbem.render import record, summary
from pbem.render.demo import play_bots
from pbem.store import Store, audit
from pbem.store.snapshots import snapshot_digest

AT = "2030-01-01T10:00:00Z"
PLAYERS = {"tortuga": ["ani", "alex", "frank"], "tortuga1667": ["ani", "alex", "frank", "lothar", "mary"]}


def full_replay(store, game: str, spec: dict) -> tuple[str, str]:
    """What a summary row showed before snapshots were kept: the log up to its head, replayed."""
    events = store.events(game)[: spec["upto"]]
    secret = store.get_secret(game, SEED)
    rec = record.build(game, events, bytes.fromhex(secret), held_source(store, game))
    round_ = None if spec["what"] == "result" else spec["round"]
    return summary.render_public(rec, round_, "text")[1], summary.render_public(rec, round_, "html")[1]


@pytest.fixture(scope="module", params=sorted(PLAYERS))
def played(request, tmp_path_factory):
    game_type = request.param
    store = Store(tmp_path_factory.mktemp("summaries") / "judge.db")
    players = PLAYERS[game_type]
    addresses.create_game(store, "g", game_type, players, {}, {p: f"{p}@example.org" for p in players},
                          "table@lists.example.org", at=AT, start=True)
    play_bots(store, "g", f"snapshots/{game_type}", at=AT)
    return store, summary_specs(store, "g")


def summary_specs(store, game: str) -> list[dict]:
    """What each queued summary names (a message queued as what to render: its parts)."""
    specs = []
    for (text,) in store.conn.execute("select render from outbox where game = ? and render is not null "
                                      "order by id", [game]):
        for part in json.loads(text)["parts"]:
            if "spec" in part and part["spec"] not in specs:
                specs.append(part["spec"])
    return specs


def test_every_summary_reads_as_a_full_replay_does(played):
    store, specs = played
    rounds = [s for s in specs if s["what"] == "summary"]
    assert len(rounds) >= 3 and any(s["what"] == "result" for s in specs)
    kept = store.conn.execute("select count(*) from snapshots where game = 'g'").fetchone()[0]
    assert kept >= 3, "the last snapshot of each finished round is kept"
    for spec in rounds:
        assert letters.materialize(store, "g", json.dumps(spec)) == (*full_replay(store, "g", spec), []), spec


def test_a_later_round_starts_from_a_snapshot_not_the_first_event(played, monkeypatch):
    store, specs = played
    spec = [s for s in specs if s["what"] == "summary"][-1]
    seen = []
    real = store.events

    def events(game, after=0, upto=None):
        seen.append(after)
        return real(game, after, upto)
    monkeypatch.setattr(store, "events", events)
    letters.materialize(store, "g", json.dumps(spec))
    assert seen and min(seen) > 0


def test_without_snapshots_every_summary_is_the_same(played, tmp_path):
    store, specs = played
    copy = tmp_path / "copy.db"
    store.conn.execute("vacuum into ?", [str(copy)])
    bare = Store(copy)
    bare.conn.execute("delete from snapshots")
    for spec in specs:
        assert letters.materialize(bare, "g", json.dumps(spec)) == letters.materialize(store, "g", json.dumps(spec))
    assert audit.audit_store(bare, "g")["ok"]


def test_audit_checks_every_kept_snapshot(played, tmp_path):
    store, _specs = played
    report = audit.audit_store(store, "g")
    assert report["ok"] and report["snapshot"] == store.head("g")[0]
    copy = tmp_path / "tampered.db"
    store.conn.execute("vacuum into ?", [str(copy)])
    tampered = Store(copy)
    seqs = [seq for (seq,) in tampered.conn.execute("select seq from snapshots where game = 'g' order by seq")]
    seq, text = tampered.conn.execute("select seq, state from snapshots where game = 'g' and seq = ?",
                                      [seqs[0]]).fetchone()
    assert seq < seqs[-1], "an older snapshot, not the newest"
    data = json.loads(text)
    data["last_at"] = "2000-01-01T00:00:00Z"  # a cache that no longer agrees with the log
    changed = json.dumps(data)
    # with a digest that fits: only a replay can tell
    tampered.conn.execute("update snapshots set state = ?, digest = ? where game = 'g' and seq = ?",
                          [changed, snapshot_digest("g", seq, tampered.hash_at("g", seq), changed), seq])
    report = audit.audit_store(tampered, "g")
    assert not report["ok"] and report["bad_seq"] == seq and "snapshot differs" in report["problem"]
    tampered.conn.execute("update snapshots set state = 'x' where game = 'g' and seq = ?", [seq])
    report = audit.audit_store(tampered, "g")  # and one changed without its digest
    assert not report["ok"] and report["bad_seq"] == seq and "changed after it was written" in report["problem"]


def test_a_summary_going_on_from_the_one_before_reads_as_its_own_replay(played):
    """``pbem mail send`` keeps the replay of the last summary it rendered and goes on from it
    with the newer events alone: at every event of every round, the same bytes as a replay of
    that summary alone, also when a head goes back or the round changes."""
    store, specs = played
    rounds = [s for s in specs if s["what"] == "summary"]
    last = rounds[-1]["upto"]
    heads = []
    for spec, following in zip(rounds, rounds[1:] + [None]):
        end = following["upto"] if following else last
        heads += [(spec["round"], upto) for upto in range(spec["upto"], end + 1)]
    heads += [(rounds[1]["round"], rounds[1]["upto"]), (rounds[0]["round"], rounds[0]["upto"] + 1)]  # back again
    kept: dict = {}
    for round_, upto in heads:
        head = store.hash_at("g", upto)
        going_on = record.for_round(store, "g", round_, upto, head, kept)
        texts = [summary.render_public(going_on, round_, fmt)[1] for fmt in ("text", "html")]
        alone = record.for_round(store, "g", round_, upto, head)
        assert texts == [summary.render_public(alone, round_, fmt)[1] for fmt in ("text", "html")], (round_, upto)
    assert len(heads) > 20
