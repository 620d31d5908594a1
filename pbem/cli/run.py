"""'pbem mail run': the judge as one long-running process, for systemd or a container."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import DbOption, JsonOption, fail, handled, open_store, safe

# Test hook, not for users: when set, it names a file holding the current time (a UTC
# stamp such as 2030-01-01T10:00:00Z), read afresh every time the loop asks for the time,
# so that a test can move the judge's clock past a deadline without waiting for it.
TEST_CLOCK_ENV = "PBEM_TEST_CLOCK_FILE"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def register(app: typer.Typer) -> None:
    from .mail import app as mail_app
    mail_app.command("run")(run)


def _check_every(value: str) -> str:
    parse_every(value)
    return value


def parse_every(value: str) -> float:
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", value or "")
    seconds = float(found.group(1)) * UNITS[found.group(2) or "s"] if found else 0
    if not found or seconds <= 0 or seconds > 86400:
        raise typer.BadParameter(f"{value!r}: give how long to wait between passes, like 60s, 5m or 1h")
    return seconds


@handled
def run(every: Annotated[str, typer.Option("--every", callback=_check_every, help="How long to wait between passes, e.g. 60s, 5m.")] = "60s",
        once: Annotated[bool, typer.Option("--once", help="One pass, then exit (for cron); exit status 1 if a step failed.")] = False,
        maildir: Annotated[Optional[Path], typer.Option("--maildir", help="Also take the messages in this Maildir's new/ at every pass (filled by getmail, fetchmail, procmail).", show_default=False)] = None,
        config_file: Annotated[Optional[Path], typer.Option("--config", help="Mail config file (default: $PBEM_MAIL_CONFIG, else ~/.config/pbem/mail.toml).", show_default=False)] = None,
        db: DbOption = None, as_json: JsonOption = False):
    """Run the judge by itself: fetch, ingest, tick and send, again and again, until stopped.

    One pass: fetch new mail by IMAP (when imap_host is set), take the messages in --maildir,
    queue due reminders and apply due defaults (as 'pbem mail tick'), send what is queued
    (as 'pbem mail send'); then wait --every and go again. One line per thing done, with
    its time, on standard output (--json: one JSON object a line). SIGTERM or Ctrl-C stops
    it after the message in hand (a second one stops it at once; every write is one
    transaction either way). A server that is down is tried again less and less often (at
    most every 15 minutes) while the other steps go on. Only one runs per database, and
    'pbem mail send' waits its turn (it refuses while run runs). See docs/email.md for a
    systemd unit.

    \b
    Example: pbem mail run                  (settings in ~/.config/pbem/mail.toml)
    Example: pbem mail run --every 5m --config /etc/pbem/mail.toml --db /srv/pbem/pbem.db
    Example: pbem mail run --once --json    (one pass, from cron)
    """
    from ..mail import maildir as maildirs
    from ..mail import service
    from ..mail.config import check_fetchable, check_sendable, load_config
    from ..store.lock import DatabaseLock

    seconds = parse_every(every)
    config = check_sendable(load_config(config_file, os.environ))
    if config.imap_host:
        check_fetchable(config)
    if maildir is not None:
        maildirs.check(maildir)
    store = open_store(db)
    clock = _clock()
    log = _Log(as_json, once)
    stop = _SignalStop()
    try:
        with DatabaseLock(store.path, exclusive=True):
            log.line(clock(), "run", "started", _started(store.path, config, maildir, seconds, once))
            summary = service.run(store, config, clock=clock, stop=stop, report=log.note, every=seconds,
                                  once=once, maildir=maildir)
            if stop.reason:
                log.line(clock(), "run", "stopped", f"stopped on {stop.reason}: the message in hand was finished, "
                                                     "nothing is half-done")
    finally:
        stop.close()
    if once and summary.failing:
        fail("; ".join(f"{step}: {reason}" for step, reason in summary.failing.items()))


def _clock():
    """The loop's clock: the system's UTC time, or the test hook's file (see TEST_CLOCK_ENV)."""
    from ..store.event import utc_now
    path = os.environ.get(TEST_CLOCK_ENV)
    if not path:
        return utc_now

    def from_file() -> str:
        text = Path(path).read_text().strip()
        if not STAMP.fullmatch(text):
            raise ValueError(f"{TEST_CLOCK_ENV} {path}: {text!r} is not a time like 2030-01-01T10:00:00Z")
        return text
    return from_file


