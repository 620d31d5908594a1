"""When a player is away or leaves: pause, resume, extend and replace, and their tally for the audit.

``pause``, ``resume``, ``extend`` and ``replace`` write one event each (see ``seats.py`` for
what the replay checks), in one transaction with the mail they call for (the judge's write
hook). Their tally for the audit's verdict is ``discretion.tally``, with the judge's other
forced and discretionary acts.
"""

from __future__ import annotations

from .writing import note, write
from .errors import Refused
from .seats import later
from .times import now_utc

# event kinds that record a decision of the judge rather than a player's move
KINDS = ("paused", "resumed", "extended", "replaced")


def pause(store, game_id: str, reason: str, at=None):
    """Pause ``game_id``: from now on no deadline runs (moves are still taken)."""
    return write(store, game_id, lambda s: [("paused", {"by": "moderator", "reason": (reason or "").strip()})], at)


def resume(store, game_id: str, until: str | None = None, reason: str = "", at=None):
    """Resume a paused game: each open deadline moves on by the pause (or to ``until``)."""
    data = {"by": "moderator", "reason": (reason or "").strip() or "the pause is over"}
    if until is not None:
        data["until"] = until
    return write(store, game_id, lambda s: [("resumed", data)], at)


def extend(store, game_id: str, player: str | None = None, seconds: int | None = None,
           until: str | None = None, by: str = "moderator", reason: str = "", at=None,
           outcome: dict | None = None):
    """Move the deadlines of what ``player`` owes now (every player's, when None) on by
    ``seconds``, or to ``until``. ``by`` "player": the player asked (by mail), within the
    game's allowance. ``outcome`` gets ``requests``: each request with its old and new due."""
    if (seconds is None) == (until is None):
        raise Refused("give the extension as a duration (e.g. 24h) or as --until TIME, one of the two")
    now = at or now_utc()

    def build(session):
        if player is not None:
            session.player(player)
        if not session.meta.get("deadline_seconds"):
            raise Refused(f"game {game_id} has no deadline (pbem new --deadline 48h), so there is nothing to extend")
        if session.state is None:
            raise Refused(f"game {game_id} has not started, so no deadline runs yet")
        keys = [clock for who, _what, _sealed, clock in session.owed() if player is None or who == player]
        if not keys:
            raise Refused(f"{player} owes nothing now, so there is no deadline to extend" if player is not None
                          else "nobody owes anything now, so there is no deadline to extend")
        requests = []
        for key in keys:
            due = session.base_due(key)
            requests.append({"player": key[0], "round": key[1], "step": key[2], "kind": key[3],
                             "from": due, "until": until or later(due, seconds, now)})
        data = {"by": by, "reason": (reason or "").strip() or
                ("asked by mail" if by == "player" else "the moderator's decision"), "requests": requests}
        if player is not None:
            data["player"] = player
        note(outcome, requests=requests)
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
