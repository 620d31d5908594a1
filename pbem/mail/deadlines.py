"""Deadlines by mail: reminders before a request is due, and what happens once it is late.

Per game (``pbem mail settings``): remind a player ``remind`` seconds before a request is
due, allow ``grace`` seconds past the deadline, and then either apply the documented default
(``on_late`` "default", what ``pbem nmr`` does) or only tell the player they are late
("wait", for games that never default). ``tick(store, now)`` does whatever is due at
``now``, each action once, so it is safe to run from cron every minute:

- a reminder: the player's private message with a notice on top, queued in one
  transaction with the record that it was sent (``mail_reminders``, keyed by player,
  round, step and kind), so a request is reminded of once however often tick runs; only
  while at least half the reminder time is left (``reminders.reminder_due``), never near
  the deadline;
- a default: ``commands.nmr`` (which checks the deadline itself), in one transaction with
  the mail its events call for (the judge's write hook: the private messages, summaries);
- in a game that waits, a notice to a late player, once, like a reminder.

No reminder or notice goes to a player marked "mail not delivered" (``pbem.mail.failures``).
What is owed and by when, and what a write does to the reminders already queued (dropped
when their request is settled, sent again when its deadline moved): ``pbem.mail.reminders``.

Each game's actions are one transaction and one moment (``pbem.mail.moment``): whatever a
tick causes for a player goes to them as one message. Each action is a savepoint in it and
re-reads the game, so a move that arrived a moment before is never reminded of or
defaulted, and an action that fails is undone whole (its events, its mail) while the others
stand. ``now`` is a parameter: nothing here reads the clock.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from ..store import judge as tables
from ..store.faults import maybe_crash
from . import judge, letters
from .envelope import subject_tag
from .reminders import LATE, REMINDER, later, owed, reminder_due

# Defaults in one game in one tick: each one opens new requests (due later), so a handful
# is the most that can be due at once; the bound only guards against a loop.
MAX_DEFAULTS_PER_GAME = 64


@dataclass
class Action:
    """One thing tick did (also its ``--json`` form)."""

    game: str
    player: str
    action: str  # reminded | told late | defaulted | failed
    round: int | None  # None (and player, kind, due "-") for a game that could not be read
    step: int | None
    kind: str
    due: str
    message_id: str | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------- settings


def configure(store, game: str, remind: int | None = None, grace: int | None = None,
              on_late: str | None = None) -> tables.Deadlines:
    """Change ``game``'s deadline settings (None: keep as is); one transaction, and a
    refusal changes nothing. A reminder must come before the deadline it reminds of."""
    from ..protocol import loading
    from ..protocol.errors import Refused
    if on_late is not None and on_late not in tables.ON_LATE:
        raise Refused(f"--on-late {on_late!r}: use default (apply the documented default) or wait (never default)")
    with store.atomic():
        session = loading.load(store, game)
        old = tables.deadlines(store, game)
        new = tables.Deadlines(old.remind if remind is None else remind, old.grace if grace is None else grace,
                               old.on_late if on_late is None else on_late)
        deadline = session.meta.get("deadline_seconds")
        if (new.remind or new.grace) and not deadline:
            raise Refused(f"game {game} has no deadline (pbem new --deadline 48h), so there is nothing to remind "
                          f"of and no grace to give")
        if new.remind and new.remind >= deadline:
            raise Refused(f"a reminder {duration(new.remind)} before the deadline of game {game} would come before "
                          f"the request itself (the deadline is {duration(deadline)}); give less than "
                          f"{duration(deadline)}")
        tables.set_deadlines(store, game, new)
    return new


def settings(store, game: str) -> dict:
    """The game's deadline and what the judge does about it (the ``--json`` form)."""
    from ..protocol import loading
    session = loading.load(store, game)
    return {"game": game, "deadline_seconds": session.meta.get("deadline_seconds"),
            **tables.deadlines(store, game).as_dict(), "player_summaries": tables.player_summaries(store, game),
            "hold_answers_seconds": tables.hold_answers(store, game)}