def _started(db: str, config, maildir: Optional[Path], seconds: float, once: bool) -> str:
    sources = []
    if config.imap_host:
        sources.append(f"fetching {config.imap_folder} of {config.imap_user} at {config.imap_server}")
    if maildir is not None:
        sources.append(f"reading the Maildir {maildir}")
    if not sources:
        sources.append("no mail to fetch (it comes by 'pbem mail ingest')")
    when = "one pass" if once else f"a pass every {_seconds(seconds)}"
    barrier = (f"; no mail before Litestream's replica holds it (replica barrier, {config.litestream_socket})"
               if config.replica_barrier else "")
    return (f"started (pid {os.getpid()}) on {db}: {when}; {', '.join(sources)}; sending through "
            f"{config.server} as {config.judge_address}{barrier}")


def _seconds(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


class _Log:
    """One line per note on standard output, flushed at once (a journal reads it live)."""

    def __init__(self, as_json: bool, once: bool):
        self.as_json, self.once = as_json, once

    def note(self, note) -> None:
        data = note.item.as_dict() if hasattr(note.item, "as_dict") else None
        if note.kind == "message" and note.step == "fetch":
            data = {"uid": note.item[0], **note.item[1].as_dict()}
        elif note.kind == "message" and note.step == "send":
            from dataclasses import asdict
            data = asdict(note.item)
        self.line(note.at, note.step, note.kind, describe(note, self.once), data)

    def line(self, at: str, step: str, kind: str, text: str, data: dict | None = None) -> None:
        if self.as_json:
            import json
            out = json.dumps({"at": at, "step": step, "kind": kind, "text": text, **({"data": data} if data else {})},
                             ensure_ascii=False, sort_keys=True)
        else:
            out = f"{at} {step}: {text}"
        sys.stdout.write(out + "\n")
        sys.stdout.flush()


def describe(note, once: bool = False) -> str:
    """The text of one note: the same words as the commands that do each step alone."""
    from .deadlines import action_line
    from .mail import ingest_line, send_line
    item = note.item
    if note.kind == "message":
        if note.step == "fetch":
            return f"uid {item[0]}: {ingest_line(item[1])}"
        if note.step == "send":
            return send_line(item)
        return ingest_line(item)
    if note.kind == "action":
        return action_line(item)
    if note.kind == "marked":
        return f"marked {item} message(s) that an earlier run ingested but did not mark"
    if note.kind == "down":
        if once:
            return f"failing: {safe(item.reason)}"
        if item.failures == 1:
            return (f"failing: {safe(item.reason)}; trying again in {_seconds(round(item.retry_in, 3))}, then less "
                    f"and less often (at most every 15m) until it works; the other steps go on")
        return f"still failing, now: {safe(item.reason)}; trying again in {_seconds(round(item.retry_in, 3))}"
    if note.kind == "up":
        tries = f"{item.failures} failed tr{'y' if item.failures == 1 else 'ies'}"
        return f"working again, after {tries} since {item.since}"
    return safe(str(item))


class _SignalStop:
    """The stop request: set by SIGTERM or SIGINT, which otherwise end pbem at once (see
    entry.py). ``wait`` sleeps until the next pass, woken at once by a signal: the signal
    module writes a byte to a pipe that ``select`` watches. A second signal ends the
    process at once, as a first Ctrl-C does elsewhere: every write is one transaction, so
    even then nothing is half-applied."""

    def __init__(self):
        import signal
        self.reason: str | None = None
        self._read, self._write = os.pipe()
        for fd in (self._read, self._write):
            os.set_blocking(fd, False)
        self._old_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        self._old = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGTERM, signal.SIGINT)}

    def _handle(self, signum, frame) -> None:
        import signal
        if self.reason is not None:
            os.write(2, b"pbem: stopped at once (a second signal)\n")
            os._exit(128 + signum)
        self.reason = signal.Signals(signum).name

    def is_set(self) -> bool:
        return self.reason is not None

    def wait(self, seconds: float) -> bool:
        import select
        if self.reason is None:
            select.select([self._read], [], [], seconds)
            try:
                while os.read(self._read, 512):
                    pass
            except BlockingIOError:
                pass
        return self.is_set()

    def close(self) -> None:
        """Put back the handlers found (a test calls the command in-process)."""
        import signal
        for sig, handler in self._old.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)
        signal.set_wakeup_fd(self._old_fd)
        os.close(self._read)
        os.close(self._write)
