"""The judge's discretion is in the log (docs/protocol.md §14): signed client seeds in signed
games, and defaults that record the deadline they were judged against, marked forced when
they were not due."""

from __future__ import annotations

import json

import pytest

from pbem.protocol import commands, offline, submissions
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair
from pbem.protocol.times import shift
from pbem.store import Store, audit, export_lines

T0 = "2026-04-01T08:00:00Z"
PLAYERS = ["ani", "alex"]


def rows_of(store, game="g"):
    return [json.loads(line) for line in export_lines(store.events(game))]


def rechain(rows) -> str:
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


@pytest.fixture
def signed(tmp_path):
    store = Store(tmp_path / "g.db")
    keys = {p: generate_keypair() for p in PLAYERS}
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, require_signatures=True,
                         keys={p: pub for p, (_s, pub) in keys.items()}, at=T0)
    return store, keys


def test_a_signed_game_takes_only_signed_client_seeds(signed):
    store, keys = signed
    before = rows_of(store)
    with pytest.raises(Refused, match="client seeds too: ani makes a signed block with pbem client-seed g ani"):
        commands.add_client_seed(store, "g", "ani", "ground offline", at=T0)
    assert rows_of(store) == before  # nothing changed
    block = offline.client_seed_block("g", "ani", "ani's own words", keys["ani"][0])
    done = submissions.submit(store, "g", "> " + block.replace("\n", "\n> "), at=T0)  # quoted in a reply
    assert done[0]["kind"] == "client_seed" and not done[0]["already_recorded"]
    assert submissions.submit(store, "g", block, at=T0)[0]["already_recorded"]
    forged = offline.client_seed_block("g", "ani", "the judge's choice", keys["alex"][0])  # alex's key
    with pytest.raises(Refused, match="signature on ani's client_seed is not valid"):
        submissions.submit(store, "g", forged, at=T0)
    commands.start_game(store, "g", at=T0)
    rows = rows_of(store)
    assert audit.audit_file(rechain(json.loads(json.dumps(rows))))["verdict"] == "INCOMPLETE"
    # the judge strips the signature, or swaps in a seed of its own: the replay refuses either
    seed = next(r for r in rows if r["kind"] == "client_seed")
    for change in ({"signature": None}, {"seed": "ground offline"}):
        altered = json.loads(json.dumps(rows))
        data = altered[seed["seq"] - 1]["data"]
        data.update(change)
        if data["signature"] is None:
            del data["signature"]
        line = audit.audit_file(rechain(altered))["verdict_line"]
        assert line.startswith(f"FAIL: event {seed['seq']}: "), line
        assert ("client seeds too" in line) or ("is not valid for their registered key" in line)


def test_an_old_signed_log_without_a_judge_key_keeps_its_unsigned_client_seeds(signed):
    """Version 1 and 2 logs audit as before: there, client seeds were never signed."""
    store, keys = signed
    rows = rows_of(store)
    del rows[0]["data"]["judge_key"]
    rows.append({"game": "g", "kind": "client_seed", "at": T0, "data": {"player": "ani", "seed": "x"}})
    report = audit.audit_file(rechain(rows))
    assert report["verdict"] == "INCOMPLETE"
    assert report["verdict_line"].endswith("receipts not possible (no judge key in created)")


def _game(tmp_path, deadline):
    store = Store(tmp_path / "d.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, deadline_seconds=deadline, start=True, at=T0)
    return store


def test_nmr_without_a_deadline_needs_force_and_is_logged_forced(tmp_path):
    store = _game(tmp_path, None)
    before = rows_of(store)
    with pytest.raises(Refused, match="game g has no deadline, so ani is not late; use --force"):
        commands.nmr(store, "g", "ani", at=shift(T0, 10 ** 6))
    assert rows_of(store) == before
    commands.nmr(store, "g", "ani", force=True, at=shift(T0, 60))
    last = rows_of(store)[-1]
    assert last["kind"] == "nmr" and last["data"]["forced"] is True and last["data"]["deadline"] is None


def test_nmr_records_the_deadline_and_grace_it_was_judged_against(tmp_path):
    store = _game(tmp_path, 3600)
    with pytest.raises(Refused, match=r"ani's deadline has not passed \(due 2026-04-01T09:00:00Z\)"):
        commands.nmr(store, "g", "ani", at=shift(T0, 1800))
    with pytest.raises(Refused, match=r"due 2026-04-01T09:30:00Z, grace included"):
        commands.nmr(store, "g", "ani", at=shift(T0, 3600), grace=1800)  # due, but within the grace
    commands.nmr(store, "g", "ani", at=shift(T0, 5400), grace=1800)
    commands.nmr(store, "g", "alex", force=True, at=shift(T0, 5400), grace=1800)
    ani, alex = [r for r in rows_of(store) if r["kind"] == "nmr"]
    assert ani["data"] == {"player": "ani", "round": 1, "step": 1, "deadline": "2026-04-01T09:30:00Z"}
    assert alex["data"]["forced"] is True and alex["data"]["deadline"] == "2026-04-01T09:30:00Z"
    commands.reveal_seed(store, "g", force=True, at=shift(T0, 6000))  # the whole replay, with the seed
    rows = rows_of(store)
    assert audit.audit_file(rechain(json.loads(json.dumps(rows))))["verdict"] == "OK"
    # a judge who records an earlier deadline than the log's, or drops the forced mark of a
    # default that was not due, is refused by the replay
    seq = ani["seq"]
    early = json.loads(json.dumps(rows))
    early[seq - 1]["data"]["deadline"] = "2026-04-01T08:30:00Z"
    assert audit.audit_file(rechain(early))["verdict_line"] == (
        f"FAIL: event {seq}: the recorded deadline 2026-04-01T08:30:00Z is earlier than ani's deadline "
        f"2026-04-01T09:00:00Z (the request opened {T0})")
    unforced = json.loads(json.dumps(rows))
    unforced[seq - 1]["at"] = shift(T0, 3000)
    for row in unforced[seq:]:
        row["at"] = max(row["at"], unforced[seq - 1]["at"])
    assert audit.audit_file(rechain(unforced))["verdict_line"] == (
        f"FAIL: event {seq}: ani's deadline 2026-04-01T09:30:00Z had not passed at 2026-04-01T08:50:00Z, and the "
        f"default is not marked forced")
    missing = json.loads(json.dumps(rows))
    del missing[seq - 1]["data"]["deadline"]
    assert "records no deadline" in audit.audit_file(rechain(missing))["verdict_line"]
