"""When a player is away or leaves: pause, resume, extend, replace and back (the moderator's discretion)."""


from pathlib import Path
from typing import Annotated, List, Optional

import typer

from .common import DbOption, GameArg, JsonOption, emit, fail, handled, open_store, safe

ReasonOption = Annotated[Optional[str], typer.Option(
    "--reason", help="Why: the players read it, and the public log keeps it.", show_default=False)]
UntilOption = Annotated[Optional[str], typer.Option(
    "--until", help="A time in UTC, e.g. 2030-01-05T18:00:00Z or '2030-01-05 18:00'.", show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("pause")(pause)
    app.command("resume")(resume)
    # "-5h" is an argument (a negative duration, refused as such), never an unknown option
    app.command("extend", context_settings={"ignore_unknown_options": True})(extend)
    app.command("replace")(replace)
    app.command("back")(back)


def parse_until(value: Optional[str]) -> Optional[str]:
    """A UTC time as the log writes it (2030-01-05T18:00:00Z); a few friendly spellings too."""
    if value is None:
        return None
    from datetime import datetime
    from ..protocol.times import AT_FORMAT
    text = value.strip().replace(" ", "T").rstrip("Z").upper()
    for form in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"):
        try:
            return datetime.strptime(text, form).strftime(AT_FORMAT)
        except ValueError:
            continue
    raise typer.BadParameter(f"--until {safe(value)!r}: give a time in UTC like 2030-01-05T18:00:00Z or "
                             f"'2030-01-05 18:00'")


@handled
def pause(game: GameArg, reason: ReasonOption = None, db: DbOption = None, as_json: JsonOption = False):
    """Pause a game: no deadline runs (no reminder, no default) until 'pbem resume'.

    Moves that arrive meanwhile are still taken. Players and the list are told by mail.
    The pause and its reason go into the public log.

    \b
    Example: pbem pause g1 --reason "summer holidays, back on 2030-08-20"
    """
    from ..protocol import away as absence
    if not reason or not reason.strip():
        fail("give the reason the players will read, e.g. pbem pause g1 --reason 'summer holidays'", 2)
    session = absence.pause(open_store(db), game, reason)
    emit({"game": game, "paused": session.paused}, as_json,
         f"game {game} is paused (no deadline runs) since {session.paused['since']}; pbem resume {game} ends it")


@handled
def resume(game: GameArg, until: UntilOption = None, reason: ReasonOption = None,
           force: Annotated[bool, typer.Option("--force", help="Let --until shorten a deadline in force (the log marks "
                                                               "it forced and the audit names it).")] = False,
           db: DbOption = None, as_json: JsonOption = False):
    """Resume a paused game: every open deadline moves on by the length of the pause.

    With --until every open deadline becomes that time instead; a time earlier than a
    deadline in force (its deadline before the pause, moved on by the pause) is refused
    unless --force, and the audit's verdict then names the shortened deadline. Each
    player is mailed their new deadlines (in their own time zone).

    \b
    Example: pbem resume g1
    Example: pbem resume g1 --until "2030-08-22 18:00"
    """
    from ..protocol import away as absence, reports
    store = open_store(db)
    session = absence.resume(store, game, until=parse_until(until), reason=reason or "", force=force)
    waiting = reports.waiting(session)
    emit({"game": game, "waiting": waiting}, as_json,
         f"game {game} resumed; " + ("; ".join(f"{safe(w['player'])} {w['kind']} due {w.get('due', '-')}"
                                              for w in waiting) or "nobody owes anything now"))


@handled
def extend(game: GameArg,
           args: Annotated[Optional[List[str]], typer.Argument(
               help="[PLAYER] [DURATION]: whose deadlines (default: every player's) and by how much, e.g. 24h.",
               show_default=False)] = None,
           until: UntilOption = None, reason: ReasonOption = None,
           sign_with: Annotated[Optional[Path], typer.Option("--sign-with", help="Your secret key file (a player in a signed game): print your own signed extension for the judge instead of recording.", show_default=False)] = None,
           context: Annotated[Optional[str], typer.Option("--context", help="With --sign-with: the TOKEN line of your private message (names you and the step).", show_default=False)] = None,
           step: Annotated[Optional[str], typer.Option("--step", help="With --sign-with and PLAYER: the step ROUND.STEP whose deadlines you extend.", show_default=False)] = None,
           db: DbOption = None, as_json: JsonOption = False):
    """Give more time: move what a player (or every player) owes now on by DURATION, or to --until.

    Only the deadlines of the requests open now change; the extension, who asked for it
    and why go into the public log, and each player concerned is mailed the new time.
    A request already overdue (its default not yet applied) can be given a new deadline
    that lies ahead, e.g. with --until. Players may ask by mail themselves ('extend 24h'), once per game for up to 24h unless
    the game was made with other --extensions.

    \b
    Example: pbem extend g1 frank 24h --reason "frank is travelling"
    Example: pbem extend g1 --until "2030-01-10 18:00"
    Example: pbem extend g1 24h --context pbem1.eyJn...Q.1a2b3c4d --sign-with ani.key
             (a player in a signed game: prints a signed extension to send; records nothing)
    """
    from ..protocol import away as absence
    from .common import parse_duration
    args = list(args or [])
    if sign_with is not None:
        _signed_extension(game, args, sign_with, context, step, until, as_json)
        return
    if context is not None or step is not None:
        fail("--context and --step go with --sign-with (a player's own signed extension)", 2)
    player = duration = None
    if len(args) > 2:
        fail("give at most PLAYER and DURATION, e.g. pbem extend g1 frank 24h", 2)
    if len(args) == 2:
        player, duration = args
    elif len(args) == 1:
        if _looks_like_duration(args[0]) or args[0].startswith("-"):
            duration = args[0]
        else:
            player = args[0]
    if (duration is None) == (until is None):
        fail("give a DURATION (e.g. 24h) or --until TIME, one of the two: pbem extend g1 frank 24h", 2)
    outcome: dict = {}
    absence.extend(open_store(db), game, player, seconds=parse_duration(duration), until=parse_until(until),
                      reason=reason or "", outcome=outcome)
    emit({"game": game, "requests": outcome["requests"]}, as_json, "\n".join(
        f"{safe(r['player'])} {r['kind']} (round {r['round']}, step {r['step']}): due {r['until']} (was {r['from']})"
        for r in outcome["requests"]))


def _signed_extension(game: str, args: list, sign_with: Path, context, step, until, as_json: bool) -> None:
    """Print a player's own signed extension block (docs/protocol.md §16); records nothing."""
    from ..protocol import offline
    from .common import parse_duration, parse_step
    from .inputs import KEY, read_text
    durations = [a for a in args if _looks_like_duration(a)]
    names = [a for a in args if not _looks_like_duration(a)]
    if until is not None or len(durations) != 1 or len(names) > 1:
        fail("a signed extension is one DURATION (e.g. 24h): pbem extend g1 24h --context TOKEN --sign-with ani.key", 2)
    if context is not None:
        from ..protocol.token import read_token
        ctx = read_token(context)
        if ctx["game"] != game or (names and names[0] != ctx["player"]):
            fail(f"this token is for {safe(ctx['player'])} in game {safe(ctx['game'])}, not "
                 f"{safe(names[0]) if names else 'this player'} in {safe(game)}")
        player, round_step = ctx["player"], (ctx["round"], ctx["step"])
    elif names and step is not None:
        player, round_step = names[0], parse_step(step)
    else:
        fail("say which step to extend: --context TOKEN (from your private message), or PLAYER and --step ROUND.STEP", 2)
    block = offline.extension_block(game, player, round_step, parse_duration(durations[0]),
                                    read_text(sign_with, KEY).strip())
    emit({"game": game, "player": player, "round": round_step[0], "step": round_step[1], "block": block}, as_json,
         f"send this signed extension to the judge (by mail, or pbem submit {game} FILE); nothing was "
         f"recorded:\n{block}")


def _looks_like_duration(text: str) -> bool:
    return len(text) >= 2 and text[-1].lower() in "mhd" and text.lstrip("-")[:-1].isdecimal()


@handled
def replace(game: GameArg,
            seat: Annotated[str, typer.Argument(help="The seat (the player's name at 'pbem new'); it keeps its name.",
                                                show_default=False)],
            email: Annotated[Optional[str], typer.Option("--email", help="The new player's address.",
                                                         show_default=False)] = None,
            key: Annotated[Optional[str], typer.Option("--key", help="The new player's public key (pbem keygen); "
                                                       "needed in a game that takes only signed moves.",
                                                       show_default=False)] = None,
            tz: Annotated[Optional[str], typer.Option("--tz", help="The new player's time zone (IANA name).",
                                                      show_default=False)] = None,
            moderator_plays: Annotated[bool, typer.Option(
                "--moderator-plays", help="The new player is you, the moderator: the log records it and the "
                "audit names it. Without it the moderator's address is refused.")] = False,
            reason: ReasonOption = None, db: DbOption = None, as_json: JsonOption = False):
    """A new person takes over a seat: the seat stays, the person behind it changes.

    From now on the old password and key are refused. The new player gets a welcome with
    their own password, everything the seat knows (its private message) and what the seat
    owes; the former player is told that the seat has passed on, and why. A choice the
    former player sealed on their own machine stays binding: without its salt the step's
    default applies at the deadline, or at once with 'pbem nmr GAME SEAT --force'. The log
    records the replacement, never the address. The judge's and the list's address are
    refused, and the moderator's unless --moderator-plays.

    \b
    Example: pbem replace g1 lothar --email maria@example.org --reason "lothar left the game"
    """
    from ..mail import away
    from ..protocol.commands import now_utc
    done = away.replace(open_store(db), game, seat, email, at=now_utc(), key=key, reason=reason or "", tz=tz,
                        moderator_plays=moderator_plays)
    text = f"seat {safe(seat)} in {game} changed hands at event {done['event']}"
    if done["judge_address_checked"] is False:
        typer.echo(f"pbem: note: the judge's own address is not known here (judge_address in the mail config, or "
                   f"$PBEM_JUDGE_ADDRESS), so {done['address']} was not checked against it", err=True)
    if done["address"]:
        text += f"; the welcome for {done['address']} is queued (pbem mail send)"
    emit(done, as_json, text)


@handled
def back(game: GameArg,
         seat: Annotated[str, typer.Argument(help="The seat the stand-in plays.", show_default=False)],
         reason: ReasonOption = None, db: DbOption = None, as_json: JsonOption = False):
    """End the stand-in for a seat: its player is back (or the moderator wants them back).

    From now on the seat's requests wait for its player, with their deadlines, as any other
    seat's; the stand-in takes the seat again only after as many defaults in a row as at
    first. The player can do the same by mail (a line 'back') or with any valid move of
    their own. The log records who ended it and why; the audit names it.

    \b
    Example: pbem back g1 lothar --reason "lothar wrote that he is back"
    """
    from ..protocol import away as absence
    session = absence.end_stand_in(open_store(db), game, seat, by="moderator", reason=reason or "")
    emit({"game": game, "seat": seat, "event": session.seq, "standing_in": sorted(session.standing_in)}, as_json,
         f"the stand-in no longer plays {safe(seat)} in {game} (event {session.seq}); the seat's requests now "
         f"wait for its player")
