"""`pbem status` wall time on a finished game, as a ratio to `python -c "import sqlite3"`.

Target: under 4x. Run: python benchmarks/bench_status.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def median_wall(cmd: list[str], runs: int, env: dict) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PBEM_DB=str(Path(tmp) / "bench.db"))
        subprocess.run([sys.executable, "-m", "pbem.cli", "demo", "--game-name", "bench", "--json"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        baseline = median_wall([sys.executable, "-c", "import sqlite3"], args.runs, env)
        status = median_wall([sys.executable, "-m", "pbem.cli", "status", "bench"], args.runs, env)
    print(f"python -c 'import sqlite3': {baseline * 1000:.0f} ms (median of {args.runs})")
    print(f"pbem status (finished game): {status * 1000:.0f} ms")
    print(f"ratio: {status / baseline:.2f}x (target < 4x)")


if __name__ == "__main__":
    main()
