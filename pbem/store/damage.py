"""The check before every write (``Store.damage``), and the checkpoint that keeps it bounded.

A write stands on the chain of its game: before it, pbem checks the events a new process has
not checked yet. The checkpoint (in the game's ``game_heads`` row: the ``seq`` and ``hash``
of the last event the check passed or the write after it added, written in the same
transaction) lets the next process start there instead of at the first event:

- the checkpoint is trusted only if its own event is still there, still carries the hash the
  checkpoint names, and that hash still recomputes from the event's stored body;
- every event after it is checked in full: numbering, link, hash, body against its row;
- a log that ends before the checkpoint's event was cut: refused;
- any change to an event made through SQLite (an update, a delete, a row inserted at or
  below the checkpoint, by any program) sets the row's ``recheck`` flag through triggers
  (m025_chain_checkpoints), and so does any change of the schema (a dropped trigger) through
  the stored ``schema_version``: the next write then checks the whole chain from the first
  event, and still requires the checkpoint's event to carry the checkpoint's hash.

What the check cannot see, only ``pbem audit`` does: an event before the checkpoint changed
without SQLite's triggers (bytes edited in the file, a program that turns triggers off or
resets ``schema_version``), or a checkpoint row itself changed. docs/protocol.md §8 says so.
"""

from __future__ import annotations

import json
from hashlib import sha256  # OpenSSL's

from pbem.protocol.canonical import GENESIS_HASH, CanonicalError, canonical_text
from pbem.text import quote

from .event import HASHED_FIELDS

CHECKPOINT = "select checked, checked_hash, checked_schema, recheck from game_heads where game = ?"
# the row is there whenever the game has events (a trigger on events adds it); where it was
# deleted by hand, no checkpoint is kept and every write checks the whole chain
SAVE = "update game_heads set checked = ?, checked_hash = ?, checked_schema = ?, recheck = 0 where game = ?"


def schema_version(conn) -> int:
    return conn.execute("PRAGMA schema_version").fetchone()[0]


def save_checkpoints(conn, heads: dict[str, tuple[int, str]]) -> None:
    """Record ``(seq, hash)`` as each game's checkpoint (inside the writing transaction)."""
    if heads:
        version = schema_version(conn)
        conn.executemany(SAVE, [(seq, digest, version, game) for game, (seq, digest) in heads.items()])


def start_of_check(conn, game: str) -> tuple[int, str | None, tuple[int, str] | None]:
    """Where the check of ``game`` starts: ``(after, prev, mark)``. The events after ``after``
    are checked, the first one linking to ``prev`` (None: to whatever it says, the checkpoint's
    own event, whose hash is then held to ``mark``); ``mark`` is the checkpoint, which the log
    must still reach and agree with."""
    row = conn.execute(CHECKPOINT, [game]).fetchone()
    if row is None or row[0] is None or row[1] is None:
        return 0, GENESIS_HASH, None
    seq, digest, schema, whole = row
    mark = (seq, digest)
    if whole or schema != schema_version(conn) or seq < 1:
        return 0, GENESIS_HASH, mark
    return seq - 1, None, mark


