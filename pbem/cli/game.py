"""Commands that set up a game and report on it: new, client-seed, key, start, status,
private, games."""


from pathlib import Path
from typing import Annotated, List, Optional

import typer

from ..text import quote
from .common import (
    DbOption, FormatOption, GameArg, GraceOption, JsonOption, OnLateOption, PlayerArg, RemindOption, emit, fail,
    handled, open_store, parse_duration, parse_wait, safe, status_text,
)


def register(app: typer.Typer) -> None:
    app.command("new")(new)
    app.command("client-seed")(client_seed)
    app.command("key")(key)
    app.command("start")(start)
    app.command("games")(list_games)
    app.command("status")(status)
    app.command("private")(private)


@handled
def new(
    game: Annotated[str, typer.Argument(help="A name for the new game: letters, digits, '.', '_' or '-'.", show_default=False)],
    players: Annotated[str, typer.Option("--players", help="Comma-separated names in seat order, e.g. ani,alex,frank; "
                                         "NAME=EMAIL gives the judge a player's address (see 'pbem mail').", show_default=False)],
    game_type: Annotated[str, typer.Option("--game", help="Which game.")] = "tortuga",
    variant: Annotated[str, typer.Option("--variant", help="tortuga: standard, or long (8 chests end it); "
                                         "tortuga1667: standard, or advanced (pawns placed by their players).")] = "standard",
    start_player: Annotated[Optional[str], typer.Option("--start", help="The start player (default: the first listed).")] = None,
    require_signatures: Annotated[bool, typer.Option("--require-signatures", help="Accept only Ed25519-signed submissions.")] = False,
    deadline: Annotated[Optional[str], typer.Option("--deadline", help="Time a player has per request before NMR, e.g. 48h, 3d.")] = None,
    keys: Annotated[Optional[List[str]], typer.Option("--key", help="PLAYER=PUBLIC-KEY (repeatable), from 'pbem keygen'.")] = None,
    faces: Annotated[Optional[Path], typer.Option("--faces", help="A dice face table file (see docs/rules.md).")] = None,
    now: Annotated[bool, typer.Option("--now", help="Start play at once, without client seeds.")] = False,
    list_address: Annotated[Optional[str], typer.Option("--list", help="An address (forum, mailing list) that also gets every public summary.")] = None,
    moderator: Annotated[Optional[str], typer.Option("--moderator", help="The moderator's address: told when mail to a player cannot be delivered.", show_default=False)] = None,
    remind: RemindOption = None,
    grace: GraceOption = None,
    on_late: OnLateOption = None,
    extensions: Annotated[Optional[int], typer.Option("--extensions", help="How often each player may ask for more time by mail ('extend 24h'); default 1, 0 for never.", show_default=False)] = None,
    extension_max: Annotated[Optional[str], typer.Option("--extension-max", help="The most time a player may ask for at once, e.g. 24h (the default).", show_default=False)] = None,
    stand_in_after: Annotated[Optional[int], typer.Option("--stand-in-after", help="After this many defaults in a row for one seat, a stand-in plays it by a documented policy (docs/rules.md) until its player moves again or is replaced.", show_default=False)] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
):
    """Create a game: commit to a fresh server seed and publish its hash.

    \b
    Example: pbem new g1 --players ani,alex,frank,lothar --start ani --deadline 48h
    Example: pbem new g1 --players ani=ani@example.org,alex=alex@example.org --deadline 48h --remind 12h --grace 1h
    Example: pbem new g1 --players ani=ani@example.org,alex=alex@example.org --moderator me@example.org
    """
    from ..protocol import commands
    import unicodedata
    names, addresses = [], {}
    for item in players.split(","):
        name, _, address = item.partition("=")
        name = unicodedata.normalize("NFC", name.strip())  # one spelling per letter
        if name.startswith("-"):  # it could never be typed as an argument: pbem private g -x reads an option
            fail(f"player name {quote(name)} starts with '-', which the command line would read as an option; "
                 f"start it with a letter or digit, e.g. {quote(name.lstrip('-') or 'ani')}")
        names.append(name)
        if address.strip():
            addresses[name] = address.strip()
    from .. import games
    # a game without variants (its OPTIONS lack one) gets the option only when it is asked for
    with_variant = "variant" in getattr(games.get(game_type), "OPTIONS", {}) or variant != "standard"
    options = {"variant": variant} if with_variant else {}
    if start_player:
        options["start"] = start_player
    if faces:
        rules = games.get(game_type)
        if not hasattr(rules, "parse_face_table"):
            fail(f"the game {game_type} has no dice face table", 2)
        from .inputs import FACES, read_text
        options["faces"] = rules.parse_face_table(read_text(faces, FACES))
    key_map = {}
    for item in keys or []:
        player, sep, public = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"{quote(item)}: give --key as PLAYER=PUBLIC-KEY")
        from ..protocol.signing import parse_public_key
        parse_public_key(public)
        key_map[player.strip()] = public.strip()
    deadlines = {k: v for k, v in (("remind", parse_wait(remind, "--remind")), ("grace", parse_wait(grace, "--grace")),
                                   ("on_late", on_late)) if v is not None}
    store = open_store(db, create=True)
    settings = dict(require_signatures=require_signatures, deadline_seconds=parse_duration(deadline),
                    keys=key_map, start=now)
    allowance = {k: v for k, v in (("count", extensions), ("max_seconds", parse_duration(extension_max)))
                 if v is not None}
    if allowance:
        settings["extensions"] = allowance
    if stand_in_after is not None:
        settings["stand_in_after"] = stand_in_after
    if addresses or list_address or deadlines or moderator:
        from ..mail import addresses as judge
        session = judge.create_game(store, game, game_type, names, options, addresses, list_address,
                                    at=commands.now_utc(), deadlines=deadlines, moderator=moderator, **settings)
    else:
        session = commands.create_game(store, game, game_type, names, options, **settings)
    head = store.head(game)
    text = (f"created game {game} ({game_type}, {variant}) for {', '.join(map(safe, names))}\n"
            f"server seed hash (publish this now): {session.meta['seed_hash']}\n"
            f"judge key (publish it with the seed hash; it signs every receipt): {session.meta['judge_key']}\n"
            + (f"mail for {len(addresses)} player(s) queued, each with their mail password: pbem mail send\n"
               if addresses else "")
            + ("play has started: send each player 'pbem private' output\n" if now and not addresses else
               "play has started\n" if now else
               f"players may add client seeds: pbem client-seed {game} PLAYER TEXT; then: pbem start {game}\n"))
    emit({"game": game, "seed_hash": session.meta["seed_hash"], "judge_key": session.meta["judge_key"], "started": now,
          "chain_head": {"seq": head[0], "hash": head[1]}}, as_json, text)


