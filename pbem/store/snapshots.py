"""The cached states of a game (snapshots), each checked against the log before it is trusted.

A snapshot is a state text stored with a digest that binds it to its game, its event index
and that event's hash (``snapshot_digest``): a snapshot whose event was changed, or that
outlives a cut log, is reported with the first bad event instead of being used. ``Store``
takes these methods from ``Snapshots``; they use the store's own connection and chain.
"""

from __future__ import annotations

from typing import NamedTuple

from pbem.protocol.canonical import sha256_hex

from .errors import StoreError

SNAPSHOT_TAG = b"pbem-snapshot-v1"


class Snapshot(NamedTuple):
    """A cached state of a game, checked against the log. ``problem`` is None when it can be
    trusted, else ``(seq, reason)``: the first bad event and what is wrong. ``full``: it
    holds the whole replayed state; a light one holds only the status report at its event."""

    seq: int
    text: str
    problem: tuple[int, str] | None
    full: bool = True


class Snapshots:
    """Mixed into ``Store``: writing and reading the snapshots of a game."""

    def put_snapshot(self, game: str, seq: int, state_text: str, round: int | None = None,
                     head: tuple[int, str | None, str] | None = None,
                     at_head: tuple[int, str] | None = None, full: bool = True) -> None:
        """Cache the state of ``game`` after event ``seq`` (0: before any event), with a
        digest that binds it to that event's hash (see ``snapshot``). ``full``: the text
        holds the whole state; a light snapshot (``full=False``) holds only the status report
        at ``seq``, and the newest full snapshot before it is kept, to load the game from.
        ``round`` is the round of that state (None before play starts): older snapshots of
        this round or a later one are dropped, and the last full snapshot of each earlier
        round is kept, so a round's summary can be replayed from just before the round began.
        ``head``: what the game's ``game_heads`` row caches when ``seq`` is the head (finished,
        earliest deadline owed, listing fields and text: ``pbem.protocol.snapshot.head_columns``); without it,
        a snapshot at the head leaves that row saying nothing (the game is read the long way).
        ``at_head``: ``head(game)`` as the caller has just read it in this transaction."""
        last_seq, last_hash = at_head if at_head is not None and self._in_transaction else self.head(game)
        if not 0 <= seq <= last_seq:
            raise StoreError(f"cannot snapshot {game!r} at event {seq}: the log has {last_seq}")
        digest = snapshot_digest(game, seq, last_hash if seq == last_seq else self._hash_at(game, seq), state_text)
        conn = self.conn
        conn.execute(
            "insert or replace into snapshots (game, seq, state, digest, round, full) values (?, ?, ?, ?, ?, ?)",
            [game, seq, state_text, digest, round, int(bool(full))],
        )
        if seq == last_seq > 0:
            finished, due, line, listing = head if head is not None else (0, None, None, None)
            conn.execute(
                "insert into game_heads (game, seq, snap, finished, due, line, listing) values (?, ?, ?, ?, ?, ?, ?) "
                "on conflict (game) do update set snap = excluded.snap, finished = excluded.finished, "
                "due = excluded.due, line = excluded.line, listing = excluded.listing",
                [game, seq, seq if head is not None else None, finished, due, line, listing])
        # a snapshot is only a cache of the replay: keep the newest one per game, the newest
        # full one (when the newest is light), and the newest full one of each round before
        # its round; an older light one is never read again
        if full:
            conn.execute("delete from snapshots where game = ? and seq < ? and (full = 0 or ? is null "
                         "or round is null or round >= ?)", [game, seq, round, round])
        else:
            conn.execute("delete from snapshots where game = ? and seq < ? and (full = 0 or ((? is null "
                         "or round is null or round >= ?) and seq < (select max(seq) from snapshots "
                         "where game = ? and seq < ? and full = 1)))", [game, seq, round, round, game, seq])

    def snapshot_before_round(self, game: str, round: int, upto: int) -> Snapshot | None:
        """The newest full snapshot taken at or before event ``upto`` in a round before
        ``round``, checked like ``snapshot`` (a changed one has a ``problem``); None when there
        is none."""
        rows = self._query("select seq, state, digest from snapshots where game = ? and seq <= ? and round < ? "
                           "and full = 1 order by seq desc limit 1", [game, upto, round])
        if not rows or rows[0]["digest"] is None:
            return None
        return self._checked_snapshot(game, rows[0]["seq"], rows[0]["state"], rows[0]["digest"])

    def all_snapshots(self, game: str) -> list[Snapshot]:
        """Every snapshot of ``game`` that carries a digest, oldest first, each checked."""
        rows = self.conn.execute("select seq, state, digest, full from snapshots where game = ? "
                                 "and digest is not null order by seq", [game]).fetchall()
        return [self._checked_snapshot(game, seq, text, digest, bool(full)) for seq, text, digest, full in rows]

    def latest_snapshot(self, game: str) -> tuple[int, str] | None:
        """The newest snapshot as stored, unchecked (``snapshot`` checks it)."""
        rows = list(
            self._query(
                "select seq, state from snapshots where game = ? order by seq desc limit 1",
                [game],
            )
        )
        return (rows[0]["seq"], rows[0]["state"]) if rows else None

    def snapshot(self, game: str, full: bool = False) -> Snapshot | None:
        """The newest snapshot (with ``full``: the newest full one), checked: its digest must
        recompute from its text and the stored hash of the event it was taken after, so a
        snapshot changed after it was written, or one that no longer belongs to the log, is
        reported as a ``problem``. None when there is none, or only one written before
        snapshots carried a digest (a cache: the state is rebuilt from the events)."""
        row = self.conn.execute(
            "select seq, state, digest, full from snapshots where game = ? " + ("and full = 1 " if full else "")
            + "order by seq desc limit 1", [game]).fetchone()
        if row is None or row[2] is None:
            return None
        return self._checked_snapshot(game, row[0], row[1], row[2], bool(row[3]))

    def full_snapshot_seq(self, game: str) -> int | None:
        """The event the newest full snapshot of ``game`` was taken after (None: none), as
        stored, unchecked: to tell when the next one is due."""
        return self.conn.execute("select max(seq) from snapshots where game = ? and full = 1", [game]).fetchone()[0]

    def _checked_snapshot(self, game: str, seq: int, text: str, digest: str, full: bool = True) -> Snapshot:
        last, _ = self.head(game)
        if seq > last:
            return Snapshot(seq, text, (last + 1, f"missing (the log ends at event {last}, "
                                                  f"but its snapshot was taken at event {seq})"), full)
        if digest != snapshot_digest(game, seq, self._hash_at(game, seq), text):
            return Snapshot(seq, text, (seq, "the cached snapshot of the state after this event "
                                             "was changed after it was written, or belongs to other events"), full)
        return Snapshot(seq, text, None, full)


def snapshot_digest(game: str, seq: int, event_hash: str, text: str) -> str:
    parts = (SNAPSHOT_TAG, game.encode(), str(seq).encode(), event_hash.encode(), text.encode())
    return sha256_hex(b"\0".join(parts))
