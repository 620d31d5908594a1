"""The dishonest judge and a reveal sent early (docs/protocol.md §3 "A reveal sent early",
§15): the judge holds the database, the server seed and the judge key. What can it do with a
reveal it holds before every commitment is in, and does the audit say so?"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.protocol import away, commands, loading, offline, submissions
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, export_lines
from pbem.store.audit import audit_file, audit_store

ROOT = Path(__file__).resolve().parents[2]
AT = "2030-01-01T10:00:00Z"
LATER = "2030-01-05T10:00:00Z"  # past every deadline of the step


def rows_of(store, game="g"):
    return [json.loads(line) for line in export_lines(store.events(game))]


def rechain(rows) -> str:
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


def game(tmp_path, signed=False, players=("ani", "alex", "frank")):
    store = Store(tmp_path / "g.db")
    pairs = {p: generate_keypair() for p in players} if signed else {}
    commands.create_game(store, "g", "tortuga", list(players), {}, require_signatures=signed, deadline_seconds=86400,
                         keys={p: pub for p, (_, pub) in pairs.items()} or None, start=True, at=AT)
    return store, {p: secret for p, (secret, _) in pairs.items()}


def sealed(store, player):
    session = loading.load(store, "g")
    return commands.seal(session, player, session.rules.default(session.state, player, session.sealed.kind))


def early(store, player, keys=None) -> dict:
    """``player`` commits and sends the reveal at once; it is held."""
    made = sealed(store, player)
    if keys:
        blocks = offline.signed_blocks(made, keys[player])
        done = submissions.submit(store, "g", blocks["commit"] + "\n" + blocks["reveal"], at=AT)
        assert done[1].get("early")
    else:
        commands.commit(store, "g", player, made["commitment"], at=AT)
        outcome: dict = {}
        commands.reveal(store, "g", player, made["choice"], made["salt"], at=AT, outcome=outcome)
        assert outcome.get("early")
    return made


def test_an_early_reveal_recorded_before_the_last_commitment_fails_the_audit(tmp_path):
    """The judge moves the held reveal before the last commitment (editing the database and
    re-chaining): the replay refuses a reveal while a commitment is still owed."""
    store, _ = game(tmp_path)
    early(store, "ani")
    for player in ("alex", "frank"):
        commands.commit(store, "g", player, sealed(store, player)["commitment"], at=AT)
    rows = rows_of(store)
    kinds = [r["kind"] for r in rows]
    assert kinds[-3:] == ["commit", "commit", "reveal"] and rows[-1]["data"]["player"] == "ani"
    assert audit_file("".join(export_lines(store.events("g"))))["ok"]
    moved = rows[:-3] + [rows[-3], rows[-1], rows[-2]]  # ani's reveal before frank's commitment
    report = audit_file(rechain(moved))
    assert not report["ok"]
    assert report["verdict_line"] == "FAIL: event 6: a commit for step 1.1 after its reveals had begun"



def test_a_held_reveal_recorded_twice_fails_the_audit(tmp_path):
    """The judge cannot spend a signed early reveal twice: its nonce, and the settled seat."""
    store, keys = game(tmp_path, signed=True)
    early(store, "ani", keys)
    for player in ("alex", "frank"):
        submissions.submit(store, "g", offline.signed_blocks(sealed(store, player), keys[player])["commit"], at=AT)
    rows = rows_of(store)
    assert rows[-1]["kind"] == "reveal" and rows[-1]["data"]["player"] == "ani"
    report = audit_file(rechain(rows + [json.loads(json.dumps(rows[-1]))]))
    assert not report["ok"]


def test_an_early_reveal_with_a_spent_nonce_is_refused_and_kept_nowhere(tmp_path):
    """A signed reveal whose nonce an event of the log already spent is refused when it comes
    early, as it would be later (the nonce is only spent when the reveal is recorded)."""
    store, keys = game(tmp_path, signed=True)
    made = sealed(store, "ani")
    blocks = offline.signed_blocks(made, keys["ani"])
    submissions.submit(store, "g", blocks["commit"], at=AT)
    nonce = store.events("g")[-1].data["nonce"]
    from pbem.protocol.armour import armour
    from pbem.protocol.moves import signed_body
    from pbem.protocol.signing import sign
    body = signed_body("g", "reveal", {**made, "nonce": nonce})
    with pytest.raises(Refused, match="already used"):
        submissions.submit(store, "g", armour({"body": body, "sig": sign(keys["ani"], body)}), at=AT)
    assert not [n for n in store.secret_names("g") if n.startswith("early/")]
