"""A snapshot: the replayed state of a game at an event, cached with the status report.

It is only a cache (``audit`` compares it with a fresh replay), so a snapshot of another
layout version is never read: the state is rebuilt from the events instead. This module
is small on purpose, so ``pbem status`` can read the cached report without the rules.
"""

from __future__ import annotations

import json

SNAPSHOT_VERSION = 2  # v2: open times per request (player, round, step, kind)


class UnreadableSnapshot(ValueError):
    """The snapshot's text is not a snapshot: not JSON, or not an object."""


def read_snapshot(text: str) -> dict | None:
    """The snapshot's data, or None when it has another version (rebuild by replay)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UnreadableSnapshot(f"it is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UnreadableSnapshot(f"it is a JSON {type(data).__name__}, not an object")
    return data if data.get("v") == SNAPSHOT_VERSION else None


def head_columns(status: dict) -> tuple[int, str | None, str]:
    """What a game's row in ``game_heads`` caches from the status report at its head:
    (finished, the earliest deadline owed or None, the listing fields as JSON) — what
    ``pbem games`` shows and ``pbem mail tick`` looks at, without reading the snapshot."""
    waiting = [{k: w[k] for k in ("player", "due") if k in w} for w in status.get("waiting") or []]
    line = {k: status.get(k) for k in ("type", "players", "started", "round", "phase", "finished")}
    line["waiting"] = waiting
    due = min((w["due"] for w in waiting if "due" in w), default=None)
    return int(bool(status.get("finished"))), due, json.dumps(line, separators=(",", ":"))


def head_columns_of(text: str) -> tuple[int, str | None, str] | None:
    """``head_columns`` of a stored snapshot's text; None when it cannot tell (another
    version, unreadable, no status)."""
    try:
        data = read_snapshot(text)
    except UnreadableSnapshot:
        return None
    status = data.get("status") if data is not None else None
    return head_columns(status) if isinstance(status, dict) else None
