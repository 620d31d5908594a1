"""The sender killed at any moment (PBEM_CRASH_AT in a real 'pbem mail send' process) and
run again: nothing is lost, and only the one documented window sends a message twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.mail.config import MailConfig
from pbem.mail.send import safe_name, send_due, write_due
from pbem.store import outbox
from pbem.store.faults import CRASH_EXIT_CODE

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_pbem(db: Path, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PBEM_DB": str(db), "PYTHONPATH": str(REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    if crash_at:
        env["PBEM_CRASH_AT"] = crash_at
    return subprocess.run([sys.executable, "-m", "pbem.cli.app", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def send_args(port: int) -> list[str]:
    return ["mail", "send", "--smtp", f"127.0.0.1:{port}", "--security", "plain", "--from", "judge@example.org"]


def after_the_claim(store) -> str:
    """A moment when the crashed sender's claim on row 1 has run out (read from the row,
    so the test does not depend on today's date)."""
    return outbox.get(store, 1).next_try_at


@pytest.mark.parametrize("point, copies_of_first", [("send:after-claim", 1), ("send:after-accept", 2)])
def test_killed_while_sending(store, put, smtp_server, private_environment, point, copies_of_first):
    server = smtp_server()
    ids = put(store, 3)

    crashed = run_pbem(private_environment, *send_args(server.port), crash_at=point)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    assert server.handler.message_ids() == ids[:copies_of_first - 1]
    assert [(r.id, r.state) for r in outbox.pending(store)] == [(1, "queued"), (2, "queued"), (3, "queued")]

    again = run_pbem(private_environment, *send_args(server.port))
    assert again.returncode == 0, again.stderr
    assert [line.split()[:2] for line in again.stdout.splitlines()[:-1]] == [["sent", "#2"], ["sent", "#3"]]

    # Row 1 is held by the dead sender's claim; once that runs out it goes.
    later = after_the_claim(store)
    config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1",
                        smtp_port=server.port, security="plain")
    assert [(r.id, r.outcome) for r in send_due(store, config, later).results] == [(1, "sent")]
    received = server.handler.message_ids()
    assert received.count(ids[0]) == copies_of_first  # twice only when the server had taken it
    assert received.count(ids[1]) == received.count(ids[2]) == 1
    assert outbox.pending(store) == []


def test_killed_between_two_messages(store, put, smtp_server, private_environment):
    """Row 1 marked sent and row 2 claimed, in one transaction, then killed: a state the two
    alone also leave (killed after the claim of row 2). Row 2 waits for its claim to run out,
    row 3 goes at once, and nothing goes twice."""
    server = smtp_server()
    ids = put(store, 3)

    crashed = run_pbem(private_environment, *send_args(server.port), crash_at="send:after-mark")
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    assert server.handler.message_ids() == ids[:1]
    assert [(r.id, r.state) for r in outbox.listing(store, include_sent=True)] == \
        [(1, "sent"), (2, "queued"), (3, "queued")]
    claimed, untouched = outbox.get(store, 2), outbox.get(store, 3)
    assert claimed.claimed_at is not None and claimed.next_try_at > claimed.claimed_at
    assert untouched.claimed_at is None

    again = run_pbem(private_environment, *send_args(server.port))
    assert again.returncode == 0, again.stderr
    assert [line.split()[:2] for line in again.stdout.splitlines()[:-1]] == [["sent", "#3"]]

    config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1",
                        smtp_port=server.port, security="plain")
    assert [(r.id, r.outcome) for r in send_due(store, config, claimed.next_try_at).results] == [(2, "sent")]
    assert sorted(server.handler.message_ids()) == sorted(ids)  # each once
    assert outbox.pending(store) == []


@pytest.mark.parametrize("point", ["write:before-rename", "write:after-rename"])
def test_killed_while_writing_files(store, put, private_environment, tmp_path, point):
    ids = put(store, 2)
    folder = tmp_path / "out"
    crashed = run_pbem(private_environment, "mail", "send", "--to-dir", str(folder), crash_at=point)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    write_due(store, folder, after_the_claim(store))
    names = sorted(p.name for p in folder.iterdir())  # no temporary file left either
    assert names == [f"1-{safe_name(ids[0])}.eml", f"2-{safe_name(ids[1])}.eml"]  # one file each
    assert outbox.pending(store) == []
