"""The verifier page's verdicts in Chromium: OK for every example game and a fresh game of
each kind, FAIL with the audit's first reason for each altered (and re-chained) copy,
INCOMPLETE for a log cut before the seed; and wherever ``pbem audit`` speaks, the page's
line is the audit's."""

from __future__ import annotations

import base64
import hashlib
import json
import re

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
    line = shown["line"]
    if " were not replayed (" in line:  # a game whose rules the page lacks: never OK, and it says so
        assert shown["verdict"] in ("UNCHECKED", "INCOMPLETE"), shown
        if shown["verdict"] == "UNCHECKED":
            assert expected is not None and expected.startswith("OK: ") and line.endswith(": " + expected[4:]), line
            return shown
        line = line[:line.index("; the rules of '")]
    if expected is not None and ":" in expected:  # the audit's own verdict line, or its FAIL reason
        assert line == expected, f"page: {shown['line']}\naudit: {expected}"
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
    if not pages.replays(name):  # the page says in its verdict that it did not replay these rules
        shown = page.verify(text, name=f"{name}.jsonl")
        assert shown["verdict"] == "UNCHECKED", shown
        assert shown["line"].startswith("UNCHECKED: the rules of 'tortuga1667' were not replayed")
        assert f"pbem audit --file {name}.jsonl" in shown["line"]
        return
    shown = check(pages, page, text, f"{name}.jsonl")
    assert shown["verdict"] == "OK", shown
    assert shown["line"].startswith("OK: complete, seed hash not compared (none given), judge key not compared "
                                    "(none given), no published heads given")
    # OK means everything was checked, the rules replay included
    assert "the rules replay of " in shown["details"] and "Not checked here" not in shown["details"]


def test_an_export_dropped_on_the_page_is_checked(pages, page):
    path = pages.EXAMPLES / "tortuga1667-nine-players.jsonl"
    pages.browser.evaluate("delete document.body.dataset.verdict")
    pages.browser.drop_files("#drop", [path])
    shown = pages.browser.evaluate("""(async () => {
        for (let i = 0; i < 6000 && !document.body.dataset.verdict; i++) await new Promise(r => setTimeout(r, 10));
        return [document.body.dataset.verdict, document.getElementById('export-name').textContent];
    })()""")
    assert shown[0] == pages.ok_verdict("tortuga1667") and shown[1].startswith("tortuga1667-nine-players.jsonl")


@pytest.mark.parametrize("kind,players", [("tortuga", 4), ("tortuga1667", 6)])
def test_a_fresh_game_of_each_kind_is_ok(pages, page, kind, players):
    text = pages.demo_export(kind, players)
    assert check(pages, page, text, f"fresh-{kind}.jsonl")["verdict"] == pages.ok_verdict(kind)


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
    assert shown["verdict"] == pages.ok_verdict("tortuga1667"), shown
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
                             f"event {started['seq']} on are unchecked; seed hash not compared (none given), judge "
                             f"key not compared (none given), no published heads given, receipts not possible (no judge key in created)")


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
    assert shown["verdict"] == "USAGE"  # bad evidence, not a verdict on the log (§12)
    assert "is signed by judge key" in shown["line"] and "but this log's created names judge key" in shown["line"]
    assert "cannot tell a forged receipt from a forged log" in shown["line"]


def test_an_unusable_receipt_is_no_verdict(pages, page):
    secret, public, rows = judged_copy(pages)
    given = receipt(secret, public, rows[5], rows[6], "ani")
    damaged = given.replace("=", "=0", 1) if given.count("=") > 1 else given[:60] + "A" + given[61:]
    shown = page.verify(pages.rechain(rows), name="judged.jsonl", receipts=damaged)
    assert shown["verdict"] == "USAGE" and "receipt block 1" in shown["line"], shown


# ------------------------------------------------------------------ heads in an mbox of the list

