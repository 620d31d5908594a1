"""A snapshot: the replayed state of a game at an event, cached with the status report
(a full snapshot), or the status report alone (a light one, ``"light": true``).

It is only a cache (``audit`` compares it with a fresh replay), so a snapshot of another
layout version is never read: the state is rebuilt from the events instead. This module
is small on purpose, so ``pbem status`` can read the cached report without the rules.
"""

from __future__ import annotations

import json

SNAPSHOT_VERSION = 3  # v2: open times per request (player, round, step, kind); v3: who plays each seat, pauses listed


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


def light_status(text: str) -> dict | None:
    """The status report of a light snapshot's text (one that holds only the status at its
    event, ``{"v": 2, "light": true, "status": {...}}``); None when it has another version.
    ``UnreadableSnapshot`` when the text is not a light snapshot."""
    data = read_snapshot(text)
    if data is None:
        return None
    if set(data) != {"v", "light", "status"} or data["light"] is not True or not isinstance(data["status"], dict):
        raise UnreadableSnapshot("it is marked as a light snapshot but holds more or less than a status report")
    return data["status"]


def stood_in(status: dict) -> list[str]:
    """The seats the stand-in plays, from a status report (``seats``) or a listing (``stand_in``)."""
    if "stand_in" in status:
        return list(status["stand_in"])
    return sorted(p for p, e in (status.get("seats") or {}).items() if e.get("played_by") == "stand-in")


def listing(finished, started, waiting, word: str, round, phase, overdue=(), paused=None, stand_in=()) -> str:
    """What ``pbem games`` says of a game after its name, before its mail: ``waiting`` and
    ``overdue`` are the players' names, sorted; ``word`` is the game's word for a round;
    ``paused``: the status report's ``paused`` ({"since", "reason"}) while it is paused."""
    if finished:
        return "finished"
    if not started:
        return "not started"
    if not waiting:
        return "play ended (seed revealed)"
    text = f"{word} {round}, {phase}; "
    if paused:
        since = str(paused.get("since", "")).replace("T", " ").replace("Z", " UTC")
        reason = " ".join(str(paused.get("reason", "")).split())
        text += f"PAUSED since {since} ({reason}); "
    text += f"waiting for {', '.join(waiting)}"
    if overdue:
        text += f" (OVERDUE: {', '.join(overdue)})"
    if stand_in:
        text += f"; the stand-in plays {', '.join(stand_in)}"
    return text


def listing_of_line(line: dict) -> str:
    """``listing`` of a game's cached listing fields (``head_columns``) when nobody is
    overdue: what its ``game_heads`` row keeps ready, so that ``pbem games`` need not read
    the fields themselves for a game whose earliest deadline has not passed."""
    from ..games import round_word
    return listing(line.get("finished"), line.get("started"), sorted({w["player"] for w in line.get("waiting") or []}),
                   round_word(line.get("type")), line.get("round"), line.get("phase"), paused=line.get("paused"),
                   stand_in=line.get("stand_in") or ())


def head_columns(status: dict) -> tuple[int, str | None, str, str]:
    """What a game's row in ``game_heads`` caches from the status report at its head:
    (finished, the earliest deadline owed or None, the listing fields as JSON, the listing
    text when nobody is overdue) — what ``pbem games`` shows and ``pbem mail tick`` looks
    at, without reading the snapshot."""
    waiting = [{k: w[k] for k in ("player", "due") if k in w} for w in status.get("waiting") or []]
    line = {k: status.get(k) for k in ("type", "players", "started", "round", "phase", "finished")}
    line["waiting"] = waiting
    if status.get("paused") and not status.get("finished"):
        line["paused"] = {k: status["paused"].get(k) for k in ("since", "reason")}
    if stood_in(status) and not status.get("finished"):
        line["stand_in"] = stood_in(status)
    due = min((w["due"] for w in waiting if "due" in w), default=None)
    return (int(bool(status.get("finished"))), due, json.dumps(line, separators=(",", ":")),
            listing_of_line(line))


def head_columns_of(text: str) -> tuple[int, str | None, str, str] | None:
    """``head_columns`` of a stored snapshot's text; None when it cannot tell (another
    version, unreadable, no status)."""
    try:
        data = read_snapshot(text)
    except UnreadableSnapshot:
        return None
    status = data.get("status") if data is not None else None
    return head_columns(status) if isinstance(status, dict) else None
