"""The audit an outsider runs before the seed is revealed enforces what it can: the order
of commitments and reveals in each step, reveals against commitments, the signature rule,
well-formed events and time that never runs backwards. Each forged log below has every
hash recomputed, so only these checks can catch it."""

import json

import pytest

from pbem.protocol import commands, loading
from pbem.store import audit
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, export_lines

PLAYERS = ["ani", "alex", "frank"]
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


def export(store, game="g"):
    return [json.loads(line) for line in export_lines(store.events(game))]


def rechain(rows):
    """Renumber and rehash forged rows; a forged event without a time takes the time of the
    event before it, so forgeries are dated relative to the log they extend, never the clock."""
    prev, last_at = GENESIS_HASH, None
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        if row.get("at") is None:
            row["at"] = last_at
        last_at = row["at"]
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


def event(kind, data, at=None):
    return {"game": "g", "kind": kind, "at": at, "data": data}


@pytest.fixture
def mid_step(tmp_path):
    """All three have committed in step 1.1 and ani has revealed."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, start=True, at=AT)
    session = loading.load(store, "g")
    sealed = {}
    for p in PLAYERS:
        sealed[p] = commands.seal(session, p, session.rules.default(session.state, p, "select"))
        commands.commit(store, "g", p, sealed[p]["commitment"], at=AT)
    commands.reveal(store, "g", "ani", sealed["ani"]["choice"], sealed["ani"]["salt"], at=AT)
    return store, sealed


def forged_commit(player, choice="A"):
    from pbem.protocol.commit import make_commitment
    salt = "ab" * 32
    return (event("commit", {"player": player, "round": 1, "step": 1, "by": "player",
                             "commitment": make_commitment("g", 1, 1, player, choice, salt)}),
            event("reveal", {"player": player, "round": 1, "step": 1, "by": "player", "choice": choice, "salt": salt}))


def test_the_honest_log_passes_before_the_seed(mid_step):
    store, _ = mid_step
    report = audit.audit_file(rechain(export(store)))
    assert report["ok"] and report["replay"].startswith("public")


def test_a_commitment_replaced_after_a_reveal_is_found(mid_step):
    store, _ = mid_step
    rows = export(store)
    commit, reveal = forged_commit("alex")
    report = audit.audit_file(rechain(rows + [commit, reveal]))
    assert not report["ok"] and report["bad_seq"] == len(rows) + 1
    assert "after its reveals had begun" in report["problem"]


def test_a_second_reveal_is_found(mid_step):
    store, sealed = mid_step
    rows = export(store)
    again = rows[-1].copy()
    report = audit.audit_file(rechain(rows + [again]))
    assert not report["ok"] and report["bad_seq"] == len(rows) + 1


def test_a_commitment_for_an_earlier_step_is_found(mid_step):
    store, _ = mid_step
    rows = export(store)
    commit, _ = forged_commit("frank")
    later = event("commit", {**commit["data"], "round": 2, "step": 1})
    report = audit.audit_file(rechain(rows + [later, commit]))
    assert not report["ok"] and report["bad_seq"] == len(rows) + 2


def test_unsigned_moderator_commits_in_a_signed_game_are_found(tmp_path):
    store = Store(tmp_path / "g.db")
    keys = {p: generate_keypair()[1] for p in PLAYERS}
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, require_signatures=True, keys=keys, start=True, at=AT)
    rows = export(store)
    commit, reveal = forged_commit("ani")
    commit["data"]["by"] = reveal["data"]["by"] = "moderator"
    report = audit.audit_file(rechain(rows + [commit]))
    assert not report["ok"] and report["bad_seq"] == len(rows) + 1
    assert "requires signed submissions" in report["problem"]


def test_a_reveal_that_claims_another_maker_is_found(mid_step):
    store, sealed = mid_step
    rows = export(store)
    rows[-1]["data"]["by"] = "moderator"  # ani's reveal, claiming the moderator sealed it
    report = audit.audit_file(rechain(rows))
    assert not report["ok"] and report["bad_seq"] == len(rows)


def test_malformed_event_data_is_a_clear_failure_not_a_crash(mid_step):
    store, _ = mid_step
    rows = export(store)
    started = next(r for r in rows if r["kind"] == "started")
    started["data"] = {}
    report = audit.audit_file(rechain(rows))
    assert not report["ok"] and report["bad_seq"] == started["seq"]
    assert "malformed started event: field 'client_entropy' missing" in report["problem"]


def test_time_running_backwards_is_found(mid_step):
    store, _ = mid_step
    rows = export(store)
    rows[-1]["at"] = "2000-01-01T00:00:00Z"
    report = audit.audit_file(rechain(rows))
    assert not report["ok"] and report["bad_seq"] == len(rows) and "earlier than" in report["problem"]