@handled
def client_seed(game: GameArg, player: PlayerArg,
                text: Annotated[str, typer.Argument(help="Any text the player chooses.", show_default=False)],
                sign_with: Annotated[Optional[Path], typer.Option("--sign-with", help="Your secret key file (player, signed game): print a signed block for the judge instead of recording.")] = None,
                db: DbOption = None, as_json: JsonOption = False):
    """Add a player's client seed (before play starts); it joins the randomness of every roll.

    \b
    Example: pbem client-seed g1 ani "my lucky words"
    Example: pbem client-seed g1 ani "my lucky words" --sign-with ani.key
             (a player in a signed game: prints a signed block to send; records nothing)
    """
    from ..protocol import commands, offline
    if sign_with is not None:
        from .inputs import KEY, read_text
        block = offline.client_seed_block(game, player, text, read_text(sign_with, KEY).strip())
        emit({"game": game, "player": player, "block": block}, as_json,
             f"send this signed client seed to the judge (pbem submit {game} FILE); nothing was recorded:\n{block}")
        return
    from ..protocol.receipts import issue
    from .play import receipts_text
    store = open_store(db)
    outcome = {}
    before = store.head(game)[0]
    commands.add_client_seed(store, game, player, text, outcome=outcome)
    receipts = issue(store, game, before, [player])
    said = (": already recorded; nothing changed" if outcome["already_recorded"]
            else " recorded; it replaced the earlier one" if outcome["replaced"] else " recorded")
    emit({"game": game, "player": player, "recorded": True, **outcome, "receipts": receipts}, as_json,
         f"client seed of {safe(player)}{said}{receipts_text(receipts)}")