def _mail(subject: str, plain: str | None = None, cte: str = "7bit", html: str | None = None,
          html_cte: str = "quoted-printable", charset: str = "utf-8") -> bytes:
    from email.message import EmailMessage
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "judge@example.org", "list@example.org", subject
    if plain is not None:
        msg.set_content(plain, cte=cte, charset=charset)
    if html is not None:
        if plain is None:
            msg.set_content(html, subtype="html", cte=html_cte, charset=charset)
        else:
            msg.add_alternative(html, subtype="html", cte=html_cte, charset=charset)
    raw = msg.as_bytes()
    if not subject.isascii():  # the whole subject as one encoded word: only decoding it names the game
        word = "=?utf-8?b?" + base64.b64encode(subject.encode("utf-8")).decode("ascii") + "?="
        raw = re.sub(rb"(?m)^Subject: .*\n(?:[ \t].*\n)*", b"Subject: " + word.encode("ascii") + b"\n", raw, count=1)
    return b"From judge@example.org Sat Jan  1 00:00:00 2030\n" + raw + b"\n"


def _list_mbox(rows, game: str, other_head: str) -> bytes:
    """The list's mail as an mbox: summaries of ``game`` in base64, in quoted-printable (soft
    line breaks inside the hash), as HTML (tags around the hash) in Latin-1 with an encoded
    subject, and a summary of another game whose head is not this log's."""
    h = lambda seq: rows[seq - 1]["hash"]  # noqa: E731
    return (_mail(f"[{game}] round 1", f"Chain head after round 1: event 51 {h(51)}\n", cte="base64")
            + _mail(f"[{game}] round 2", f"Chain head after round 2: event 103 {h(103)} " + "x" * 40 + "\n",
                    cte="quoted-printable")
            + _mail(f"[{game}] round 3 – Tortuga", None,
                    html=f"<p>Résumé</p><p>Chain head after round 3: event <b>153</b> <code>{h(153)}</code></p>\n",
                    charset="iso-8859-1")
            + _mail(f"[{game}] round 4", f"Chain head after round 4: event 203 {h(203)}\n", cte="quoted-printable",
                    html=f"<p>Chain head after round 4: event 203 <code>{h(203)}</code></p>", html_cte="base64")
            + _mail(f"[{game}-b] round 1", f"Chain head after round 1: event 51 {other_head}\n", cte="base64"))


