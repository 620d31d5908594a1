"""Checking a hash chain: the audit of a log, from the database or from an export.

A game's log is valid when its events are numbered 1, 2, 3, … with no gap, duplicate or
reordering, each event's ``prev_hash`` is the hash of the event before it (``GENESIS_HASH``
for event 1), and each ``hash`` recomputes as ``event_hash(prev_hash, event object)``.

A chain alone cannot show that its tail was cut off: the shortened log is a valid chain.
Published summaries print the chain head, so a verifier that knows a published head passes
it as ``expected_head`` and a log that stops short of it is refused.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from pbem.protocol.canonical import GENESIS_HASH, CanonicalError, canonical_json, event_hash
from pbem.text import quote

from .errors import ChainError
from .event import EXPORT_FIELDS

HASH_PATTERN = re.compile(r"[0-9a-f]{64}")


def short(digest: str) -> str:
    """Enough of a hash to tell two apart in a one-line message."""
    return f"{digest[:8]}…"


def export_row_problem(row: Any) -> str | None:
    """Why ``row`` is not a well-formed export dict, or None when it is."""
    if not isinstance(row, dict):
        return f"is a JSON {type(row).__name__}, not an object"
    missing = [name for name in EXPORT_FIELDS if name not in row]
    if missing:
        return f"is missing the field {', '.join(repr(name) for name in missing)}"
    unknown = sorted(set(row) - set(EXPORT_FIELDS))
    if unknown:
        # Fields outside the hash could carry anything unchecked, so none are tolerated.
        return f"has unknown field {', '.join(quote(name) for name in unknown[:5])}"
    seq = row["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return f"field 'seq' must be a positive integer, got {quote(seq)}"
    for name in ("game", "kind", "at"):
        if not isinstance(row[name], str) or not row[name]:
            return f"field {name!r} must be a non-empty string, got {quote(row[name])}"
    if not isinstance(row["data"], dict):
        return f"field 'data' must be a JSON object, got {type(row['data']).__name__}"
    for name in ("prev_hash", "hash"):
        if not isinstance(row[name], str) or not HASH_PATTERN.fullmatch(row[name]):
            return f"field {name!r} must be 64 lowercase hex digits, got {quote(row[name])}"
    try:
        canonical_json(row["data"])
    except CanonicalError as exc:
        return f"field 'data' has no canonical JSON form ({exc})"
    return None


def _sequence_problem(
    expected: int, found: int, seen: set[int], later: set[int]
) -> tuple[int, str]:
    """Name what went wrong when event ``expected`` was due but ``found`` came instead."""
    if found in seen:
        return found, f"event {found}: appears more than once"
    if found > expected:
        if expected in later:
            return expected, f"event {expected}: out of order (it comes after event {found})"
        before = f"event {expected - 1} is followed by" if expected > 1 else "the log starts at"
        return expected, f"event {expected}: missing ({before} event {found})"
    return found, f"event {found}: out of order (expected event {expected})"


def check_chain(
    rows: list[dict[str, Any]],
    expected_head: tuple[int, str] | None = None,
    row_problems: dict[int, str] | None = None,
) -> None:
    """``verify_chain`` over a list; ``row_problems`` maps a row index to a defect that the
    caller found in that row's storage (an unreadable body, say), reported in row order."""
    row_problems = row_problems or {}
    game = rows[0].get("game") if rows and isinstance(rows[0], dict) else None
    all_seqs = [row.get("seq") if isinstance(row, dict) else None for row in rows]
    seen: set[int] = set()
    prev_hash = GENESIS_HASH
    hash_at: dict[int, str] = {}
    for index, row in enumerate(rows):
        expected = index + 1
        problem = export_row_problem(row)
        if problem:
            seq = row.get("seq") if isinstance(row, dict) else None
            bad = seq if isinstance(seq, int) else expected
            raise ChainError(bad, f"event {bad}: {problem}")
        seq = row["seq"]
        if seq != expected:
            later = {s for s in all_seqs[index + 1 :] if isinstance(s, int)}
            raise ChainError(*_sequence_problem(expected, seq, seen, later))
        seen.add(seq)
        if row["game"] != game:
            raise ChainError(seq, f"event {seq}: belongs to game {quote(row['game'])}, not {quote(game)}")
        if index in row_problems:
            raise ChainError(seq, f"event {seq}: {row_problems[index]}")
        if row["prev_hash"] != prev_hash:
            link = f"event {seq - 1}" if seq > 1 else "the genesis hash"
            raise ChainError(
                seq,
                f"event {seq}: prev_hash does not match {link} "
                f"(stored {short(row['prev_hash'])}, expected {short(prev_hash)})",
            )
        event = {name: row[name] for name in ("game", "seq", "kind", "at", "data")}
        computed = event_hash(prev_hash, event)
        if row["hash"] != computed:
            raise ChainError(
                seq,
                f"event {seq}: hash does not match its contents "
                f"(stored {short(row['hash'])}, computed {short(computed)})",
            )
        prev_hash = computed
        hash_at[seq] = computed
    if expected_head is not None:
        _check_head(len(rows), hash_at, expected_head)


def _check_head(last: int, hash_at: dict[int, str], expected_head: tuple[int, str]) -> None:
    head_seq, head_hash = expected_head
    if head_seq == 0:
        if head_hash != GENESIS_HASH:
            raise ChainError(
                0, f"the published head 0 must carry the genesis hash, not {short(head_hash)}"
            )
        return
    if last < head_seq:
        raise ChainError(last + 1, f"event {last + 1}: missing (the log ends at event {last}, "
                                   f"but the published head is event {head_seq})")
    # a published head may be quoted by a prefix of its hash (at least 8 hex characters)
    if not hash_at[head_seq].startswith(head_hash):
        raise ChainError(
            head_seq,
            f"event {head_seq}: hash {hash_at[head_seq]} differs from the published head {head_hash}",
        )


def verify_chain(
    rows: Iterable[dict[str, Any]], expected_head: tuple[int, str] | None = None
) -> None:
    """Check one game's export dicts, in order; raise ``ChainError`` at the first bad event.

    ``expected_head`` is a published ``(seq, hash)``: the log must reach it and agree with
    it (a log that has grown past it is fine). An empty log passes unless a head says more.
    """
    check_chain(list(rows), expected_head)
