"""`pbem status` start-up on a finished game, as a ratio to its floor,
`python -c "import typer, sqlite3"` (what any typer program over SQLite must load).

Both run with bytecode caching (each is run once first, so its .pyc files exist), pair by
pair: floor, status, floor, status... Each pair gives a ratio of CPU time (user + system
of the child, steadier than the wall clock on a busy machine) and of wall time; the
median and the range of the pairs' ratios are printed. Target (issue 17): within 1.25x.

    python benchmarks/bench_status.py [--runs 21]
    python benchmarks/bench_status.py --also /tmp/old-checkout   # its pbem in the same pairs

``--also DIR`` runs ``pbem status`` a second time in each pair with ``PYTHONPATH=DIR`` (another
checkout of pbem, say the commit before a change), so a before/after is measured in the
same run against the same floor.

pbem ends without the interpreter's teardown (pbem.cli.entry.leave), which the floor pays
(about a sixth of it): each pair also runs the floor ending the same way,
``import typer, sqlite3, os; os._exit(0)``, and the ratio to it is printed too: what pbem
itself adds. Both floors and pbem run with bytecode caching and buffered output, as a
user's shell has them (PYTHONDONTWRITEBYTECODE and PYTHONUNBUFFERED are dropped).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="pairs to run (default 21)")
    parser.add_argument("--also", metavar="DIR", help="another checkout of pbem to measure in the same pairs")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("pbem")
    pbem = [str(script)] if script.exists() else [sys.executable, "-m", "pbem.cli"]
    floor_cmd = [sys.executable, "-c", "import typer, sqlite3"]
    quick_floor_cmd = [sys.executable, "-c", "import typer, sqlite3, os; os._exit(0)"]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PBEM_DB=str(Path(tmp) / "bench.db"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("PYTHONUNBUFFERED", None)
        subprocess.run([*pbem, "demo", "--game-name", "bench", "--json"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        status_cmd = [*pbem, "status", "bench"]
        other_env = None
        if args.also:  # its own database: each pbem reads one of its own schema
            other_env = dict(env, PYTHONPATH=args.also, PBEM_DB=str(Path(tmp) / "also.db"))
            subprocess.run([*pbem, "demo", "--game-name", "bench", "--json"], env=other_env, check=True,
                           stdout=subprocess.DEVNULL)
        run(floor_cmd, env), run(status_cmd, env), run(quick_floor_cmd, env)  # bytecode written, caches warm
        if other_env:
            run(status_cmd, other_env)
        floors, statuses, cpu_ratios, wall_ratios, others = [], [], [], [], []
        quick, quick_others = [], []
        for _ in range(args.runs):
            f, s = run(floor_cmd, env), run(status_cmd, env)
            o = run(status_cmd, other_env) if other_env else None
            q = run(quick_floor_cmd, env)
            if o:
                others.append(o[1] / f[1] if f[1] else float("inf"))
                quick_others.append(o[1] / q[1] if q[1] else float("inf"))
            floors.append(f)
            statuses.append(s)
            wall_ratios.append(s[0] / f[0])
            cpu_ratios.append(s[1] / f[1] if f[1] else float("inf"))
            quick.append(s[1] / q[1] if q[1] else float("inf"))
    med = statistics.median
    print(f"{shutil.which('pbem') and 'pbem' or ' '.join(pbem)}; {args.runs} pairs, medians")
    print(f"floor  python -c 'import typer, sqlite3': {med(f[0] for f in floors) * 1000:6.0f} ms wall, "
          f"{med(f[1] for f in floors) * 1000:5.0f} ms CPU")
    print(f"pbem status (finished game):             {med(s[0] for s in statuses) * 1000:6.0f} ms wall, "
          f"{med(s[1] for s in statuses) * 1000:5.0f} ms CPU")
    print(f"ratio, CPU:  {med(cpu_ratios):.2f}x (pairs {min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}; target <= 1.25x)")
    print(f"ratio, wall: {med(wall_ratios):.2f}x (pairs {min(wall_ratios):.2f}-{max(wall_ratios):.2f})")
    print(f"ratio, CPU, to the floor without teardown (os._exit): {med(quick):.2f}x "
          f"(pairs {min(quick):.2f}-{max(quick):.2f})")
    if others:
        print(f"--also {args.also}, ratio CPU: {med(others):.2f}x (pairs {min(others):.2f}-{max(others):.2f}); "
              f"to the floor without teardown {med(quick_others):.2f}x")


if __name__ == "__main__":
    main()
