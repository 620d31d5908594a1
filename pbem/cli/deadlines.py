"""Deadlines by mail, under 'pbem mail': settings (reminders, grace, on late) and tick."""


from typing import Annotated, Optional

import typer

from .common import (
    DbOption, GameArg, GraceOption, JsonOption, OnLateOption, RemindOption, emit, fail, handled, open_store,
    parse_wait, safe,
)


def register(app: typer.Typer) -> None:
    from .mail import app as mail_app
    mail_app.command("settings")(settings)
    mail_app.command("tick")(tick)


@handled
def settings(game: GameArg, remind: RemindOption = None, grace: GraceOption = None, on_late: OnLateOption = None,
             player_summaries: Annotated[Optional[str], typer.Option(
                 "--player-summaries", metavar="yes|no", show_default=False,
                 help="Whether players get every public summary in their mail too (yes, the default), "
                      "or only the final result, when the game's list address carries the summaries (no).")] = None,
             hold_answers: Annotated[Optional[str], typer.Option(
                 "--hold-answers", metavar="TIME", show_default=False,
                 help="How long an answer that only confirms moves may wait to travel inside the player's next "
                      "message (default 10m, at most 1h; 0: answer every mail at once).")] = None,
             db: DbOption = None, as_json: JsonOption = False):
    """Show or change a game's reminders, grace period, what happens to late players,
    whether players get the summaries that the list carries, and how long a plain answer waits.

    Without options it shows them. 'pbem mail tick' acts on them.

    \b
    Example: pbem mail settings g1
    Example: pbem mail settings g1 --remind 12h --grace 1h --on-late wait
    Example: pbem mail settings g1 --player-summaries no
    Example: pbem mail settings g1 --hold-answers 0     (answer every mail at once)
    """
    from ..mail import deadlines
    remind_s, grace_s = parse_wait(remind, "--remind"), parse_wait(grace, "--grace")
    hold_s = parse_wait(hold_answers, "--hold-answers")
    if player_summaries is not None and player_summaries.lower() not in ("yes", "no"):
        fail(f"--player-summaries {player_summaries!r}: use yes (players get every summary) or no "
             f"(summaries go to the list address only)")
    store = open_store(db)
    if remind_s is not None or grace_s is not None or on_late is not None:
        deadlines.configure(store, game, remind=remind_s, grace=grace_s, on_late=on_late)
    if player_summaries is not None:
        deadlines.set_player_summaries(store, game, player_summaries.lower() == "yes")
    if hold_s is not None:
        deadlines.set_hold_answers(store, game, hold_s)
    shown = deadlines.settings(store, game)
    emit(shown, as_json, settings_text(shown))


def settings_text(s: dict) -> str:
    from ..mail.deadlines import duration
    if not s["deadline_seconds"]:
        return (f"game {s['game']} has no deadline: nobody is reminded or defaulted "
                f"(late players: {s['on_late']}); {_summaries_text(s)}")
    remind = (f"a reminder {duration(s['remind_seconds'])} before" if s["remind_seconds"] else "no reminder")
    late = ("the default is applied" if s["on_late"] == "default" else "the player is told and the game waits")
    grace = f" and {duration(s['grace_seconds'])} of grace" if s["grace_seconds"] else ""
    return (f"game {s['game']}: deadline {duration(s['deadline_seconds'])} per request; {remind}; "
            f"after the deadline{grace}, {late} (on-late {s['on_late']}); {_summaries_text(s)}")


def _summaries_text(s: dict) -> str:
    from ..mail.deadlines import duration
    if s.get("player_summaries", True):
        text = "players get every public summary (player-summaries yes)"
    else:
        text = "players get the final result, the list every summary (player-summaries no)"
    hold = s.get("hold_answers_seconds")
    if hold is None:
        return text
    if not hold:
        return text + "; every mail is answered at once (hold-answers 0)"
    return (text + f"; an answer that only confirms waits up to {duration(hold)} for the player's next message "
                   f"(hold-answers {duration(hold)})")


@handled
def tick(game: Annotated[Optional[str], typer.Option("--game", help="Only this game.", show_default=False)] = None,
         at: Annotated[Optional[str], typer.Option(
             "--at", metavar="TIME", show_default=False,
             help="Act as if it were TIME (UTC, 2030-01-02T10:00:00Z) instead of now: to catch up after "
                  "the judge was down, or to see what a tick at that time does.")] = None,
         db: DbOption = None, as_json: JsonOption = False):
    """Queue due reminders and apply due defaults, each once; safe to run from cron every minute.

    For every game with addresses: a reminder to each player whose request is due within
    the game's reminder time, and, once a request is past its deadline and grace, the
    documented default (or, with --on-late wait, a notice to the late player). Everything
    it mails goes through the outbox: send it with 'pbem mail send'.

    \b
    Example: pbem mail tick && pbem mail send
    Example: pbem mail tick --at 2030-01-02T10:00:00Z --game g1
    Example: * * * * *  pbem mail tick --json >> ~/pbem-tick.log     (crontab)
    """
    from ..mail import deadlines
    from ..store.event import AT_PATTERN, utc_now
    if at is not None and not AT_PATTERN.fullmatch(at):
        fail(f"--at {at!r} is not a time; give one in UTC like 2030-01-02T10:00:00Z", 2)  # a usage error
    # The only clock: the library takes the time as a parameter.
    now = at or utc_now()
    actions = deadlines.tick(open_store(db), now, game)
    emit({"now": now, "actions": [a.as_dict() for a in actions]}, as_json,
         "\n".join(action_line(a) for a in actions) or "nothing due")
    failed = [a for a in actions if a.action == "failed"]
    if failed:
        fail(f"{len(failed)} action{'s' if len(failed) != 1 else ''} failed and will be tried again "
             f"at the next tick")


def action_line(a) -> str:
    if a.round is None:
        return f"failed {a.game}: {safe(a.error)}"
    what = f"{a.kind} (round {a.round}, step {a.step}) due {a.due.replace('T', ' ').replace('Z', ' UTC')}"
    if a.action == "failed":
        return f"failed {a.game} {safe(a.player)}: {what}: {safe(a.error)}"
    verb = {"reminded": "reminded", "told late": "told late (the game waits)", "defaulted": "defaulted"}[a.action]
    return f"{verb} {safe(a.player)} in {a.game}: {what}"
