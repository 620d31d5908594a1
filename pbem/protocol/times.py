"""Times as the log writes them: UTC, to the second, ``YYYY-MM-DDTHH:MM:SSZ``.

One spelling only (the time is hashed with its event), so times compare as strings. The
arithmetic every layer needs (a deadline, a retry, an hour of strikes) lives here, once.
Nothing but ``now_utc`` reads the clock, and only the command line's entry points call it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime(AT_FORMAT)


_AT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")


def is_at(text) -> bool:
    """Whether ``text`` is a time in the log's one spelling, of a day and second that exist
    (an event time in any other spelling would compare wrongly as a string)."""
    found = _AT.fullmatch(text) if type(text) is str else None
    if found is None:
        return False
    try:
        datetime(*map(int, found.groups()))
    except ValueError:
        return False
    return True


def _parsed(at: str) -> datetime:
    """``datetime.strptime(at, AT_FORMAT)``: the log's one spelling read directly (strptime
    costs ~15 us, and the outbox and the deadlines shift times on every message); anything
    else, or a date that does not exist, goes through strptime for its own answer or error."""
    found = _AT.fullmatch(at) if type(at) is str else None
    if found is not None:
        try:
            return datetime(*map(int, found.groups()))
        except ValueError:
            pass
    return datetime.strptime(at, AT_FORMAT)


def shift(at: str, seconds: int) -> str:
    """``at`` moved by ``seconds`` (negative: earlier)."""
    moved = _parsed(at) + timedelta(seconds=seconds)
    if moved.microsecond == 0 and moved.year >= 1000 and moved.tzinfo is None:
        return moved.isoformat() + "Z"  # what strftime(AT_FORMAT) writes, without its cost
    return moved.strftime(AT_FORMAT)


def seconds_between(earlier: str, later: str) -> int:
    return int((_parsed(later) - _parsed(earlier)).total_seconds())
