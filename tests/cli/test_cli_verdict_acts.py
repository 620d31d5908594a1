"""The verdict names every forced act of the judge (docs/protocol.md §13), and ``--judge-key``
tells a forged receipt (bad evidence, exit 2) from a forged log (FAIL)."""

from __future__ import annotations

import json

from pbem.protocol.receipts import SECRET_NAME, make_body, receipt_block
from pbem.protocol.signing import fingerprint


def audited(cli, *args: str) -> tuple[str, dict]:
    """The verdict line of ``pbem audit ARGS`` and its --json report."""
    line = cli("audit", *args).stdout.splitlines()[0]
    return line, json.loads(cli("audit", *args, "--json").stdout)


def test_every_forced_act_is_named_in_the_verdict_and_its_json(cli, tmp_path):
    cli.ok("new", "g", "--players", "ani,alex,bo")
    for n in (1, 2, 3):  # the first key of a seat, then two changes
        public = cli.json("keygen", "-o", tmp_path / f"k{n}.key")["public_key"]
        cli.ok("key", "g", "ani", public)
    cli.ok("start", "g")  # nobody gave a client seed
    cli.ok("nmr", "g", "ani", "--force")
    cli.ok("pause", "g", "--reason", "holidays")
    cli.ok("nmr", "g", "alex", "--force")
    cli.ok("reveal-seed", "g", "--force")  # the judge ends the game in its first round
    line, report = audited(cli, "g")
    assert line == ("OK: complete, seed hash not compared (none given), judge key not compared (none given), no "
                    "published heads given, 0 receipts checked; the judge's discretion: the judge ended the game "
                    "early, at round 1, no client seed: the judge alone chose the deal, 2 forced defaults, "
                    "1 default during a pause, ani's key was changed twice before start, 1 pause")
    assert report["discretion"] == {"ended_early": {"round": 1, "round_word": "round"}, "no_client_seed": True,
                                    "forced_defaults": 2, "defaults_during_pause": 1, "key_changes": {"ani": 2},
                                    "pauses": 1}
    assert report["judge_key_checked"] is False
    text = cli("audit", "g").stdout  # the report's own line says the same
    assert "the judge's discretion, each logged with who asked and why: the judge ended the game early" in text


def test_a_1667_game_ended_early_names_its_turn(cli):
    cli.ok("new", "t", "--game", "tortuga1667", "--players", "ani,alex,bo,cy")
    cli.ok("client-seed", "t", "ani", "ani's words")
    cli.ok("start", "t")
    cli.ok("reveal-seed", "t", "--force")
    line, report = audited(cli, "t")
    assert line.endswith("; the judge's discretion: the judge ended the game early, at turn 1")
    assert report["discretion"] == {"ended_early": {"round": 1, "round_word": "turn"}}


def test_an_honest_finished_game_names_no_act(cli, finished_copy):
    judge = cli.log("done")[0]["data"]["judge_key"]
    line, report = audited(cli, "done", "--judge-key", judge)
    assert line == ("OK: complete, seed hash not compared (none given), judge key matches the published one, no "
                    "published heads given, 0 receipts checked")
    assert "discretion" not in report and report["judge_key_checked"] is True
    # the key as pasted from a wrapped mail (white space inside) is the same key
    wrapped = cli("audit", "done", "--judge-key", f"{judge[:30]}\n  {judge[30:]}")
    assert wrapped.exit_code == 0 and "judge key matches the published one" in wrapped.stdout


def _receipts(cli, finished_copy, tmp_path) -> tuple[str, str, str]:
    """The judge key of "done", a receipt file the judge signed and one signed with a
    player's own key (a player framing the judge)."""
    from pbem.store import Store
    rows = cli.log("done")
    judge = rows[0]["data"]["judge_key"]
    with Store(finished_copy) as store:
        secret = store.get_secret("done", SECRET_NAME)
    event = next(row for row in rows if row["kind"] == "commit")
    body = make_body("done", event["data"]["player"], event["seq"], "commit", event["hash"],
                     (len(rows), rows[-1]["hash"]), judge)
    (tmp_path / "honest.txt").write_text(receipt_block(secret, body))
    player = cli.json("keygen", "-o", tmp_path / "ani.key")
    player_secret = (tmp_path / "ani.key").read_text().strip()
    (tmp_path / "forged.txt").write_text(receipt_block(player_secret, {**body, "judge_key": player["public_key"]}))
    return judge, player["public_key"], str(tmp_path)


def test_a_forged_receipt_is_bad_evidence_and_the_honest_log_audits_ok_next_to_it(cli, finished_copy, tmp_path):
    judge, forger, where = _receipts(cli, finished_copy, tmp_path)
    ok = cli("audit", "done", "--judge-key", judge, "--receipt", f"{where}/honest.txt")
    assert ok.exit_code == 0 and ok.stdout.startswith("OK: complete, seed hash not compared (none given), judge key "
                                                      "matches the published one, no published heads given, 1 receipt "
                                                      "checked")
    reason = cli.refused("done", "audit", "done", "--judge-key", judge, "--receipt", f"{where}/forged.txt", code=2)
    assert reason == (f"pbem: receipt 1 is signed by judge key {fingerprint(forger)}, not the published judge key "
                      f"{fingerprint(judge)}: it proves nothing about this log")
    # without the published key the audit cannot tell which is forged: still no verdict on the log
    cli.refused("done", "audit", "done", "--receipt", f"{where}/forged.txt", code=2,
                match="without --judge-key the audit cannot tell a forged receipt from a forged log")
    # bad input changes nothing and says what is right
    cli.refused("done", "audit", "done", "--judge-key", "1e4b", code=2,
                match="give --judge-key as the judge key printed by pbem new (pbem-ed25519-public:...)")


def test_a_log_whose_created_names_another_judge_key_fails(cli, finished_copy, tmp_path):
    judge, forger, where = _receipts(cli, finished_copy, tmp_path)
    exported = tmp_path / "done.jsonl"
    cli.ok("export", "done", "-o", exported)
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    rows[0]["data"]["judge_key"] = forger  # the judge forges the log and signs its receipts with a new key
    from pbem.protocol.canonical import GENESIS_HASH, event_hash
    prev = GENESIS_HASH
    for row in rows:  # re-chained, as the judge can
        row["prev_hash"] = prev
        row["hash"] = prev = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    (tmp_path / "forged.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = cli("audit", "--file", tmp_path / "forged.jsonl", "--judge-key", judge, "--receipt", f"{where}/forged.txt")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (f"FAIL: created names judge key {fingerprint(forger)}, not the published "
                                             f"judge key {fingerprint(judge)}: the log is not the game the judge "
                                             f"announced")
    assert json.loads(cli("audit", "--file", tmp_path / "forged.jsonl", "--judge-key", judge,
                          "--json").stdout)["verdict"] == "FAIL"


def test_a_key_given_at_new_then_replaced_is_a_change_and_a_first_key_is_not(cli, tmp_path):
    first, second, third = (cli.json("keygen", "-o", tmp_path / f"{n}.key")["public_key"] for n in "abc")
    cli.ok("new", "g", "--players", "ani,alex", "--key", f"ani={first}")
    cli.ok("key", "g", "alex", third)  # alex's first key: no change
    cli.ok("key", "g", "ani", second)
    cli.ok("client-seed", "g", "alex", "alex's words")
    cli.ok("start", "g")
    line, report = audited(cli, "g")
    assert line.endswith("; the judge's discretion: ani's key was changed once before start")
    assert report["discretion"] == {"key_changes": {"ani": 1}}
