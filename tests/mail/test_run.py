"""'pbem mail run': the judge's loop (fetch, ingest, tick, send, sleep), its log, its lock,
its shutdown on SIGTERM/SIGINT and its back-off while a server is down.

The loop's time is a parameter: in-process the library takes a clock and a monotonic
counter; as a process it reads PBEM_TEST_CLOCK_FILE (a test hook). Nothing here waits for
a deadline; the few waits on a child process are bounded polls for what it prints.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.mail import addresses, service
from pbem.mail.config import MailConfig
from pbem.store import Store, outbox
from pbem.store.lock import DatabaseLock, LockHeld

REPO_ROOT = Path(__file__).resolve().parents[2]
T0 = "2030-01-01T10:00:00Z"
DAY = 86400
LATE = "2030-01-02T11:00:00Z"  # past T0's deadline (a day) and grace (an hour)
STAMPED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \w+: ")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_game(db: Path, start: bool = True) -> dict[str, str]:
    """g1 (ani, alex) created at T0 with addresses, a day per request, reminders 6h before,
    an hour of grace; returns the mail passwords from the welcome messages."""
    with Store(db) as store:
        addresses.create_game(store, "g1", "tortuga", ["ani", "alex"], {},
                              {"ani": "ani@example.org", "alex": "alex@example.org"}, None, at=T0,
                              deadline_seconds=DAY, deadlines={"remind": 6 * 3600, "grace": 3600}, start=start)
        return {r.recipient.split("@")[0]: re.search(r"password for this game: (\S+)", r.body_text).group(1)
                for r in outbox.listing(store)}


def letter(player: str, password: str, body: str, number: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"{player}@example.org"
    msg["To"] = "judge@example.org"
    msg["Subject"] = "[g1] hello"
    msg["Message-ID"] = f"<m{number}.{player}@example.org>"
    msg.set_content(f"password {password}\n{body}\n")
    return msg.as_bytes()


def maildir(tmp_path: Path, *messages: bytes) -> Path:
    folder = tmp_path / "Maildir"
    for sub in ("new", "cur", "tmp"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for number, raw in enumerate(messages):
        (folder / "new" / f"17000000{number:02d}.M1P1.test").write_bytes(raw)
    return folder


def config_file(tmp_path: Path, smtp_port: int, **more) -> Path:
    path = tmp_path / "mail.toml"
    lines = ['judge_address = "judge@example.org"', 'smtp_host = "127.0.0.1"', f"smtp_port = {smtp_port}",
             'security = "plain"', *(f"{key} = {json.dumps(value)}" for key, value in more.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def clock_file(tmp_path: Path, stamp: str) -> Path:
    path = tmp_path / "clock"
    path.write_text(stamp + "\n")
    return path


def run_args(config: Path, *more) -> list[str]:
    return ["mail", "run", "--config", str(config), *more]


def spawn(db: Path, *args: str, clock: Path, **env) -> subprocess.Popen:
    """'pbem ARGS' as a process of its own, its standard output a pipe."""
    full = {**os.environ, "PBEM_DB": str(db), "PYTHONPATH": str(REPO_ROOT), "PBEM_TEST_CLOCK_FILE": str(clock),
            **env}
    for name in ("PBEM_CRASH_AT", "PBEM_INTERRUPT_AT"):
        if name not in env:
            full.pop(name, None)
    return subprocess.Popen([sys.executable, "-m", "pbem.cli.app", *args], env=full, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_until(process: subprocess.Popen, says: str, within: float = 600.0) -> list[str]:
    """The lines the process prints, up to the first containing ``says`` (a bounded poll)."""
    lines, end = [], time.monotonic() + within
    while time.monotonic() < end:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if says in line:
            return lines
    raise AssertionError(f"never said {says!r}: {lines}\n{process.stderr.read() if process.poll() is not None else ''}")


@pytest.fixture
def processes():
    """``processes(spawn(...))``: each is killed at the end of the test if still running."""
    started: list[subprocess.Popen] = []

    def keep(process):
        started.append(process)
        return process
    yield keep
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            stream.close()


# ---------------------------------------------------------------------- one pass


def test_one_pass_ingests_ticks_and_sends_with_a_line_for_each(cli, private_environment, smtp_server, tmp_path):
    server = smtp_server()
    passwords = make_game(private_environment)
    folder = maildir(tmp_path, letter("ani", passwords["ani"], "status", 1))
    config = config_file(tmp_path, server.port)
    result = cli(*run_args(config, "--once", "--maildir", folder), env={"PBEM_TEST_CLOCK_FILE": str(clock_file(tmp_path, LATE))})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(STAMPED.match(line) and line.startswith(LATE) for line in lines), lines  # the clock of the hook
    said = [line[len(LATE) + 1:] for line in lines]
    assert said[0].startswith(f"run: started (pid {os.getpid()}) on {private_environment}: one pass; "
                              f"reading the Maildir {folder}; sending through 127.0.0.1:{server.port}")
    assert said[1] == "ingest: m1.ani@example.org (g1, ani): applied; answer queued"
    assert said[2:4] == ["tick: defaulted ani in g1: commit (round 1, step 1) due 2030-01-02 10:00:00 UTC",
                         "tick: defaulted alex in g1: commit (round 1, step 1) due 2030-01-02 10:00:00 UTC"]
    sent = [line for line in said[4:] if line.startswith("send: sent #")]
    assert len(sent) == len(said) - 4 == len(server.handler.received) > 4
    with Store(private_environment) as store:
        assert outbox.listing(store) == []  # everything went out
    assert os.listdir(folder / "new") == [] and len(os.listdir(folder / "cur")) == 1


def test_json_lines(cli, private_environment, smtp_server, tmp_path):
    server = smtp_server()
    make_game(private_environment)
    result = cli(*run_args(config_file(tmp_path, server.port), "--once", "--json"),
                 env={"PBEM_TEST_CLOCK_FILE": str(clock_file(tmp_path, T0))})
    assert result.exit_code == 0, result.stderr
    notes = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(n["step"], n["kind"]) for n in notes] == [("run", "started")] + [("send", "message")] * 2
    assert notes[1]["at"] == T0 and notes[1]["data"]["outcome"] == "sent" and notes[1]["text"].startswith("sent #1 g1")


def test_once_exits_1_with_one_line_when_a_step_failed(cli, private_environment, tmp_path):
    make_game(private_environment)
    result = cli(*run_args(config_file(tmp_path, free_port()), "--once"),
                 env={"PBEM_TEST_CLOCK_FILE": str(clock_file(tmp_path, T0))})
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("pbem: send: 127.0.0.1:")
    assert "connection refused" in result.stderr
    assert "send: failing: " in result.stdout


@pytest.mark.parametrize("every", ["0", "-5s", "soon", "2d", "0ms"])
def test_a_bad_interval_is_a_usage_error(cli, private_environment, tmp_path, every):
    make_game(private_environment)
    result = cli(*run_args(config_file(tmp_path, 25), "--every", every))
    assert result.exit_code == 2 and "like 60s, 5m or 1h" in result.stderr


def test_settings_that_cannot_send_are_refused_before_anything(cli, private_environment, tmp_path):
    make_game(private_environment)
    path = tmp_path / "mail.toml"
    path.write_text('judge_address = "judge@example.org"\n')
    result = cli("mail", "run", "--config", path, "--once")
    assert result.exit_code == 1 and result.stderr.startswith("pbem: no SMTP server") and result.stdout == ""
    path.write_text('judge_address = "judge@example.org"\nsmtp_host = "127.0.0.1"\nsecurity = "plain"\n'
                    'imap_host = "127.0.0.1"\nimap_security = "plain"\nimap_user = "judge"\n')
    result = cli("mail", "run", "--config", path, "--once")
    assert result.exit_code == 1 and result.stderr.startswith("pbem: no password for IMAP user judge")


# ---------------------------------------------------------------------- the lock and the signals


def test_one_run_per_database_and_sigterm_stops_it_at_once(cli, private_environment, smtp_server, tmp_path, processes):
    server = smtp_server()
    make_game(private_environment)
    config, clock = config_file(tmp_path, server.port), clock_file(tmp_path, T0)
    first = processes(spawn(private_environment, *run_args(config, "--every", "1h"), clock=clock))
    read_until(first, "send: sent #2 ")  # its first pass is done: it sleeps for an hour now

    again = cli(*run_args(config, "--once"))
    assert again.exit_code == 1 and again.stdout == ""
    assert again.stderr == (f"pbem: 'pbem mail run' is already running on {private_environment} (pid {first.pid}); "
                            f"one is enough: stop that one first (kill {first.pid}, or systemctl stop) or give another --db\n")
    by_hand = cli("mail", "send", "--config", config)
    assert by_hand.exit_code == 1 and f"'pbem mail run' (pid {first.pid}) is running on" in by_hand.stderr

    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=600) == 0  # woken from its hour of sleep at once (not within an hour)
    assert first.stdout.read().endswith("run: stopped on SIGTERM: the message in hand was finished, nothing is half-done\n")
    assert cli(*run_args(config, "--once")).exit_code == 0  # the lock went with it


def test_a_killed_run_leaves_no_lock_behind(cli, private_environment, smtp_server, tmp_path, processes):
    server = smtp_server()
    make_game(private_environment)
    config, clock = config_file(tmp_path, server.port), clock_file(tmp_path, T0)
    first = processes(spawn(private_environment, *run_args(config, "--every", "1h"), clock=clock))
    read_until(first, "run: started")
    first.kill()
    first.wait()
    assert cli(*run_args(config, "--once")).exit_code == 0


def test_sigint_in_the_middle_of_a_batch_finishes_it_and_stops(private_environment, smtp_server, tmp_path, processes):
    """Ctrl-C while the first of two messages is being applied: both are applied (one
    transaction), answered and moved to cur/, and then the judge stops, sending nothing.
    (The second only asks for the status: the crash point would send a second Ctrl-C at
    the next event, and a second one stops the judge at once.)"""
    server = smtp_server()
    passwords = make_game(private_environment, start=False)
    folder = maildir(tmp_path, letter("ani", passwords["ani"], "client-seed one", 1),
                     letter("alex", passwords["alex"], "status", 2))
    config, clock = config_file(tmp_path, server.port), clock_file(tmp_path, T0)
    run = processes(spawn(private_environment, *run_args(config, "--maildir", str(folder)), clock=clock,
                          PBEM_INTERRUPT_AT="append:after-insert"))
    assert run.wait(timeout=600) == 0, run.stderr.read()
    lines = run.stdout.read().splitlines()
    assert [line.split(": ", 1)[1] for line in lines[1:]] == [
        "m1.ani@example.org (g1, ani): applied; answer queued", "m2.alex@example.org (g1, alex): applied; answer queued",
        "stopped on SIGINT: the message in hand was finished, nothing is half-done"]
    with Store(private_environment) as store:
        assert [e.data["seed"] for e in store.events("g1") if e.kind == "client_seed"] == ["one"]
        assert {r.kind for r in outbox.listing(store)} == {"private", "answer"}  # queued, not sent
    assert server.handler.received == [] and os.listdir(folder / "new") == []


def test_sigint_while_sending_sends_the_message_in_hand_and_leaves_the_rest(private_environment, smtp_server,
                                                                           tmp_path, processes):
    server = smtp_server()
    make_game(private_environment)
    config, clock = config_file(tmp_path, server.port), clock_file(tmp_path, T0)
    run = processes(spawn(private_environment, *run_args(config), clock=clock, PBEM_INTERRUPT_AT="send:after-claim"))
    assert run.wait(timeout=600) == 0, run.stderr.read()
    assert len(server.handler.received) == 1
    with Store(private_environment) as store:
        assert [(r.id, r.state) for r in outbox.listing(store, include_sent=True)] == [(1, "sent"), (2, "queued")]


def test_a_message_left_in_doubt_by_a_killed_run_goes_out_at_the_next_start(private_environment, smtp_server,
                                                                           tmp_path, processes):
    """Killed after it claimed a message: 'pbem mail send' would leave it for the claim's 15
    minutes, in case another sender had it; a run, the only sender (the lock), sends it at once."""
    server = smtp_server()
    make_game(private_environment)
    config, clock = config_file(tmp_path, server.port), clock_file(tmp_path, T0)
    crashed = processes(spawn(private_environment, *run_args(config), clock=clock, PBEM_CRASH_AT="send:after-claim"))
    assert crashed.wait(timeout=600) == 137 and server.handler.received == []
    again = processes(spawn(private_environment, *run_args(config, "--once"), clock=clock))
    assert again.wait(timeout=600) == 0, again.stderr.read()
    assert len(server.handler.received) == 2  # at the same moment of the clock: no claim held it back


def test_the_lock_itself(private_environment):
    Store(private_environment).close()
    held = DatabaseLock(private_environment, exclusive=True).acquire()
    try:
        for exclusive in (True, False):
            with pytest.raises(LockHeld) as refused:
                DatabaseLock(private_environment, exclusive=exclusive).acquire()
            assert refused.value.pid == os.getpid()
    finally:
        held.release()
    with DatabaseLock(private_environment, exclusive=False), DatabaseLock(private_environment, exclusive=False):
        with pytest.raises(LockHeld, match="'pbem mail send' is sending the mail of") as refused:
            DatabaseLock(private_environment, exclusive=True).acquire()
        assert refused.value.pid is None
    with DatabaseLock(private_environment, exclusive=True):
        pass


# ---------------------------------------------------------------------- back-off


def test_backoff_doubles_up_to_the_cap_and_says_each_change_once():
    backoff = service.Backoff(every=60)
    downs = []
    for now in (0, 60, 180, 420, 900, 1800, 2700):
        assert backoff.ready(now)
        downs.append(backoff.failed("refused", now, "t"))
        assert not backoff.ready(now + 1)
    assert [d.retry_in for d in downs if d] == [60]  # said once ...
    assert backoff.next_at == 2700 + 900  # ... and at most every quarter of an hour
    assert backoff.failed("timed out", 3600, "t").reason == "timed out"  # a new reason is news
    up = backoff.worked()
    assert (up.failures, up.since) == (8, "t") and backoff.worked() is None and backoff.ready(0)


class Refusing:
    """A server that takes each connection and hangs up at once: every fetch fails.
    ``count`` is how many connections it took."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port, self.count = self.sock.getsockname()[1], 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            conn.close()


