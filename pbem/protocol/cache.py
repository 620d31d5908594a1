"""The snapshots a write leaves: the status report at each event, and every few events the
whole state with it (``FULL_SNAPSHOT_EVERY``), written after a command, or once at the
commit of a longer transaction (the email judge's batch of mail).

What a snapshot holds is read back by ``loading`` and ``pbem status`` (its format is
snapshot.py's) and compared with a fresh replay by ``audit``.
"""

from __future__ import annotations

import json

from .errors import Damaged, UnknownGame
from .loading import load_fresh
from .reports import status as status_report
from .session import Session
from .snapshot import SNAPSHOT_VERSION, head_columns


FULL_SNAPSHOT_EVERY = 8  # the whole state is cached at least every 8 events, the status at each


def write_snapshot(store, session: Session) -> None:
    """Cache the public status report at the head, so that ``status`` can answer without
    loading the rules, and, every ``FULL_SNAPSHOT_EVERY`` events, the whole replayed state
    with it, so that a game is loaded from it and at most that many events (``audit``
    checks both kinds)."""
    if session.seed is not None:
        game_id, seq = session.game_id, session.seq
        head = store.checked_head(game_id) or store.head(game_id)
        last_full = store.full_snapshot_seq(game_id)
        full = last_full is None or last_full == seq or seq - last_full >= FULL_SNAPSHOT_EVERY
        data = snapshot_data(session, head, full)
        store.put_snapshot(game_id, seq, json.dumps(data, separators=(",", ":")),
                           round=session.state.round if session.state is not None else None,
                           head=head_columns(data["status"]), at_head=head, full=full)


def snapshot_at_commit(store, session: Session) -> None:
    """Inside a longer transaction (the email judge's batch of mail), the snapshot is
    written once, of the game's last state, just before the transaction commits, not
    after every command: within the transaction the next command takes the session the
    store keeps (``load``). A session that took in events rolled back since (its savepoint
    undone) no longer matches the head: the game is read again (from its last snapshot,
    the few events since replayed) and that state is written."""
    due = store.snapshots_due
    if not due:
        store.before_commit.append(lambda: _write_due_snapshots(store))
    due[session.game_id] = session


def _write_due_snapshots(store) -> None:
    due, store.snapshots_due = dict(store.snapshots_due), {}
    for game_id, session in due.items():
        if session.seq != store.head(game_id)[0]:
            try:
                session = load_fresh(store, game_id, for_write=False)
            except (Damaged, UnknownGame):  # a cache never stops a commit: audit reports the damage
                continue
        write_snapshot(store, session)


def snapshot_data(session: Session, head: tuple[int, str], full: bool = True) -> dict:
    """What a snapshot at ``head`` holds: the session's state (``full``) and the status."""
    data = session.to_json() if full else {"v": SNAPSHOT_VERSION, "light": True}
    data["status"] = status_report(session, head)
    return data
