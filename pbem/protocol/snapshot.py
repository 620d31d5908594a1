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
