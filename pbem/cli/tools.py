"""Tools: keygen and demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .audit import FormatOption
from .common import DbOption, JsonOption, emit, handled


def register(app: typer.Typer) -> None:
    app.command("keygen")(keygen)
    app.command("demo")(demo)


@handled
def keygen(output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the secret key to this file (mode 600).")] = None,
           as_json: JsonOption = False):
    """Make an Ed25519 key pair: keep the secret key, give the public key to the moderator.

    Example: pbem keygen -o ani.key
    """
    from ..protocol.signing import fingerprint, generate_keypair
    secret, public = generate_keypair()
    if output:
        output.touch(mode=0o600)
        output.write_text(secret + "\n", encoding="utf-8")
    out = {"public_key": public, "fingerprint": fingerprint(public)}
    if not output:
        out["secret_key"] = secret
    text = (f"public key (send to the moderator): {public}\nfingerprint: {fingerprint(public)}\n"
            + (f"secret key written to {output}" if output else f"secret key (keep it private): {secret}"))
    emit(out, as_json, text)


@handled
def demo(game: Annotated[str, typer.Option("--game-name", help="Name of the demo game in the database.")] = "",
         players: Annotated[int, typer.Option("--players", min=2, max=4, help="How many bot players (2-4).")] = 4,
         variant: Annotated[str, typer.Option("--variant", help="standard or long.")] = "standard",
         seed: Annotated[Optional[str], typer.Option("--bot-seed", help="Seed for the bots' choices.")] = None,
         fmt: FormatOption = "text",
         temp: Annotated[bool, typer.Option("--temp", help="Use a temporary database, deleted afterwards.")] = False,
         db: DbOption = None, as_json: JsonOption = False):
    """Play a complete example game with bots through the real protocol, then audit it.

    Each round's summary is printed as it ends, then the final result and the audit verdict
    (with --format html: one HTML document at the end).

    Example: pbem demo --players 3 --format markdown      or      pbem demo --temp
    """
    from ..protocol.demo import run_demo
    from .common import open_store
    echo = None if as_json else (lambda text: typer.echo(text.rstrip("\n") + "\n"))
    note = None if as_json else (lambda text: typer.echo(text, err=True))
    if temp:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="pbem-demo-") as folder:
            store = open_store(Path(folder) / "demo.db", create=True)
            try:
                report = run_demo(store, game or None, players, variant, seed, fmt, echo)
            finally:
                store.close()
    else:
        report = run_demo(open_store(db, create=True), game or None, players, variant, seed, fmt, echo, note)
    emit(report, as_json, None)
