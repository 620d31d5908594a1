"""Tools: keygen and demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

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
         fmt: Annotated[str, typer.Option("--format", help="text, markdown, bbcode or html.")] = "text",
         db: DbOption = None, as_json: JsonOption = False):
    """Play a complete example game with bots through the real protocol, then audit it.

    Example: pbem demo --players 3
    """
    from ..protocol.demo import run_demo
    from .common import open_store
    report = run_demo(open_store(db), game or None, players, variant, seed, fmt, echo=None if as_json else typer.echo)
    emit(report, as_json, None)
