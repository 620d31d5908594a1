"""Fault injection, so tests can kill or interrupt a process at a named point.

A test starts a child process with ``PBEM_CRASH_AT=<point>``; when the child reaches that
point it dies at once, without cleanup, as if the machine lost power under it. With
``PBEM_INTERRUPT_AT=<point>`` it sends itself a real SIGINT there instead, as a Ctrl-C
at that very moment would. The points: ``start`` (the program's SIGINT handler is in
place, the heavy imports not yet done), ``append:before-insert``, ``append:after-insert``,
``commit:before``, ``commit:after``; and in the mail sender ``send:after-claim``,
``send:after-accept`` (the server took the message, the row is not marked yet),
``send:after-mark`` (the row is marked sent and, in the same transaction, the next one claimed),
``write:before-rename``, ``write:after-rename``; in the deadline clock ``tick:after-game``
(a game's reminders and defaults are committed, the reminders not yet handed to SMTP); in the IMAP fetcher ``fetch:after-commit``
(a batch is ingested and committed, its messages are not flagged on the server yet).
"""

from __future__ import annotations

import os

CRASH_ENV = "PBEM_CRASH_AT"
INTERRUPT_ENV = "PBEM_INTERRUPT_AT"
CRASH_EXIT_CODE = 137  # what a SIGKILLed process reports, so it reads like a real kill


def armed() -> bool:
    """Whether a fault point is set at all: the store reads this once per transaction and
    passes its points by when none is (a write has six of them)."""
    environ = os.environ
    return CRASH_ENV in environ or INTERRUPT_ENV in environ


def maybe_crash(point: str) -> None:
    if os.environ.get(CRASH_ENV) == point:
        # os._exit skips finally blocks, atexit and sqlite's own close: that is the point.
        os._exit(CRASH_EXIT_CODE)
    if os.environ.get(INTERRUPT_ENV) == point:
        import signal

        os.kill(os.getpid(), signal.SIGINT)
