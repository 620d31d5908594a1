"""Times as a player reads them: in UTC, and in the player's own time zone when they set one.

The log keeps every time in UTC (``2030-01-03T10:00:00Z``); a player in Prague should not
have to work out that a move due at 23:30 UTC is due at half past midnight, their time, on
the next day. Zones are IANA names (``Europe/Prague``) read by ``zoneinfo``, so summer time
is whatever the zone's rules say on that date.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..protocol.errors import Refused
from ..text import quote

from ..protocol.times import AT_FORMAT  # noqa: E402


def check_zone(name: str) -> str:
    """``name`` if it is a time zone this machine knows (an IANA name such as
    Europe/Prague), else a one-line ``Refused``."""
    import zoneinfo
    text = (name or "").strip()
    try:
        if not text or len(text) > 64:
            raise ValueError(text)
        zoneinfo.ZoneInfo(text)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError, OSError):
        raise Refused(f"{quote(text[:64])} is not a time zone known here; give an IANA name such as "
                      f"Europe/Prague, America/New_York or UTC") from None
    return text


def shown(at: str, tz: str | None = None, seconds: bool = True) -> str:
    """``at`` (UTC, as the log writes it) for a reader: ``2030-07-01 10:00:00 UTC``, and with a
    zone ``2030-07-01 10:00:00 UTC (2030-07-01 12:00:00 CEST, Europe/Prague)``; without
    ``seconds``, to the minute (``2030-07-01 10:00 UTC``), as in a one-line status."""
    clock = "%H:%M:%S" if seconds else "%H:%M"
    moment = datetime.strptime(at, AT_FORMAT).replace(tzinfo=timezone.utc)
    text = moment.strftime(f"%Y-%m-%d {clock} UTC")
    if not tz:
        return text
    import zoneinfo
    try:
        local = moment.astimezone(zoneinfo.ZoneInfo(tz))
    except (ValueError, zoneinfo.ZoneInfoNotFoundError, OSError):
        return text  # a zone this machine no longer knows: UTC alone is still true
    if local.tzname() == "UTC":
        return text
    return f"{text} ({local.strftime(f'%Y-%m-%d {clock}')} {local.tzname()}, {tz})"
