"""The judge running by itself ('pbem mail run', a real process) when a player's mail cannot
be delivered, against a real Dovecot (mail in) and aiosmtpd (mail out) that refuses one
player for good (550):

- the moderator is told within one pass (the failure and the notice in the same send step);
- no reminder goes to the dead address afterwards, while the other player is reminded;
- a bounce fetched by IMAP in a later pass is read, never answered, and tells nobody twice;
- a reminder queued just before the judge is killed, whose request is then settled, never
  arrives.

Each pass is 'pbem mail run --once' with the test's clock (PBEM_TEST_CLOCK_FILE): nobody
waits for a deadline; the only waits are for the child process to finish its pass.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from pbem.store.faults import CRASH_EXIT_CODE

ROOT = Path(__file__).resolve().parents[2]
JUDGE, MODERATOR = "judge@example.org", "mod@example.org"
ANI, FRANK = "ani@example.org", "frank@example.org"


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_undeliverable = _load("pbem_tests_undeliverable", "tests/judge/test_undeliverable.py")
refusing = _undeliverable.refusing  # the fixture: aiosmtpd on 127.0.0.1 refusing chosen addresses
# ... which stands on this fixture of tests/judge/conftest.py (not a conftest of this folder)
smtp_servers = _load("pbem_tests_judge_conftest_servers", "tests/judge/conftest.py").smtp_servers


def later(stamp: str, hours: float) -> str:
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ") + timedelta(hours=hours)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Judge:
    """A database with g1 (ani and frank, 24h deadlines, reminders 6h before, 1h grace, a
    moderator), a mail config, and one pass of 'pbem mail run' at a time, at the test's clock."""

    def __init__(self, tmp_path: Path, cli, smtp_port: int, imap=None):
        self.db, self.clock = tmp_path / "judge.db", tmp_path / "clock"
        cli("new", "g1", "--players", f"ani={ANI},frank={FRANK}", "--now", "--deadline", "24h", "--remind", "6h",
            "--grace", "1h", "--moderator", MODERATOR, "--db", self.db)
        config = (f'judge_address = "{JUDGE}"\nsmtp_host = "127.0.0.1"\nsmtp_port = {smtp_port}\n'
                  f'security = "plain"\ntimeout = 10\n')
        self.env = {**os.environ, "PBEM_DB": str(self.db), "PYTHONPATH": str(ROOT),
                    "PBEM_TEST_CLOCK_FILE": str(self.clock)}
        if imap is not None:
            config += (f'imap_host = "127.0.0.1"\nimap_port = {imap.port}\nimap_security = "plain"\n'
                       f'imap_user = "{imap.user}"\n')
            self.env["PBEM_IMAP_PASSWORD"] = imap.password
        for name in ("PBEM_CRASH_AT", "PBEM_MAIL_CONFIG"):
            self.env.pop(name, None)
        self.config = tmp_path / "mail.toml"
        self.config.write_text(config)
        self.start = self.query("select at from events where game = 'g1' order by seq desc limit 1")[0][0]
        self.set_clock(self.start)

    def set_clock(self, stamp: str) -> None:
        self.clock.write_text(stamp + "\n")

    def one_pass(self, crash_at: str | None = None) -> subprocess.CompletedProcess:
        env = dict(self.env, **({"PBEM_CRASH_AT": crash_at} if crash_at else {}))
        done = subprocess.run([sys.executable, "-m", "pbem.cli.app", "mail", "run", "--once", "--json",
                               "--config", str(self.config)], env=env, capture_output=True, text=True, timeout=300)
        if crash_at is None:
            assert done.returncode == 0, done.stdout + done.stderr
            assert "Traceback" not in done.stderr, done.stderr
        return done

    def query(self, sql: str, params=()) -> list[tuple]:
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def rows(self, **where) -> list[dict]:
        conn = sqlite3.connect(self.db)
        try:
            cursor = conn.execute("select * from outbox order by id")
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, r)) for r in cursor.fetchall()]
        finally:
            conn.close()
        return [r for r in rows if all(r[k] == v for k, v in where.items())]


