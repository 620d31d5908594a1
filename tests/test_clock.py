"""No test depends on today's date: the clock-sensitive tests pass a year from now too.

They run again here, in a subprocess under libfaketime (Debian's ``faketime``, which
``./dev test`` installs), with the clock of the whole process tree, pbem subprocesses
included, one year ahead. A test that forges events at a fixed date, or compares the clock
with one, passes until that date and fails after it: here it fails a year early.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIFT_DAYS = 365
# the tests that stamp, forge or compare event times, deadlines and due times (~5 s)
CLOCK_SENSITIVE = [
    "tests/protocol/test_public_audit.py",
    "tests/protocol/test_deadlines.py",
    "tests/protocol/test_snapshots.py",
    "tests/protocol/test_signed_games.py",
    "tests/store/test_store_log.py",
    "tests/store/test_store_export.py",
    "tests/cli/test_cli_newuser.py",
    "tests/cli/test_cli_damaged.py",
    "tests/render/test_render_defaults.py",
    "tests/judge/test_deadlines.py",
    "tests/cli/test_cli_deadlines.py",
    "tests/protocol/test_deadlines_in_force.py",
    "tests/judge/test_witnessed_time.py",
]


def shifted(*argv: str, timeout: int) -> subprocess.CompletedProcess:
    faketime = shutil.which("faketime")
    if faketime is None:
        pytest.fail("faketime is not installed, and this test runs the clock-sensitive tests a year "
                    "ahead with it: ./dev test installs it (Debian/Ubuntu: apt-get install -y faketime)")
    env = {k: v for k, v in os.environ.items() if k not in ("PBEM_DB", "PBEM_CRASH_AT", "PBEM_INTERRUPT_AT")}
    return subprocess.run([faketime, "-f", f"+{SHIFT_DAYS}d", sys.executable, *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_the_clock_really_moves_a_year_ahead():
    probe = shifted("-c", "import time; from pbem.store.event import utc_now; print(time.time(), utc_now())",
                    timeout=60)
    seconds, stamp = probe.stdout.split()
    assert abs(float(seconds) - time.time() - SHIFT_DAYS * 86400) < 3600, probe
    assert stamp > time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + (SHIFT_DAYS - 1) * 86400))


def test_the_clock_sensitive_tests_pass_a_year_from_now():
    missing = [name for name in CLOCK_SENSITIVE if not (ROOT / name).exists()]
    assert not missing, f"listed here but gone: {missing}"
    done = shifted("-m", "pytest", *CLOCK_SENSITIVE, "-q", "-x", "-p", "no:cacheprovider", timeout=600)
    assert done.returncode == 0, f"a year from now these tests fail:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
