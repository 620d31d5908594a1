"""A game that runs itself: 'pbem mail run' as a real process, against a real Dovecot (mail
in) and a real aiosmtpd (mail out), through a whole 4-player game, killed with SIGKILL at
random moments and started again.

The players know only their mailboxes: they read what aiosmtpd received for their address
and write to the judge by IMAP APPEND into its INBOX, as if their mail had been delivered.

- ani seals by mail (``seal CHOICE``), alex seals on his own machine and mails ``commit``
  and ``reveal``, frank top-posts blocks above the judge's quoted message: all on time (the
  players of tests/judge/test_game_by_mail.py);
- frank also sends garbage in between: random bytes, HTML junk, mail with a forged From,
  a wrong password, a reply that quotes the judge and his own earlier blocks;
- lothar never answers: once the game waits for him alone, the test moves the judge's
  clock (PBEM_TEST_CLOCK_FILE) to the reminder time, then past the deadline and grace, and
  the judge reminds him and then applies the default. Nobody sleeps until a deadline.

Meanwhile the judge is killed with SIGKILL at seeded random moments (at least 20 times),
and sometimes started with a crash point (PBEM_CRASH_AT) at the worst moments: after a
batch is committed but before the messages are flagged on the server, after the SMTP
server took a message but before the outbox marks it sent. At the end: the export audits
clean; nothing was applied twice; every outbox row was sent and arrived, nothing else
arrived, and the only copies are of a message in doubt at a kill (same Message-ID: SMTP
cannot tell the sender whether the server took a message whose answer was lost, RFC 1047,
so the judge sends it again rather than lose it); every player's mailbox holds exactly
what the log and the seen-table imply.

Seeded: the players' choices, the garbage, the kills. What a kill interrupts depends on
the machine's timing, which is the point; the assertions hold whatever it hits.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest

from pbem.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_smtp = _load("pbem_tests_judge_conftest", "tests/judge/conftest.py")
_game = _load("pbem_tests_game_by_mail", "tests/judge/test_game_by_mail.py")
smtp_mailroom = _smtp.smtp_mailroom  # the fixture: aiosmtpd on 127.0.0.1, every message kept
smtp_servers = _smtp.smtp_servers  # the fixture it starts its server with

SEED = 20300102
JUDGE, LIST = "judge@example.org", "table@example.org"
PLAYERS = ("ani", "alex", "frank", "lothar")
LAZY = "lothar"
DEADLINE, REMIND, GRACE = 48 * 3600, 12 * 3600, 3600
MIN_KILLS = 20
CRASH_POINTS = ("fetch:after-commit", "send:after-accept", "send:after-claim", "commit:before", "commit:after")
# Seconds without any progress before the test fails and says where it stood: a guard
# against a judge that hangs, not a measure of speed. Generous, so that a loaded 2-core
# machine (a restart of the judge under load takes seconds) never trips it.
STUCK_AFTER = 900.0


def address(player: str) -> str:
    return f"{player}@example.org"


class Clock:
    """The judge's clock: a file the test moves forward (the test hook of 'pbem mail run')."""

    def __init__(self, path: Path, start: str):
        self.path = path
        self.set(start)

    def set(self, stamp: str) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(stamp + "\n")
        os.replace(temporary, self.path)  # the judge never reads half a time
        self.moment = stamp

    def now(self) -> str:
        return self.moment