@handled
def key(game: GameArg, player: PlayerArg,
        public_key: Annotated[str, typer.Argument(help="The player's public key (pbem-ed25519-public:...).", show_default=False)],
        sign_with: Annotated[Optional[Path], typer.Option("--sign-with", help="The secret key file of the key the seat holds now (player): print a signed key change for the judge instead of recording.")] = None,
        db: DbOption = None, as_json: JsonOption = False):
    """Register a player's public key (the moderator, before play starts); after the start a
    key changes only by a block signed with the seat's key (the player's own: --sign-with).

    \b
    Example: pbem key g1 ani pbem-ed25519-public:ebVWLo/mVPlAeLES6KmLp5AfhTrmlb7X4OORC60ElmQ=
    Example: pbem key g1 ani pbem-ed25519-public:NEW... --sign-with ani-old.key
             (the player: prints a signed key change to send; records nothing)
    """
    from ..protocol import commands
    from ..protocol.signing import fingerprint
    if sign_with is not None:
        from ..protocol import offline
        from .inputs import KEY, read_text
        block = offline.key_change_block(game, player, public_key, read_text(sign_with, KEY).strip())
        emit({"game": game, "player": player, "block": block}, as_json,
             f"send this signed key change to the judge (pbem submit {game} FILE); nothing was recorded:\n{block}")
        return
    from ..protocol.receipts import issue
    from .play import receipts_text
    store = open_store(db)
    outcome = {}
    before = store.head(game)[0]
    commands.register_key(store, game, player, public_key, outcome=outcome)
    receipts = issue(store, game, before, [player])
    said = (": already recorded; nothing changed" if outcome["already_recorded"]
            else " registered; it replaced the earlier key" if outcome["replaced"] else " registered")
    emit({"game": game, "player": player, "fingerprint": fingerprint(public_key.strip()), **outcome,
          "receipts": receipts}, as_json,
         f"key of {safe(player)}{said} (fingerprint {fingerprint(public_key.strip())}){receipts_text(receipts)}")


@handled
def start(game: GameArg, db: DbOption = None, as_json: JsonOption = False):
    """Fix the client seeds and start play: set-up draws and the first roll happen now.

    \b
    Example: pbem start g1
    """
    from ..protocol import commands
    store = open_store(db)
    session = commands.start_game(store, game)
    emit({"game": game, "started": True, "client_seeds": sorted(session.client_seeds)}, as_json,
         f"game {game} has started; send each player their 'pbem private {game} PLAYER' message")


