"""Keys and extensions are the player's (docs/protocol.md §14, §16; issue 27, items 1 and 4).

In a signed game a key changes after the start only by a block signed with the key the seat
holds; before the start the moderator sets keys, and the verdict names every change. A client
seed counts only if it is signed with the key its seat holds when play starts. A player's
extension in a signed game is signed like any other submission; unsigned, the verdict counts
it as the moderator's. Each lie is played as the judge could (the command line where it
allows, else a patched judge writing to its own database), and audited with what the players
hold: the seed hash, the judge key, the heads of the list's summaries, their receipts.
"""

from __future__ import annotations

import json

from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.discretion import extension_body, key_change_body
from pbem.protocol.signing import sign
from pbem.store import Store

T0 = "2030-01-01T10:00:00Z"


def keys(cli, tmp_path, *names: str) -> dict:
    """A key pair per name: {name: (public key, secret key file)}."""
    out = {}
    for name in names:
        path = tmp_path / f"{name}.key"
        out[name] = (cli.json("keygen", "-o", path)["public_key"], path)
    return out


def signed_game(cli, tmp_path, *extra: str) -> dict:
    k = keys(cli, tmp_path, "ani", "alex", "bo", "judge", "ani2")
    cli.ok("new", "g", "--players", "ani,alex,bo", "--require-signatures", *extra)
    for p in ("ani", "alex", "bo"):
        cli.ok("key", "g", p, k[p][0])
    return k


def block_file(tmp_path, name: str, block: str):
    path = tmp_path / name
    path.write_text(block)
    return path


def export(cli, tmp_path, game: str = "g"):
    path = tmp_path / f"{game}.jsonl"
    cli.ok("export", game, "-o", path)
    return path


def audit(cli, *args) -> tuple[str, dict]:
    line = cli("audit", *args).stdout.splitlines()[0]
    return line, json.loads(cli("audit", *args, "--json").stdout)


def rechained(rows: list[dict]) -> str:
    """The export of ``rows``, every hash recomputed: a patched judge's log, whose chain holds."""
    prev, out = GENESIS_HASH, []
    for row in rows:
        event = {k: row[k] for k in ("game", "seq", "kind", "at", "data")}
        digest = event_hash(prev, event)
        out.append(json.dumps({**event, "prev_hash": prev, "hash": digest}, sort_keys=True,
                              separators=(",", ":"), ensure_ascii=False) + "\n")
        prev = digest
    return "".join(out)


def append(db, game: str, kind: str, data: dict, at: str | None = None) -> None:
    """A patched judge writes an event to its own database, past the rules."""
    with Store(db) as store, store.atomic():
        last = store.events(game)[-1]
        store.append(game, kind, data, at=at or last.at)


def secret(path) -> str:
    return path.read_text().strip()


# ---------------------------------------------------------------------- item 1: keys


def test_every_key_event_earns_a_receipt_that_the_audit_checks(cli, tmp_path):
    k = signed_game(cli, tmp_path)
    out = cli.json("key", "g", "ani", k["ani2"][0])  # before the start: the moderator's, named
    assert len(out["receipts"]) == 1 and out["replaced"] is True
    text = cli.ok("key", "g", "ani", k["ani"][0]).stdout
    assert "the judge's signed receipt" in text and "BEGIN PBEM RECEIPT" in text
    receipts = block_file(tmp_path, "ani-receipts.txt", "".join(out["receipts"]) + text)
    line, report = audit(cli, "g", "--receipt", receipts)
    assert line.startswith("INCOMPLETE: ") and "2 receipts checked" in line
    assert line.endswith("; the judge's discretion: ani's key was changed twice before start")
    assert report["discretion"] == {"key_changes": {"ani": 2}}
    # the receipt of a key event the judge then changed is a contradiction
    rows = cli.log("g")
    rows[4]["data"]["public_key"] = k["judge"][0]
    forged = block_file(tmp_path, "forged.jsonl", rechained(rows))
    line, _ = audit(cli, "--file", forged, "--receipt", receipts)
    assert line.startswith("FAIL: receipt 1 (ani, event 5 key) is contradicted"), line


