"""Commands for the record: show, log, export, audit, check-restore, replay, reveal-seed."""


import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from .common import DbOption, FormatOption, GameArg, JsonOption, emit, fail, handled, open_store, parse_round


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("log")(log)
    app.command("export")(export)
    app.command("audit")(audit)
    app.command("check-restore")(check_restore)
    app.command("replay")(replay)
    app.command("reveal-seed")(reveal_seed)


@handled
def show(game: GameArg,
         round_: Annotated[Optional[str], typer.Option("--round", metavar="INTEGER", callback=parse_round,
                                                      help="The round to summarise (default: the latest).")] = None,
         fmt: FormatOption = "text", db: DbOption = None, as_json: JsonOption = False):
    """The public summary of a round (after the last round: the final result too), for email or a forum.

    \b
    Example: pbem show g1 --round 3 --format bbcode
    """
    from ..render import record, summary
    store = open_store(db)
    model, text = summary.render_public(record.from_store(store, game), round_, fmt)
    emit(model, as_json, text)


@handled
def log(game: GameArg, db: DbOption = None, as_json: JsonOption = False):
    """The event log: sequence number, time, kind, and hash of every event.

    \b
    Example: pbem log g1 --json
    """
    store = open_store(db)
    events = store.events(game)
    if not events:
        from ..protocol.loading import load
        load(store, game)  # raises the helpful unknown-game error
    rows = [e.export_dict() for e in events]
    emit(rows, as_json, "\n".join(f"{e.seq:5d} {e.at} {e.kind:<13} {e.hash[:16]}  {_brief(e.kind, e.data)}" for e in events))


def _brief(kind: str, data: dict) -> str:
    from .common import safe
    player = data.get("player")
    bits = [safe(player)] if player else []
    for k in ("round", "step", "choice", "commitment", "by", "reason"):
        if k in data and k != "commitment":
            bits.append(f"{k}={safe(data[k])}")
        elif k == "commitment" and k in data:
            bits.append(f"commitment={data[k][:12]}…")
    return " ".join(bits)


@handled
def export(game: GameArg,
           output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write to this new file (default: standard output).")] = None,
           force: Annotated[bool, typer.Option("--force", help="Replace an existing output file (never the database).")] = False,
           fmt: Annotated[str, typer.Option("--format", help="jsonl (the log, for audits) or sqlite (the public record as tables for Datasette; needs -o).")] = "jsonl",
           db: DbOption = None):
    """The log as JSON Lines, for anyone to audit (public: the seed only once revealed).

    With --format sqlite: the public record as a SQLite database to browse with Datasette
    (events, players, commitments, reveals, rounds or turns, votes, results), nothing more.

    \b
    Example: pbem export g1 -o g1.jsonl
    Example: pbem export g1 --format sqlite -o public.db && datasette public.db
    """
    if fmt not in ("jsonl", "sqlite"):
        fail(f"unknown format {fmt!r}; use jsonl (the log) or sqlite (a public database for Datasette)", 2)
    if fmt == "sqlite" and output is None:
        fail("--format sqlite writes a database file: give it with -o, e.g. -o public.db", 2)
    from ..store import export_lines
    from .common import db_path
    if output is not None:
        if output.exists() and output.resolve() == db_path(db).resolve():
            fail(f"{output} is the games database itself; export to another file")
        if output.exists() and not force:
            fail(f"{output} exists; choose another file name, or add --force to replace it")
    store = open_store(db)
    events = store.events(game)
    if not events:
        from ..protocol.loading import load
        load(store, game)
    if fmt == "sqlite":
        from ..render import public_db
        count = public_db.write_store_game(store, game, output)
        typer.echo(f"wrote the public record of {game} ({count} events) to {output}", err=True)
        return
    text = "".join(export_lines(events))  # each line already ends in a newline
    if output:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {len(events)} events to {output}", err=True)
    else:
        sys.stdout.write(text)


