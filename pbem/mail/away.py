"""When a player is away or leaves, by mail: what the judge tells everyone about a pause, a
resume, an extension or a replacement, and the replacement of a seat's person itself.

The events (``pbem.protocol.away``) are public; what they change in the judge's
private tables (an address, a password hash) is not. ``notices`` runs in the judge's write
hook, so each notice is queued in the transaction of the event behind it:
- a pause: a notice to every player and the list;
- a resume: each player's private message, with the notice and the new deadlines (in the
  player's own time zone) on top; a notice to the list;
- an extension by the moderator: the private message of each player whose deadline moved
  (a player who asked by mail reads the new time in the judge's answer);
- a replacement: a notice to the other players and the list (not naming any address).
A request whose deadline an extension or a resume moved gets its reminder again before the
new deadline, when the reminder time is still ahead (``remind_again``).
``replace`` gives a seat a new person: a new address and password (or key), the old ones
refused from then on, and a welcome that carries everything the seat knows.
"""

from __future__ import annotations

from ..store import judge as tables
from . import judge

NOTICE_KINDS = ("paused", "resumed", "extended", "replaced")


def notices(store, session, seq: int, at: str, events=None) -> None:
    """Queue the notices of the discretionary events after ``seq`` (see the module docstring);
    ``events``: those events, when the caller has read them."""
    if events is None:
        events = store.events(session.game_id, after=seq)
    events = [ev for ev in events if ev.kind in NOTICE_KINDS]
    for ev in events:
        if ev.kind == "paused":
            _tell(store, session, None, at, f"paused by the moderator", _paused_text(session, ev.data, ev.at))
        elif ev.kind == "resumed":
            for player in tables.mail_players(store, session.game_id):
                judge.queue_private(store, session, player, at, notice=_resumed_text(session, ev.data, ev.at) + "\n",
                                    subject=f"{judge.subject_tag(session.game_id)} play resumes: your deadlines")
            _tell(store, session, "list", at, "play resumes", _resumed_text(session, ev.data, ev.at))
        elif ev.kind == "extended" and ev.data.get("by") == "moderator":
            for player in sorted({r["player"] for r in ev.data["requests"]}):
                row = tables.mail_player(store, session.game_id, player)
                notice = _extended_text(ev.data, player, row.tz if row else None)
                judge.queue_private(store, session, player, at, notice=notice + "\n",
                                    subject=f"{judge.subject_tag(session.game_id)} your deadline is extended")
        elif ev.kind == "replaced":
            seat = ev.data["seat"]
            text = (f"The seat {seat} in game {session.game_id} changes hands: from event {ev.seq} a new player "
                    f"answers for it (the moderator's decision: {ev.data['reason']}). The seat, its pieces and "
                    f"its place in the game stay as they were.\n")
            _tell(store, session, seat, at, f"{seat} has a new player", text)


def remind_again(store, session, seq: int, at: str, events=None) -> None:
    """The requests whose deadline an extension or a resume after ``seq`` moved: a notice
    about the old time that is still queued is dropped, and the notice can go again about
    the new one, as far as its moment is still ahead: The reminder, when the new deadline is
    further away than the reminder time (``--remind``): an extension a moment before the
    deadline is itself the news, and the player was told of it. The late notice, when the
    request is no longer late (a resume of a game that waits keeps an overdue request late:
    nobody is told so twice). ``events``: the game's events after ``seq``, when the caller
    has read them."""
    from ..store import outbox
    from .deadlines import LATE, REMINDER, later, requests
    if events is None:
        events = store.events(session.game_id, after=seq)
    events = [ev for ev in events if ev.kind in ("extended", "resumed")]
    if not events or session.state is None or session.finished:
        return
    moved = set()
    for ev in events:
        if ev.kind == "extended":
            moved |= {(r["player"], r["round"], r["step"], r["kind"]) for r in ev.data["requests"]}
        else:
            moved |= {clock for _who, _what, _sealed, clock in session.owed()}
    rules = tables.deadlines(store, session.game_id)
    for key, clock, entry in requests(session):  # key: as the notices are recorded
        due = entry.get("due")
        if clock not in moved or due is None:
            continue
        stages = []
        if rules.remind and at < later(due, -rules.remind):
            stages.append(REMINDER)
        if at < later(due, rules.grace):
            stages.append(LATE)
        records = tables.reminder_records(store, session.game_id, key)
        if records:  # a notice still queued names the old time: it goes nowhere (unless handed to SMTP)
            outbox.drop_stale(store, session.game_id, [m for _stage, m in records], "its deadline moved", at)
            tables.forget_reminded(store, session.game_id, key, stages)