def notes(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_a_dead_address_under_the_running_judge(tmp_path, cli, refusing, dovecot):
    server = refusing({FRANK: "550 5.1.1 <frank@example.org>: Recipient address rejected: User unknown"})
    imap = dovecot()
    judge = Judge(tmp_path, cli, server.port, imap)
    room = server.handler

    # pass 1: the welcomes go out; frank's is refused for good, and the moderator is told in that same pass
    lines = notes(judge.one_pass())
    sends = [n for n in lines if n["step"] == "send"]
    assert [n["data"]["recipient"] for n in sends if n["data"]["outcome"] == "failed"] == [FRANK]
    assert sends[-1]["data"]["recipient"] == MODERATOR and sends[-1]["data"]["outcome"] == "sent"
    [notice] = room.to(MODERATOR)
    assert notice["Subject"] == "[g1] mail to frank not delivered: no more reminders"
    text = notice.get_content()
    assert "Last server answer: recipient refused: 550 5.1.1 <frank@example.org>: Recipient address rejected" in text
    assert "pbem address g1 frank NEW-ADDRESS" in text
    assert len(room.to(ANI)) == 1 and room.rcpts[FRANK] == 1

    # reminder time: ani is reminded, frank is not
    judge.set_clock(later(judge.start, 18))
    judge.one_pass()
    assert [r["recipient"] for r in judge.rows(kind="reminder")] == [ANI]
    assert "reminder" in room.to(ANI)[-1]["Subject"]

    # a bounce arrives by IMAP (from a relay that had taken an earlier message): read, not answered
    welcome = judge.rows(recipient=FRANK)[0]["message_id"]
    raw = _undeliverable.bounce("postfix", message_id=welcome)
    imap.append(raw)
    judge.set_clock(later(judge.start, 19))
    lines = notes(judge.one_pass())
    [fetched] = [n for n in lines if n["step"] == "fetch" and n["kind"] == "message"]
    assert "bounce: frank@example.org failed (marked mail not delivered)" in fetched["text"]
    assert not any(r["kind"] == "answer" for r in judge.rows())

    # past the deadline and grace: both defaulted; the next step's reminders go to ani alone
    judge.set_clock(later(judge.start, 25))
    judge.one_pass()
    assert judge.query("select count(*) from events where game = 'g1' and kind = 'nmr'")[0][0] >= 1
    judge.set_clock(later(judge.start, 25 + 18))
    judge.one_pass()
    reminded = [r["recipient"] for r in judge.rows(kind="reminder")]
    assert FRANK not in reminded and reminded.count(ANI) >= 1
    assert len(room.to(MODERATOR)) == 1  # told once
    # frank's other mail (his private messages) was tried and failed, never retried; nothing reached him
    assert room.to(FRANK) == []
    failed = judge.rows(recipient=FRANK, state="failed")
    assert len(failed) == room.rcpts[FRANK] and all(r["attempts"] == 1 for r in failed)
    status = cli("status", "g1", "--db", judge.db).stdout
    assert "mail cannot be delivered: frank <frank@example.org>: MAIL NOT DELIVERED (no reminders)" in status


def test_a_reminder_queued_before_a_kill_and_settled_after_it_never_arrives(tmp_path, cli, refusing):
    server = refusing({})
    judge = Judge(tmp_path, cli, server.port)
    judge.one_pass()  # the welcomes
    # from the welcomes as the players received them: the judge's copy no longer holds them
    passwords = {}
    for received in server.handler.received:
        text = received.message.get_body(("plain",)).get_content()
        found = re.search(r"Your mail password for this game: (\S+)", text)
        if found:
            passwords[received.rcpt_tos[0]] = found.group(1)

    # the judge queues the reminders, and is killed before it can send them
    judge.set_clock(later(judge.start, 18))
    crashed = judge.one_pass(crash_at="tick:after-game")
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stdout + crashed.stderr
    reminders = dict(judge.query("select player, message_id from mail_reminders"))
    assert sorted(reminders) == ["ani", "frank"]
    assert {judge.rows(message_id=m)[0]["state"] for m in reminders.values()} == {"queued"}
    player, message_id = "ani", reminders["ani"]

    # the player answers before the judge is back: the request is settled
    from pbem.protocol import loading
    from pbem.store import Store
    with Store(judge.db) as store:
        session = loading.load(store, "g1")
        choice = session.rules.default(session.state, player, "select")
    address = f"{player}@example.org"
    mail = tmp_path / "move.eml"
    mail.write_text(f"From: {address}\nTo: {JUDGE}\nSubject: [g1] my move\nMessage-ID: <move1@example.org>\n\n"
                    f"password {passwords[address]}\nseal {choice}\n")
    applied = cli("mail", "ingest", "--file", mail, "--judge", JUDGE, "--db", judge.db).stdout
    assert "(g1, " + player + "): applied" in applied, applied

    # back again: everything due goes out, frank's reminder too, but not ani's stale one
    judge.one_pass()
    [row] = judge.rows(message_id=message_id)
    assert row["state"] == "dropped" and row["last_error"] == "its request was settled before it went"
    arrived = [r.message["Message-ID"] for r in server.handler.received]
    assert message_id not in arrived and reminders["frank"] in arrived
    assert all(r["state"] in ("sent", "dropped") for r in judge.rows())
