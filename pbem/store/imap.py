"""Where 'pbem mail fetch' stands in each IMAP folder: the folder's UIDVALIDITY, the highest
UID already ingested, and the UIDs ingested but not yet flagged (or moved) on the server.

An IMAP UID names a message only together with its folder's UIDVALIDITY: when the server
rebuilds a folder it gives it a new UIDVALIDITY, and every UID recorded under the old one
means nothing. Like the rest of the judge's bookkeeping this is private and never exported.
Writes must run inside ``store.transaction()``: ``record_ingested`` in the very transaction
that ingests the messages, so the record and the ingest stand or fall together.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FolderState:
    account: str
    folder: str
    uidvalidity: int
    last_uid: int
    checked_at: str


def folder_state(store, account: str, folder: str) -> FolderState | None:
    row = store.conn.execute(
        "select account, folder, uidvalidity, last_uid, checked_at from imap_folders "
        "where account = ? and folder = ?", (account, folder)).fetchone()
    return FolderState(*row) if row else None


def unmarked(store, account: str, folder: str) -> list[int]:
    """UIDs ingested under the folder's current UIDVALIDITY but not yet flagged on the server."""
    rows = store.conn.execute("select uid from imap_unmarked where account = ? and folder = ? order by uid",
                              (account, folder)).fetchall()
    return [row[0] for row in rows]


def _save(store, account: str, folder: str, uidvalidity: int, last_uid: int, at: str) -> None:
    store.conn.execute(
        "insert into imap_folders (account, folder, uidvalidity, last_uid, checked_at) values (?, ?, ?, ?, ?) "
        "on conflict (account, folder) do update set uidvalidity = excluded.uidvalidity, "
        "last_uid = excluded.last_uid, checked_at = excluded.checked_at",
        (account, folder, uidvalidity, last_uid, at))


def start_over(store, account: str, folder: str, uidvalidity: int, at: str) -> None:
    """The folder was rebuilt (a new UIDVALIDITY): forget its old UIDs, keep nothing unmarked."""
    store.require_transaction("start_over()")
    store.conn.execute("delete from imap_unmarked where account = ? and folder = ?", (account, folder))
    _save(store, account, folder, uidvalidity, 0, at)


def record_ingested(store, account: str, folder: str, uidvalidity: int, uids, at: str) -> None:
    """``uids`` were ingested in the open transaction: raise the folder's last UID to the
    highest of them and remember each as not yet flagged."""
    store.require_transaction("record_ingested()")
    uids = sorted(set(uids))
    if not uids:
        return
    state = folder_state(store, account, folder)
    last = state.last_uid if state is not None and state.uidvalidity == uidvalidity else 0
    _save(store, account, folder, uidvalidity, max(last, uids[-1]), at)
    store.conn.executemany("insert or ignore into imap_unmarked (account, folder, uid) values (?, ?, ?)",
                           [(account, folder, uid) for uid in uids])


def record_marked(store, account: str, folder: str, uids) -> None:
    """``uids`` are flagged (or moved) on the server now."""
    store.require_transaction("record_marked()")
    store.conn.executemany("delete from imap_unmarked where account = ? and folder = ? and uid = ?",
                           [(account, folder, uid) for uid in uids])


def record_checked(store, account: str, folder: str, uidvalidity: int, last_uid: int, at: str) -> None:
    """A run went through the whole folder: everything up to ``last_uid`` is dealt with
    (ingested, or left alone on purpose as read before the judge first looked)."""
    store.require_transaction("record_checked()")
    state = folder_state(store, account, folder)
    if state is not None and state.uidvalidity == uidvalidity:
        last_uid = max(last_uid, state.last_uid)
    _save(store, account, folder, uidvalidity, last_uid, at)