def first_damage(conn, game: str, after: int, prev: str | None,
                 mark: tuple[int, str] | None) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """``(damage, head)``: the first bad event at or after ``after + 1`` and what is wrong, or
    None; and ``(seq, hash)`` of the last event checked (None when there was none)."""
    rows = conn.execute(
        "select seq, kind, at, body, prev_hash, hash from events where game = ? and seq > ? order by seq",
        [game, after],
    )
    expected, last = after + 1, None
    for row in rows:
        seq, kind, at, body, prev_hash, stored = row
        if seq != expected:
            before = f"event {expected - 1} is followed by" if expected > 1 else "the log starts at"
            return (expected, f"missing ({before} event {seq})"), None
        if prev is not None and prev_hash != prev:
            return (seq, f"prev_hash does not match {f'event {seq - 1}' if seq > 1 else 'the genesis hash'}"), None
        computed = sha256((prev_hash + body).encode("utf-8", "replace")).hexdigest()
        if stored != computed:
            hexadecimal = len(stored) == 64 and set(stored) <= set("0123456789abcdef")
            shown = f"{stored[:8]}…" if hexadecimal else "not a hex hash"
            return (seq, f"hash does not match its contents (stored {shown}, computed {computed[:8]}…)"), None
        if mark is not None and seq == mark[0] and stored != mark[1]:
            return (seq, f"its hash {stored[:8]}… is not the one an earlier write checked there "
                         f"({mark[1][:8]}…): the event was changed after it was checked"), None
        try:
            event = json.loads(body)
            agrees = [event["game"], event["seq"], event["kind"], event["at"]] == [game, seq, kind, at]
        except (ValueError, TypeError, KeyError):
            agrees = False
        if not agrees:
            return (seq, "its stored body does not agree with its row (game, seq, kind or at)"), None
        prev, expected, last = stored, expected + 1, row
    if mark is not None and expected - 1 < mark[0]:
        end = conn.execute("select max(seq) from events where game = ?", [game]).fetchone()[0] or 0
        ends = f"ends at event {end}" if end else "has no events"
        return (end + 1, f"missing (the log {ends}, but an earlier write checked it up to event "
                          f"{mark[0]}: the log was cut)"), None
    if last is None:
        return None, None
    names = ("seq", "kind", "at", "body", "prev_hash", "hash")
    _event, problem = event_from_body({"game": game, **dict(zip(names, last))})
    if problem:
        return (last[0], problem), None
    return None, (last[0], last[5])


def event_from_body(row: dict) -> tuple[dict, str | None]:
    """The event object stored in ``row["body"]``, and what is wrong with it if anything.

    When the body cannot be trusted the row's columns stand in for it, so the chain check
    can still report gaps and links in order before it reaches this row's defect.
    """
    from_columns = {name: row[name] for name in HASHED_FIELDS if name != "data"}
    fallback = {**from_columns, "data": {}}
    try:
        event = json.loads(row["body"])
    except ValueError:
        return fallback, "stored body is not valid JSON"
    if not isinstance(event, dict) or sorted(event) != sorted(HASHED_FIELDS):
        fields = ", ".join(HASHED_FIELDS)
        return fallback, f"stored body is not an event object with fields {fields}"
    try:
        canonical = canonical_text(event)
    except CanonicalError as exc:
        return fallback, f"stored body has no canonical JSON form ({exc})"
    if canonical != row["body"]:
        return fallback, "stored body is not in canonical JSON form"
    for name, value in from_columns.items():
        if event[name] != value:
            return fallback, f"stored body says {name} {quote(event[name])} but the row says {quote(value)}"
    return event, None


def chain_rows(conn, game: str) -> list[dict] | None:
    """The export dicts of ``game``'s stored events when every one of them passes what
    ``Store.verify`` checks (numbered from 1 without a gap, each linked to the one before,
    each hash recomputed, each body the canonical JSON of an event object that agrees with
    its row); None at the first that does not, and the caller asks ``verify`` what is wrong,
    in its words. One read and one parse of each body, for the audit (``verify`` then
    ``events`` read and parse each twice, and make its canonical form three times)."""
    rows, prev = [], GENESIS_HASH
    fields = ("game", "seq", "kind", "at", "data")
    for seq, kind, at, body, prev_hash, stored in conn.execute(
            "select seq, kind, at, body, prev_hash, hash from events where game = ? order by seq", [game]):
        if seq != len(rows) + 1 or prev_hash != prev or not isinstance(stored, str) or len(stored) != 64:
            return None
        if sha256((prev_hash + body).encode("utf-8", "replace")).hexdigest() != stored:
            return None
        event, problem = event_from_body({"game": game, "seq": seq, "kind": kind, "at": at, "body": body})
        if problem or not isinstance(event["data"], dict) or not all(
                isinstance(event[name], str) and event[name] for name in ("game", "kind", "at")):
            return None
        row = {name: event[name] for name in fields}
        row["prev_hash"], row["hash"] = prev_hash, stored
        rows.append(row)
        prev = stored
    return rows