def set_player_summaries(store, game: str, on: bool) -> None:
    """Whether ``game``'s players get the public summaries too (see ``pbem.mail.moment``)."""
    from ..protocol import loading
    with store.atomic():
        loading.load(store, game)
        tables.set_player_summaries(store, game, on)


def set_hold_answers(store, game: str, seconds: int) -> None:
    """How long an answer that only confirms may wait to travel inside ``game``'s player's
    next message (0: every answer goes at once; see ``pbem.mail.moment``)."""
    from ..protocol import loading
    from ..protocol.errors import Refused
    if seconds < 0 or seconds > MAX_HOLD_SECONDS:
        raise Refused(f"--hold-answers {duration(seconds)}: give at most {duration(MAX_HOLD_SECONDS)} "
                      f"(a player waits this long for the answer to a move), or 0 to answer at once")
    with store.atomic():
        loading.load(store, game)
        tables.set_hold_answers(store, game, seconds)


# An answer held longer would leave a player wondering whether their mail arrived.
MAX_HOLD_SECONDS = 3600


def duration(seconds: int | None) -> str:
    if not seconds:
        return "none"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# ---------------------------------------------------------------------- tick


def tick(store, now: str, game: str | None = None, on_action=None) -> list[Action]:
    """Queue the reminders and apply the defaults that are due at ``now``, in every game
    the judge mails (or only ``game``); each once. See the module docstring.
    ``on_action(action)``, when given, hears of each action the moment it is committed
    (a long-running judge logs it then, so a kill a moment later loses no line)."""
    from ..protocol import loading
    from ..protocol.errors import Refused
    judge.attach(store)
    if game is not None:
        loading.load(store, game)  # an unknown game is refused by name
        if not tables.uses_mail(store, game):
            raise Refused(f"game {game} has no addresses, so the judge mails no one in it "
                          f"(pbem address {game} PLAYER EMAIL)")
    actions: list[Action] = []

    def said(action: Action) -> None:
        actions.append(action)
        if on_action is not None:
            on_action(action)
    from .moment import moment
    for name in [game] if game is not None else tables.mail_games_to_tick(store, now):
        done: list[Action] = []
        try:
            # one transaction and one moment per game: whatever this tick causes for a player
            # (two late players defaulted, the step they held up resolved) is one message
            with store.transaction(), moment(store, now):
                _tick_game(store, name, now, done.append)
        except _errors() as exc:  # a game that cannot be read (damaged, say) holds up no other
            done = [Action(name, "-", "failed", None, None, "-", "-", error=_one_line(exc))]
        maybe_crash("tick:after-game")
        for action in done:  # heard of once committed
            said(action)
    return actions


def _tick_game(store, game: str, now: str, said) -> None:
    from ..protocol import loading
    from . import failures
    rules = tables.deadlines(store, game)
    addresses = tables.mail_players(store, game)
    failed = set()  # tried in this tick already: said once, tried again at the next tick
    for _ in range(MAX_DEFAULTS_PER_GAME):
        session = loading.load(store, game)
        if not session.meta.get("deadline_seconds"):
            return
        defaulted = False
        first_of = {}
        for key, entry in owed(session).items():
            first_of.setdefault(entry["player"], key)
        for key, entry in owed(session).items():
            if "due" not in entry:
                continue
            player, late_at = key[0], later(entry["due"], rules.grace)
            if now >= late_at and rules.on_late == "default":
                # nmr settles the first thing a player owes: that one decides
                if first_of[player] == key and (key, "default") not in failed:
                    done = _default(store, game, key, entry["due"], now, late_at)
                    if done is not None:
                        said(done)
                        if done.action == "failed":
                            failed.add((key, "default"))
                        else:  # the game moved on: read it again
                            defaulted = True
                            break
                continue
            if player not in addresses or failures.is_dead(store, addresses[player].address):
                continue  # no address, or marked "mail not delivered": no reminder (pbem.mail.failures)
            stage = LATE if now >= late_at else REMINDER
            if stage == REMINDER and not reminder_due(entry["due"], rules.remind, now):
                continue
            if (key, stage) not in failed and not tables.reminded(store, game, key, stage):
                done = _notify(store, game, key, entry["due"], stage, now, rules)
                if done is not None:
                    said(done)
                    if done.action == "failed":
                        failed.add((key, stage))
        if not defaulted:
            return


