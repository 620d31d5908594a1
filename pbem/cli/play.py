"""Commands that take players' choices: seal, commit, reveal, decide, submit, nmr."""


from pathlib import Path
from typing import Annotated, List, Optional

import typer

from .common import (
    DbOption, GameArg, JsonOption, PlayerArg, emit, fail, handled, open_store, parse_step, safe, status_text,
)

StepOption = Annotated[Optional[str], typer.Option("--step", help="The sealed step this is for, ROUND.STEP (default: the open one).")]
ChoiceArg = Annotated[str, typer.Argument(help="The choice in the game's syntax (see 'pbem private').", show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("seal")(seal)
    app.command("commit")(commit)
    app.command("reveal")(reveal)
    app.command("decide")(decide)
    app.command("submit")(submit)
    app.command("nmr")(nmr)


@handled
def seal(
    args: Annotated[List[str], typer.Argument(help="GAME PLAYER CHOICE, or only CHOICE with --context.", show_default=False)],
    context: Annotated[Optional[str], typer.Option("--context", help="The seal TOKEN line from your private message.")] = None,
    key_file: Annotated[Optional[Path], typer.Option("--key", help="Your secret key file (pbem keygen): sign the blocks.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Seal a choice: check it is legal, print its commitment and the salt to keep secret.

    \b
    Example: pbem seal --context pbem1.eyJn...Q.1a2b3c4d B,C    (player, offline)
    Example: pbem seal g1 ani B,C                              (with the database)
    """
    from ..protocol import commands, loading, offline
    if context is not None:
        if len(args) != 1:
            fail("with --context give only the CHOICE, e.g. pbem seal --context TOKEN B,C", 2)
        sealed = offline.seal_offline(context, args[0])
    else:
        if len(args) != 3:
            fail("give GAME PLAYER CHOICE (or --context TOKEN CHOICE)", 2)
        session = loading.load(open_store(db), args[0])
        sealed = commands.seal(session, args[1], args[2])
    secret = _secret_key(key_file)
    signed_game = (_token_requires_signatures(context) if context is not None
                   else bool(session.meta.get("require_signatures")))
    if signed_game and secret is None:
        fail("this game requires signed submissions: add --key YOUR.key (from pbem keygen)")
    blocks = offline.signed_blocks(sealed, secret)
    out = {"commitment": sealed["commitment"], "salt": sealed["salt"], "choice": sealed["choice"],
           "game": sealed["game"], "player": sealed["player"], "round": sealed["round"],
           "step": sealed["step"], "commit_block": blocks["commit"], "reveal_block": blocks["reveal"]}
    text = (f"choice {sealed['choice']} sealed for {safe(sealed['player'])}, round {sealed['round']} step {sealed['step']}\n"
            f"commitment (send now): {sealed['commitment']}\n"
            f"salt (keep secret until every commitment is in): {sealed['salt']}\n"
            f"later reveal with: pbem reveal {sealed['game']} {safe(sealed['player'])} {sealed['choice']} {sealed['salt']}\n\n"
            f"or send this block now{' (signed)' if secret else ''}:\n{blocks['commit']}\n")
    if sealed.get("anonymous"):  # who played what stays secret until the end: never post the reveal
        text += (f"and KEEP this one until every commitment is in, then send it to the judge PRIVATELY (by mail or "
                 f"to the moderator, never to a forum thread: this is an anonymous vote, and the judge alone "
                 f"sees it until the game ends):\n{blocks['reveal']}")
    else:
        text += (f"and KEEP this one until every commitment is in, then send it (by mail you may send it now, "
                 f"after the commit block, to save a mail: the judge keeps it from the others until every "
                 f"commitment is in, but sees your choice at once):\n{blocks['reveal']}")
    emit(out, as_json, text)


@handled
def commit(
    game: GameArg, player: PlayerArg,
    commitment: Annotated[Optional[str], typer.Argument(help="The 64-hex commitment from 'pbem seal'.", show_default=False)] = None,
    choice: Annotated[Optional[str], typer.Option("--choice", help="Seal on receipt: the player's choice, sent privately to the moderator.")] = None,
    step: StepOption = None,
    db: DbOption = None, as_json: JsonOption = False,
):
    """Record a player's commitment (or, with --choice, seal a privately sent choice on receipt).

    \b
    Example: pbem commit g1 ani 6ba2c455e9867799af69e2e788fbab5a4810c6e2de3be46adc0cf59f649017ac
    Example: pbem commit g1 frank --choice B,C     (frank has only email; the tool keeps the salt)
    """
    from ..protocol import commands
    store = open_store(db)
    if (commitment is None) == (choice is None):
        fail("give either the COMMITMENT or --choice CHOICE", 2)
    outcome = {}
    before = _head_seq(store, game)
    if choice is not None:
        if step is not None:
            from ..protocol.loading import load
            open_step = load(store, game).sealed
            if open_step is None or parse_step(step) != (open_step.round, open_step.step):
                fail(f"--step {step} is not the open sealed step; a choice sealed on receipt always "
                     f"belongs to the open step (leave --step out)")
        session = commands.commit_for_player(store, game, player, choice, outcome=outcome)
    else:
        session = commands.commit(store, game, player, commitment, parse_step(step), outcome=outcome)
    _report_submissions(store, session, game, as_json, [outcome], _receipts(store, game, before, [player]))


@handled
def reveal(game: GameArg, player: PlayerArg, choice: ChoiceArg,
           salt: Annotated[str, typer.Argument(help="The salt printed by 'pbem seal'.", show_default=False)],
           step: StepOption = None, db: DbOption = None, as_json: JsonOption = False):
    """Check a reveal against the commitment; the last reveal resolves the step.

    \b
    Example: pbem reveal g1 ani B,C 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
    """
    from ..protocol import commands
    store = open_store(db)
    outcome = {}
    before = _head_seq(store, game)
    session = commands.reveal(store, game, player, choice, salt, parse_step(step), outcome=outcome)
    _report_submissions(store, session, game, as_json, [outcome], _receipts(store, game, before, [player], [outcome]))


@handled
def decide(
    args: Annotated[List[str], typer.Argument(help="GAME PLAYER CHOICE, or only CHOICE with --context.", show_default=False)],
    context: Annotated[Optional[str], typer.Option("--context", help="The TOKEN line from your private message (player, offline).")] = None,
    key_file: Annotated[Optional[Path], typer.Option("--key", help="Your secret key file (pbem keygen): print a signed block for 'pbem submit' instead of recording.")] = None,
    db: DbOption = None, as_json: JsonOption = False,
):
    """Record an open (not sealed) decision, e.g. a skull turn, a target, an ordering.

    \b
    Example: pbem decide g1 ani board:alex:red
    Example: pbem decide --context pbem1.eyJn...Q.1a2b3c4d skull:raid --key ani.key
             (a player in a signed game: prints a signed block to send; records nothing)
    """
    from ..protocol import commands, loading, offline
    secret = _secret_key(key_file)
    if context is not None:
        if len(args) != 1:
            fail("with --context give only the CHOICE, e.g. pbem decide --context TOKEN skull:raid", 2)
        made = offline.decide_offline(context, args[0], secret)
        emit(made, as_json, f"send this {'signed ' if secret else ''}decision to the moderator "
                            f"(it goes in with pbem submit); nothing was recorded:\n{made['block']}")
        return
    if len(args) != 3:
        fail("give GAME PLAYER CHOICE (or --context TOKEN CHOICE)", 2)
    game, player, choice = args
    store = open_store(db)
    if secret is not None:
        block = offline.signed_decision(loading.load(store, game), player, choice, secret)
        emit({"game": game, "player": player, "choice": choice, "block": block}, as_json,
             f"send this signed decision (pbem submit {game} FILE); nothing was recorded yet:\n{block}")
        return
    outcome = {}
    before = _head_seq(store, game)
    session = commands.decide(store, game, player, choice, outcome=outcome)
    _report_submissions(store, session, game, as_json, [outcome], _receipts(store, game, before, [player]))


@handled
def submit(game: GameArg,
           source: Annotated[str, typer.Argument(help="A file holding the mail or post, or - for standard input.")] = "-",
           db: DbOption = None, as_json: JsonOption = False):
    """Apply armoured (and signed) submission blocks pasted from an email or forum post.

    Blocks already recorded (a mail processed twice, a block quoted in a reply) are skipped
    and reported as already recorded; the new ones are applied.

    \b
    Example: pbem submit g1 mail-from-ani.txt
    Example: pbem submit g1 saved-mail.eml      (a saved mail, or a forum page saved as .html)
    """
    from ..mail.message import submission_text
    from ..protocol import loading, submissions
    from .inputs import SUBMISSION, read_bytes
    text = submission_text(bytes(read_bytes(source, SUBMISSION, stdin_ok=True)[1]))
    store = open_store(db)
    before = _head_seq(store, game)
    done = submissions.submit(store, game, text)
    session = loading.load(store, game)
    _report_submissions(store, session, game, as_json, done,
                        _receipts(store, game, before, [item["player"] for item in done], done))


@handled
def nmr(game: GameArg, player: PlayerArg,
        force: Annotated[bool, typer.Option("--force", help="Apply the default before the deadline (and grace), or in a game without one; the log marks it forced.")] = False,
        db: DbOption = None, as_json: JsonOption = False):
    """No move received: apply the documented default for what a late player owes.

    Each call settles one request: the one the player owes now (run it again for the next).

    \b
    Example: pbem nmr g1 frank --force
    """
    from ..protocol import commands
    from ..store import judge as tables
    store = open_store(db)
    session = commands.nmr(store, game, player, force, grace=tables.deadlines(store, game).grace)
    last = store.events(game, after=store.head(game)[0] - 1)[0]
    if last.kind == "nmr":
        what = "marked late: the default is applied, and shown, once every commitment of the step is in"
    else:
        applied = next((e.data.get("choice") for e in reversed(store.events(game))
                        if e.kind == "default" and e.data.get("player") == player), None)
        what = f"default applied: {applied}" if applied else "default applied"
    _report(store, session, game, as_json, f"{safe(player)} {what}")


def _secret_key(key_file: Optional[Path]) -> str | None:
    from .inputs import KEY, read_text
    return read_text(key_file, KEY).strip() if key_file else None


def _token_requires_signatures(token: str) -> bool:
    from ..protocol.token import read_token
    return bool(read_token(token).get("signatures"))


_WHAT = {"commit": "commitment", "reveal": "reveal", "decide": "decision"}


def _submission_text(item: dict) -> str:
    """One line on one submission: recorded, a repeat, or a reveal whose choice was illegal."""
    if item["kind"] == "key":
        return f"key change of {safe(item['player'])}" + (": already recorded; nothing changed"
                                                          if item["already_recorded"] else " recorded (signed with the seat's key)")
    if item["kind"] == "extend":
        if item["already_recorded"]:
            return f"extension of {safe(item['player'])}: already recorded; nothing changed"
        return f"extension of {safe(item['player'])} recorded: " + "; ".join(
            f"{r['kind']} (round {r['round']}, step {r['step']}) due {r['until']} (was {r['from']})" for r in item["requests"])
    if item["kind"] == "client_seed":
        return f"client seed of {safe(item['player'])}" + (": already recorded; nothing changed"
                                                           if item["already_recorded"] else " recorded")
    what = f"{_WHAT[item['kind']]} of {safe(item['player'])} for round {item['round']} step {item['step']}"
    if item["already_recorded"]:
        return f"{what}: already recorded; nothing changed"
    if item.get("early"):
        return (f"{what} held: it opens the commitment, and is recorded once every commitment of the step "
                f"is in (unseen by the others until then)")
    if item.get("held"):
        return f"{what} recorded; the judge holds it until the game ends (anonymous step)"
    if item.get("illegal"):
        return (f"{what} accepted, but the committed choice was not allowed ({safe(item['illegal'])}): "
                f"the default {safe(item['applied'])} was applied instead")
    if item.get("replaced"):
        return f"{what} recorded; it replaces their earlier one (until every commitment is in, the last one counts)"
    return f"{what} recorded" + (f": {safe(item['applied'])}" if item.get("applied") else "")


def _report_submissions(store, session, game: str, as_json: bool, items: list[dict],
                        receipts: list[str] | None = None) -> None:
    """What became of each submission (--json: ``accepted``, one entry each, and
    ``already_recorded`` when every one of them was), then the game's status, then the
    judge's receipts for what was recorded (--json: ``receipts``)."""
    extra = {"accepted": items, "already_recorded": all(i["already_recorded"] for i in items),
             "receipts": receipts or []}
    _report(store, session, game, as_json, "\n".join(map(_submission_text, items)), extra,
            receipts_text(receipts or []))


def _head_seq(store, game: str) -> int:
    return store.head(game)[0]


def _receipts(store, game: str, before: int, players, items=()) -> list[str]:
    """The judge's receipts for the submissions recorded since event ``before``, and for
    each reveal among ``items`` held early (docs/protocol.md §12)."""
    from ..protocol.receipts import issue
    early = [(i["player"], i["round"], i["step"]) for i in items if i.get("early")]
    return issue(store, game, before, players, early=early)


def receipts_text(blocks: list[str]) -> str:
    if not blocks:
        return ""
    noun = "this receipt" if len(blocks) == 1 else f"these {len(blocks)} receipts"
    return (f"\nthe judge's signed {'receipt' if len(blocks) == 1 else 'receipts'} (give {noun} to the player "
            f"to keep: 'pbem audit --receipt FILE' proves with it what the judge recorded):\n" + "".join(blocks))


def _report(store, session, game: str, as_json: bool, text: str, extra: dict | None = None,
            tail: str = "") -> None:
    from ..protocol import reports
    report = reports.status(session, store.head(game))
    if extra:
        report.update(extra)
    emit(report, as_json, text + "\n" + status_text(report) + tail)
