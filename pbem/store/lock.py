"""Who may send a database's mail: a lock file next to the database.

``pbem mail run`` takes the lock ``DB.lock`` (``pbem.db`` -> ``pbem.db.lock``) exclusively
for as long as it runs and writes its pid into the file; ``pbem mail send`` takes it shared
for the length of one run. So two ``run``s on one database cannot both run, and a ``send``
cannot run beside a ``run`` (two ``send``s may: they take turns row by row, each claiming a
message before it goes out). A ``run`` is then the only sender, which lets it send a message
left in doubt by a killed predecessor at once instead of after the claim runs out.

The lock is the operating system's (``flock``): it dies with the process, however the
process ends, so a crash never leaves a stale lock behind. The pid in the file is only there
to name the holder in a refusal; a killed run's pid may stay in the file, and is then
simply overwritten by the next.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import StoreError


class LockHeld(StoreError):
    """Another process holds the lock; ``pid`` is the running ``pbem mail run``'s, or None
    when the holders are ``pbem mail send``s (which write no pid)."""

    def __init__(self, message: str, pid: int | None):
        super().__init__(message)
        self.pid = pid


def lock_path(db_path: str | Path) -> Path:
    return Path(f"{db_path}.lock")


class DatabaseLock:
    """``with DatabaseLock(db_path, exclusive=True):`` ... (raises ``LockHeld`` at once
    instead of waiting)."""

    def __init__(self, db_path: str | Path, exclusive: bool):
        self.path, self.exclusive = lock_path(db_path), exclusive
        self._fd: int | None = None

    def acquire(self) -> DatabaseLock:
        import fcntl
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(fd, wait=self.exclusive)
            os.close(fd)
            raise self._refusal(pid) from None
        except BaseException:
            os.close(fd)
            raise
        # Exclusive: name ourselves. Shared: nobody runs, so a pid left there by a killed run
        # would name the wrong process.
        os.ftruncate(fd, 0)
        if self.exclusive:
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            if self.exclusive:
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the last descriptor releases the lock
            self._fd = None

    def __enter__(self) -> DatabaseLock:
        return self.acquire()

    def __exit__(self, *exc_info) -> None:
        self.release()

    def _refusal(self, pid: int | None) -> LockHeld:
        db = str(self.path)[:-len(".lock")]
        if pid is None and self.exclusive:
            return LockHeld(f"'pbem mail send' is sending the mail of {db} right now; start 'pbem mail run' "
                            f"when it has finished (and take 'pbem mail send' out of cron: run sends by itself)",
                            None)
        held = f" (pid {pid})" if pid else ""
        if self.exclusive:
            return LockHeld(f"'pbem mail run' is already running on {db} (pid {pid}); one is enough: stop "
                            f"that one first (kill {pid}, or systemctl stop) or give another --db", pid)
        return LockHeld(f"'pbem mail run'{held} is running on {db} and sends its mail itself; "
                        f"nothing to do here (stop it first to send by hand)", pid)


def _pid_in(fd: int, wait: bool) -> int | None:
    """The holder's pid. A run writes it right after it takes the lock: when the file is
    still empty, look again a few times (for at most a fifth of a second) before deciding
    that the holders are sends, which write none."""
    import time
    for _ in range(10 if wait else 1):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return int(text)
        if wait:
            time.sleep(0.02)
    return None