@handled
def audit(game: Annotated[Optional[str], typer.Argument(help="A game in the database.", show_default=False)] = None,
          file: Annotated[Optional[Path], typer.Option("--file", help="An exported log (JSON Lines) instead.")] = None,
          head: Annotated[Optional[List[str]], typer.Option("--head", help="A published chain head SEQ:HASH that must be a prefix of the log (repeatable; the hash whole or its first 8+ hex characters).")] = None,
          heads: Annotated[Optional[List[Path]], typer.Option("--heads", help="A file holding published heads ('event N HASH'): a saved summary, an mbox of the list, a saved forum thread (repeatable).")] = None,
          seed_hash: Annotated[Optional[str], typer.Option("--seed-hash", help="The seed hash published when the game was created (64 hex characters).")] = None,
          judge_key: Annotated[Optional[str], typer.Option("--judge-key", help="The judge key published when the game was created (pbem-ed25519-public:...).")] = None,
          receipt: Annotated[Optional[List[Path]], typer.Option("--receipt", help="A file holding the judge's signed receipts, checked against the log (repeatable).")] = None,
          db: DbOption = None, as_json: JsonOption = False):
    """Check the log and say what it proves: OK (exit 0), FAIL (1), INCOMPLETE (3).

    Checks, in order: the hash chain; the published seed hash; the published judge key;
    every published head is a
    prefix of the log; every receipt agrees with the log; the replay (commitments,
    signatures, deadlines and, once the seed is known, every roll and draw). The first line
    of the output is the verdict (docs/protocol.md, section 13).

    \b
    Example: pbem audit g1
    Example: pbem audit --file g1.jsonl --seed-hash 5e1f... --judge-key pbem-ed25519-public:N/Ov... --heads summaries.mbox --receipt my-receipts.txt
    Example: pbem audit --file g1.jsonl --head 214:9f3a06c1    (the head a summary published)
    """
    from ..protocol.errors import BadAuditInput
    from ..protocol.receipts import read_receipts
    from ..store import audit as auditing
    from ..store.verdict import EXIT_CODES, Published
    from .inputs import EXPORT, HEADS, RECEIPTS, read_bytes, read_text
    if (game is None) == (file is None):
        fail("give a GAME or --file FILE", 2)
    published = Published()
    for text in head or []:
        seq, _, digest = text.partition(":")
        digest = digest.strip().rstrip("…").lower()
        if not seq.isdecimal() or not 8 <= len(digest) <= 64 or any(c not in "0123456789abcdef" for c in digest):
            fail("give --head as SEQ:HASH, the hash whole or its first 8+ hex characters, e.g. 214:9f3a06c1", 2)
        published.heads.append((int(seq), digest))
    if seed_hash is not None:
        published.seed_hash = seed_hash.strip().lower()
        if len(published.seed_hash) != 64 or any(c not in "0123456789abcdef" for c in published.seed_hash):
            fail("give --seed-hash as the 64 hex characters of the seed hash the game published at its start", 2)
    if judge_key is not None:
        import base64
        from ..protocol.signing import PUBLIC_PREFIX, KeyFormatError, parse_public_key
        try:
            raw = parse_public_key(judge_key)
        except KeyFormatError as exc:
            fail(f"give --judge-key as the judge key printed by pbem new (pbem-ed25519-public:...): {exc}", 2)
        published.judge_key = PUBLIC_PREFIX + base64.b64encode(raw).decode("ascii")
    from .inputs import InputRefused
    try:
        for path in heads or []:
            published.head_files.append((str(path), bytes(read_bytes(str(path), HEADS)[1])))
        for path in receipt or []:
            from ..mail.message import submission_text  # a saved mail is decoded first
            published.receipts += read_receipts(submission_text(bytes(read_bytes(str(path), RECEIPTS)[1])), str(path))
    except (OSError, InputRefused) as exc:  # what the auditor gave cannot be read: no verdict
        fail(f"{exc.strerror or exc}: {exc.filename}" if getattr(exc, "filename", None) else str(exc), 2)
    except BadAuditInput as exc:
        fail(str(exc), 2)
    try:
        if file is not None:
            report = auditing.audit_file(read_text(file, EXPORT), published)
        else:
            report = auditing.audit_store(open_store(db), game, published)
    except BadAuditInput as exc:
        fail(str(exc), 2)
    if not report["ok"]:  # under --json the report is the one document, with the error in it
        report.update(error=f"audit failed: {report['problem']}", code=1)
    emit(report, as_json, auditing.report_text(report))
    if not report["ok"]:
        typer.echo(f"pbem: audit failed: {report['problem']}", err=True)
    code = EXIT_CODES[report["verdict"]]
    if code:
        raise typer.Exit(code)


