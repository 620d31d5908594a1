"""``pbem demo``: bots play a whole game through the real protocol, then it is audited.

Every sealed step is sealed, committed and revealed exactly as players would; every open
decision goes through ``decide``. Bots see only what their player may see.
"""

from __future__ import annotations

import secrets

from . import audit as auditing
from . import commands

NAMES = ("ani", "alex", "frank", "lothar")


def play_bots(store, game_id: str, bot_seed: str, on_event=None) -> None:
    """Drive a started game to its end with bots (greedy and random seats alternating)."""
    session = commands.load(store, game_id)
    bots = {p: session.rules.bot(f"{bot_seed}/{p}", "greedy" if i % 2 == 0 else "random")
            for i, p in enumerate(session.players)}
    seen_round = 1
    while not session.finished:
        step = session.sealed
        if step is not None:
            held = {}
            for player in step.owes_commit():
                choice = bots[player].choose(session.state, player, "select")
                sealed = commands.seal(session, player, choice)
                held[player] = sealed
                session = commands.commit(store, game_id, player, sealed["commitment"])
            for player, sealed in held.items():
                session = commands.reveal(store, game_id, player, sealed["choice"], sealed["salt"])
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            session = commands.decide(store, game_id, request.player, choice)
        if on_event and session.state.round != seen_round:
            on_event(seen_round)
            seen_round = session.state.round
    if on_event:
        on_event(seen_round)


def run_demo(store, game_id: str | None, players: int, variant: str, bot_seed: str | None,
             fmt: str = "text", echo=None) -> dict:
    from ..render import summary
    game_id = game_id or f"demo-{secrets.token_hex(3)}"
    names = list(NAMES[:players])
    commands.create_game(store, game_id, "tortuga", names, {"variant": variant})
    for name in names:
        commands.add_client_seed(store, game_id, name, f"{name}'s lucky words")
    commands.start_game(store, game_id)

    def show_round(number: int) -> None:
        if echo:
            session = commands.load(store, game_id, collect=True)
            echo(summary.render_public(session, store.head(game_id), number, fmt)[1] + "\n")

    play_bots(store, game_id, bot_seed or game_id, show_round)
    report = auditing.audit_store(store, game_id)
    status = commands.load(store, game_id)
    result = status.rules.result(status.state)
    if echo:
        echo("final scores: " + ", ".join(f"{p} {s['total']}" for p, s in result["scores"].items())
             + f"; winner(s): {', '.join(result['winners'])}")
        echo(auditing.report_text(report))
        echo(f"game {game_id} is in {store.path if hasattr(store, 'path') else 'the database'}; "
             f"try: pbem status {game_id} | pbem export {game_id} | pbem audit {game_id}")
    return {"game": game_id, "result": result, "audit": report}