@handled
def list_games(every: Annotated[bool, typer.Option("--all", help="List the finished games too.")] = False,
               db: DbOption = None, as_json: JsonOption = False):
    """List the games in play, each with its state, who is awaited and its mail; the
    finished games are counted (--all lists them too).

    \b
    Example: pbem games      or      pbem games --all --json
    """
    import json

    from ..store import judge as tables
    store = open_store(db)
    lines, hidden = store.game_lines(every, fields=as_json)  # text: the listing kept ready will do
    names = list(lines)
    mail = tables.mail_states(store)
    failed = tables.failed_counts(store)
    # finished games with mail still queued or failed are shown too: there is work left
    if not every:
        for name in sorted((set(mail) | set(failed)) - set(lines)):
            if store.has_game(name):
                lines[name], hidden = None, hidden - 1
        lines = dict(sorted(lines.items()))
    mailing = tables.mailed_among(store, list(lines))  # games the judge mails, nothing queued: "mail: 0 queued"
    failing = tables.any_failing_address(store)
    fetched = tables.last_fetch(store)
    from ..games import round_word
    from ..protocol.snapshot import listing as listing_text, stood_in
    now, words = _now(), {}
    rows, text = [], []
    for name, cached in lines.items():
        line, due, ready = cached if cached is not None else (None, None, None)
        state = mail.get(name) or ({"queued": 0, "failing": 0, "last_error": None} if name in mailing else None)
        if state is not None:
            state = {**state, "failed": failed.get(name, 0),
                     "undeliverable": _undeliverable(store, name) if failing else []}
        if ready is not None and not as_json and (due is None or due > now) and (every or ready != "finished"):
            # the head row's listing, kept ready: nobody is overdue (none of its deadlines has passed)
            text.append(f"{name}: {safe(ready)}; {_mail_text(state)}" if state else f"{name}: {safe(ready)}")
            continue
        if cached is not None and line is None:
            line = (store.head_row(name) or (None,) * 4)[3]  # not read with the others (text)
        report = json.loads(line) if line is not None else _cached_status(store, name)
        if report is None:
            from ..protocol import loading, reports
            report = reports.status(loading.load(store, name), store.head(name))
        if report["finished"] and not every and name not in mail and name not in failed:
            hidden += 1  # read the long way (no cache at its head), and finished after all
            continue
        _mark_overdue(report, now)
        kind = report.get("type")
        word = words.get(kind) or words.setdefault(kind, round_word(kind))  # as _name_rounds
        rows.append({"game": name, "players": report["players"], "started": report["started"],
                     "round": report["round"], "round_word": word,
                     "phase": report["phase"], "finished": report["finished"],
                     "waiting": sorted({w["player"] for w in report["waiting"]}),
                     "overdue": report["overdue"], "mail": state,
                     "paused": {k: report["paused"].get(k) for k in ("since", "reason")}
                     if report.get("paused") else None, "stand_in": stood_in(report)})
        text.append(_game_line(rows[-1], listing_text))
    text = text or ([] if hidden else ["no games yet (pbem new)"])
    if hidden:
        text.append(f"{hidden} finished game{'s' if hidden != 1 else ''} not shown (pbem games --all)")
    if mailing or mail:
        text.append(_fetch_line(fetched))
    replica: dict = {}
    if mailing or mail:
        waiting = _replica_text(store, replica)
        if waiting:
            text.append(waiting.strip())
    emit({"games": [r["game"] for r in rows], "details": rows, "finished_not_shown": hidden,
          "last_fetch": fetched, "replica_wait": replica.get("replica_wait")}, as_json, "\n".join(text))


def _undeliverable(store, game: str) -> list[dict]:
    from ..mail import failures
    return failures.for_game(store, game)


def _mail_text(m: dict | None) -> str:
    """What waits to go out, in a few words (from ``store.judge.mail_state``)."""
    if m is None:
        return ""
    text = f"mail: {m['queued']} queued"
    if m["failing"]:
        text += f", {m['failing']} failing (last error: {safe(m['last_error'])})"
    if m.get("failed"):
        text += f", {m['failed']} failed for good (pbem mail outbox)"
    bad = m.get("undeliverable") or []
    if bad:
        from ..mail import failures
        text += "; MAIL CANNOT BE DELIVERED to " + ", ".join(
            f"{safe(failures.who(e))} ({failures.state_words(e)})" for e in bad)
    return text


def _fetch_line(fetched: dict | None) -> str:
    if not fetched:
        return "last mail fetch: none recorded"
    return f"last mail fetch: {fetched.get('at', '-').replace('T', ' ').replace('Z', ' UTC')}"


def _game_line(r: dict, listing) -> str:
    """A game's line in ``pbem games`` (``listing``: ``pbem.protocol.snapshot.listing``,
    which also makes the text a game's head row keeps ready)."""
    state = safe(listing(r["finished"], r["started"], r["waiting"], r.get("round_word", "round"), r["round"],
                         r["phase"], r["overdue"], paused=r.get("paused"), stand_in=r.get("stand_in") or ()))
    if r["mail"]:
        state += f"; {_mail_text(r['mail'])}"
    return f"{r['game']}: {state}"


