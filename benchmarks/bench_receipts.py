"""What receipts and published heads cost: signing one receipt (what every accepted move
adds), reading and checking one against a log, and finding the heads in a mailed summary.

Run: python benchmarks/bench_receipts.py [--n 2000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pbem.protocol.heads import heads_in_text
from pbem.protocol.receipts import contradiction, make_body, read_receipts, receipt_block
from pbem.protocol.signing import generate_keypair

EXAMPLE = Path(__file__).parent.parent / "examples" / "games" / "tortuga1667-nine-players"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    n = parser.parse_args().n
    secret, public = generate_keypair()
    rows = [json.loads(line) for line in EXAMPLE.with_suffix(".jsonl").read_text().splitlines()]
    hashes = [r["hash"] for r in rows]
    bodies = [make_body("g", "ani", i % len(rows) + 1, "commit", hashes[i % len(rows)],
                        (len(rows), hashes[-1]), public) for i in range(n)]
    started = time.perf_counter()
    blocks = [receipt_block(secret, body) for body in bodies]
    signing = (time.perf_counter() - started) / n
    started = time.perf_counter()
    read = read_receipts("".join(blocks))
    assert all(contradiction(i, b, public, hashes) is None for i, b in enumerate(read, start=1))
    checking = (time.perf_counter() - started) / n
    summary = EXAMPLE.with_suffix(".summary.txt").read_text()
    started = time.perf_counter()
    for _ in range(20):
        heads = heads_in_text(summary)
    finding = (time.perf_counter() - started) / 20
    print(f"receipt: {signing * 1e3:.3f} ms to sign and armour, {checking * 1e3:.3f} ms to read and check; "
          f"{max(len(b) for b in blocks)} bytes, {max(b.count(chr(10)) for b in blocks)} lines")
    print(f"heads: {len(heads)} found in a {len(summary) // 1024} KiB summary in {finding * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