def _default(store, game: str, key: tuple, due: str, now: str, late_at: str) -> Action | None:
    from ..protocol import commands, loading
    player, round_, step, kind = key
    try:
        with _undone_whole(store):
            entry = owed(loading.load(store, game)).get(key)
            if entry is None or entry.get("due") != due:
                return None  # answered (or settled) a moment ago
            commands.nmr(store, game, player, at=now, grace=tables.deadlines(store, game).grace)
    except _errors() as exc:
        return Action(game, player, "failed", round_, step, kind, due, error=_one_line(exc))
    return Action(game, player, "defaulted", round_, step, kind, due)


@contextmanager
def _undone_whole(store):
    """One action of a tick: a savepoint in the game's transaction; on failure its events,
    its outbox rows and what it added to the moment's mail are all undone."""
    from .moment import current
    m = current(store)
    saved = copy.deepcopy(m.__dict__) if m is not None else None
    try:
        with store.atomic():
            yield
    except BaseException:
        if m is not None:
            m.__dict__.update(saved)
        raise


def _notify(store, game: str, key: tuple, due: str, stage: str, now: str, rules) -> Action | None:
    from ..protocol import loading
    player, round_, step, kind = key
    try:
        with _undone_whole(store):
            session = loading.load(store, game)
            entry = owed(session).get(key)
            if entry is None or entry.get("due") != due:
                return None  # answered a moment ago
            row = tables.mail_player(store, game, player)
            notice = _notice(game, key, due, stage, now, rules, row.tz if row else None)
            subject = (f"{subject_tag(game)} {'reminder' if stage == REMINDER else 'late'}: your {_what(kind)} "
                       f"(round {round_}, step {step}) {'is' if now < due else 'was'} due {due[:16].replace('T', ' ')} UTC")
            message_id = letters.queue_private(store, session, player, now, notice=notice, kind="reminder",
                                               subject=subject, expires_at=due if stage == REMINDER else None)
            if message_id is None or not tables.mark_reminded(store, game, key, stage, now, message_id):
                raise _AlreadyDone()
    except _AlreadyDone:
        return None
    except _errors() as exc:
        return Action(game, player, "failed", round_, step, kind, due, error=_one_line(exc))
    return Action(game, player, "reminded" if stage == REMINDER else "told late", round_, step, kind, due,
                  message_id=message_id)


class _AlreadyDone(Exception):
    """Roll the notice back: another tick sent it (or the player has no address now)."""


def _notice(game: str, key: tuple, due: str, stage: str, now: str, rules, tz: str | None) -> str:
    from ..render.times import shown
    player, round_, step, kind = key
    what = f"your {_what(kind)} in game {game} (round {round_}, step {step})"
    late_at = later(due, rules.grace)
    if stage == LATE:
        lines = [f"LATE: {what} was due {shown(due, tz)}.",
                 "This game waits for late players: nothing was applied for you, and everyone waits for "
                 "your move. Please send it now."]
    else:
        lines = [f"REMINDER: {what} {'is' if now < due else 'was'} due {shown(due, tz)}."]
        if rules.on_late == "wait":
            lines.append("This game waits for late players, but everyone waits for you: please send it in time.")
        elif late_at == due:
            lines.append("If nothing has arrived by then, the judge applies the default shown below.")
        else:
            lines.append(f"If nothing has arrived by {shown(late_at, tz)} (the deadline and "
                         f"{duration(rules.grace)} of grace), the judge applies the default shown below.")
    return "\n".join(lines) + "\n\n"


def _what(kind: str) -> str:
    return {"commit": "sealed choice", "reveal": "reveal"}.get(kind, f"{kind} decision")


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__


def _errors():
    from ..protocol.errors import ProtocolError
    from ..store.errors import StoreError
    return (ProtocolError, StoreError)