def _tell(store, session, skip: str | None, at: str, what: str, text: str) -> None:
    """A plain notice to every player with an address (but ``skip``; "list": only the list)
    and to the list address."""
    from ..store import outbox
    subject = f"{judge.subject_tag(session.game_id)} {what}"
    for player, address in judge.recipients(store, session.game_id):
        if skip == "list" and player is not None or player is not None and player == skip:
            continue
        outbox.queue(store, game=session.game_id, kind="notice", recipient=address, subject=subject, text=text,
                     at=at, domain=judge._domain(store))


def _paused_text(session, data: dict, at: str) -> str:
    return (f"Game {session.game_id} is paused from {at.replace('T', ' ').replace('Z', ' UTC')} "
            f"(the moderator's decision: {data['reason']}).\n"
            "While it is paused no deadline runs: nobody is reminded or defaulted. Moves sent now are still "
            "taken. When play resumes, every open deadline moves on by the length of the pause, and the judge "
            "mails each player their new deadlines.\n")


def _resumed_text(session, data: dict, at: str) -> str:
    when = at.replace("T", " ").replace("Z", " UTC")
    if data.get("until"):
        moved = f"every open deadline is now {data['until'].replace('T', ' ').replace('Z', ' UTC')}"
    else:
        moved = "every open deadline moved on by the length of the pause"
    return (f"Game {session.game_id} resumes at {when} ({data['reason']}): {moved}. Your deadlines, if you owe "
            f"anything, are in your private message below.\n")


def _extended_text(data: dict, player: str, tz: str | None) -> str:
    from ..render.times import shown
    lines = []
    for r in data["requests"]:
        if r["player"] == player:
            lines.append(f"EXTENDED: your {_what(r['kind'])} (round {r['round']}, step {r['step']}) is now due "
                         f"{shown(r['until'], tz)}, instead of {shown(r['from'], tz)} "
                         f"(the moderator's decision: {data['reason']}).")
    return "\n".join(lines) + "\n"


def _what(kind: str) -> str:
    return {"commit": "sealed choice", "reveal": "reveal"}.get(kind, f"{kind} decision")


# ---------------------------------------------------------------------- replacement

def replace(store, game: str, seat: str, address: str | None, at: str, key: str | None = None,
            reason: str = "", tz: str | None = None) -> dict:
    """``seat`` gets a new person: the ``replaced`` event, their address (and a new password,
    in a game without signatures) in place of the old ones, and their welcome with the
    seat's private message (everything the seat knows), in one transaction. Refused,
    changing nothing: an unknown seat, an address that already plays in the game, no
    address in a game the judge mails."""
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
        if address is not None:
            address = judge.check_address(address)
            holder = next((p for p, row in rows.items() if row.address == address), None)
            if holder is not None:
                raise Refused(f"{address} already plays {holder} in game {game}; the new player of {seat} needs "
                              f"an address of their own")
        old = rows.get(seat)
        session = absence.replace(store, game, seat, key=key, reason=reason, at=at)
        seq = store.head(game)[0]
        dropped = 0
        if old is not None:
            tables.add_former(store, game, seat, old.address, session.last_at, seq)
            dropped = outbox.drop_queued(store, game, old.address)
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
                      + judge._welcome(session, seat, password))
            from . import failures
            failures.clear(store, address)  # given by the moderator: tried afresh
            judge.queue_private(store, session, seat, at, notice=notice, secret=password,
                                subject=f"{judge.subject_tag(game)} welcome, {seat}: your seat and all it knows")
    return {"game": game, "seat": seat, "event": seq, "address": address, "password_sent": bool(password),
            "key": key is not None, "former_address_dropped": dropped}


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
