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
        yield read_capped(handle), move


def read_capped(handle) -> bytes:
    """At most MAX_READ + 1 bytes of ``handle``; the rest is read and dropped (an MTA pipe
    expects the whole message to be read)."""
    with handle:
        data = handle.read(MAX_READ + 1)
        while handle.read(1 << 20):
            pass
    return data
