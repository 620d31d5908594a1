"""Reading a Maildir (filled by getmail, fetchmail or procmail): the messages in new/,
oldest first, each moved to cur/ (flagged seen) only once what it caused is committed.

A message is moved after its batch's commit, so a crash in between leaves it in new/ and
it is read again; ingest then knows it (by Message-ID, else its bytes) and does nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

# As 'pbem mail ingest' reads a message: anything past this is cut (and answered as too large).
MAX_READ = 10 * 1024 * 1024


class MaildirError(ValueError):
    """The folder is not a Maildir; the message says what it lacks."""


class NotAMessage(ValueError):
    """A terminal or a device was given where a message was expected."""

# An endless pipe ends: past the message, at most this many MiB are read and dropped.
DRAIN_CHUNKS = 64


def check(folder: Path) -> Path:
    folder = Path(folder)
    if not (folder / "new").is_dir() or not (folder / "cur").is_dir():
        raise MaildirError(f"{folder} is not a Maildir (it needs new/ and cur/ folders)")
    return folder


def messages(folder: Path):
    """(raw bytes, a callback that moves it to cur/) for each message in new/, oldest first
    (by name: deliverers start names with the time)."""
    import mailbox
    folder = check(folder)
    colon = mailbox.Maildir.colon
    for name in sorted(os.listdir(folder / "new")):
        if name.startswith("."):
            continue
        source = folder / "new" / name
        try:
            handle = source.open("rb")
        except FileNotFoundError:  # taken by another reader meanwhile
            continue

        def move(source=source, name=name):
            try:
                os.replace(source, folder / "cur" / f"{name}{colon}2,S")
            except FileNotFoundError:  # moved by another reader meanwhile
                pass
        yield read_capped(handle, str(source)), move


def read_capped(handle, name: str = "the message") -> bytes:
    """At most MAX_READ + 1 bytes of ``handle``; the rest of a pipe is read and dropped, up
    to a bound (an MTA expects the whole message to be read; /dev/zero never ends). A
    terminal or device is refused (NotAMessage): it holds no message, or never ends."""
    import stat
    try:
        mode = os.fstat(handle.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # an in-memory stream (tests, embedding)
        mode = stat.S_IFREG
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        handle.close()
        raise NotAMessage(f"{name} is {'a terminal or device' if stat.S_ISCHR(mode) else 'not a file'}, not a "
                          f"message; pipe one message in (pbem mail ingest < message.eml), or give --file, "
                          f"--mbox or --maildir")
    with handle:
        data = handle.read(MAX_READ + 1)
        for _ in range(DRAIN_CHUNKS):
            if not handle.read(1 << 20):
                break
    return data
