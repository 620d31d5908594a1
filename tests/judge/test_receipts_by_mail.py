"""A game by mail where the judge drops a reveal it acknowledged and defaults the player:
the player's receipt, from the judge's own answer, alone proves it (docs/protocol.md §12)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.protocol import commands
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.receipts import read_receipts
from pbem.protocol.times import shift
from pbem.store import export_lines

from .conftest import PLAYERS, Judge


def _answers_to(judge: Judge, player: str) -> list[str]:
    return [r["body_text"] for r in judge.outbox("answer") if r["recipient"] == f"{player}@example.org"]


def _rechain(rows) -> str:
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


def test_the_judge_drops_a_reveal_and_defaults_the_player_and_the_receipt_proves_it(tmp_path):
    judge = Judge(tmp_path / "g.db", deadline_seconds=3600)
    session = judge.session()
    sealed = {p: commands.seal(session, p, session.rules.default(session.state, p, "select")) for p in PLAYERS}
    for p in PLAYERS:  # each player seals at home and mails the commitment
        result = judge.send(p, f"password {judge.passwords[p]}\ncommit {sealed[p]['commitment']}")
        assert result.outcome == "applied", result.lines
    frank = sealed["frank"]
    result = judge.send("frank", f"password {judge.passwords['frank']}\nreveal {frank['choice']} {frank['salt']}")
    assert result.outcome == "applied", result.lines
    answer = _answers_to(judge, "frank")[-1]
    assert "Keep this receipt" in answer and "-----BEGIN PBEM RECEIPT-----" in answer
    assert frank["salt"] not in answer.split("-----BEGIN PBEM RECEIPT-----")[1]  # the receipt holds no secret
    (receipt,) = read_receipts(answer)
    rows = [json.loads(line) for line in export_lines(judge.store.events("g1"))]
    reveal = rows[receipt["seq"] - 1]
    assert (reveal["kind"], reveal["data"]["player"], reveal["hash"]) == ("reveal", "frank", receipt["hash"])
    assert receipt["head_hash"] == rows[-1]["hash"]

    # the dishonest judge: frank's reveal never happened; two hours later frank is a plain,
    # unforced NMR with a deadline that had passed: a log consistent in every part
    opened = rows[receipt["seq"] - 2]["at"]  # the last commitment opened the reveals
    forged = rows[: receipt["seq"] - 1]
    replay = commands.Session.replay("g1", forged, bytes.fromhex(judge.store.get_secret("g1", "server_seed")))
    forged.append({"game": "g1", "kind": "default", "at": shift(opened, 7200), "data": {
        "player": "frank", "kind": "select", "sealed": True, "round": 1, "step": 1, "reason": "no reveal (NMR)",
        "deadline": shift(opened, 3600), "choice": replay.rules.default(replay.state, "frank", "select")}})
    (tmp_path / "shown.jsonl").write_text(_rechain(forged))
    (tmp_path / "frank-mail.txt").write_text(answer)
    cli = CliRunner()

    alone = cli.invoke(app, ["audit", "--file", str(tmp_path / "shown.jsonl")])
    assert alone.exit_code == 3 and alone.stdout.startswith("INCOMPLETE: ")  # nothing public contradicts it
    proof = cli.invoke(app, ["audit", "--file", str(tmp_path / "shown.jsonl"), "--receipt", str(tmp_path / "frank-mail.txt")])
    shown = json.loads((tmp_path / "shown.jsonl").read_text().splitlines()[receipt["seq"] - 1])
    assert proof.exit_code == 1
    assert proof.stdout.splitlines()[0] == (
        f"FAIL: receipt 1 (frank, event {receipt['seq']} reveal) is contradicted: the judge signed event "
        f"{receipt['seq']} as {receipt['hash'][:8]}…, the log has {shown['hash'][:8]}… there: the judge changed or "
        f"dropped that event")
    # and the honest log agrees with the receipt
    (tmp_path / "honest.jsonl").write_text("".join(export_lines(judge.store.events("g1"))))
    honest = cli.invoke(app, ["audit", "--file", str(tmp_path / "honest.jsonl"), "--receipt", str(tmp_path / "frank-mail.txt")])
    assert honest.exit_code == 3 and "1 receipt checked" in honest.stdout.splitlines()[0]


def test_every_accepted_move_by_mail_gets_a_receipt_and_a_refused_one_none(tmp_path):
    judge = Judge(tmp_path / "g.db")
    session = judge.session()
    ani = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    judge.send("ani", f"password {judge.passwords['ani']}\ncommit {ani['commitment']}")
    assert len(read_receipts(_answers_to(judge, "ani")[-1])) == 1
    judge.send("ani", f"password {judge.passwords['ani']}\nreveal {ani['choice']} {'ab' * 32}")  # a wrong salt
    # refused: answered at once, and that message takes the answer to her commitment (held for
    # her next message) with it, first, its receipt unchanged; the refusal itself has none
    answer = _answers_to(judge, "ani")[-1]
    assert len(_answers_to(judge, "ani")) == 1 and answer.index("commitment recorded") < answer.index("REFUSED")
    assert len(read_receipts(answer)) == 1 and "RECEIPT" not in answer.split("The judge's answer for ani")[-1]
    choice = session.rules.default(session.state, "alex", "select")
    judge.send("alex", f"password {judge.passwords['alex']}\nseal {choice}")  # sealed on receipt by the judge
    (receipt,) = read_receipts(_answers_to(judge, "alex")[-1])
    assert receipt["event"] == "commit" and receipt["player"] == "alex"
    # a reply quoting the answer (and its receipt) is not read as a move
    quoted = "\n".join("> " + line for line in _answers_to(judge, "alex")[-1].splitlines())
    result = judge.send("alex", f"password {judge.passwords['alex']}\nstatus\n{quoted}")
    assert result.outcome == "applied", result.lines


def test_a_reveal_sent_early_by_mail_gets_a_receipt_that_catches_its_drop(tmp_path):
    """frank mails his commitment with its reveal below it: "reveal held", and a receipt
    (event early_reveal) of his commitment. The judge drops the held reveal and defaults
    him at the deadline: with that receipt, the audit FAILs (docs/protocol.md §3, §12)."""
    judge = Judge(tmp_path / "g.db", deadline_seconds=3600)
    session = judge.session()
    sealed = {p: commands.seal(session, p, session.rules.default(session.state, p, "select")) for p in PLAYERS}
    frank = sealed["frank"]
    result = judge.send("frank", f"password {judge.passwords['frank']}\ncommit {frank['commitment']}\n"
                                 f"reveal {frank['choice']} {frank['salt']}")
    assert result.outcome == "applied", result.lines
    answer = _answers_to(judge, "frank")[-1]
    assert "reveal held" in answer and "holds the reveal of that commitment" in answer
    assert [(r["event"], r["player"]) for r in read_receipts(answer)] == [("commit", "frank"), ("early_reveal", "frank")]
    assert frank["salt"] not in answer.split("-----BEGIN PBEM RECEIPT-----", 1)[1]
    with judge.store.conn:  # the dishonest judge drops it
        judge.store.conn.execute("delete from secrets where name like 'early/%'")
    for p in PLAYERS:
        if p != "frank":
            assert judge.send(p, f"password {judge.passwords[p]}\ncommit {sealed[p]['commitment']}").outcome == "applied"
    last = judge.store.events("g1")[-1].at
    commands.nmr(judge.store, "g1", "frank", at=shift(last, 7200))
    (tmp_path / "g.jsonl").write_text("".join(export_lines(judge.store.events("g1"))))
    (tmp_path / "frank-mail.txt").write_text(answer)
    proof = CliRunner().invoke(app, ["audit", "--file", str(tmp_path / "g.jsonl"), "--receipt", str(tmp_path / "frank-mail.txt")])
    assert proof.exit_code == 1 and "the judge dropped the reveal" in proof.stdout.splitlines()[0], proof.stdout
