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


def median_times(cmd: list[str], runs: int, env: dict) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of the child process."""
    import resource

    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PBEM_DB=str(Path(tmp) / "bench.db"))
        subprocess.run([sys.executable, "-m", "pbem.cli", "demo", "--game-name", "bench", "--json"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        baseline, baseline_cpu = median_times([sys.executable, "-c", "import sqlite3"], args.runs, env)
        status, status_cpu = median_times([sys.executable, "-m", "pbem.cli", "status", "bench"], args.runs, env)
    print(f"python -c 'import sqlite3': {baseline * 1000:.0f} ms wall, {baseline_cpu * 1000:.0f} ms CPU (medians of {args.runs})")
    print(f"pbem status (finished game): {status * 1000:.0f} ms wall, {status_cpu * 1000:.0f} ms CPU")
    print(f"ratio: {status / baseline:.2f}x wall, {status_cpu / baseline_cpu:.2f}x CPU (target < 4x)")


if __name__ == "__main__":
    main()