def test_a_key_swapped_to_grind_a_client_seed_fails(cli, tmp_path, pbem_db):
    """The lie of issue 27: the judge gives ani its own key, signs a client seed with it,
    gives ani's key back, and starts."""
    k = signed_game(cli, tmp_path)
    seed_hash = cli.log("g")[0]["data"]["seed_hash"]
    judge_key = cli.log("g")[0]["data"]["judge_key"]
    cli.ok("key", "g", "ani", k["judge"][0])
    block = cli.json("client-seed", "g", "ani", "ground by the judge", "--sign-with", k["judge"][1])["block"]
    cli.ok("submit", "g", block_file(tmp_path, "seed.txt", block))
    cli.ok("key", "g", "ani", k["ani"][0])
    reason = cli.refused("g", "start", "g", match="ani's client seed is not signed with the key ani holds at the start")
    assert "pbem client-seed g ani TEXT --sign-with KEYFILE" in reason
    # a patched judge starts anyway
    from pbem.protocol.rng import combine_client_seeds
    append(pbem_db, "g", "started", {"client_entropy": combine_client_seeds({"ani": "ground by the judge"})})
    path = export(cli, tmp_path)
    line, report = audit(cli, "--file", path, "--seed-hash", seed_hash, "--judge-key", judge_key)
    assert line == ("FAIL: event 8: ani's client seed is not signed with the key ani holds at the start (a client "
                    "seed counts only if signed with it): ani signs it again with pbem client-seed g ani TEXT "
                    "--sign-with KEYFILE"), line
    assert report["verdict"] == "FAIL" and report["bad_seq"] == 8


def test_a_client_seed_signed_again_with_the_seats_key_counts(cli, tmp_path):
    k = signed_game(cli, tmp_path)
    cli.ok("key", "g", "ani", k["judge"][0])
    block = cli.json("client-seed", "g", "ani", "first", "--sign-with", k["judge"][1])["block"]
    cli.ok("submit", "g", block_file(tmp_path, "seed.txt", block))
    cli.ok("key", "g", "ani", k["ani"][0])
    block = cli.json("client-seed", "g", "ani", "second", "--sign-with", k["ani"][1])["block"]
    cli.ok("submit", "g", block_file(tmp_path, "seed2.txt", block))
    cli.ok("start", "g")
    line, _ = audit(cli, "g")
    assert line.endswith("; the judge's discretion: ani's key was changed twice before start"), line


def test_after_the_start_the_moderator_cannot_change_a_key(cli, tmp_path):
    k = signed_game(cli, tmp_path)
    cli.ok("start", "g")
    reason = cli.refused("g", "key", "g", "ani", k["ani2"][0], match="has started, so ani's key changes only by "
                                                                       "a block signed with the key the seat holds")
    assert "pbem key g ani NEW-PUBLIC-KEY --sign-with OLD.key" in reason


def test_a_player_changes_their_own_key_with_a_signed_block(cli, tmp_path):
    k = signed_game(cli, tmp_path)
    cli.ok("start", "g")
    made = cli.json("key", "g", "ani", k["ani2"][0], "--sign-with", k["ani"][1])
    assert cli.log("g")[-1]["kind"] == "started"  # printing the block records nothing
    out = cli.json("submit", "g", block_file(tmp_path, "key.txt", made["block"]))
    assert out["accepted"][0]["kind"] == "key" and len(out["receipts"]) == 1
    assert cli.log("g")[-1]["kind"] == "key"
    # the same block again records nothing; a block signed with the key ani gave up is refused
    again = cli.json("submit", "g", block_file(tmp_path, "key.txt", made["block"]))
    assert again["already_recorded"] is True
    old = cli.json("key", "g", "ani", k["judge"][0], "--sign-with", k["ani"][1])["block"]
    cli.refused("g", "submit", "g", block_file(tmp_path, "old.txt", old),
                match="the signature on ani's key change is not valid for the key their seat holds")
    line, report = audit(cli, "g")
    assert line.startswith("INCOMPLETE: ")
    # named, though the player's own: a judge that held the seat's key could have signed it (§15)
    assert report["discretion"] == {"no_client_seed": True, "signed_key_changes": {"ani": 1}}


def test_a_key_changed_after_the_start_without_the_old_keys_signature_fails(cli, tmp_path, pbem_db):
    k = signed_game(cli, tmp_path)
    cli.ok("start", "g")
    heads = block_file(tmp_path, "heads.txt", "Chain head: event {} {}\n".format(
        len(cli.log("g")), cli.log("g")[-1]["hash"]))
    start = len(cli.log("g"))
    append(pbem_db, "g", "key", {"player": "ani", "public_key": k["judge"][0]})  # unsigned
    line, _ = audit(cli, "--file", export(cli, tmp_path), "--heads", heads)
    assert line.startswith(f"FAIL: event {start + 1}: game g has started, so ani's key changes only by a block "
                           f"signed with the key the seat holds"), line
    # the same change signed with the key it installs, not with the one the seat held
    rows = cli.log("g")
    body = key_change_body("g", {"player": "ani", "public_key": k["judge"][0], "nonce": "n1"})
    rows[-1]["data"].update(signature=sign(secret(k["judge"][1]), body), nonce="n1")
    line, _ = audit(cli, "--file", block_file(tmp_path, "signed.jsonl", rechained(rows)), "--heads", heads)
    assert line == (f"FAIL: event {start + 1}: the signature on ani's key change is not valid for the key their "
                    f"seat holds"), line


