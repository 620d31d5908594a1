"""The verifier page's verdicts in Chromium: OK for every example game and a fresh game of
each kind, FAIL with the audit's first reason for each altered (and re-chained) copy,
INCOMPLETE for a log cut before the seed; and wherever ``pbem audit`` speaks, the page's
line is the audit's."""

from __future__ import annotations

import base64
import hashlib

import pytest

from pbem.protocol.canonical import canonical_json
from pbem.protocol.signing import generate_keypair, parse_secret_key


def check(pages, page, text: str, name: str, **options) -> dict:
    """What the page says of ``text``, and that ``pbem audit`` says the same when it
    says a verdict line of its own."""
    shown = page.verify(text, name=name, **{k: v for k, v in options.items() if not k.startswith("_")})
    path = pages.tmp / name
    expected, _code = pages.audit_line(path, *options.get("_audit", ()))
    if options.get("_audit") and not pages.audit_has_verdicts():
        return shown  # an audit without §13's options and words has nothing to compare here
    if expected is not None and ":" in expected:  # the audit's own verdict line, or its FAIL reason
        assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    elif expected is not None:
        assert shown["verdict"] == expected
    return shown


@pytest.fixture
def page(pages):
    return pages.page()


EXAMPLES = ["two-players", "three-players", "four-players", "four-players-long",
            "tortuga1667-five-players", "tortuga1667-nine-players"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_is_ok(pages, page, name):
    text = (pages.EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8")
    shown = check(pages, page, text, f"{name}.jsonl")
    assert shown["verdict"] == "OK", shown
    assert shown["line"].startswith("OK: complete, seed hash not compared (none given), no published heads given")
    # it says plainly what it did not check, and how to check it
    assert "Not checked here" in shown["details"] and f"pbem audit --file {name}.jsonl" in shown["details"]


def test_an_export_dropped_on_the_page_is_checked(pages, page):
    path = pages.EXAMPLES / "tortuga1667-nine-players.jsonl"
    pages.browser.evaluate("delete document.body.dataset.verdict")
    pages.browser.drop_files("#drop", [path])
    shown = pages.browser.evaluate("""(async () => {
        for (let i = 0; i < 6000 && !document.body.dataset.verdict; i++) await new Promise(r => setTimeout(r, 10));
        return [document.body.dataset.verdict, document.getElementById('export-name').textContent];
    })()""")
    assert shown[0] == "OK" and shown[1].startswith("tortuga1667-nine-players.jsonl")


@pytest.mark.parametrize("kind,players", [("tortuga", 4), ("tortuga1667", 6)])
def test_a_fresh_game_of_each_kind_is_ok(pages, page, kind, players):
    text = pages.demo_export(kind, players)
    assert check(pages, page, text, f"fresh-{kind}.jsonl")["verdict"] == "OK"


def test_the_seed_hash_and_heads_kept_by_the_public(pages, page):
    text = (pages.EXAMPLES / "four-players.jsonl").read_text(encoding="utf-8")
    rows = pages.rows_of(text)
    seed_hash = rows[0]["data"]["seed_hash"]
    summary_file = pages.EXAMPLES / "four-players.summary.md"
    summary = summary_file.read_text(encoding="utf-8")
    head = f"70:{rows[69]['hash'][:10]}"
    shown = check(pages, page, text, "four-players.jsonl", seed_hash=seed_hash, heads=summary, head=head,
                  _audit=("--seed-hash", seed_hash, "--head", head, "--heads", str(summary_file)))
    assert shown["verdict"] == "OK", shown
    assert "seed hash matches the published one" in shown["line"]
    assert "published heads are prefixes" in shown["line"]


# ------------------------------------------------------------------ altered copies

def tortuga(pages):
    return pages.rows_of((pages.EXAMPLES / "three-players.jsonl").read_text(encoding="utf-8"))


def first(rows, kind):
    return next(r for r in rows if r["kind"] == kind)


def test_a_changed_commitment_fails_at_its_reveal(pages, page):
    rows = tortuga(pages)
    commit = first(rows, "commit")
    commit["data"]["commitment"] = hashlib.sha256(b"another choice").hexdigest()
    shown = check(pages, page, pages.rechain(rows), "changed-commitment.jsonl")
    reveal = next(r for r in rows if r["kind"] == "reveal" and r["data"]["player"] == commit["data"]["player"])
    assert shown["verdict"] == "FAIL"
    assert shown["line"] == (f"FAIL: event {reveal['seq']}: this reveal does not match {commit['data']['player']}'s "
                             f"commitment for step 1.1 (wrong choice or salt, or made for another step)")


def test_a_changed_reveal_fails(pages, page):
    rows = tortuga(pages)
    reveal = first(rows, "reveal")
    reveal["data"]["salt"] = "00" * 32
    shown = check(pages, page, pages.rechain(rows), "changed-reveal.jsonl")
    assert shown["line"].startswith(f"FAIL: event {reveal['seq']}: this reveal does not match")


def test_a_changed_held_reveal_fails_at_the_disclosure(pages, page):
    rows = pages.rows_of((pages.EXAMPLES / "tortuga1667-five-players.jsonl").read_text(encoding="utf-8"))
    disclosed = first(rows, "disclosed")
    entry = disclosed["data"]["steps"][0]
    player = next(p for p, r in entry["reveals"].items() if not r.get("default"))
    entry["reveals"][player]["salt"] = "ab" * 32
    shown = check(pages, page, pages.rechain(rows), "changed-held.jsonl")
    assert shown["line"] == (f"FAIL: event {disclosed['seq']}: this held reveal does not match {player}'s commitment "
                             f"for step {entry['round']}.{entry['step']} (wrong choice or salt, or made for another step)")


def test_a_changed_batch_digest_fails_at_the_disclosure(pages, page):
    rows = pages.rows_of((pages.EXAMPLES / "tortuga1667-nine-players.jsonl").read_text(encoding="utf-8"))
    batch = first(rows, "sealed_batch")
    batch["data"]["digest"] = "cd" * 32
    shown = check(pages, page, pages.rechain(rows), "changed-digest.jsonl")
    # docs/protocol.md §11: a wrong digest fails naming the sealed_batch
    assert shown["line"].startswith(f"FAIL: event {batch['seq']}: the batch digest '{'cd' * 32}' is not the digest "
                                    f"of the step's held reveals (")


def test_a_forged_signature_fails(pages, page):
    rows = pages.rows_of(pages.signed_export(moves=12))
    commits = [r for r in rows if r["kind"] == "commit"]
    assert all("signature" in r["data"] for r in commits)
    target = commits[1]
    forger, _ = generate_keypair()  # a well-formed signature, by the wrong key
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    body = {"v": 1, "game": target["game"], "kind": "commit", "player": target["data"]["player"],
            "round": target["data"]["round"], "step": target["data"]["step"], "nonce": target["data"]["nonce"],
            "commitment": target["data"]["commitment"]}
    signature = Ed25519PrivateKey.from_private_bytes(parse_secret_key(forger)).sign(b"pbem-sig-v1\x00" + canonical_json(body))
    target["data"]["signature"] = base64.b64encode(signature).decode()
    shown = check(pages, page, pages.rechain(rows), "forged-signature.jsonl")
    assert shown["line"] == (f"FAIL: event {target['seq']}: the signature on {target['data']['player']}'s commit "
                             f"is not valid for their registered key")


def test_a_signed_game_in_play_is_incomplete_with_its_signatures_checked(pages, page):
    text = pages.signed_export(moves=12)
    shown = check(pages, page, text, "signed.jsonl")
    assert shown["verdict"] == "INCOMPLETE"
    signed = sum(1 for r in pages.rows_of(text) if "signature" in r["data"])
    assert f"{signed} signatures (Ed25519)" in shown["details"]


def test_a_signed_1667_game_is_ok_with_its_held_signatures_checked_at_the_disclosure(pages, page):
    text = pages.signed_export(moves=None, game_type="tortuga1667")
    rows = pages.rows_of(text)
    disclosed = first(rows, "disclosed")
    held = [r for step in disclosed["data"]["steps"] for r in step["reveals"].values() if "signature" in r]
    assert held, "no signed held reveal to check"
    shown = check(pages, page, text, "signed-1667.jsonl")
    assert shown["verdict"] == "OK", shown
    signed = sum(1 for r in rows if "signature" in r["data"]) + len(held)
    assert f"{signed} signatures (Ed25519)" in shown["details"]
    # a held reveal's signature forged at the disclosure fails there
    step = disclosed["data"]["steps"][0]
    player, entry = next((p, r) for p, r in step["reveals"].items() if "signature" in r)
    other = next(r for s in disclosed["data"]["steps"] for p, r in s["reveals"].items()
                 if "signature" in r and r["signature"] != entry["signature"])
    entry["signature"] = other["signature"]
    shown = check(pages, page, pages.rechain(rows), "forged-held.jsonl")
    assert shown["line"] == (f"FAIL: event {disclosed['seq']}: the held reveal of {player}: the signature on "
                             f"{player}'s reveal is not valid for their registered key")


def test_a_changed_time_order_fails(pages, page):
    rows = tortuga(pages)
    moved = rows[20]
    moved["at"] = "2000-01-01T00:00:00Z"
    shown = check(pages, page, pages.rechain(rows), "time-order.jsonl")
    assert shown["line"] == (f"FAIL: event {moved['seq']}: event time 2000-01-01T00:00:00Z is earlier than the "
                             f"event before it ({rows[19]['at']})")


def test_a_wrong_seed_fails(pages, page):
    rows = tortuga(pages)
    revealed = first(rows, "seed_revealed")
    revealed["data"]["seed"] = "11" * 32
    shown = check(pages, page, pages.rechain(rows), "wrong-seed.jsonl")
    assert shown["line"].startswith(f"FAIL: event {revealed['seq']}: ")
    assert "the revealed seed does not match the seed hash published at creation" in shown["line"]


def test_a_seed_hash_the_public_did_not_see_fails(pages, page):
    text = (pages.EXAMPLES / "two-players.jsonl").read_text(encoding="utf-8")
    created = pages.rows_of(text)[0]["data"]["seed_hash"]
    published = hashlib.sha256(b"the seed of the announcement").hexdigest()
    shown = check(pages, page, text, "two-players.jsonl", seed_hash=published, _audit=("--seed-hash", published))
    assert shown["line"] == (f"FAIL: the seed hash in created is {created[:8]}…, not the published {published[:8]}…: "
                             f"the game was dealt from another seed")


def test_a_head_not_in_the_log_fails(pages, page):
    text = (pages.EXAMPLES / "two-players.jsonl").read_text(encoding="utf-8")
    rows = pages.rows_of(text)
    wrong = "ee" * 32
    shown = check(pages, page, text, "two-players.jsonl", head=f"50:{wrong}", _audit=("--head", f"50:{wrong}"))
    assert shown["line"] == (f"FAIL: published head event 50 {wrong[:8]}… is not a prefix of this log: its event 50 "
                             f"is {rows[49]['hash'][:8]}…")
    beyond = f"event 999 {wrong}"
    shown = page.verify(text, name="two-players.jsonl", heads=f"Chain head now: {beyond}")
    assert shown["line"] == (f"FAIL: published head event 999 {wrong[:8]}… is not a prefix of this log: the log stops "
                             f"at event {len(rows)}")


def test_a_log_cut_before_the_seed_is_incomplete(pages, page):
    rows = tortuga(pages)
    cut = rows[:-1]  # everything but seed_revealed
    shown = check(pages, page, pages.rechain(cut), "cut.jsonl")
    started = first(rows, "started")
    assert shown["verdict"] == "INCOMPLETE"
    assert shown["line"] == (f"INCOMPLETE: the log stops at event {len(cut)} before the seed is revealed; draws from "
                             f"event {started['seq']} on are unchecked; seed hash not compared (none given), no "
                             f"published heads given, receipts not possible (no judge key in created)")


def test_a_1667_log_cut_before_the_disclosure_is_incomplete(pages, page):
    rows = pages.rows_of((pages.EXAMPLES / "tortuga1667-nine-players.jsonl").read_text(encoding="utf-8"))
    cut = [r for r in rows if r["kind"] not in ("disclosed", "seed_revealed")]
    held = sum(1 for r in cut if r["kind"] == "reveal_held")
    shown = check(pages, page, pages.rechain(cut), "cut-1667.jsonl")
    assert shown["verdict"] == "INCOMPLETE"
    assert f"on and {held} held reveals are unchecked" in shown["line"]


# ------------------------------------------------------------------ receipts (§12)

def armour_receipt(payload: dict) -> str:
    data = canonical_json(payload)
    encoded = base64.b64encode(data).decode()
    lines = [encoded[i:i + 64] for i in range(0, len(encoded), 64)]
    return "\n".join(["-----BEGIN PBEM RECEIPT-----", *lines, "=" + hashlib.sha256(data).hexdigest()[:8],
                      "-----END PBEM RECEIPT-----"]) + "\n"


def receipt(secret: str, public: str, row: dict, head: dict, player: str) -> str:
    """A receipt made from docs/protocol.md §12 alone, as a judge signs it."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    body = {"v": 1, "kind": "receipt", "game": row["game"], "player": player, "seq": row["seq"], "event": row["kind"],
            "hash": row["hash"], "head_seq": head["seq"], "head_hash": head["hash"], "judge_key": public}
    sig = Ed25519PrivateKey.from_private_bytes(parse_secret_key(secret)).sign(b"pbem-receipt-v1\x00" + canonical_json(body))
    return armour_receipt({"receipt": body, "sig": base64.b64encode(sig).decode()})


def judged_copy(pages):
    """The three-player example as a version-3 log: its created names a judge key."""
    secret, public = generate_keypair()
    rows = tortuga(pages)
    rows[0]["data"]["judge_key"] = public
    return secret, public, pages.rows_of(pages.rechain(rows))


def test_receipts_the_log_agrees_with(pages, page):
    secret, public, rows = judged_copy(pages)
    commit = first(rows, "commit")
    given = receipt(secret, public, commit, rows[commit["seq"]], commit["data"]["player"])
    quoted = "".join("> " + line + "\n" for line in given.splitlines())  # a reply quoting it does no harm
    (pages.tmp / "receipts.txt").write_text(quoted, encoding="utf-8")
    shown = check(pages, page, pages.rechain(rows), "judged.jsonl", receipts=quoted,
                  _audit=("--receipt", str(pages.tmp / "receipts.txt")))
    assert shown["verdict"] == "OK" and shown["line"].endswith(", 1 receipt checked"), shown


def test_a_receipt_the_log_contradicts_fails(pages, page):
    secret, public, rows = judged_copy(pages)
    commit = first(rows, "commit")
    player = commit["data"]["player"]
    given = receipt(secret, public, commit, rows[commit["seq"]], player)
    original = commit["hash"]
    commit["data"]["commitment"] = "77" * 32  # the judge changed the commitment afterwards
    altered = pages.rows_of(pages.rechain(rows))
    (pages.tmp / "receipt.txt").write_text(given, encoding="utf-8")
    shown = check(pages, page, pages.rechain(rows), "judged.jsonl", receipts=given,
                  _audit=("--receipt", str(pages.tmp / "receipt.txt")))
    assert shown["line"] == (f"FAIL: receipt 1 ({player}, event {commit['seq']} commit) is contradicted: the judge "
                             f"signed event {commit['seq']} as {original[:8]}…, the log has "
                             f"{altered[commit['seq'] - 1]['hash'][:8]}… there: the judge changed or dropped that event")
    # a receipt from another judge key
    other_secret, other_public = generate_keypair()
    foreign = receipt(other_secret, other_public, rows[3], rows[4], "ani")
    (pages.tmp / "foreign.txt").write_text(foreign, encoding="utf-8")
    shown = check(pages, page, pages.rechain(rows), "judged.jsonl", receipts=foreign,
                  _audit=("--receipt", str(pages.tmp / "foreign.txt")))
    assert "is signed by judge key" in shown["line"] and "but this log's created names judge key" in shown["line"]


def test_an_unusable_receipt_is_no_verdict(pages, page):
    secret, public, rows = judged_copy(pages)
    given = receipt(secret, public, rows[5], rows[6], "ani")
    damaged = given.replace("=", "=0", 1) if given.count("=") > 1 else given[:60] + "A" + given[61:]
    shown = page.verify(pages.rechain(rows), name="judged.jsonl", receipts=damaged)
    assert shown["verdict"] == "USAGE" and "receipt block 1" in shown["line"], shown
