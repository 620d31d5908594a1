"""A two-player Tortuga game by mail against the judge running under Litestream
(``litestream replicate -exec "pbem mail run --maildir ..."``), for the replica tests and
benchmarks/bench_replica.py.

The players (ani and alex of tests/judge/test_game_by_mail.py) read only their mailbox at a
real SMTP server (aiosmtpd) and write into the judge's Maildir. The judge's clock is a file
(``PBEM_TEST_CLOCK_FILE``) that moves a minute per message. Every wait is a bounded poll for
a condition: the Maildir's new/ empty and nothing queued in the outbox (the judge has
answered), or a line in the judge's log.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import sqlite3
import time
from pathlib import Path

from click.testing import CliRunner

from .conftest import BOUND, Replicated, litestream_yml, poll

_spec = importlib.util.spec_from_file_location(
    "game_by_mail_for_replica", Path(__file__).resolve().parents[1] / "judge" / "test_game_by_mail.py")
by_mail = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(by_mail)

JUDGE, LIST = by_mail.JUDGE, by_mail.LIST
PLAYERS = {"ani": by_mail.Ani, "alex": by_mail.Alex}


class Table:
    def __init__(self, folder: Path, room, smtp_port: int, replica: dict, barrier: bool, every: str = "0.05s"):
        self.folder, self.room = folder, room
        self.db = folder / "judge.db"
        self.maildir = folder / "Maildir"
        for sub in ("new", "cur", "tmp"):
            (self.maildir / sub).mkdir(parents=True, exist_ok=True)
        self.socket = folder / "litestream.sock"
        self.litestream = litestream_yml(folder / "litestream.yml", self.db, replica, self.socket)
        settings = ['judge_address = "judge@example.org"', 'smtp_host = "127.0.0.1"', f"smtp_port = {smtp_port}",
                    'security = "plain"']
        if barrier:
            from .conftest import litestream_program
            settings += ["replica_barrier = true", f"litestream = {json.dumps(litestream_program())}",
                         f"litestream_socket = {json.dumps(str(self.socket))}", "replica_timeout = 5"]
        self.mail_toml = folder / "mail.toml"
        self.mail_toml.write_text("\n".join(settings) + "\n")
        self.pbem("new", "g1", "--players", ",".join(f"{p}={by_mail.address(p)}" for p in PLAYERS),
                  "--list", LIST, "--now")
        self.pbem("mail", "settings", "g1", "--hold-answers", "0")
        with sqlite3.connect(self.db) as conn:
            start = conn.execute("select at from events where game = 'g1' order by seq desc limit 1").fetchone()[0]
        self.clock = by_mail.Clock(start)
        self.clock_file = folder / "clock"
        self.set_clock(start)
        rnd = random.Random(20300101)
        self.players = {name: cls(name, room, rnd) for name, cls in PLAYERS.items()}
        self.sent: list[bytes] = []  # every mail the players wrote, in order
        self.judge = Replicated(self.litestream, ["mail", "run", "--every", every, "--maildir", str(self.maildir),
                                                  "--config", str(self.mail_toml), "--db", str(self.db)],
                                folder / "judge.log", {"PBEM_TEST_CLOCK_FILE": str(self.clock_file)})
        self.latencies: list[float] = []  # seconds from a mail's delivery to the judge's answer

    def set_clock(self, now: str) -> None:
        """The judge's time (whole, at once: the judge may read the file at any moment)."""
        temporary = self.clock_file.with_name("clock.tmp")
        temporary.write_text(now + "\n")
        os.replace(temporary, self.clock_file)

    def pbem(self, *args: str, check: bool = True):
        result = CliRunner().invoke(by_mail.PBEM, [*args, "--db", str(self.db)])
        assert not check or result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        return result

    # -- the judge's side -------------------------------------------------------------------

    def queued(self) -> int:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=60)
        try:
            return conn.execute("select count(*) from outbox where state = 'queued'").fetchone()[0]
        finally:
            conn.close()

    def quiet(self) -> bool:
        """The judge has taken every mail in and sent everything it queued."""
        return not any(self.maildir.joinpath("new").iterdir()) and self.queued() == 0

    def wait_quiet(self) -> None:
        def check():
            assert self.judge.process is None or self.judge.process.poll() is None, self.judge.text()[-3000:]
            return self.quiet()
        poll(check, f"the judge answers everything; its log: {self.judge.text()[-2000:]}", every=0.01)

    # -- the players' side ------------------------------------------------------------------

    def deliver(self, raw: bytes) -> str:
        """Put one mail into the judge's Maildir (as getmail would); its Message-ID."""
        number = len(self.sent)
        self.sent.append(raw)
        temporary = self.maildir / "tmp" / f"{1700000000 + number}.M{number}P1.players"
        temporary.write_bytes(raw)
        temporary.rename(self.maildir / "new" / temporary.name)
        return re.search(rb"^Message-ID: (\S+)", raw, re.M).group(1).decode()

    def finished(self) -> bool:
        return any("final result" in m["Subject"] for m in self.room.inbox(LIST))

    def turns(self, limit: int | None = None) -> int:
        """Play (each player's mail answered before the next writes) until the final result,
        or ``limit`` mails; how many mails were written."""
        written = 0
        while not self.finished() and (limit is None or written < limit):
            moved = False
            for player in self.players.values():
                if limit is not None and written >= limit:
                    break
                now = self.clock.tick()
                self.set_clock(now)
                raw = player.turn(now)
                if raw is None:
                    continue
                started = time.monotonic()
                self.deliver(raw)
                self.wait_quiet()
                self.latencies.append(time.monotonic() - started)
                written, moved = written + 1, True
            if not moved and not self.finished():
                seen = len(self.room.received)
                # nobody has anything to do: the judge's next mail is on its way
                poll(lambda: len(self.room.received) > seen or any(p.latest_private() is not None
                                                                    and p.latest_private()["Message-ID"] not in p.handled
                                                                    for p in self.players.values()),
                     f"a mail that asks a player for something; the judge's log: {self.judge.text()[-2000:]}")
            assert len(self.sent) < 1000, "the game does not end"
        return written

    def answered(self, message_id: str) -> bool:
        return any(got.message.get("In-Reply-To") == message_id for got in self.room.received)

    def turns_blind(self, limit: int) -> list[tuple[str, bool]]:
        """Up to ``limit`` mails while the judge cannot (or must not) send: each waits until the
        judge answered it, or took it in while its log says the send step fails (there may be no
        database to look into). (Message-ID, answered) for each."""
        done, start = [], len(self.judge.text())
        for player in self.players.values():
            if len(done) >= limit:
                break
            now = self.clock.tick()
            self.set_clock(now)
            raw = player.turn(now)
            if raw is None:
                continue
            message_id = self.deliver(raw)
            taken = f"ingest: {message_id.strip('<>')}"
            self.judge.wait_for(f"an answer to {message_id}, or the mail taken in and the send step failing",
                                lambda text: self.answered(message_id)
                                or (taken in text[start:] and "send: failing" in text[start:]))
            done.append((message_id, self.answered(message_id)))
        return done

    def redeliver_all(self) -> int:
        """Every mail the players ever wrote, delivered again (the mail server keeps what it
        delivered; docs/hosting.md, after a restore): the judge acts on each once."""
        for number, raw in enumerate(list(self.sent)):
            temporary = self.maildir / "tmp" / f"{1800000000 + number}.M{number}P1.again"
            temporary.write_bytes(raw)
            temporary.rename(self.maildir / "new" / temporary.name)
        return len(self.sent)

    def answers_mbox(self, path: Path) -> Path:
        """Every mail the players received, as an mbox (what they could give the auditor)."""
        with open(path, "wb") as out:
            for got in self.room.received:
                if any(a != LIST.lower() for a in got.rcpt_tos):
                    raw = got.raw.replace(b"\nFrom ", b"\n>From ")
                    out.write(b"From judge@example.org Thu Jan  1 00:00:00 2030\n" + raw.rstrip(b"\n") + b"\n\n")
        return path


__all__ = ["BOUND", "Table", "by_mail"]
