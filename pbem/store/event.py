"""One log event, and the exact object its hash is computed over."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

# Second precision and a literal Z: the timestamp is hashed, so it has one spelling only.
from pbem.protocol.times import AT_FORMAT, now_utc as utc_now  # noqa: F401

AT_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")

HASHED_FIELDS = ("game", "seq", "kind", "at", "data")
EXPORT_FIELDS = HASHED_FIELDS + ("prev_hash", "hash")


class Event(NamedTuple):
    """An event as stored. ``data`` is a plain JSON object; treat it as read-only. (A
    NamedTuple, not a dataclass: every command builds these classes at start-up, where a
    frozen dataclass costs about 1 ms each.)"""

    game: str
    seq: int
    kind: str
    at: str
    data: dict[str, Any]
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
        """The event object that is hashed: ``hash = event_hash(prev_hash, as_dict())``."""
        return {
            "game": self.game,
            "seq": self.seq,
            "kind": self.kind,
            "at": self.at,
            "data": self.data,
        }

    def export_dict(self) -> dict[str, Any]:
        """The event as one line of an export: the hashed object plus its chain links."""
        return {**self.as_dict(), "prev_hash": self.prev_hash, "hash": self.hash}

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Event:
        """Build an event from an export dict (for example one from ``read_export``)."""
        return cls(**{name: row[name] for name in EXPORT_FIELDS})
