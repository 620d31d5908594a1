"""The dishonest judge and a reveal sent early (docs/protocol.md §3 "A reveal sent early",
§15): the judge holds the database, the server seed and the judge key. What can it do with a
reveal it holds before every commitment is in, and does the audit say so?"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, export_lines
from pbem.store.audit import audit_file, audit_store
from tests.protocol.test_discretion import rechain, rows_of
from tests.protocol.test_early_reveal import PLAYERS, choose

ROOT = Path(__file__).resolve().parents[2]
AT = "2030-01-01T10:00:00Z"
LATER = "2030-01-05T10:00:00Z"  # past every deadline of the step


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


def cli(db, *args):
    from typer.testing import CliRunner

    from pbem.cli.program import app
    result = CliRunner().invoke(app, [*map(str, args), "--db", str(db)])
    assert result.exit_code in (0, 1, 3), (args, result.stdout, result.stderr)
    return result


def drop_the_held_reveal(tmp_path):
    """ani commits and sends the reveal early (by the command line, which prints the
    receipts); the judge drops the held reveal, and defaults ani at the deadline once every
    commitment is in. (The store, ani's receipts as printed, the export's path.)"""
    store, _ = game(tmp_path)
    db = tmp_path / "g.db"
    made = sealed(store, "ani")
    cli(db, "commit", "g", "ani", made["commitment"])
    held = cli(db, "reveal", "g", "ani", made["choice"], made["salt"]).stdout
    assert "held" in held
    with store.conn:  # the dishonest judge drops the held reveal
        store.conn.execute("delete from secrets where name = 'early/1/1/ani'")
    for player in ("alex", "frank"):
        commands.commit(store, "g", player, sealed(store, player)["commitment"], at=AT)
    commands.nmr(store, "g", "ani", at=LATER)  # the deadline passed: a default, not forced
    export = tmp_path / "g.jsonl"
    export.write_text("".join(export_lines(store.events("g"))), encoding="utf-8")
    return store, held, export


def test_the_reveal_held_comes_with_a_receipt_the_audit_checks_against_a_default(tmp_path):
    """The judge drops the reveal it held, and defaults the player at the deadline. Before,
    the player held nothing but "reveal held"; now the answer carries a receipt (event
    early_reveal) of their commitment, and the audit with it FAILs, naming the default."""
    from pbem.protocol.receipts import read_receipts
    store, held, export = drop_the_held_reveal(tmp_path)
    receipts = read_receipts(held)
    commit = next(e for e in store.events("g") if e.kind == "commit" and e.data["player"] == "ani")
    assert [(r["player"], r["event"], r["seq"], r["hash"]) for r in receipts] == [
        ("ani", "early_reveal", commit.seq, commit.hash)]
    default = store.events("g")[-1]
    assert default.kind == "default" and default.data["player"] == "ani" and default.data.get("forced") is not True
    (tmp_path / "ani.txt").write_text(held, encoding="utf-8")
    db = tmp_path / "g.db"
    plain = cli(db, "audit", "--file", export, "--json")
    assert json.loads(plain.stdout)["verdict"] != "FAIL"  # without the receipt, nothing shows it
    caught = json.loads(cli(db, "audit", "--file", export, "--receipt", tmp_path / "ani.txt", "--json").stdout)
    assert caught["verdict_line"] == (
        f"FAIL: receipt 1 (ani, event {commit.seq} early_reveal) is contradicted: the judge signed that it "
        f"held ani's reveal of the commitment at event {commit.seq}, and event {default.seq} defaults ani "
        f"in step 1.1: the judge dropped the reveal")


def test_an_honest_judge_passes_with_the_early_receipt_and_a_replaced_commitment_too(tmp_path):
    """The receipt of a held reveal agrees with the log when the reveal was recorded, and
    when a later commitment of the player replaced the one it opened (then defaulted)."""
    store, _ = game(tmp_path)
    db = tmp_path / "g.db"
    first = sealed(store, "ani")
    cli(db, "commit", "g", "ani", first["commitment"])
    kept = cli(db, "reveal", "g", "ani", first["choice"], first["salt"]).stdout
    again = sealed(store, "ani")
    cli(db, "commit", "g", "ani", again["commitment"])  # replaces it: the held reveal opens nothing now
    for player in ("alex", "frank"):
        commands.commit(store, "g", player, sealed(store, player)["commitment"], at=AT)
    commands.nmr(store, "g", "ani", at=LATER)
    (tmp_path / "r.txt").write_text(kept, encoding="utf-8")
    export = tmp_path / "g.jsonl"
    export.write_text("".join(export_lines(store.events("g"))), encoding="utf-8")
    report = json.loads(cli(db, "audit", "--file", export, "--receipt", tmp_path / "r.txt", "--json").stdout)
    assert report["verdict"] != "FAIL" and report["receipts_checked"] == 1, report


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_whole_game_of_early_reveals_keeps_its_receipts(tmp_path, signed):
    """Submitted as blocks (commit and reveal together): each held reveal gets its receipt,
    and every receipt of the game agrees with the log at the end."""
    from pbem.protocol.receipts import read_receipts
    store, keys = game(tmp_path, signed=signed)
    db = tmp_path / "g.db"
    texts = []
    for player in ("ani", "alex"):
        made = sealed(store, player)
        blocks = offline.signed_blocks(made, keys.get(player))
        (tmp_path / f"{player}.sub").write_text(blocks["commit"] + "\n" + blocks["reveal"], encoding="utf-8")
        texts.append(cli(db, "submit", "g", tmp_path / f"{player}.sub").stdout)
        assert [r["event"] for r in read_receipts(texts[-1])] == ["commit", "early_reveal"]
    made = sealed(store, "frank")
    blocks = offline.signed_blocks(made, keys.get("frank"))
    (tmp_path / "frank.sub").write_text(blocks["commit"] + "\n" + blocks["reveal"], encoding="utf-8")
    texts.append(cli(db, "submit", "g", tmp_path / "frank.sub").stdout)
    assert [r["event"] for r in read_receipts(texts[-1])] == ["commit", "reveal"]  # the last: recorded at once
    (tmp_path / "all.txt").write_text("\n".join(texts), encoding="utf-8")
    export = tmp_path / "g.jsonl"
    export.write_text("".join(export_lines(store.events("g"))), encoding="utf-8")
    report = json.loads(cli(db, "audit", "--file", export, "--receipt", tmp_path / "all.txt", "--json").stdout)
    assert report["verdict"] != "FAIL" and report["receipts_checked"] == 6, report


def test_what_the_judge_does_at_its_discretion_after_seeing_a_held_reveal_is_named(tmp_path):
    """Holding ani's reveal early, the judge knows her choice before the step's last
    commitments: it gives frank's seat to itself and commits for it, extends alex's time,
    then forces alex's default before his deadline. Each act is in the verdict; that it came
    after an early reveal is not (docs/protocol.md §15 says so)."""
    from pbem.protocol import away
    store, _ = game(tmp_path)
    early(store, "ani")
    away.replace(store, "g", "frank", reason="left", at=AT, moderator_plays=True)
    commands.commit(store, "g", "frank", sealed(store, "frank")["commitment"], at=AT)  # the judge's own seat
    away.extend(store, "g", "alex", seconds=3600, at=AT)
    commands.nmr(store, "g", "alex", force=True, at=AT)  # before alex's deadline
    assert [e.data["player"] for e in store.events("g") if e.kind == "reveal"] == ["ani"]  # recorded with the default
    commands.reveal_seed(store, "g", force=True, at=LATER)
    line = audit_file("".join(export_lines(store.events("g"))))["verdict_line"]
    for named in ("1 forced default", "1 extension (1 by the moderator)", "1 replacement (1 seat given to the moderator)"):
        assert named in line, line
    assert "early" not in line.replace("ended the game early", "")


def honest_game(tmp_path, game_type: str):
    """A whole game, every sealed choice sent with its reveal early, each held reveal given
    its receipt as the command line gives it; open choices now and then defaulted. (The
    store, every receipt block the players got.)"""
    from pbem.protocol.receipts import issue
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", game_type, PLAYERS[game_type], {}, deadline_seconds=86400, start=True, at=AT)
    blocks: list[str] = []
    for turn in range(5000):
        session = loading.load(store, "g")
        if session.seed_revealed:
            return store, "".join(blocks)
        player, _what, is_sealed, _ = session.owed()[0]
        before = store.head("g")[0]
        if not is_sealed:
            if turn % 7 == 0:  # now and then a late player: an open default
                commands.nmr(store, "g", player, force=True, at=AT)
            else:
                request = next(r for r in session.requests_of(player) if not r.sealed)
                commands.decide(store, "g", player, choose(session, player, request.kind), at=AT)
            continue
        step = session.sealed
        made = commands.seal(session, player, choose(session, player, step.kind))
        commands.commit(store, "g", player, made["commitment"], at=AT)
        outcome: dict = {}
        commands.reveal(store, "g", player, made["choice"], made["salt"], at=AT, outcome=outcome)
        held = [(player, step.round, step.step)] if outcome.get("early") else []
        blocks += issue(store, "g", before, [player], early=held)
    raise AssertionError("the game does not end")


@pytest.mark.parametrize("game_type", ["tortuga", "tortuga1667"])
def test_an_honest_judge_agrees_with_every_early_receipt_of_a_whole_game(tmp_path, game_type):
    """At the end of an honest game of early reveals, the audit with every receipt is not
    FAIL (steps that share a round and step number, open defaults, anonymous votes
    included): a default after the held reveal was recorded is no contradiction."""
    from pbem.protocol.receipts import read_receipts
    from pbem.store.verdict import Published
    store, text = honest_game(tmp_path, game_type)
    bodies = read_receipts(text)
    assert len(bodies) > 20 and sum(b["event"] == "early_reveal" for b in bodies) > 5
    report = audit_store(store, "g", Published(receipts=bodies))
    assert report["ok"], report["verdict_line"]


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_commitment_forged_after_the_held_reveal_escapes_the_receipt_only_unsigned(tmp_path, signed):
    """The judge writes a new commitment in ani's name after her held reveal (the receipt
    takes a later commitment as replacing the one it opened), then defaults her. Without
    signatures nothing shows it (docs/protocol.md §15 says so: require signatures); with
    them the forged commitment has no valid signature and the replay refuses it."""
    from pbem.protocol.receipts import early_receipts, read_receipts
    from pbem.store.verdict import Published
    store, keys = game(tmp_path, signed=signed)
    early(store, "ani", keys)
    bodies = read_receipts("".join(early_receipts(store, "g", [("ani", 1, 1)], store.events("g"), store.head("g"))))
    assert [b["event"] for b in bodies] == ["early_reveal"]
    for player in ("alex", "frank"):
        commands.commit(store, "g", player, sealed(store, player)["commitment"], at=AT) if not signed else \
            submissions.submit(store, "g", offline.signed_blocks(sealed(store, player), keys[player])["commit"], at=AT)
    rows = rows_of(store)
    assert rows[-1]["kind"] == "reveal"  # the honest log: ani's held reveal recorded
    from pbem.protocol.commit import make_commitment, new_salt
    from pbem.protocol.times import shift
    last_commit = len(rows) - 2
    before = rows[:last_commit] + [rows[last_commit]]  # every commitment in, ani's reveal not recorded
    replay = commands.Session.replay("g", json.loads(json.dumps(before)), bytes.fromhex(store.get_secret("g", "server_seed")))
    choice = replay.rules.default(replay.state, "ani", "select")
    commit = json.loads(json.dumps(rows[last_commit]))  # the judge's own commitment for ani, before the last
    commit["data"] = {k: v for k, v in commit["data"].items() if k not in ("signature", "nonce")}
    commit["data"].update(player="ani", commitment=make_commitment("g", 1, 1, "ani", choice, new_salt()))
    opened = rows[last_commit]["at"]
    default = {"game": "g", "kind": "default", "at": shift(opened, 86400 * 2), "data": {
        "player": "ani", "kind": "select", "sealed": True, "round": 1, "step": 1, "reason": "no reveal (NMR)",
        "deadline": shift(opened, 86400), "choice": choice}}
    text = rechain(rows[:last_commit] + [commit, rows[last_commit]] + [default])
    report = audit_file(text, Published(receipts=bodies))
    if signed:
        assert report["verdict_line"].startswith(f"FAIL: event {last_commit + 1}: this game requires signed submissions")
    else:
        assert report["verdict"] != "FAIL", report["verdict_line"]


def replaced_after_the_held_reveal(tmp_path):
    """Honest: ani sends the reveal early (its receipt printed), then leaves; the moderator
    replaces the seat, the others commit, and the orphaned commitment is defaulted, forced
    (docs/protocol.md §16). The held reveal no longer stands (§3), so the receipt is no
    contradiction. (The store, ani's receipts as printed, the export's path.)"""
    store, _ = game(tmp_path)
    db = tmp_path / "g.db"
    made = sealed(store, "ani")
    cli(db, "commit", "g", "ani", made["commitment"])
    held = cli(db, "reveal", "g", "ani", made["choice"], made["salt"]).stdout
    assert "held" in held
    cli(db, "replace", "g", "ani", "--reason", "ani left")
    for player in ("alex", "frank"):
        commands.commit(store, "g", player, sealed(store, player)["commitment"], at=AT)
    commands.nmr(store, "g", "ani", force=True, at=AT)
    assert store.events("g")[-1].kind == "default"
    export = tmp_path / "g.jsonl"
    export.write_text("".join(export_lines(store.events("g"))), encoding="utf-8")
    return store, held, export


def test_a_replacement_after_the_held_reveal_is_no_contradiction_of_its_receipt(tmp_path):
    _store, held, export = replaced_after_the_held_reveal(tmp_path)
    (tmp_path / "ani.txt").write_text(held, encoding="utf-8")
    report = json.loads(cli(tmp_path / "g.db", "audit", "--file", export, "--receipt", tmp_path / "ani.txt",
                            "--json").stdout)
    assert report["verdict"] != "FAIL" and "1 receipt checked" in report["verdict_line"], report["verdict_line"]


def test_a_key_change_after_the_held_reveal_is_no_contradiction_of_its_receipt():
    """The player's own signed key change drops the held reveal (§3): a default after it is
    the player's, not the judge's."""
    from pbem.protocol.receipts import EARLY, dropped
    rows = [{"kind": "created", "data": {}},
            {"kind": "commit", "data": {"player": "ani", "round": 1, "step": 1}},
            {"kind": "key", "data": {"player": "ani", "key": "k"}},
            {"kind": "default", "data": {"player": "ani", "round": 1, "step": 1, "sealed": True}}]
    body = {"event": EARLY, "player": "ani", "seq": 2}
    assert dropped(1, body, rows) is None
    assert dropped(1, body, [rows[0], rows[1], rows[3]])[0] == 3  # without the key change: dropped
