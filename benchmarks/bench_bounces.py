"""Benchmark reading bounces (pbem.mail.bounces, flufl.bounce underneath).

    python benchmarks/bench_bounces.py            # 200 rounds of the hand-written bounces

Prints: the import time of flufl.bounce (paid only by an ingest that meets automatic mail,
never by CLI start-up), the mean time to read each bounce of tests/judge/bounces, and the
worst time over automatic messages of 1 MiB (the judge's size limit; only their start is
read, see MAX_BOUNCE_BYTES) shaped to cost the
detectors (many MIME parts, many short lines, one long line, a deep nesting). Times are
this process's CPU time (``time.process_time``), steadier than the wall clock on a busy
machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "judge" / "bounces"
HEAD = ("Return-Path: <>\nFrom: MAILER-DAEMON@relay.example.net\nTo: judge@example.org\n"
        "Subject: Undelivered Mail Returned to Sender\n")


def hostile(limit: int) -> dict[str, bytes]:
    parts = []
    size = 0
    while size < limit - 2000:
        chunk = f"--b\nContent-Type: text/plain\n\nfrank{len(parts)}@example.org: user unknown\n"
        parts.append(chunk)
        size += len(chunk)
    many_parts = (HEAD + 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n'
                  + "".join(parts) + "--b--\n")
    lines = HEAD + "\n" + "x\n" * ((limit - 500) // 2)
    long_line = HEAD + "\n" + "y" * (limit - 500) + "\n"
    depth = 400
    nested = HEAD + "MIME-Version: 1.0\n" + "".join(
        f'Content-Type: multipart/mixed; boundary="n{i}"\n\n--n{i}\n' for i in range(depth)) + \
        "Content-Type: text/plain\n\nfrank@example.org: 550 user unknown\n" + "".join(
        f"--n{i}--\n" for i in reversed(range(depth)))
    return {"many MIME parts": many_parts.encode(), "many short lines": lines.encode(),
            "one long line": long_line.encode(), f"nested {depth} deep": nested.encode()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    imported = subprocess.run([sys.executable, "-X", "importtime", "-c", "import flufl.bounce"],
                              capture_output=True, text=True).stderr.splitlines()
    total = next(int(line.split("|")[1]) for line in reversed(imported) if line.rstrip().endswith("flufl.bounce"))
    print(f"import flufl.bounce: {total / 1000:.1f} ms (cumulative, python -X importtime)")

    from pbem.mail.bounces import read
    for path in sorted(FIXTURES.glob("*.eml")):
        raw = path.read_text().replace("{ADDRESS}", "frank@example.org").replace("{DOMAIN}", "example.org") \
            .replace("{PLAYER}", "frank").replace("{MESSAGE_ID}", "<pbem.1@example.org>").encode()
        started = time.process_time()
        for _ in range(args.rounds):
            found = read(raw)
        spent = (time.process_time() - started) / args.rounds
        print(f"{path.stem:>12}: {spent * 1000:.2f} ms per bounce, {len(found.failures) if found else 0} failure(s)")
    worst = 0.0
    for name, raw in hostile(1 << 20).items():
        started = time.process_time()
        read(raw)
        spent = time.process_time() - started
        worst = max(worst, spent)
        print(f"hostile, {name} ({len(raw) // 1024} KiB): {spent * 1000:.0f} ms")
    print(f"worst hostile automatic message: {worst * 1000:.0f} ms")


if __name__ == "__main__":
    main()
