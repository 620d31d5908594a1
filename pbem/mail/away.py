"""When a player leaves, by mail: the replacement of a seat's person, and the answer to
mail from someone who left a seat.

``replace`` gives a seat a new person: a new address and password (or key), the old ones
refused from then on, and a welcome that carries everything the seat knows. What the judge
tells everyone about a pause, a resume, an extension or a replacement is
``pbem.mail.notices`` (queued by the judge's write hook, in the transaction of the event).
"""

from __future__ import annotations

from ..store import judge as tables
from . import judge, letters
from .envelope import check_address, domain, judge_address, subject_tag


def replace(store, game: str, seat: str, address: str | None, at: str, key: str | None = None,
            reason: str = "", tz: str | None = None, moderator_plays: bool = False) -> dict:
    """``seat`` gets a new person: the ``replaced`` event, their address (and a new password,
    in a game without signatures) in place of the old ones, their welcome with the seat's
    private message (everything the seat knows) and what the seat owes, and a notice to the
    former player that their seat has passed on and why, in one transaction. Refused,
    changing nothing: an unknown seat, an address that already plays in the game, no
    address in a game the judge mails, the judge's or the list's address, and the
    moderator's address unless ``moderator_plays`` (which the event records, for the audit)."""
    from ..protocol import away as absence, loading
    from ..protocol.errors import Refused
    from ..store import outbox
    from .passwords import hash_password, make_password
    judge.attach(store)
    if tz:
        from ..render.times import check_zone
        tz = check_zone(tz)
    with store.atomic():
        session = loading.load(store, game)
        session.player(seat)
        rows = tables.mail_players(store, game)
        if address is None and tables.uses_mail(store, game):
            raise Refused(f"the judge mails the players of game {game}: give the new player's address, "
                          f"e.g. --email new.player@example.org")
        checked = None
        if address is not None:
            address = check_address(address)
            checked = _check_person(store, game, address, moderator_plays)
            holder = next((p for p, row in rows.items() if row.address == address), None)
            if holder is not None:
                raise Refused(f"{address} already plays {holder} in game {game}; the new player of {seat} needs "
                              f"an address of their own")
        old = rows.get(seat)
        session = absence.replace(store, game, seat, key=key, reason=reason, at=at, moderator_plays=moderator_plays)
        seq = store.head(game)[0]
        dropped = 0
        if old is not None:
            tables.add_former(store, game, seat, old.address, session.last_at, seq)
            dropped = outbox.drop_queued(store, game, old.address)
            outbox.queue(store, game=game, kind="notice", recipient=old.address, at=at, domain=domain(store),
                         subject=f"{subject_tag(game)} your seat {seat} has passed on",
                         text=ousted_text(game, seat, seq, next(iter(store.events(game, after=seq - 1))).data["reason"]))
        password = None
        if address is not None:
            tables.forget_former(store, game, address)
            if not session.meta.get("require_signatures"):
                password = make_password()
            tables.set_address(store, game, seat, address, hash_password(password) if password else None,
                               tz or "", keep_password=False)
            tables.set_plain(store, game, seat, False)  # a new person: the judge's usual mail until they ask
            notice = (f"You take over the seat {seat} in game {game} from its former player (event {seq}). "
                      f"The seat keeps everything it has in the game; below is all it knows.\n"
                      + letters.welcome(session, seat, password))
            from . import failures
            failures.clear(store, address)  # given by the moderator: tried afresh
            letters.queue_private(store, session, seat, at, notice=notice, secret=password,
                                  subject=f"{subject_tag(game)} welcome, {seat}: your seat and all it knows")
    return {"game": game, "seat": seat, "event": seq, "address": address, "password_sent": bool(password),
            "key": key is not None, "former_address_dropped": dropped, "judge_address_checked": checked}


def _check_person(store, game: str, address: str, moderator_plays: bool) -> bool:
    """The judge and the list never take a seat; the moderator only when they say so. False
    when the judge's own address is not known here, so it could not be checked."""
    from ..protocol.errors import Refused
    low = address.lower()
    judge_self = judge_address(store)
    if low == judge_self:
        raise Refused(f"{address} is the judge's own address; a seat goes to a person: give the new player's address")
    if low == (tables.list_address(store, game) or "").lower():
        raise Refused(f"{address} is the list of game {game}; a seat goes to a person: give the new player's address")
    if low == (tables.moderator_address(store, game) or "").lower() and not moderator_plays:
        raise Refused(f"{address} is the moderator's address; to play the seat yourself say so with "
                      f"--moderator-plays (the log and the audit then name it), or give the new player's address")
    return judge_self is not None


def ousted_text(game: str, seat: str, seq: int, reason: str) -> str:
    """What the former player of ``seat`` is told: their seat has passed on, and why."""
    return (f"Your seat {seat} in game {game} has passed on to a new player, from event {seq} on "
            f"(the moderator's decision: {reason}). Mail from you no longer counts for this seat, whatever "
            f"password it carries, and the judge sends you nothing more for it. If this is a mistake, ask "
            f"your moderator.\n")


def former_refusal(store, sender: str, game: str | None) -> str | None:
    """The answer to mail from someone who left a seat (``game``: the game the mail names,
    if any), or None when ``sender`` answers for no former seat there."""
    playing = {row.game for row in tables.players_at(store, sender)}
    left = [f for f in tables.former_at(store, sender) if f.game not in playing and (game is None or f.game == game)]
    if not left:
        return None
    f = left[-1]
    return (f"Nothing was done: since {f.until.replace('T', ' ').replace('Z', ' UTC')} (event {f.seq}) the seat "
            f"{f.player} in game {f.game} is played by someone else, so mail from {sender} no longer counts for "
            f"it, whatever password it carries. If this is a mistake, ask your moderator (pbem replace).")