def test_heads_in_an_mbox_are_found_in_its_decoded_messages(pages, page):
    name = "four-players"
    text = (pages.EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8")
    rows = pages.rows_of(text)
    mbox = pages.tmp / "list.mbox"
    mbox.write_bytes(_list_mbox(rows, name, "ee" * 32))
    raw = mbox.read_bytes()
    assert rows[102]["hash"] not in raw.decode("latin-1")  # quoted-printable broke the hash: decoding finds it
    assert rows[50]["hash"] not in raw.decode("latin-1")  # base64
    third = raw.split(b"\nFrom ")[2]
    assert b"Subject: =?utf-8?b?" in third and name.encode() not in third  # only its decoded subject names the game
    shown = check(pages, page, text, f"{name}.jsonl", heads_files=[mbox], _audit=("--heads", str(mbox)))
    assert shown["verdict"] == "OK", shown
    assert "4 published heads are prefixes" in shown["line"]  # the other game's head was not read


def test_a_head_in_an_mbox_that_is_not_in_the_log_fails_as_the_audit_says(pages, page):
    name = "four-players"
    text = (pages.EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8")
    rows = pages.rows_of(text)
    wrong = "ee" * 32
    mbox = pages.tmp / "forged.mbox"
    mbox.write_bytes(_list_mbox(rows, name, "00" * 32)
                     + _mail(f"[{name}] round 5", f"Chain head after round 5: event 254 {wrong} " + "y" * 30 + "\n",
                             cte="quoted-printable"))
    shown = check(pages, page, text, f"{name}.jsonl", heads_files=[mbox], _audit=("--heads", str(mbox)))
    assert shown["line"] == (f"FAIL: published head event 254 {wrong[:8]}… is not a prefix of this log: its event "
                             f"254 is {rows[253]['hash'][:8]}…")


def test_an_mbox_without_a_head_of_the_game_is_no_verdict(pages, page):
    from pbem.protocol.heads import NoHeads, heads_in_file
    text = (pages.EXAMPLES / "four-players.jsonl").read_text(encoding="utf-8")
    mbox = pages.tmp / "other.mbox"
    mbox.write_bytes(_mail("[four-players-b] round 1", f"Chain head: event 51 {'ab' * 32}\n", cte="base64"))
    with pytest.raises(NoHeads) as raised:
        heads_in_file(mbox.read_bytes(), "four-players")
    shown = page.verify(text, name="four-players.jsonl", heads_files=[mbox])
    assert shown["verdict"] == "USAGE" and shown["line"] == f"other.mbox: {raised.value}"
    expected, code = pages.audit_line(pages.tmp / "four-players.jsonl", "--heads", str(mbox))
    assert expected is None and code == 2


# ------------------------------------------------------------------ the judge's discretion (§16)

def _game_with_discretion(tmp) -> str:
    """A Tortuga game with a pause, two extensions (one asked by a player), a replacement and
    a stand-in playing a seat, played to its end by bots."""
    from pbem.protocol import away, commands, loading
    from pbem.store import Store
    store = Store(tmp / "discretion.db", create=True)
    commands.create_game(store, "g1", "tortuga", ["ani", "alex", "frank"], {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    away.pause(store, "g1", "summer holidays", at="2030-01-01T11:00:00Z")
    away.resume(store, "g1", reason="back again", at="2030-01-01T12:00:00Z")
    away.extend(store, "g1", "frank", seconds=3600, by="player", reason="frank is travelling", at="2030-01-01T13:00:00Z")
    away.extend(store, "g1", seconds=600, reason="a public holiday", at="2030-01-01T13:30:00Z")
    away.replace(store, "g1", "alex", reason="alex left the game", at="2030-01-01T14:00:00Z")
    commands.nmr(store, "g1", "ani", force=True, at="2030-01-01T15:00:00Z")
    # the moderator's new deadline for what is overdue by now (§16)
    away.extend(store, "g1", until="2030-01-09T00:00:00Z", reason="overdue, a new deadline", at="2030-01-05T00:00:00Z")
    for _ in range(3000):
        session = loading.load(store, "g1")
        if session.finished:
            break
        player, _what, sealed, _ = session.owed()[0]
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind)
        (commands.commit_for_player if sealed else commands.decide)(store, "g1", player, choice,
                                                                   at="2030-01-05T01:00:00Z")
    assert loading.load(store, "g1").finished
    from pbem.store import export_lines
    return "".join(export_lines(store.events("g1")))


def test_the_judges_discretion_is_in_the_verdict_as_the_audit_words_it(pages, page):
    text = _game_with_discretion(pages.tmp)
    shown = check(pages, page, text, "discretion.jsonl")
    assert shown["verdict"] == "OK"
    assert shown["line"].startswith("OK: complete, seed hash not compared (none given), judge key not compared "
                                    "(none given), no published heads given, "
                                    "0 receipts checked; the judge's discretion: no client seed: the judge alone chose the deal, "
                                    "1 forced default, 1 pause, 3 extensions (2 by the "
                                    "moderator, 1 after the deadline had passed), 1 replacement, ")
    assert shown["line"].endswith(" stand-in moves")
    rows = pages.rows_of(text)
    cut = next(i for i, r in enumerate(rows) if r["data"].get("by") == "stand-in") + 1
    shown = check(pages, page, pages.rechain(rows[:cut]), "discretion-cut.jsonl")
    assert shown["verdict"] == "INCOMPLETE"
    assert ("; the judge's discretion: no client seed: the judge alone chose the deal, 1 forced default, 1 pause, "
            in shown["line"]) and shown["line"].endswith(", 1 stand-in move")


@pytest.mark.parametrize("name", ["tortuga", "tortuga1667"])
def test_stand_in_v1_logs_are_ok_with_v1_as_the_audit_says(pages, page, name):
    """examples/stand-in-v1/: games made before the policy stand-in-v2 (their `created` names
    none): the page replays their stand-in moves with v1, as pbem audit does."""
    text = (pages.EXAMPLES.parent / "stand-in-v1" / f"{name}.jsonl").read_text(encoding="utf-8")
    shown = check(pages, page, text, f"v1-{name}.jsonl")
    assert shown["verdict"] == pages.ok_verdict(name) and " stand-in moves" in shown["line"], shown
    assert " stand-in moves (by stand-in-v1, whose draws the judge can steer)" in shown["line"], shown


@pytest.mark.parametrize("kind,players", [("tortuga", 3), ("tortuga1667", 5)])
def test_a_game_where_every_seat_is_stood_in_with_v2_is_ok_as_the_audit_says(pages, page, kind, players):
    from pbem.protocol import commands, loading
    from pbem.store import Store, export_lines
    store = Store(pages.tmp / f"all-stood-in-{kind}.db", create=True)
    names = ["ani", "bo", "cy", "dee", "eve"][:players]
    commands.create_game(store, "g1", kind, names, {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    while not loading.load(store, "g1").finished:
        commands.nmr(store, "g1", loading.load(store, "g1").owed()[0][0], force=True, at="2030-01-02T10:00:00Z")
    text = "".join(export_lines(store.events("g1")))
    assert '"stand_in_policy":"stand-in-v2"' in text.splitlines()[0]
    shown = check(pages, page, text, f"all-stood-in-{kind}.jsonl")
    assert shown["verdict"] == pages.ok_verdict(kind) and " stand-in moves" in shown["line"], shown


def test_seats_taken_back_from_the_stand_in_are_in_the_verdict_as_the_audit_words_them(pages, page):
    """A Tortuga game in which the moderator ends the stand-in for lothar, and later lothar
    mails `back` (stand_in_ended events, by moderator and by player)."""
    from pbem.protocol import away, commands, loading
    from pbem.store import Store, export_lines
    store = Store(pages.tmp / "back.db", create=True)
    commands.create_game(store, "g1", "tortuga", ["ani", "alex", "lothar"], {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    ended = []
    for _ in range(3000):
        session = loading.load(store, "g1")
        if session.finished:
            break
        if "lothar" in session.standing_in and len(ended) < 2:
            ended.append("moderator" if not ended else "player")
            away.end_stand_in(store, "g1", "lothar", by=ended[-1], at="2030-01-02T10:00:00Z")
            continue
        player, _what, sealed, _ = session.owed()[0]
        if player == "lothar":
            commands.nmr(store, "g1", player, force=True, at="2030-01-02T10:00:00Z")
            continue
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind)
        (commands.commit_for_player if sealed else commands.decide)(store, "g1", player, choice,
                                                                   at="2030-01-02T10:00:00Z")
    assert ended == ["moderator", "player"] and loading.load(store, "g1").finished
    text = "".join(export_lines(store.events("g1")))
    shown = check(pages, page, text, "back.jsonl")
    assert shown["verdict"] == "OK" and shown["line"].endswith(
        ", 2 seats taken back from the stand-in (1 by the moderator)"), shown


def _signed_with_a_replacement(tmp) -> tuple[list[dict], str]:
    """A signed Tortuga game in play in which alex's seat passed to a new person with a new
    key (a `replaced` event); returns the export's rows and alex's former secret key."""
    from pbem.protocol import away, commands, loading, offline, submissions
    from pbem.store import Store, export_lines
    store = Store(tmp / "replaced.db", create=True)
    names = ["ani", "alex", "frank"]
    keys = {p: generate_keypair() for p in names}
    commands.create_game(store, "signed", "tortuga", names, {}, require_signatures=True,
                         keys={p: pub for p, (_, pub) in keys.items()}, start=True, at="2030-01-01T00:00:00Z")
    former = keys["alex"][0]

    def play(moves: int) -> None:
        session = loading.load(store, "signed")
        bots = {p: session.rules.bot(f"replaced/{p}", "random") for p in names}
        for _ in range(moves):
            step = session.sealed
            if step is not None and step.owes_commit():
                held = {}
                for player in step.owes_commit():
                    sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
                    held[player] = offline.signed_blocks(sealed, keys[player][0])
                    submissions.submit(store, "signed", held[player]["commit"], at="2030-01-01T00:00:00Z")
                    session = loading.load(store, "signed")
                for blocks in held.values():
                    submissions.submit(store, "signed", blocks["reveal"], at="2030-01-01T00:00:00Z")
            else:
                request = session.pending()[0]
                choice = bots[request.player].choose(session.state, request.player, request.kind)
                submissions.submit(store, "signed", offline.signed_decision(session, request.player, choice,
                                                                          keys[request.player][0]),
                                at="2030-01-01T00:00:00Z")
            session = loading.load(store, "signed")
    play(6)
    keys["alex"] = generate_keypair()
    away.replace(store, "signed", "alex", key=keys["alex"][1], reason="alex left", at="2030-01-01T00:00:00Z")
    play(10)
    return [json.loads(line) for line in export_lines(store.events("signed"))], former


def test_a_replaced_seat_signs_with_its_new_key_and_the_former_key_no_longer_counts(pages, page):
    rows, former = _signed_with_a_replacement(pages.tmp)
    replaced = first(rows, "replaced")
    later = [r for r in rows if r["seq"] > replaced["seq"] and r["data"].get("player") == "alex"
             and "signature" in r["data"]]
    assert later, "alex made no signed move after the replacement"
    shown = check(pages, page, pages.rechain(rows), "replaced.jsonl")
    assert shown["verdict"] == "INCOMPLETE" and shown["line"].endswith(
        "; the judge's discretion: no client seed: the judge alone chose the deal, 1 replacement")
    # the same move signed by the former person's key: refused from the replacement on
    target = later[0]
    d = target["data"]
    fields = {"commit": ["commitment"], "reveal": ["choice", "salt"], "decide": ["choice"]}[target["kind"]]
    body = {"v": 1, "game": target["game"], "kind": target["kind"], "player": "alex", "round": d["round"],
            "step": d["step"], "nonce": d["nonce"], **{f: d[f] for f in fields}}
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    signature = Ed25519PrivateKey.from_private_bytes(parse_secret_key(former)).sign(b"pbem-sig-v1\x00" + canonical_json(body))
    d["signature"] = base64.b64encode(signature).decode()
    shown = check(pages, page, pages.rechain(rows), "replaced-forged.jsonl")
    assert shown["line"] == (f"FAIL: event {target['seq']}: the signature on alex's {target['kind']} is not valid "
                             f"for their registered key")


# ------------------------------------------------------------------ receipts in a saved mail

def test_receipts_in_a_saved_mail_are_read_as_the_audit_reads_them(pages, page):
    """The judge's answer saved as .eml: quoted-printable (its `=` become `=3D`), an HTML
    alternative in base64 with the block in <pre> (the plain one is read, once), and a
    forwarded mail with another receipt (not the sender's: not read)."""
    from email.message import EmailMessage
    secret, public, rows = judged_copy(pages)
    commits = [r for r in rows if r["kind"] == "commit"]
    first_receipt = receipt(secret, public, commits[0], rows[commits[0]["seq"]], commits[0]["data"]["player"])
    second = receipt(secret, public, commits[1], rows[commits[1]["seq"]], commits[1]["data"]["player"])
    forwarded_receipt = receipt(secret, public, commits[2], rows[commits[2]["seq"]], commits[2]["data"]["player"])
    answer = EmailMessage()
    answer["From"], answer["To"], answer["Subject"] = "judge@example.org", "ani@example.org", "Re: moves – reçu"
    answer.set_content(f"Recorded.\n\n{first_receipt}\n{second}\n", cte="quoted-printable", charset="utf-8")
    answer.add_alternative(f"<p>Recorded.</p><pre>{first_receipt}\n{second}</pre>", subtype="html", cte="base64")
    forwarded = EmailMessage()
    forwarded["From"], forwarded["Subject"] = "judge@example.org", "an older answer"
    forwarded.set_content(forwarded_receipt)
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "ani@example.org", "me@example.org", "Fwd: my receipts"
    mail.make_mixed()
    mail.attach(answer)
    mail.add_attachment(forwarded)
    saved = pages.tmp / "answer.eml"
    saved.write_bytes(mail.as_bytes())
    assert b"=3D" in saved.read_bytes() and first_receipt.splitlines()[-2].encode() not in saved.read_bytes()
    shown = check(pages, page, pages.rechain(rows), "judged.jsonl", receipts_files=[saved],
                  _audit=("--receipt", str(saved)))
    assert shown["verdict"] == "OK" and shown["line"].endswith(", 2 receipts checked"), shown


# ------------------------------------------------------------------ the rules replay (issue 28)

def test_a_choice_the_rules_refuse_fails_as_the_audit_says(pages, page):
    """What the page said OK to before it replayed the rules: a decision changed to one the
    rules do not understand, and a reveal applied otherwise than the rules apply it."""
    rows = tortuga(pages)
    decide = next(r for r in rows if r["kind"] == "decide" and r["seq"] > 30)
    decide["data"]["choice"] = decide["data"]["applied"] = "Ax"
    shown = check(pages, page, pages.rechain(rows), "rules-decide.jsonl")
    assert shown["line"].startswith(f"FAIL: event {decide['seq']}: not understood: 'Ax'"), shown
    rows = tortuga(pages)
    reveal = next(r for r in rows if r["kind"] == "reveal" and r["seq"] > 30)
    reveal["data"]["applied"] = "none"
    shown = check(pages, page, pages.rechain(rows), "rules-reveal.jsonl")
    assert shown["line"].startswith(f"FAIL: event {reveal['seq']}: recorded applied 'none' differs from the rules'"), shown


def test_bot_games_with_the_judges_discretion_get_the_audits_verdict(pages, page):
    """Games with pauses, extensions, replacements, NMR and the stand-in (tests/pages/botgames.py),
    whole and with one event's data changed: the page's line is the audit's."""
    import random
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    import botgames
    r = random.Random(28)
    verdicts = set()
    for number in (3, 5, 8, 13):
        game = botgames.play(number)
        shown = check(pages, page, game["export"], f"bot-{number}.jsonl")
        assert shown["verdict"] == "OK", shown
        rows = pages.rows_of(game["export"])
        for k in range(3):
            i = r.choice([i for i, row in enumerate(rows) if row["kind"] in ("decide", "reveal", "default", "nmr", "commit")])
            altered = [dict(row, data=dict(row["data"])) for row in rows]
            field = r.choice(sorted(altered[i]["data"]))
            altered[i]["data"][field] = 7 if field != "choice" else "B"
            shown = check(pages, page, pages.rechain(altered), f"bot-{number}-{k}.jsonl")
            verdicts.add(shown["verdict"])
    assert "FAIL" in verdicts


@pytest.mark.parametrize("seed", ["zz", "abc", 5, None])
def test_a_revealed_seed_that_is_not_hex_fails_as_the_audit_says(pages, page, seed):
    rows = tortuga(pages)
    rows[-1]["data"]["seed"] = seed
    shown = check(pages, page, pages.rechain(rows), "seed-not-hex.jsonl")
    assert shown["verdict"] == "FAIL" and shown["line"].startswith(f"FAIL: event {rows[-1]['seq']}: malformed seed_revealed event")


# ------------------------------------------------------------------ time witnessed by others (§15)

def _received_mail(subject: str, text: str, received: list[str], date: str | None = None,
                   message_id: str | None = None) -> bytes:
    """A list mail as a player's mailbox keeps it: the receiving servers' Received lines on top."""
    from email.message import EmailMessage
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "judge@example.org", "list@example.org", subject
    if date:
        msg["Date"] = date
    if message_id:
        msg["Message-ID"] = message_id
    msg.set_content(text)
    lines = "".join(f"Received: {line}\n" for line in received)
    return b"From judge@example.org Sat Jan  1 00:00:00 2030\n" + lines.encode() + msg.as_bytes() + b"\n"


def _rfc5322(at: str, seconds: int, zone_hours: int = 0) -> str:
    from datetime import datetime, timedelta, timezone
    moment = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) + timedelta(seconds=seconds)
    local = moment.astimezone(timezone(timedelta(hours=zone_hours)))
    return local.strftime("%a, %e %b %Y %H:%M:%S ") + f"{'-' if zone_hours < 0 else '+'}{abs(zone_hours):02d}00"


def test_an_event_stamped_after_a_mail_that_carried_it_fails_as_the_audit_says(pages, page):
    name = "four-players"
    text = (pages.EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8")
    rows = pages.rows_of(text)
    honest = (
        _received_mail(f"[{name}] round 1", f"Chain head after round 1: event 51 {rows[50]['hash']}\n",
                       [f"from mail.lists.example.org (mail.lists.example.org [192.0.2.10])\n\tby mx.example.org "
                        f"(Postfix) with ESMTPS id 4T2x\n\tfor <ani@example.org>; {_rfc5322(rows[50]['at'], 40)} (UTC)",
                        f"by 2002:a05:6a10:b8a with SMTP id k10csp;\n        {_rfc5322(rows[50]['at'], 20, -8)} (PST)"],
                       date=_rfc5322(rows[50]["at"], 0), message_id="<r1@judge.example.org>")
        + _received_mail(f"[{name}] round 2", f"Chain head after round 2: event 103 {rows[102]['hash']}\n", [],
                         date=_rfc5322(rows[102]["at"], -240, 2)))  # only a Date, 4 minutes early: within 5
    mbox = pages.tmp / "timed.mbox"
    mbox.write_bytes(honest)
    shown = check(pages, page, text, f"{name}.jsonl", heads_files=[mbox], _audit=("--heads", str(mbox)))
    assert shown["verdict"] == "OK", shown
    assert "2 published heads are prefixes, no event stamped after a mail that carried it (2 mails timed)" in shown["line"]
    # the mail covering event 153 reached a player's server 10 minutes before that event's stamp
    early = _received_mail(f"[{name}] round 3", f"Chain head after round 3: event 153 {rows[152]['hash']}\n",
                           [f"from [192.0.2.10] (helo=mail.lists.example.org)\n\tby mx.example.net with esmtps "
                            f"(Exim 4.96)\n\tid 1rAbCd-000123-Xy\n\tfor ani@example.net;\n\t"
                            f"{_rfc5322(rows[152]['at'], -600)}",
                            f"from localhost by mail.judge.example.org (Postfix); {_rfc5322(rows[152]['at'], 1)}"],
                           date=_rfc5322(rows[152]["at"], 0))
    mbox.write_bytes(honest + early)
    shown = check(pages, page, text, f"{name}.jsonl", heads_files=[mbox], _audit=("--heads", str(mbox)))
    from pbem.protocol.times import shift
    witnessed = shift(rows[152]["at"], -600)
    bad = next(r for r in rows[:153] if r["at"] > shift(witnessed, 300))
    assert shown["line"] == (
        f"FAIL: event {bad['seq']} ({bad['kind']}) is stamped {bad['at']}, but mail 3 of timed.mbox carried head "
        f"event 153 at {witnessed} (its Received line 1), more than 5 minutes before: the judge's clock ran ahead")


def test_a_shortened_deadline_is_named_and_an_unforced_one_fails_as_the_audit_says(pages, page):
    from pbem.protocol import away, commands
    from pbem.store import Store, export_lines
    store = Store(pages.tmp / "shortened.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z")
    away.pause(store, "g", "a public holiday", at="2030-01-01T12:00:00Z")
    away.resume(store, "g", until="2030-01-01T14:00:05Z", force=True, at="2030-01-01T14:00:00Z")
    commands.nmr(store, "g", "ani", at="2030-01-01T14:00:12Z")
    commands.reveal_seed(store, "g", force=True)
    text = "".join(export_lines(store.events("g")))
    shown = check(pages, page, text, "shortened.jsonl")
    assert shown["verdict"] == "OK" and ", 1 forced resume that shortened deadlines, 1 pause" in shown["line"], shown
    rows = pages.rows_of(text)
    next(r for r in rows if r["kind"] == "resumed")["data"].pop("forced")  # a patched judge: no mark
    shown = check(pages, page, pages.rechain(rows), "shortened-unforced.jsonl")
    assert shown["line"].startswith("FAIL: event 4: --until 2030-01-01T14:00:05Z is earlier than ani's deadline in "
                                    "force 2030-01-02T12:00:00Z"), shown


def test_an_extension_past_a_year_fails_as_the_audit_says(pages, page):
    """The bound of docs/protocol.md §16: a deadline set at most a year after its event."""
    rows = pages.rows_of(_game_with_discretion(pages.tmp))
    extended = next(r for r in rows if r["kind"] == "extended")
    extended["data"]["requests"][0]["until"] = "9999-12-31T23:00:00Z"
    shown = check(pages, page, pages.rechain(rows), "extended-far.jsonl")
    assert shown["line"].startswith(f"FAIL: event {extended['seq']}: an extension's time 9999-12-31T23:00:00Z is "
                                    f"more than a year (365 days) after now"), shown


def test_a_seat_given_to_the_moderator_is_named_as_the_audit_names_it(pages, page):
    rows = pages.rows_of(_game_with_discretion(pages.tmp))
    next(r for r in rows if r["kind"] == "replaced")["data"]["moderator"] = True
    shown = check(pages, page, pages.rechain(rows), "moderator-plays.jsonl")
    assert shown["verdict"] == "OK" and ", 1 replacement (1 seat given to the moderator), " in shown["line"], shown
    rows[[r["kind"] for r in rows].index("replaced")]["data"]["moderator"] = "yes"
    shown = check(pages, page, pages.rechain(rows), "moderator-bad.jsonl")
    assert shown["verdict"] == "FAIL" and "'moderator' is true (the moderator plays the seat) or absent" in shown["line"]
