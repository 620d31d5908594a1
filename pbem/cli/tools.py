"""Tools: keygen and demo."""


from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import DbOption, FormatOption, JsonOption, emit, fail, handled


def register(app: typer.Typer) -> None:
    app.command("keygen")(keygen)
    app.command("demo")(demo)


@handled
def keygen(output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the secret key to this new file (mode 600).")] = None,
           force: Annotated[bool, typer.Option("--force", help="Replace an existing key file.")] = False,
           public_of: Annotated[Optional[Path], typer.Option("--public-of", help="Print the public key of this secret key file instead.")] = None,
           as_json: JsonOption = False):
    """Make an Ed25519 key pair: keep the secret key, give the public key to the moderator.

    \b
    Example: pbem keygen -o ani.key
    Example: pbem keygen --public-of ani.key     (show the public key again)
    """
    import os

    from ..protocol.signing import fingerprint, generate_keypair, public_from_secret
    if public_of is not None:
        from .inputs import KEY, read_text
        public = public_from_secret(read_text(public_of, KEY).strip())
        emit({"public_key": public, "fingerprint": fingerprint(public)}, as_json,
             f"public key: {public}\nfingerprint: {fingerprint(public)}")
        return
    secret, public = generate_keypair()
    if output:
        if output.exists() and not force:
            fail(f"{output} exists: a key file is never replaced silently (it would lock you out of a "
                 f"signed game); choose another name, or add --force")
        if output.exists():
            output.unlink()
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secret + "\n")
    out = {"public_key": public, "fingerprint": fingerprint(public)}
    if not output:
        out["secret_key"] = secret
    text = (f"public key (send to the moderator): {public}\nfingerprint: {fingerprint(public)}\n"
            + (f"secret key written to {output} (readable by you only)" if output else f"secret key (keep it private): {secret}"))
    emit(out, as_json, text)


@handled
def demo(game: Annotated[str, typer.Option("--game-name", help="Name of the demo game in the database.")] = "",
         game_type: Annotated[str, typer.Option("--game", help="The game: tortuga (2-4 players) or tortuga1667 "
                                                "(4-9 players).")] = "tortuga",
         players: Annotated[Optional[int], typer.Option("--players", help="How many bot players (default: 4 for "
                                                        "tortuga, 5 for tortuga1667).")] = None,
         variant: Annotated[str, typer.Option("--variant", help="tortuga: standard or long; tortuga1667: standard "
                                                     "or advanced.")] = "standard",
         seed: Annotated[Optional[str], typer.Option("--bot-seed", help="Seed for the bots' choices.")] = None,
         fmt: FormatOption = "text",
         temp: Annotated[bool, typer.Option("--temp", help="Use a temporary database, deleted afterwards.")] = False,
         db: DbOption = None, as_json: JsonOption = False):
    """Play a complete example game with bots through the real protocol, then audit it.

    Each round's summary is printed as it ends, then the final result and the audit verdict
    (with --format html: one HTML document at the end).

    \b
    Example: pbem demo --players 3 --format markdown      or      pbem demo --game tortuga1667 --temp
    """
    from .. import games
    from ..render.demo import run_demo
    from .common import open_store
    try:
        rules = games.get(game_type)
    except games.UnknownGame as exc:
        raise typer.BadParameter(str(exc), param_hint="--game") from None
    if players is not None and not rules.MIN_PLAYERS <= players <= rules.MAX_PLAYERS:
        raise typer.BadParameter(f"{game_type} is played by {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS} players, "
                                 f"not {players}", param_hint="--players")
    echo = None if as_json else (lambda text: typer.echo(text.rstrip("\n") + "\n"))
    note = None if as_json else (lambda text: typer.echo(text, err=True))
    if temp:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="pbem-demo-") as folder:
            store = open_store(Path(folder) / "demo.db", create=True)
            try:
                report = run_demo(store, game or None, players, variant, seed, fmt, echo, game_type=game_type)
            finally:
                store.close()
    else:
        report = run_demo(open_store(db, create=True), game or None, players, variant, seed, fmt, echo, note,
                          game_type=game_type)
    emit(report, as_json, None)