@handled
def status(game: GameArg, db: DbOption = None, as_json: JsonOption = False):
    """Phase, round, step, who owes what, and the chain head.

    \b
    Example: pbem status g1 --json
    """
    from ..store import judge as tables
    store = open_store(db)
    report = _cached_status(store, game)
    if report is None:
        from ..protocol import loading, reports
        report = reports.status(loading.load(store, game), store.head(game))
    _mark_overdue(report)
    _name_rounds(report)
    report["mail"] = tables.mail_state(store, game)
    if report["mail"] is not None:
        from ..mail import failures
        report["mail"]["last_fetch"] = tables.last_fetch(store)
        report["mail"]["undeliverable"] = failures.for_game(store, game)
    text = status_text(report)
    if report["mail"] is not None:
        text += f"\n{_mail_text(report['mail'])}; {_fetch_line(report['mail']['last_fetch'])}"
        for entry in report["mail"]["undeliverable"]:
            text += f"\nmail cannot be delivered: {safe(failures.line(entry))}"
        text += _replica_text(store, report["mail"])
    emit(report, as_json, text)


def _replica_text(store, mail: dict) -> str:
    """While mail waits for the replica (docs/hosting.md): a line saying why, kept in ``mail``."""
    from ..mail import replica
    state = replica.waiting(store.path)
    if state is None:
        return ""
    mail["replica_wait"] = state
    return f"\n{safe(replica.line(state))}"



def _mark_overdue(report: dict, now: str | None = None) -> dict:
    """'overdue' depends on the clock, so it is added when reporting, not cached; the
    report's ``overdue`` lists the players who are."""
    now = now or _now()
    for entry in report.get("waiting", []):
        if "due" in entry:
            entry["overdue"] = entry["due"] <= now
    report["overdue"] = sorted({w["player"] for w in report.get("waiting", []) if w.get("overdue")})
    return report


def _now() -> str:
    from datetime import datetime, timezone
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _name_rounds(report: dict) -> dict:
    """The game's own word for a round (1667's summaries say "turn"): added when reporting,
    not cached, so a snapshot's status stays what a fresh replay gives (audit compares them)."""
    from ..games import round_word
    report["round_word"] = round_word(report.get("type"))
    return report


def _cached_status(store, game: str):
    """The report cached with the snapshot at the head (checked by audit): this path
    needs neither the rules nor a replay, so status answers at once. None when there is
    no usable snapshot at the head, or the newest full snapshot before a light one at the
    head fails its digest: the caller replays (and reports any damage)."""
    from ..protocol.snapshot import UnreadableSnapshot, light_status, read_snapshot
    snapshot = store.snapshot(game)
    if snapshot is None or snapshot.problem is not None or snapshot.seq != store.head(game)[0]:
        return None
    try:
        if not snapshot.full:
            full = store.snapshot(game, full=True)
            return None if full is not None and full.problem is not None else light_status(snapshot.text)
        data = read_snapshot(snapshot.text)
    except UnreadableSnapshot:
        return None
    report = data.get("status") if data is not None and "light" not in data else None
    return report if isinstance(report, dict) else None


@handled
def private(game: GameArg, player: PlayerArg,
            fmt: FormatOption = "text",
            db: DbOption = None, as_json: JsonOption = False):
    """A player's private message: their roll, tiles, and what to send, in the exact syntax.

    \b
    Example: pbem private g1 ani      or      pbem private g1 ani --format markdown
    """
    from ..protocol import loading, reports
    store = open_store(db)
    session = loading.load(store, game)
    if as_json:
        emit(reports.private(session, player), True)
        return
    from ..render import summary
    from ..store import judge as tables
    row = tables.mail_player(store, game, player)  # due times in the player's own zone too
    _model, text = summary.render_private(session, player, fmt, tz=row.tz if row else None)
    emit(None, False, text)
