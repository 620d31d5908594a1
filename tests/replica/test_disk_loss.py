"""The judge loses its disk mid-game and comes back from its Litestream replica
(docs/hosting.md): the database's files (main, -wal, -shm) are deleted while the judge runs
under ``litestream replicate -exec``, the judge is killed, the restore drill of
docs/hosting.md is run as written, every mail is delivered again, and the judge finishes the
game.

With the replica barrier: every receipt any player received is in the restored log, the game
audits OK, and every player's mail is applied exactly once. Without it: the test records
what the restore lost (it may be nothing, or the last mails' events) and the judge still
finishes the game.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .table import Table

HOSTING = Path(__file__).resolve().parents[2] / "docs" / "hosting.md"


def drill_commands() -> list[str]:
    """The commands of the restore drill in docs/hosting.md, as written there."""
    block = re.search(r"<!-- restore-drill -->\n```sh\n(.*?)```", HOSTING.read_text(), re.S)
    assert block, "docs/hosting.md has no restore drill"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def run_drill(table: Table, answers: Path) -> dict[str, int]:
    """Each drill command in bash, with the drill's variables set; the exit status of each."""
    env = {**os.environ, "DB": str(table.db), "LITESTREAM_CONFIG": str(table.litestream), "ANSWERS": str(answers),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PBEM_DB", None)
    codes = {}
    for command in drill_commands():
        done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
        print(f"$ {command}\n{done.stdout}{done.stderr}")
        codes[command.split()[0] + " " + command.split()[1]] = done.returncode
    return codes


def lose_the_disk(table: Table) -> None:
    for suffix in ("", "-wal", "-shm"):
        os.unlink(f"{table.db}{suffix}")


def play_through_a_disaster(tmp_path, room, port, replica: dict, barrier: bool):
    table = Table(tmp_path / "host", room, port, replica, barrier=barrier)
    table.judge.start()
    table.wait_quiet()
    table.turns(limit=30)
    lose_the_disk(table)
    blind = table.turns_blind(2)  # mail that arrives while the files are gone
    table.judge.kill()  # the host dies
    received = len(room.received)
    answers = table.answers_mbox(tmp_path / "answers.mbox")
    codes = run_drill(table, answers)
    assert codes["litestream restore"] == 0 and codes["mv -f"] == 0, codes
    check = table.pbem("check-restore", "--receipts", str(answers), "--json", check=False)
    report = json.loads(check.stdout)
    assert check.exit_code == codes["pbem check-restore"]
    table.redeliver_all()  # the mail server still holds what it delivered
    table.judge.start()
    table.wait_quiet()
    table.turns()
    table.judge.stop()
    assert table.finished()
    return table, blind, received, report


def applied_once(table: Table) -> None:
    """Every mail a player wrote was acted on, once: the judge's record of what it took in
    holds each Message-ID once, applied, and no request of the rules was met twice."""
    with sqlite3.connect(table.db) as conn:
        seen = dict(conn.execute("select key, outcome from mail_seen"))
        events = [json.loads(body) for (body,) in conn.execute("select body from events where game = 'g1' order by seq")]
    wrote = [re.search(rb"^Message-ID: (\S+)", raw, re.M).group(1).decode() for raw in table.sent]
    assert len(set(wrote)) == len(wrote)
    assert all(seen.get(key) == "applied" or seen.get(key.strip("<>")) == "applied" for key in wrote), \
        [(key, seen.get(key)) for key in wrote if seen.get(key) != "applied"][:5]
    # each seal, reveal and decision a player wrote is in the log once: no more, no fewer
    for name, player in table.players.items():
        logged = {kind: sum(1 for e in events if e["kind"] == kind and e["data"].get("player") == name)
                  for kind in ("commit", "reveal", "decide")}
        wrote = {"commit": player.did["seal"], "decide": player.did["decision"]}
        if name == "alex":  # alex seals on his own machine and reveals himself; ani's reveals are the judge's
            wrote["reveal"] = player.did["reveal"]
        assert {kind: logged[kind] for kind in wrote} == wrote, (name, logged, wrote)
    assert not [e for e in events if e["kind"] == "default"], "a player's move was lost and defaulted"


@pytest.mark.parametrize("where", ["sftp", "file"])
def test_with_the_barrier_the_restored_log_holds_every_receipt_a_player_got(tmp_path, mailroom, sftp, fixed_seed,
                                                                            where):
    port, room = mailroom
    replica = (sftp.replica(tmp_path / "sftp-replica") if where == "sftp"
               else {"url": f"file://{tmp_path / 'other-disk' / 'replica'}"})
    table, blind, received, report = play_through_a_disaster(tmp_path, room, port, replica, barrier=True)
    # what the judge did after the loss was acknowledged only if the replica held it (Litestream
    # 0.5 cannot sync once the files are gone, so the barrier holds that mail): every receipt in
    # the players' mail, those answers' included, is in the restored log
    assert blind, "no mail reached the judge after the loss"
    print(f"with the barrier: {len(blind)} mails after the loss, answered: {[a for _, a in blind]}")
    assert report["ok"] and report["receipts"] > 20 and not report["missing"], report
    assert [g["verdict"] for g in report["games"]] == ["INCOMPLETE"]  # restored mid-game: the seed is still secret
    # the finished game audits OK, and every receipt of the whole game is in it
    audit = table.pbem("audit", "g1")
    assert audit.stdout.startswith("OK"), audit.stdout
    final = table.pbem("check-restore", "--receipts", str(table.answers_mbox(tmp_path / "all.mbox")))
    assert final.stdout.startswith("RESTORE OK: 1 game audits"), final.stdout
    applied_once(table)


def test_without_the_barrier_the_restore_may_lose_what_was_acknowledged(tmp_path, mailroom, fixed_seed):
    port, room = mailroom
    replica = {"url": f"file://{tmp_path / 'other-disk' / 'replica'}"}
    table, blind, received, report = play_through_a_disaster(tmp_path, room, port, replica, barrier=False)
    # Litestream copies the log about once a second: what it had not copied when the disk was
    # lost is gone, and the mail acknowledging it may have gone out. Recorded, not asserted.
    lost = [(m["player"], m["seq"], m["event"]) for m in report["missing"]]
    print(f"without the barrier: {len(blind)} mails after the loss, answered: {[a for _, a in blind]}; "
          f"receipts the restore lost: {lost or 'none'}")
    assert report["receipts"] > 20
    assert [g["verdict"] for g in report["games"]] == ["INCOMPLETE"]
    # the judge finishes the game all the same; the log it restarted from audits
    audit = table.pbem("audit", "g1")
    assert audit.stdout.startswith("OK"), audit.stdout
