"""The command line prints the judge's receipt for every accepted submission, takes signed
client seeds in signed games, and the audit reads the receipts back (docs/protocol.md §12-§14)."""

from __future__ import annotations

import json

from pbem.protocol.receipts import read_receipts


def test_every_accepted_submission_prints_a_receipt_the_audit_checks(cli, tmp_path):
    made = cli.json("new", "g", "--players", "ani,alex")
    assert made["judge_key"].startswith("pbem-ed25519-public:")
    seed = cli.ok("client-seed", "g", "ani", "ani's words").stdout
    assert "-----BEGIN PBEM RECEIPT-----" in seed
    cli.ok("start", "g")
    kept = [seed]
    for p in ("ani", "alex"):
        choice = cli.json("private", "g", p)["requests"][0]["default"]
        sealed = cli.json("seal", "g", p, choice)
        out = cli.json("commit", "g", p, sealed["commitment"])
        (receipt,) = read_receipts("".join(out["receipts"]))
        assert (receipt["player"], receipt["event"], receipt["game"]) == (p, "commit", "g")
        assert receipt["head_seq"] == out["chain_head"]["seq"] and receipt["head_hash"] == out["chain_head"]["hash"]
        kept.append(sealed)
    shown = cli.ok("reveal", "g", "ani", kept[1]["choice"], kept[1]["salt"]).stdout
    assert kept[1]["salt"] not in shown.split("-----BEGIN PBEM RECEIPT-----", 1)[1]
    again = cli.json("reveal", "g", "ani", kept[1]["choice"], kept[1]["salt"])
    assert again["already_recorded"] and again["receipts"] == []  # a repeat records nothing
    (tmp_path / "ani.txt").write_text(seed + shown)
    result = cli("audit", "g", "--receipt", tmp_path / "ani.txt")
    assert result.exit_code == 3 and "2 receipts checked" in result.stdout.splitlines()[0]
    # nmr in a game without a deadline needs --force, and the log says so
    cli.refused("g", "nmr", "g", "alex", match="game g has no deadline, so alex is not late; use --force")
    cli.ok("nmr", "g", "alex", "--force")
    last = cli.log("g")[-1]
    assert last["kind"] == "default" and last["data"]["forced"] is True and last["data"]["deadline"] is None


def test_a_signed_game_takes_a_client_seed_only_as_the_players_signed_block(cli, tmp_path):
    keys = {p: cli.json("keygen", "-o", tmp_path / f"{p}.key")["public_key"] for p in ("ani", "alex")}
    cli.ok("new", "g", "--players", "ani,alex", "--require-signatures",
           "--key", f"ani={keys['ani']}", "--key", f"alex={keys['alex']}")
    cli.refused("g", "client-seed", "g", "ani", "chosen by the judge", match="client seeds too")
    block = cli.json("client-seed", "g", "ani", "my words", "--sign-with", tmp_path / "ani.key")["block"]
    (tmp_path / "mail.txt").write_text("hello judge\n\n" + block)
    out = cli.json("submit", "g", tmp_path / "mail.txt")
    assert out["accepted"][0]["kind"] == "client_seed" and len(out["receipts"]) == 1
    seeds = [e for e in cli.log("g") if e["kind"] == "client_seed"]
    assert seeds[0]["data"]["seed"] == "my words" and "signature" in seeds[0]["data"]
    cli.ok("start", "g")
    assert json.loads(cli("audit", "g", "--json").stdout)["verdict"] == "INCOMPLETE"
