"""The judge running by itself (``pbem mail run``): one loop, pass after pass,

    fetch (IMAP, when configured) -> ingest (a Maildir, when given) -> tick -> send -> sleep

each step the library function its own command uses (``fetch.fetch``, ``ingest_many``,
``deadlines.tick``, ``send.send_due``), so everything they promise holds here too: one
transaction per message (per batch of fetched messages), mail queued with the events that
cause it, nothing applied or sent twice after a crash.

**Stopping.** ``stop.is_set()`` is asked between steps and, inside fetch, ingest and send,
between messages: a stop request lets the message (or fetched batch) in hand finish, its
commit and its mark on the server included, and then the loop ends. ``stop.wait(seconds)``
is the sleep between passes and must return early once a stop is requested
(``threading.Event`` has both; ``pbem mail run`` wakes it from a signal).

**A server that is down** (IMAP or SMTP: refused, timed out, login refused, the connection
lost) does not stop the loop: that step is tried again after ``every``, then after twice
that, four times, ... at most ``MAX_BACKOFF`` apart (or ``every``, when longer), while the
other steps go on each pass (a Maildir is still read, reminders and defaults still happen).
The failure is reported once when it starts (again only if the reason changes) and once
when the step works again. So is a step that fails on the database (busy, disk full).

**Time.** ``clock()`` gives the time of everything recorded (a UTC stamp such as
``2030-01-01T10:00:00Z``; tests drive it); ``monotonic()`` measures the back-off, in seconds.
Nothing here reads the clock itself. Each thing done is reported to ``report(note)`` as it
happens: a ``Note`` naming the step, what happened, and the library's own result object.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .config import MailConfig

MAX_BACKOFF = 15 * 60  # seconds: a server down for hours is still tried every quarter of an hour


@dataclass(frozen=True)
class Note:
    """One thing the loop did or found. ``kind`` and ``item``:

    - "message" (fetch: ``(uid, outcome.Result)``; ingest: ``outcome.Result``; send: ``send.SendResult``)
    - "action" (tick: ``deadlines.Action``), "note" (fetch, send: a sentence), "marked" (fetch: a count)
    - "down" (``Down``) and "up" (``Up``): a step stopped or started working
    """

    step: str
    kind: str
    item: Any = None
    at: str = ""


@dataclass(frozen=True)
class Down:
    reason: str
    retry_in: float  # seconds until the step is tried again
    failures: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Up:
    failures: int  # how many tries failed in a row before this one worked
    since: str  # when the first of them failed

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Backoff:
    """When a failing step is tried next: ``every``, then twice that, ... at most ``cap``."""

    every: float
    cap: float = MAX_BACKOFF
    failures: int = 0
    next_at: float = float("-inf")
    reason: str | None = None
    since: str | None = None

    def ready(self, now: float) -> bool:
        return now >= self.next_at

    def failed(self, reason: str, now: float, at: str) -> Down | None:
        """Count a failure; the ``Down`` to report when it is news (a first failure, or a
        new reason), else None."""
        self.failures += 1
        delay = min(self.every * 2 ** min(self.failures - 1, 30), max(self.every, self.cap))
        self.next_at = now + delay
        news = reason != self.reason
        if self.failures == 1:
            self.since = at
        self.reason = reason
        return Down(reason, delay, self.failures) if news else None

    def worked(self) -> Up | None:
        """The step worked: the ``Up`` to report when it had failed before, else None."""
        if not self.failures:
            return None
        up = Up(self.failures, self.since or "")
        self.failures, self.next_at, self.reason, self.since = 0, float("-inf"), None, None
        return up


@dataclass
class Summary:
    """What one ``run`` came to: ``failing`` maps each step still failing to its reason."""

    passes: int = 0
    failing: dict = field(default_factory=dict)


class _Loop:
    def __init__(self, store, config: MailConfig, clock, stop, report, every: float,
                 maildir: Path | None, monotonic):
        self.store, self.config, self.clock, self.stop = store, config, clock, stop
        self.report, self.every, self.maildir, self.monotonic = report, every, maildir, monotonic
        self.judges = tuple(a for a in [config.judge_address] if a)
        self.said: set = set()  # tick failures reported already: each once until it changes
        self.said_notes: set = set()  # the send step's notes said already this run

    def note(self, step: str, kind: str, item=None) -> None:
        self.report(Note(step, kind, item, self.clock()))

    # -- the steps: each returns None, or why its server is unusable -------------------------

    def fetch(self) -> str | None:
        from .fetch import STOPPED, FetchError, fetch
        try:
            done = fetch(self.store, self.config, self.clock, self.judges, should_stop=self.stop.is_set,
                         on_message=lambda uid, result: self.note("fetch", "message", (uid, result)))
        except FetchError as exc:
            return str(exc)
        for text in done.notes:
            self.note("fetch", "note", text)
        if done.marked_late:
            self.note("fetch", "marked", done.marked_late)
        return done.stopped if done.stopped not in (None, STOPPED) else None

    def ingest(self) -> str | None:
        from . import maildir
        from .ingest import ingest_many
        moves = []

        def raws():
            for raw, move in maildir.messages(self.maildir):
                if self.stop.is_set():
                    return
                moves.append(move)
                yield raw

        def committed(results):
            for result in results:
                moves.pop(0)()
                self.note("ingest", "message", result)
        ingest_many(self.store, raws(), self.clock, self.judges, on_commit=committed)
        return None

    def tick(self) -> str | None:
        from .deadlines import tick
        failed_now = set()

        def heard(action) -> None:
            if action.action == "failed":
                key = (action.game, action.player, action.round, action.step, action.kind, action.error)
                failed_now.add(key)
                if key in self.said:
                    return  # said at an earlier pass; tried again at every pass, quietly
            self.note("tick", "action", action)
        tick(self.store, self.clock(), on_action=heard)
        self.said = failed_now
        return None

    def send(self) -> str | None:
        from .send import send_due
        done = send_due(self.store, self.config, self.clock(), clock=self.clock, should_stop=self.stop.is_set,
                        claim_seconds=0, on_result=lambda result: self.note("send", "message", result))
        for text in done.notes:  # e.g. why the board pictures are left out: once a run, not every pass
            if ("send", text) not in self.said_notes:
                self.said_notes.add(("send", text))
                self.note("send", "note", text)
        return done.stopped


def run(store, config: MailConfig, *, clock: Callable[[], str], stop, report: Callable[[Note], None],
        every: float = 60.0, once: bool = False, maildir: Path | None = None,
        monotonic: Callable[[], float] = time.monotonic) -> Summary:
    """Pass after pass until ``stop`` (or after one pass with ``once``); see the module
    docstring. The caller holds the database's send lock exclusively (``pbem.store.lock``):
    rows are sent without a claim that would keep other senders off, there being none."""
    from ..protocol.errors import ProtocolError
    from ..store.errors import StoreError
    loop = _Loop(store, config, clock, stop, report, every, maildir, monotonic)
    steps = [name for name, wanted in (("fetch", bool(config.imap_host)), ("ingest", maildir is not None),
                                       ("tick", True), ("send", True)) if wanted]
    backoffs = {name: Backoff(every) for name in steps}
    summary = Summary()
    while not stop.is_set():
        summary.passes += 1
        for name in steps:
            if stop.is_set():
                break
            backoff = backoffs[name]
            if not backoff.ready(monotonic()):
                continue
            try:
                problem = getattr(loop, name)()
            except (StoreError, ProtocolError, sqlite3.Error, OSError, ValueError) as exc:
                problem = " ".join(str(exc).split()) or type(exc).__name__
            if problem:
                summary.failing[name] = problem
                down = backoff.failed(problem, monotonic(), clock())
                if down is not None:
                    loop.note(name, "down", down)
            else:
                summary.failing.pop(name, None)
                up = backoff.worked()
                if up is not None:
                    loop.note(name, "up", up)
        if once or stop.wait(every):
            break
    return summary
