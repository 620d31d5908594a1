"""Times as the log writes them: UTC, to the second, ``YYYY-MM-DDTHH:MM:SSZ``.

One spelling only (the time is hashed with its event), so times compare as strings. The
arithmetic every layer needs (a deadline, a retry, an hour of strikes) lives here, once.
Nothing but ``now_utc`` reads the clock, and only the command line's entry points call it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime(AT_FORMAT)


def shift(at: str, seconds: int) -> str:
    """``at`` moved by ``seconds`` (negative: earlier)."""
    return (datetime.strptime(at, AT_FORMAT) + timedelta(seconds=seconds)).strftime(AT_FORMAT)


def seconds_between(earlier: str, later: str) -> int:
    return int((datetime.strptime(later, AT_FORMAT) - datetime.strptime(earlier, AT_FORMAT)).total_seconds())
