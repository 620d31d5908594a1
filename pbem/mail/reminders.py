"""The reminders of what a player owes: which requests are owed and by when, when a reminder
is due, and what a write does to the reminders and late notices already queued.

``pbem mail tick`` (``pbem.mail.deadlines``) sends them; the judge's write hook
(``pbem.mail.judge``) keeps them true, in the transaction of the write:
- a reminder still queued when its request is settled (answered, defaulted, the game moved
  on) is dropped (``drop_settled``), unless it was handed to the SMTP server already;
- a request whose deadline an extension or a resume moved gets its reminder again before
  the new deadline, when the reminder time is still ahead (``remind_again``).
Times are parameters: nothing here reads the clock.
"""

from __future__ import annotations

from ..protocol.times import shift
from ..store import judge as tables

REMINDER, LATE = "reminder", "late"


def owed(session) -> dict[tuple, dict]:
    """What each player owes now, by request (player, round, step, kind: "commit" or
    "reveal" in a sealed step, else the decision's kind), each with the ``since`` and ``due``
    of ``reports.waiting``, in its order (which is the order ``nmr`` settles them in)."""
    return {key: entry for key, _clock, entry in requests(session)}


def requests(session) -> list[tuple[tuple, tuple, dict]]:
    """(key as ``owed`` has it, the protocol's clock key, entry) of each request owed now."""
    from ..protocol.reports import waiting
    return [((player, clock[1], clock[2], what), clock, entry)
            for (player, what, _sealed, clock), entry in zip(session.owed(), waiting(session))]


def reminder_due(due: str, remind: int, now: str) -> bool:
    """Whether a reminder ``remind`` seconds before ``due`` is to go out at ``now``: from its
    moment until half the reminder time is left (with --remind 12h, from 12h to 6h before
    the deadline). A tick that comes later (the judge was down, cron stopped) sends none: a
    reminder that arrives as the deadline passes only alarms, and the private message the
    player already has says what to send and by when."""
    return bool(remind) and later(due, -remind) <= now < later(due, -(remind // 2))


GIVE_UP_NO_SOONER = 3600  # after a first 4xx: greylisting asks again within minutes


def give_up_by(store, game: str, recipient: str, since: str) -> str | None:
    """When a message to ``recipient`` that a server has refused for now (4xx) since
    ``since`` is given up, if sooner than the outbox's own limit: at the next deadline of a
    request the recipient's player owes in ``game`` (one due after ``since``), so that the
    moderator hears of it before the player is defaulted; never sooner than an hour after
    the first refusal (greylisting retries within minutes). None: no such deadline."""
    from ..protocol import loading
    players = [row.player for row in tables.players_at(store, recipient) if row.game == game]
    if not players:
        return None
    session = loading.load(store, game)
    if session.state is None or session.finished:
        return None
    dues = sorted(entry["due"] for entry in owed(session).values()
                  if entry["player"] in players and entry.get("due") and entry["due"] > since)
    return max(dues[0], later(since, GIVE_UP_NO_SOONER)) if dues else None


def later(at: str, seconds: int) -> str:
    return shift(at, seconds)


def drop_settled(store, session, at: str) -> int:
    """Drop the queued reminders of ``session``'s game whose request is no longer owed as it
    was (answered, defaulted, the game moved on); not those handed to SMTP already. Runs in
    the write that settled them (the judge's write hook). Returns how many were dropped."""
    queued = tables.queued_reminders(store, session.game_id)
    if not queued:
        return 0
    now_owed = owed(session) if session.state is not None and not session.finished else {}
    stale = [message_id for message_id, key in queued if key not in now_owed]
    from ..store import outbox
    return outbox.drop_stale(store, session.game_id, stale, "its request was settled before it went", at)


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