class Judge:
    """'pbem mail run' as a child process, killed and started again at will."""

    def __init__(self, db: Path, config: Path, clock: Path, log: Path, password: str):
        self.db, self.config, self.log = db, config, log
        self.env = {**os.environ, "PBEM_DB": str(db), "PYTHONPATH": str(ROOT), "PBEM_IMAP_PASSWORD": password,
                    "PBEM_TEST_CLOCK_FILE": str(clock)}
        for name in ("PBEM_CRASH_AT", "PBEM_INTERRUPT_AT", "PBEM_MAIL_CONFIG"):
            self.env.pop(name, None)
        self.process: subprocess.Popen | None = None
        self.starts = self.kills = self.crashes = 0

    def start(self, crash_at: str | None = None) -> None:
        env = dict(self.env, **({"PBEM_CRASH_AT": crash_at} if crash_at else {}))
        with open(self.log, "ab") as out:
            out.write(f"--- start {self.starts + 1}{' with crash point ' + crash_at if crash_at else ''}\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pbem.cli.app", "mail", "run", "--every", "20ms", "--config", str(self.config)],
                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        self.starts += 1

    def kill(self, crash_at: str | None = None) -> None:
        """SIGKILL, and start again (with a crash point, when given)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.kills += 1
        else:  # a crash point ended it a moment ago
            self.alive()
            return
        self.start(crash_at)

    def alive(self) -> None:
        """Start the judge again if a crash point ended it; any other end is a failure."""
        code = self.process.poll()
        if code is None:
            return
        from pbem.store.faults import CRASH_EXIT_CODE
        assert code == CRASH_EXIT_CODE, f"the judge ended with exit status {code}:\n{self.tail()}"
        self.crashes += 1
        self.start()

    def started(self) -> bool:
        """The process of the latest start has printed its first line (its signal handlers
        are in place): its own line, after the marker the test wrote before starting it. (Not
        a count of such lines: a judge killed while Python was still starting, as a busy
        machine makes likely, never prints one, and a count would stay short for ever.)"""
        latest = self.log.read_text(errors="replace").rpartition("--- start ")[2]
        return f"run: started (pid {self.process.pid})" in latest

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STUCK_AFTER)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def judges():
    """``judges(Judge(...))``: the judge is killed at the end of the test, whatever happened."""
    made: list[Judge] = []

    def keep(judge: Judge) -> Judge:
        made.append(judge)
        return judge
    yield keep
    for judge in made:
        if judge.process is not None and judge.process.poll() is None:
            judge.process.kill()
            judge.process.wait()


class Garbage:
    """What frank sends in between his moves, and the outcome the judge must record for it."""

    KINDS = ("bytes", "html", "quoting", "forged", "password")

    def __init__(self, frank, rnd: random.Random):
        self.frank, self.rnd = frank, rnd
        self.strikes: dict[str, list[str]] = {}  # wrong passwords per address: at most 4 an hour, or it is ignored
        self.first = rnd.sample(self.KINDS, len(self.KINDS))  # each kind once, early, then at random

    def next(self, now: str) -> tuple[bytes, str | None, str, str | None]:
        """(the raw message, its Message-ID or None, what it is, who gets the answer or None)."""
        if not self.frank.inbox:
            # the judge has not mailed frank yet (it sends in its own time, a message with
            # board pictures takes a while): no password to forge, no message to quote
            return self.bytes(now)
        kind = self.first.pop() if self.first else self.rnd.choice(self.KINDS)
        if kind in ("forged", "password"):
            victim = address("ani") if kind == "forged" else address("frank")
            recent = [t for t in self.strikes.get(victim, []) if t > _earlier(now, 3600)]
            if len(recent) >= 3:
                kind = "html"
            else:
                self.strikes.setdefault(victim, []).append(now)
        return getattr(self, kind)(now)

    def _message(self, sender: str, subject: str = "[g1] hello") -> EmailMessage:
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = JUDGE
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid("junk", "mail.example.org")
        return msg

    def bytes(self, now):
        noise = bytes(self.rnd.getrandbits(8) or 1 for _ in range(self.rnd.randrange(40, 400)))  # no NUL: IMAP refuses it
        return noise, None, "bytes", None

    def html(self, now):
        msg = self._message(address("frank"), "[g1] <b>look</b>")
        msg.set_content('<html><body><table><tr><td>&nbsp;<script>alert("seal B")</script></td></tr></table>'
                        "<div>seal B</div><div>lorem ipsum dolor</div><p><a href='x'>unsubscribe</a></p>",
                        subtype="html")
        return msg.as_bytes(), msg["Message-ID"], "html", address("frank")

    def forged(self, now):
        msg = self._message(address("ani"))  # frank pretending to be ani, with his own password
        msg.set_content(f"password {self.frank.password}\nseal A\n")
        return msg.as_bytes(), msg["Message-ID"], "forged", address("ani")

    def password(self, now):
        msg = self._message(address("frank"))
        msg.set_content("password not-the-password\nseal A\n")
        return msg.as_bytes(), msg["Message-ID"], "password", address("frank")

    def quoting(self, now):
        """A reply quoting the judge's latest message to frank, which itself quotes his
        commands, and (quoted too) his latest message with its blocks: nothing is replayed."""
        last = self.frank.inbox[-1]
        msg = self._message(address("frank"), "Re: " + last["Subject"].removeprefix("Re: "))
        msg["In-Reply-To"] = last["Message-ID"]
        quoted = "\n".join(("> " + line).rstrip() for line in _game.text_of(last).splitlines())
        mine = "\n".join(("> " + line).rstrip() for line in self.frank.last_lines)
        msg.set_content(f"password {self.frank.password}\nstatus\n\nOn a day, the judge wrote:\n{quoted}\n\n"
                        f"and I wrote:\n{mine}\n")
        return msg.as_bytes(), msg["Message-ID"], "quoting", address("frank")


class Frank(_game.Frank):
    """Frank, keeping the lines of his last move (his garbage quotes them)."""

    last_lines: list[str] = []

    def write(self, private, lines, now):
        self.last_lines = lines
        return super().write(private, lines, now)


def _earlier(at: str, seconds: int) -> str:
    from datetime import datetime, timedelta
    return (datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ") - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _later(at: str, seconds: int) -> str:
    return _earlier(at, -seconds)


# ---------------------------------------------------------------------- the game


def test_a_game_runs_itself_through_kills_garbage_and_a_player_who_never_answers(
        tmp_path, dovecot, smtp_mailroom, cli, judges):
    port, room = smtp_mailroom
    server = dovecot()
    db = tmp_path / "judge.db"
    config = tmp_path / "mail.toml"
    config.write_text(f'judge_address = "{JUDGE}"\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\n'
                      f'security = "plain"\nimap_host = "127.0.0.1"\nimap_port = {server.port}\n'
                      f'imap_security = "plain"\nimap_user = "{server.user}"\ntimeout = 60\n')
    cli("new", "g1", "--players", ",".join(f"{p}={address(p)}" for p in PLAYERS), "--list", LIST, "--now",
        "--deadline", "48h", "--remind", "12h", "--grace", "1h", "--db", db)
    store = Store(db)
    clock = Clock(tmp_path / "clock", store.events("g1")[-1].at)
    judge = judges(Judge(db, config, clock.path, tmp_path / "judge.log", server.password))

    # One seeded stream each, so that the players' choices, the garbage and the kill
    # schedule do not shift with what the machine's timing makes happen first.
    players = {name: cls(name, room, random.Random(f"{SEED}-{name}"))
               for name, cls in (("ani", _game.Ani), ("alex", _game.Alex), ("frank", Frank))}
    garbage = Garbage(players["frank"], random.Random(f"{SEED}-garbage"))
    kills = random.Random(f"{SEED}-kills")
    next_kill = kills.randint(2, 9)  # after this many player messages
    sent: dict[str, tuple[str, str | None]] = {}  # Message-ID -> (what, who gets the answer)
    uids: list[int] = []

    kinds = Counter()  # what was delivered, by kind

    def deliver(raw: bytes, message_id: str | None, what: str, answer_to: str | None) -> None:
        uids.append(server.append(raw))
        kinds[what] += 1
        if message_id is not None:
            sent[message_id] = (what, answer_to)

    def idle() -> bool:
        """The judge has done all it can: every message ingested and flagged, nothing queued."""
        done = store.conn.execute("select coalesce(max(last_uid), 0) from imap_folders").fetchone()[0]
        unmarked = store.conn.execute("select count(*) from imap_unmarked").fetchone()[0]
        # an answer held for the player's next message waits for it, or for the clock (below)
        queued = store.conn.execute("select count(*) from outbox where state = 'queued' and not "
                                    "(held_until is not null and held_until > ?)", [clock.now()]).fetchone()[0]
        return done >= max(uids, default=0) and not unmarked and not queued

    def waiting() -> list[dict]:
        from pbem.protocol import loading, reports
        return reports.status(loading.load(store, "g1"), store.head("g1"))["waiting"]

    def move_the_clock() -> bool:
        """When the game waits for lothar alone: to his reminder time, and once he has been
        reminded, past his deadline and grace."""
        from pbem.mail.reminders import owed
        from pbem.protocol import commands, loading
        from pbem.store import judge as tables
        owes = owed(loading.load(store, "g1"))
        if not owes or {player for player, *_ in owes} != {LAZY}:
            return False
        key, entry = min(owes.items(), key=lambda item: item[1]["due"])
        remind_at, late_at = _later(entry["due"], -REMIND), _later(entry["due"], GRACE)
        if clock.now() < remind_at:
            clock.set(remind_at)
        elif clock.now() < late_at and tables.reminded(store, "g1", key, "reminder"):
            clock.set(late_at)
        else:
            return False  # moved already: the judge has yet to act on it
        return True

    def wait_for_news(known: int) -> None:
        """Until more mail has arrived than the ``known`` messages the players last looked at,
        or the clock is moved; a bounded poll, never a wait for a time. (Counting from when
        the players looked, not from now: mail that came in meanwhile, the final result say,
        is news, and waiting for more after it would wait for ever.)"""
        started = time.monotonic()
        while len(room.received) == known:
            judge.alive()
            if idle() and move_the_clock():
                if kills.random() < 0.25:  # now and then, kill it while it reminds or defaults
                    time.sleep(kills.uniform(0, 0.06))
                    judge.kill()
                return
            if time.monotonic() - started > STUCK_AFTER:
                raise AssertionError(f"no progress for {STUCK_AFTER:.0f}s; waiting for {waiting()}; "
                                     f"idle {idle()}; clock {clock.now()}\n{judge.tail()}")
            time.sleep(0.005)  # polling for the judge's work, not for a time

    judge.start()
    moves = 0
    while not any("final result" in m["Subject"] for m in room.inbox(LIST)):
        acted = False
        looked_at = len(room.received)  # the players read their mail from here on
        for name, player in players.items():
            raw = player.turn(clock.now())
            if raw is not None:
                deliver(raw, player.sent[-1], "move", address(name))
                acted = True
                moves += 1
        # garbage comes between frank's moves: once he has moved, his mailbox has what it
        # quotes (on a busy machine the judge may not have mailed him yet when others move)
        if acted and garbage.rnd.random() < 0.3 and players["frank"].sent:
            deliver(*garbage.next(clock.now()))
        if moves >= next_kill:  # a kill at a random moment of the judge's work on these messages
            next_kill = moves + kills.randint(2, 9)
            time.sleep(kills.uniform(0, 0.08))
            judge.kill(crash_at=CRASH_POINTS[judge.starts % len(CRASH_POINTS)] if kills.random() < 0.25 else None)
        if not acted:
            wait_for_news(looked_at)
        assert moves < 1500, "the game does not end"

    # Once more without a crash point; let it finish what it has in hand and stop it as
    # systemd would (once it has started: before that, SIGTERM ends Python the default way).
    # The clock moves past the time of any answer still held (one to frank's last garbage,
    # say), so that it goes alone, as it would.
    clock.set(_later(clock.now(), 3600))
    judge.kill()
    started = time.monotonic()
    while not (idle() and judge.started()):
        judge.alive()
        assert time.monotonic() - started < STUCK_AFTER, judge.tail()
        time.sleep(0.005)
    assert judge.stop() == 0, judge.tail()
    log = judge.log.read_text(errors="replace")
    assert "stopped on SIGTERM" in log.splitlines()[-1], judge.tail()
    assert "Traceback" not in log, judge.tail(80)
    assert judge.kills >= MIN_KILLS, f"only {judge.kills} kills: raise the odds"

    events = check_the_log(store, cli, tmp_path, players)
    check_the_seen_table(store, sent, kinds)
    doubled = check_the_mail(store, room, sent, events, judge)
    print(f"\n{moves} moves, garbage {dict(kinds - Counter(move=moves))}, {judge.kills} kills, "
          f"{judge.crashes} crash points hit, {len(room.received)} messages delivered, {doubled} twice")


def check_the_log(store, cli, tmp_path, players) -> list[dict]:
    """The export audits clean; nothing was applied twice; lothar was defaulted, never moved."""
    exported = tmp_path / "g1.jsonl"
    cli("export", "g1", "-o", exported, "--db", store.path)
    audit = json.loads(cli("audit", "--file", exported, "--json").stdout)
    assert audit["ok"] and audit["seed_revealed"], audit
    events = [json.loads(line) for line in exported.read_text().splitlines() if line.strip()]
    # One commitment, one reveal (or a default) per player and sealed step ...
    per_step = Counter((e["kind"], e["data"]["player"], e["data"]["round"], e["data"]["step"])
                       for e in events if e["kind"] in ("commit", "reveal", "nmr"))
    assert set(per_step.values()) == {1}, [k for k, n in per_step.items() if n > 1]
    # ... and as many of each as the players sent: no mail was acted on twice.
    for name, player in players.items():
        mine = Counter(e["kind"] for e in events if e["data"].get("player") == name)
        assert mine["decide"] == player.did["decision"], (name, mine, player.did)
        assert mine["commit"] == player.did["seal"], (name, mine, player.did)
        assert mine["reveal"] == player.did["seal"], (name, mine, player.did)  # by themselves, or the judge for them
    acted = {e["data"]["player"] for e in events if e["kind"] in ("commit", "decide")
             and e["data"].get("by") != "default"}
    assert LAZY not in acted and acted == {"ani", "alex", "frank"}
    defaulted = {e["data"]["player"] for e in events if e["kind"] == "nmr"
                 or (e["kind"] == "default" and e["data"]["reason"] == "NMR")}
    assert defaulted == {LAZY}, defaulted
    return events


def check_the_seen_table(store, sent, kinds) -> None:
    """Every message with a Message-ID was seen once, with the outcome its kind calls for;
    the random bytes were seen (by their bytes) and not answered."""
    outcomes = dict(store.conn.execute("select key, outcome from mail_seen").fetchall())
    assert len([o for o in outcomes.values() if o.startswith("not answered")]) == kinds["bytes"] > 0
    expected = {"move": "applied", "html": "refused: no password", "forged": "refused: wrong password",
                "password": "refused: wrong password", "quoting": "applied"}
    wrong = {mid: (what, outcomes.get(mid.strip("<>"))) for mid, (what, _) in sent.items()
             if outcomes.get(mid.strip("<>")) != expected[what]}
    assert not wrong, list(wrong.items())[:5]


def check_the_mail(store, room, sent, events, judge) -> int:
    every = [dict(zip([d[0] for d in cursor.description], row)) for cursor in
             [store.conn.execute("select * from outbox order by id")] for row in cursor.fetchall()]
    # A reminder may be dropped, never sent: the test moved the clock past its deadline in the
    # moment between its queueing and its sending, and the default settled its request first,
    # or the sender reached it after the deadline it names (outbox.EXPIRED).
    from pbem.store.outbox import EXPIRED
    dropped = [r for r in every if r["state"] == "dropped"]
    assert all(r["kind"] == "reminder" and r["last_error"] in ("its request was settled before it went", EXPIRED)
               for r in dropped), dropped
    rows = [r for r in every if r["state"] != "dropped"]
    assert {r["state"] for r in rows} == {"sent"}, "something is left in the outbox"
    arrived_ids = {r.message["Message-ID"] for r in room.received}
    assert not arrived_ids & {r["message_id"] for r in dropped}, "a dropped reminder arrived"
    arrived = Counter((rcpt, r.message["Message-ID"]) for r in room.received for rcpt in r.rcpt_tos)
    # Everything sent arrived, and nothing else did ...
    assert set(arrived) == {(r["recipient"], r["message_id"]) for r in rows}
    # ... once, but for a message in doubt when the judge was killed (the server had taken it,
    # the outbox had not marked it yet): sent again, the same message with the same Message-ID.
    doubled = {key: n for key, n in arrived.items() if n > 1}
    # each extra copy needs a kill in its moment of doubt (killed again while it was resent,
    # on a slow machine, a message arrives a third time)
    assert sum(n - 1 for n in doubled.values()) <= judge.kills + judge.crashes, doubled
    for (rcpt, message_id) in doubled:
        copies = [r.message for r in room.received if r.message["Message-ID"] == message_id and rcpt in r.rcpt_tos]
        assert len({(m["Subject"], _digest(m)) for m in copies}) == 1, f"{message_id}: two different messages"

    kind = {r["message_id"]: r["kind"] for r in rows}
    assert set(Counter(r["in_reply_to"] for r in rows if r["kind"] == "answer").values()) == {1}
    for player in PLAYERS:
        inbox = room.inbox(address(player))
        mine = {r["message_id"] for r in rows if r["recipient"] == address(player)}
        assert {m["Message-ID"] for m in inbox} == mine
        # one answer to each message that called for one, to the registered address it came from
        # (an answer that only confirms may travel inside the next message: threaded under
        # every mail it answers)
        answered = {ref for m in inbox if kind[m["Message-ID"]] == "answer" for ref in m["References"].split()
                    if ref in sent}
        assert sorted(answered) == sorted(mid for mid, (_, to) in sent.items() if to == address(player))
        # exactly one welcome with the password, first
        welcome = [m for m in inbox if "Your mail password for this game:" in _game.text_of(m)]
        assert {m["Message-ID"] for m in welcome} == {inbox[0]["Message-ID"]}
    # lothar: reminded once before each default, never anyone else
    reminders = [r for r in every if r["kind"] == "reminder"]
    assert {r["recipient"] for r in reminders} == {address(LAZY)}
    reminded = Counter(store.conn.execute(
        "select round, step, kind from mail_reminders where player = ? and stage = 'reminder'", [LAZY]).fetchall())
    defaulted = Counter((e["data"]["round"], e["data"]["step"], "commit" if e["kind"] == "nmr" else e["data"]["kind"])
                        for e in events if e["data"].get("player") == LAZY
                        and (e["kind"] == "nmr" or (e["kind"] == "default" and e["data"]["reason"] == "NMR")))
    assert reminded == defaulted and len(reminders) == sum(defaulted.values()) > 5, (reminded, defaulted)
    # the list got every public summary once and the final result
    listed = Counter(kind[m["Message-ID"]] for m in {m["Message-ID"]: m for m in room.inbox(LIST)}.values())
    assert set(listed) == {"summary", "result"} and listed["result"] == 1, listed
    return len(doubled)


def _digest(message) -> str:
    return hashlib.sha256("\n".join(part.get_content() for part in message.walk()
                                    if part.get_content_maintype() == "text").encode()).hexdigest()
