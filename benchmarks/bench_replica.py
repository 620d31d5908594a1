"""What the replica barrier costs (docs/hosting.md): answer latency and mails per second of
the judge under Litestream, without and with ``replica_barrier``, in the same run.

Plays the same two-player Tortuga game by mail (tests/replica/table.py: ani and alex, the
judge as ``litestream replicate -exec "pbem mail run --maildir ..."``, a real SMTP server on
127.0.0.1) once per set-up, alternating, ``--repeat`` times. Each player's mail is delivered
into the judge's Maildir and timed until the judge has applied it and sent everything it
queued (its answer, the other player's private message, the summary). Wall-clock seconds:
the barrier's cost is waiting (one ``litestream sync -wait`` per batch), not CPU. After
each game with the barrier, the barrier alone is timed too (``BARRIERS`` calls).

    python benchmarks/bench_replica.py [--repeat 1] [--mails 60] [--sftp]

``--sftp`` replicates to an OpenSSH server it starts on 127.0.0.1 (sshd from openssh-server)
instead of a folder.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.mail import replica  # noqa: E402
from pbem.mail.config import load_config  # noqa: E402
from pbem.protocol import commands  # noqa: E402
from tests.replica import conftest as fixtures  # noqa: E402
from tests.replica.table import Table  # noqa: E402

SEED = bytes.fromhex("5eed" * 16)
BARRIERS = 30  # barrier calls timed alone after each game with the barrier


def one_game(folder: Path, barrier: bool, mails: int | None, sftp) -> dict:
    judge = fixtures._judge_conftest()
    room = judge.Mailroom()
    smtp = judge.smtp_server(room)
    target = sftp.replica(folder / "sftp-replica") if sftp else {"url": f"file://{folder / 'replica'}"}
    table = Table(folder / "host", room, smtp.port, target, barrier=barrier)
    try:
        table.judge.start()
        table.wait_quiet()
        started = time.monotonic()
        table.turns(limit=mails)
        seconds = time.monotonic() - started
        barriers = []
        if barrier:  # the barrier alone, while Litestream runs: one litestream sync -wait, nothing to copy
            config = load_config(table.mail_toml, {})
            for _ in range(BARRIERS):
                begun = time.monotonic()
                assert replica.barrier(config, table.db) is None
                barriers.append(time.monotonic() - begun)
    finally:
        table.judge.stop()
        smtp.stop()
    return {"latencies": table.latencies, "seconds": seconds, "sent": len(room.received), "barriers": barriers}


def line(name: str, runs: list[dict]) -> str:
    latencies = sorted(x for run in runs for x in run["latencies"])
    mails = len(latencies)
    seconds = sum(run["seconds"] for run in runs)
    p90 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.9))]
    return (f"{name:20} {mails} mails answered, answer latency median {statistics.median(latencies):.3f} s "
            f"(p90 {p90:.3f} s), {mails / seconds:.1f} mails/s, {sum(r['sent'] for r in runs) / seconds:.1f} "
            f"messages sent/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--mails", type=int, default=None, help="mails per game (default: the whole game)")
    parser.add_argument("--sftp", action="store_true", help="an SFTP replica on 127.0.0.1 instead of a folder")
    args = parser.parse_args()
    commands.secrets = SimpleNamespace(token_bytes=lambda n: SEED[:n], token_hex=secrets.token_hex)
    runs: dict[bool, list] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-replica-") as tmp:
        sftp = None
        if args.sftp:
            sftp = fixtures.SftpServer(Path(tmp) / "ssh")
            sftp.start()
        try:
            for number in range(args.repeat):
                for barrier in (False, True):
                    folder = Path(tmp) / f"{number}-{'barrier' if barrier else 'plain'}"
                    runs[barrier].append(one_game(folder, barrier, args.mails, sftp))
        finally:
            if sftp:
                sftp.stop()
    where = "an SFTP replica on 127.0.0.1" if args.sftp else "a file replica"
    print(f"the judge under litestream replicate -exec, {where}, a two-player game by mail, every mail "
          f"answered at once ({args.repeat} run{'s' if args.repeat != 1 else ''} each):")
    print(line("without the barrier:", runs[False]))
    print(line("with the barrier:", runs[True]))
    alone = [x for run in runs[True] for x in run["barriers"]]
    print(f"{'one barrier alone:':20} median {statistics.median(alone) * 1000:.0f} ms over {len(alone)} calls "
          f"(litestream sync -wait, the program started each time)")


if __name__ == "__main__":
    main()
