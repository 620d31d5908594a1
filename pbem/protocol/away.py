"""When a player is away or leaves: pause, resume, extend, replace and the stand-in's end, and
their tally for the audit.

``pause``, ``resume``, ``extend``, ``replace`` and ``end_stand_in`` write one event each (see ``seats.py`` for
what the replay checks), in one transaction with the mail they call for (the judge's write
hook). Their tally for the audit's verdict is ``discretion.tally``, with the judge's other
forced and discretionary acts.
"""

from __future__ import annotations

from .writing import note, write

# event kinds that record a decision of the judge rather than a player's move
KINDS = ("paused", "resumed", "extended", "replaced", "stand_in_ended")


def pause(store, game_id: str, reason: str, at=None):
    """Pause ``game_id``: from now on no deadline runs (moves are still taken)."""
    return write(store, game_id, lambda s: [("paused", {"by": "moderator", "reason": (reason or "").strip()})], at)


def resume(store, game_id: str, until: str | None = None, reason: str = "", at=None, force: bool = False):
    """Resume a paused game: each open deadline moves on by the pause (or to ``until``).
    An ``until`` earlier than a deadline in force is refused unless ``force``: then the
    event is marked forced, and the audit's verdict names it."""
    data = {"by": "moderator", "reason": (reason or "").strip() or "the pause is over"}
    if until is not None:
        data["until"] = until

    from .times import now_utc
    at = at or now_utc()  # one time for the check and the event

    def build(session):
        stamp = max(at, session.last_at)
        if force and session.shortens(until, stamp):
            return [("resumed", {**data, "forced": True})]
        return [("resumed", data)]
    return write(store, game_id, build, at)


def extend(store, game_id: str, player: str | None = None, seconds: int | None = None,
           until: str | None = None, by: str = "moderator", reason: str = "", at=None,
           outcome: dict | None = None, signed: dict | None = None):
    """Move the deadlines of what ``player`` owes now (every player's, when None) on by
    ``seconds``, or to ``until``. ``by`` "player": the player asked (by mail), within the
    game's allowance; ``signed`` (the player's block: ``round``, ``step``, ``seconds``,
    ``nonce``, ``signature``) moves what they owe in that step, and a game that requires
    signatures takes a player's extension only so. ``outcome`` gets ``requests``: each
    request with its old and new due."""
    from .times import now_utc
    now = at or now_utc()  # the bound of a year (seats.MAX_AHEAD) counts from here

    def build(session):
        data = session.extension_data(player, seconds, until, by, reason, signed, now)  # seats.py
        note(outcome, requests=data["requests"])
        return [("extended", data)]
    return write(store, game_id, build, at)


def replace(store, game_id: str, seat: str, key: str | None = None, reason: str = "", at=None,
            moderator_plays: bool = False):
    """Another person takes ``seat``: from this event on, its key is ``key`` (or none).
    ``moderator_plays``: that person is the moderator, and the event says so (``moderator``)."""
    def build(session):
        session.player(seat)
        data = {"seat": seat, "by": "moderator", "reason": (reason or "").strip() or "the seat's player left"}
        if moderator_plays:
            data["moderator"] = True
        if key is not None:
            data["key"] = key.strip()
        return [("replaced", data)]
    return write(store, game_id, build, at)


def end_stand_in(store, game_id: str, seat: str, by: str = "moderator", reason: str = "", at=None):
    """The stand-in stops playing ``seat``: its player is back (``by`` "player": the mail
    command ``back``) or the moderator ends it (``pbem back``). From then on the seat's
    requests wait for its player, with their deadlines, as any other seat's."""
    def build(session):
        session.player(seat)
        data = {"player": seat, "by": by, "reason": (reason or "").strip() or
                ("the player is back (by mail)" if by == "player" else "the moderator's decision")}
        return [("stand_in_ended", data)]
    return write(store, game_id, build, at)