# ---------------------------------------------------------------------- item 4: extensions


def test_a_player_extends_with_a_signed_block(cli, tmp_path):
    k = signed_game(cli, tmp_path, "--deadline", "48h")
    cli.ok("start", "g")
    token = cli.json("private", "g", "ani")["context"]
    # unsigned, the judge takes no player's extension in a signed game
    from pbem.protocol import away
    from pbem.protocol.errors import Refused
    with Store(tmp_path / "pbem.db") as store:
        try:
            away.extend(store, "g", "ani", seconds=3600, by="player", at=T0)
            raise AssertionError("an unsigned player's extension was taken in a signed game")
        except Refused as exc:
            assert "takes only signed submissions, so a player's extension is a signed block" in str(exc)
    made = cli.json("extend", "g", "24h", "--context", token, "--sign-with", k["ani"][1])
    out = cli.json("submit", "g", block_file(tmp_path, "ext.txt", made["block"]))
    assert out["accepted"][0]["kind"] == "extend" and len(out["receipts"]) == 1
    event = cli.log("g")[-1]
    assert event["kind"] == "extended" and event["data"]["by"] == "player" and "signature" in event["data"]
    receipts = block_file(tmp_path, "r.txt", "".join(out["receipts"]))
    line, report = audit(cli, "g", "--receipt", receipts)
    assert "1 receipt checked" in line and line.endswith(", 1 extension (0 by the moderator)")
    assert report["discretion"] == {"no_client_seed": True, "extensions": 1}


def test_an_unsigned_players_extension_is_the_moderators_and_a_bad_signature_fails(cli, tmp_path, pbem_db):
    k = signed_game(cli, tmp_path, "--deadline", "48h")
    cli.ok("start", "g")
    from pbem.protocol import loading
    with Store(pbem_db) as store:
        session = loading.load(store, "g")
        data = session.extension_data("ani", 3600, None, "moderator", "travelling")
    data["by"], data["reason"] = "player", "asked by mail"
    append(pbem_db, "g", "extended", data)  # a patched judge, in ani's name
    line, report = audit(cli, "--file", export(cli, tmp_path))
    assert line.endswith(", 1 extension (1 by the moderator)"), line
    assert report["discretion"] == {"no_client_seed": True, "extensions": 1, "extensions_by_moderator": 1}
    # claimed signed, with a signature ani never made
    rows = cli.log("g")
    r = rows[-1]["data"]["requests"][0]
    signed = {"player": "ani", "round": r["round"], "step": r["step"], "seconds": 3600, "nonce": "n2"}
    rows[-1]["data"].update(signed, signature=sign(secret(k["alex"][1]), extension_body("g", signed)))
    line, _ = audit(cli, "--file", block_file(tmp_path, "bad.jsonl", rechained(rows)))
    assert line == (f"FAIL: event {len(rows)}: the signature on ani's extension is not valid for the key their "
                    f"seat holds"), line
    # signed by ani, but the event moves the deadline further than ani asked
    rows[-1]["data"]["signature"] = sign(secret(k["ani"][1]), extension_body("g", {**signed, "seconds": 1800}))
    rows[-1]["data"]["seconds"] = 1800
    line, _ = audit(cli, "--file", block_file(tmp_path, "far.jsonl", rechained(rows)))
    assert line.startswith(f"FAIL: event {len(rows)}: ani signed an extension of round {r['round']} step "
                           f"{r['step']} by 30m, but this event moves"), line


def test_unsigned_key_and_extension_blocks_are_refused_and_change_nothing(cli, tmp_path):
    from pbem.protocol.armour import armour
    k = signed_game(cli, tmp_path, "--deadline", "48h")
    cli.ok("start", "g")
    body = key_change_body("g", {"player": "ani", "public_key": k["ani2"][0], "nonce": "n1"})
    cli.refused("g", "submit", "g", block_file(tmp_path, "k.txt", armour({"body": body})),
                match="changes ani's key but is not signed")
    body = extension_body("g", {"player": "ani", "round": 1, "step": 1, "seconds": 3600, "nonce": "n2"})
    cli.refused("g", "submit", "g", block_file(tmp_path, "e.txt", armour({"body": body})),
                match="is an extension but is not signed")
    # a signed extension for a step ani owes nothing in moves nothing
    made = cli.json("extend", "g", "ani", "1h", "--step", "7.1", "--sign-with", k["ani"][1])
    cli.refused("g", "submit", "g", block_file(tmp_path, "e7.txt", made["block"]),
                match="ani owes nothing in round 7 step 1")
    # the player's side of the command: a step to sign for, one duration
    cli.refused("g", "extend", "g", "ani", "1h", "--sign-with", k["ani"][1], code=2, match="say which step")
    cli.refused("g", "extend", "g", "ani", "--context", "x", code=2, match="go with --sign-with")