class Passes:
    """The stop of the loop for a test: each wait is one pass more and moves a monotonic
    counter on by the wait; ``actions[n]()`` runs before pass n + 1; stops after ``total``."""

    def __init__(self, total: int, actions: dict):
        self.total, self.actions, self.done, self.now = total, actions, 0, 0.0
        self.seen: list = []

    def is_set(self) -> bool:
        return self.done >= self.total

    def wait(self, seconds: float) -> bool:
        self.done += 1
        self.now += seconds
        self.seen.append(self.done)
        if self.done in self.actions:
            self.actions[self.done]()
        return self.is_set()


def test_servers_down_back_off_while_the_other_steps_go_on(tmp_path, private_environment):
    """IMAP hangs up and SMTP refuses: fetch is tried at passes 1, 2, 4, 8 and 16 (every
    minute, then 2, 4, 8, 15), each failure said once; meanwhile a Maildir message is
    applied and a reminder queued; SMTP comes up and is said to work again."""
    passwords = make_game(private_environment)
    folder = maildir(tmp_path)
    imap, smtp_port = Refusing(), free_port()
    config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=smtp_port,
                        security="plain", imap_host="127.0.0.1", imap_port=imap.port, imap_security="plain",
                        imap_user="judge", imap_password="secret", timeout=5)
    smtp = {}

    def deliver():
        (folder / "new" / "1700000001.M1P1.test").write_bytes(letter("ani", passwords["ani"], "status", 1))

    def smtp_up():
        from aiosmtpd.controller import Controller
        from aiosmtpd.handlers import Sink
        smtp["server"] = Controller(Sink(), hostname="127.0.0.1", port=smtp_port)
        smtp["server"].start()
    stop = Passes(20, {2: deliver, 5: smtp_up})
    notes = []
    store = Store(private_environment)
    at = {"now": "2030-01-02T05:00:00Z"}  # five hours before the first deadline: reminders are due
    try:
        summary = service.run(store, config, clock=lambda: at["now"], stop=stop, report=notes.append, every=60,
                              maildir=folder, monotonic=lambda: stop.now)
    finally:
        if "server" in smtp:
            smtp["server"].stop()
    tries = imap.count
    said = [(n.step, n.kind) for n in notes]
    assert said.count(("fetch", "down")) == 1 and tries == 5
    down = next(n.item for n in notes if n.step == "fetch")
    assert down.failures == 1 and down.retry_in == 60 and "connection lost" in down.reason
    assert ("ingest", "message") in said and said.count(("tick", "action")) == 2  # both reminded, once
    sends = [n for n in notes if n.step == "send"]
    kinds = [n.kind for n in sends]
    assert kinds == ["down"] + ["message"] * (len(sends) - 2) + ["up"] and len(sends) > 4
    assert "connection refused" in sends[0].item.reason
    assert sends[-1].item.failures == 3  # passes 1, 2 and 4 failed; pass 8, after it came up, worked
    assert summary.passes == 20 and set(summary.failing) == {"fetch"}
    assert outbox.listing(store) == []
    store.close()



