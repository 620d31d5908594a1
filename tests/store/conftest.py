"""Fixtures for the storage tests: fresh stores, and child processes that write to them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pbem.store import Store

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_crash_point(monkeypatch):
    # A crash point left in the environment would kill the test run itself.
    monkeypatch.delenv("PBEM_CRASH_AT", raising=False)


@pytest.fixture
def store():
    with Store(":memory:") as opened:
        yield opened


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "nested" / "pbem.db"


@pytest.fixture
def filled(store):
    """A store holding game "g" with events 1..6 whose data is {"n": seq}."""
    with store.transaction():
        for n in range(1, 7):
            store.append("g", "tick", {"n": n}, at="2024-05-01T12:00:00Z")
    return store


@pytest.fixture
def run_child():
    """Start ``python -c script`` with pbem importable; returns the Popen (not yet waited)."""

    def start(script: str, *args: str, crash_at: str | None = None) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        env.pop("PBEM_CRASH_AT", None)
        if crash_at is not None:
            env["PBEM_CRASH_AT"] = crash_at
        return subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    return start
