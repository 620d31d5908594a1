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
             db: DbOption = None, as_json: JsonOption = False):
    """Show or change a game's reminders, grace period and what happens to late players.

    Without options it shows them. 'pbem mail tick' acts on them.

    \b
    Example: pbem mail settings g1
    Example: pbem mail settings g1 --remind 12h --grace 1h --on-late wait
    """
    from ..mail import deadlines
    remind_s, grace_s = parse_wait(remind, "--remind"), parse_wait(grace, "--grace")
    store = open_store(db)
    if remind_s is not None or grace_s is not None or on_late is not None:
        deadlines.configure(store, game, remind=remind_s, grace=grace_s, on_late=on_late)
    shown = deadlines.settings(store, game)
    emit(shown, as_json, settings_text(shown))


def settings_text(s: dict) -> str:
    from ..mail.deadlines import duration
    if not s["deadline_seconds"]:
        return (f"game {s['game']} has no deadline: nobody is reminded or defaulted "
                f"(late players: {s['on_late']})")
    remind = (f"a reminder {duration(s['remind_seconds'])} before" if s["remind_seconds"] else "no reminder")
    late = ("the default is applied" if s["on_late"] == "default" else "the player is told and the game waits")
    grace = f" and {duration(s['grace_seconds'])} of grace" if s["grace_seconds"] else ""
    return (f"game {s['game']}: deadline {duration(s['deadline_seconds'])} per request; {remind}; "
            f"after the deadline{grace}, {late} (on-late {s['on_late']})")


@handled
def tick(game: Annotated[Optional[str], typer.Option("--game", help="Only this game.", show_default=False)] = None,
         db: DbOption = None, as_json: JsonOption = False):
    """Queue due reminders and apply due defaults, each once; safe to run from cron every minute.

    For every game with addresses: a reminder to each player whose request is due within
    the game's reminder time, and, once a request is past its deadline and grace, the
    documented default (or, with --on-late wait, a notice to the late player). Everything
    it mails goes through the outbox: send it with 'pbem mail send'.

    \b
    Example: pbem mail tick && pbem mail send
    Example: * * * * *  pbem mail tick --json >> ~/pbem-tick.log     (crontab)
    """
    from ..mail import deadlines
    from ..store.event import utc_now
    # The only clock: the library takes the time as a parameter.
    now = utc_now()
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