def test_a_tick_failure_is_said_once_not_at_every_pass(private_environment):
    """ani cannot be mailed, so her default fails at every pass: said at the first only."""
    make_game(private_environment)
    store = Store(private_environment)
    with store.transaction():
        store.conn.execute("update mail_players set address = 'ani at example' where player = 'ani'")
    config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=free_port(),
                        security="plain")
    notes, stop = [], Passes(3, {})
    service.run(store, config, clock=lambda: LATE, stop=stop, report=notes.append, every=60,
                monotonic=lambda: stop.now)
    ticks = [(n.item.action, n.item.player) for n in notes if n.step == "tick"]
    assert ticks == [("failed", "ani"), ("defaulted", "alex")]
    store.close()


def test_without_the_picture_renderer_the_run_says_why_once(private_environment, smtp_server, monkeypatch):
    """Mail goes without board pictures when resvg-py is missing; the run's log says why,
    once, not at every pass."""
    from pbem.mail import pictures
    server = smtp_server()
    make_game(private_environment)
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if pbem[mail] were not installed
    pictures.available.cache_clear()
    store = Store(private_environment)
    config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=server.port,
                        security="plain")
    at = {"now": T0}

    def more_mail():  # a new private message at the next pass: its pictures are left out too
        with Store(private_environment) as other:
            addresses.register(other, "g1", "ani", "ani@example.org", at=T0, new_password=True)
    notes, stop = [], Passes(3, {1: more_mail})
    try:
        service.run(store, config, clock=lambda: at["now"], stop=stop, report=notes.append, every=60,
                    monotonic=lambda: stop.now)
    finally:
        pictures.available.cache_clear()
        store.close()
    said = [n.item for n in notes if n.step == "send" and n.kind == "note"]
    assert len(said) == 1 and "resvg-py is not installed" in said[0]
    sent = [n for n in notes if n.step == "send" and n.kind == "message"]
    assert len(sent) == 3 and all(n.item.outcome == "sent" for n in sent)