@handled
def check_restore(receipts: Annotated[Optional[List[Path]], typer.Option("--receipts", help="The judge's answers as players got them: an mbox, a saved mail, or a text holding receipt blocks (repeatable).", show_default=False)] = None,
                  db: DbOption = None, as_json: JsonOption = False):
    """Check a database restored from its replica: every game audits, and every receipt the
    players hold is in the log (exit 0), else say what is missing (exit 1).

    Each game is audited as 'pbem audit GAME' does (OK or INCOMPLETE pass; FAIL does not).
    Every receipt block in the --receipts files (an mbox of the judge's answers, say) must
    name a game of the database and an event that the log holds with the hash the judge
    signed: one that the restore lost is listed as missing. See docs/hosting.md (the
    restore drill).

    \b
    Example: pbem check-restore --db restored.db --receipts answers.mbox
    Example: pbem check-restore --db restored.db --receipts ani.eml --receipts alex.eml --json
    """
    from ..protocol.errors import BadAuditInput
    from ..store import audit as auditing
    from .inputs import InputRefused
    store = open_store(db)
    try:
        held = _receipts_in(receipts or [])
    except (OSError, InputRefused) as exc:
        fail(f"{exc.strerror or exc}: {exc.filename}" if getattr(exc, "filename", None) else str(exc), 2)
    except BadAuditInput as exc:
        fail(str(exc), 2)
    games, lines, failed = [], [], []
    for name in store.games():
        report = auditing.audit_store(store, name, None)
        games.append({"game": name, "verdict": report["verdict"], "events": report["events"],
                      "problem": report.get("problem")})
        lines.append(f"{name}: {report['verdict_line']}")
        if report["verdict"] == "FAIL":
            failed.append(f"{name} does not audit")
    missing = _missing_receipts(store, held)
    for entry in missing:
        lines.append(f"receipt MISSING: {entry['reason']}")
    if missing:
        failed.append(f"{len(missing)} of {len(held)} receipts are not in the log")
    head = (f"RESTORE FAIL: {'; '.join(failed)}" if failed else
            f"RESTORE OK: {len(games)} game{' audits' if len(games) == 1 else 's audit'}, {len(held)} "
            f"receipt{'s' if len(held) != 1 else ''} all in the log")
    result = {"ok": not failed, "games": games, "receipts": len(held), "missing": missing}
    if failed:
        result.update(error=head, code=1)
    emit(result, as_json, "\n".join([head, *lines]))
    if failed:
        typer.echo(f"pbem: {head}", err=True)
        raise typer.Exit(1)


def _receipts_in(paths: List[Path]) -> list[dict]:
    """Every distinct receipt body in ``paths`` (an mbox is read message by message)."""
    import re

    from ..mail.message import submission_text
    from ..protocol.receipts import read_receipts
    from .inputs import HEADS, read_bytes
    found: dict = {}
    for path in paths:
        data = bytes(read_bytes(str(path), HEADS)[1])
        parts = ([part for part in re.split(rb"(?m)^From .*\n", data) if part.strip()]
                 if data.startswith(b"From ") else [data])
        for number, part in enumerate(parts, start=1):
            where = f"{path} message {number}" if len(parts) > 1 else str(path)
            for body in read_receipts(submission_text(part), where):
                found.setdefault((body["game"], body["seq"], body["hash"], body["head_seq"]), body)
    return list(found.values())


def _missing_receipts(store, held: list[dict]) -> list[dict]:
    from ..protocol.receipts import contradiction
    hashes: dict = {}
    missing = []
    for number, body in enumerate(held, start=1):
        game = body["game"]
        if game not in hashes:
            rows = [e.export_dict() for e in store.events(game)] if store.has_game(game) else []
            created = rows[0]["data"] if rows and rows[0]["kind"] == "created" else {}
            hashes[game] = ([row["hash"] for row in rows], created.get("judge_key"))
        chain, key = hashes[game]
        reason = (f"receipt {number} ({body['player']}, event {body['seq']} {body['event']}) is for game {game}, "
                  f"which this database does not hold") if not chain else contradiction(number, body, key, chain)
        if reason is not None:
            missing.append({"game": game, "player": body["player"], "seq": body["seq"], "event": body["event"],
                            "hash": body["hash"], "reason": f"{game}: {reason}"})
    return missing


@handled
def replay(file: Annotated[Path, typer.Argument(help="An exported log (JSON Lines) with the seed revealed.", show_default=False)],
           fmt: FormatOption = "text", as_json: JsonOption = False):
    """Replay an exported game and print every round's summary and the final result.

    With --json, the summaries' data and every random draw (label, n, value) in the order
    the rules drew them, for a checker to compare with its own.

    \b
    Example: pbem replay examples/games/four-players.jsonl --format markdown
    """
    from ..render import record, summary
    from .inputs import EXPORT, read_text
    game = record.from_export(read_text(file, EXPORT), draws=as_json)
    models, text = summary.render_all(game, fmt, audit_file=str(file))
    if as_json:  # every draw of the game, in the order the rules made them (docs/protocol.md §4)
        models["draws"] = [{"label": label, "n": n, "value": value} for label, n, value in game.session.rng.draws]
    emit(models, as_json, text)


@handled
def reveal_seed(game: GameArg,
                force: Annotated[bool, typer.Option("--force", help="Publish it before the game is over, which ends play for good.")] = False,
                db: DbOption = None, as_json: JsonOption = False):
    """Publish the server seed, so anyone can recompute every roll (automatic at game end).

    \b
    Example: pbem reveal-seed g1 --force      (abandon an unfinished game g1)
    """
    from ..protocol import commands, loading
    store = open_store(db)
    commands.reveal_seed(store, game, force)
    seed = store.get_secret(game, loading.SEED)
    emit({"game": game, "seed": seed}, as_json, f"server seed of {game}: {seed}")
