"""``pbem demo``: bots play a whole game through the real protocol, then it is audited.

Every sealed step is sealed, committed and revealed exactly as players would; every open
decision goes through ``decide``. Bots see only what their player may see.
"""

from __future__ import annotations

import secrets

from ..protocol import commands, loading
from ..store import audit as auditing

NAMES = ("ani", "alex", "frank", "lothar", "mary", "jack", "anne", "ned", "grace")
DEFAULT_PLAYERS = {"tortuga": 4, "tortuga1667": 5}


def play_bots(store, game_id: str, bot_seed: str, on_event=None, until=None, at: str | None = None) -> None:
    """Drive a started game with bots (greedy and random seats alternating) to its end, or
    until ``until(session)`` is true. ``on_event(round)`` is called as each round ends.
    Every event is stamped ``at`` (default: the clock when it is written)."""
    session = loading.load(store, game_id)
    bots = {p: session.rules.bot(f"{bot_seed}/{p}", "greedy" if i % 2 == 0 else "random")
            for i, p in enumerate(session.players)}
    seen_round = session.state.round
    while not session.finished:
        if until is not None and until(session):
            return
        step = session.sealed
        if step is not None:
            held = {}
            asked = {r.player: r for r in session.pending() if r.kind == step.kind}
            for player in step.owes_commit():
                choice = bots[player].choose(session.state, player, step.kind, request=asked.get(player))
                sealed = commands.seal(session, player, choice)
                held[player] = sealed
                session = commands.commit(store, game_id, player, sealed["commitment"], (sealed["round"], sealed["step"]),
                                          at=at)
                if until is not None and until(session):
                    return
            for player, sealed in held.items():
                session = commands.reveal(store, game_id, player, sealed["choice"], sealed["salt"], at=at)
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind, request=request)
            session = commands.decide(store, game_id, request.player, choice, at=at)
        if on_event and session.state.round != seen_round:
            on_event(seen_round)
            seen_round = session.state.round
    if on_event:
        on_event(seen_round)


def new_bot_game(store, game_id: str, names, variant: str = "standard", client_seeds: bool = True,
                 at: str | None = None, game_type: str = "tortuga", options: dict | None = None) -> None:
    """Create and start a game for bots (each adds a client seed first, as players may).
    ``variant`` goes to games that have variants; ``options``, when given, replace it."""
    if options is None:
        from .. import games
        options = {"variant": variant} if "variant" in getattr(games.get(game_type), "OPTIONS", {}) else {}
    commands.create_game(store, game_id, game_type, list(names), options, at=at)
    if client_seeds:
        for name in names:
            commands.add_client_seed(store, game_id, name, f"{name}'s lucky words", at=at)
    commands.start_game(store, game_id, at=at)


def run_demo(store, game_id: str | None, players: int | None, variant: str, bot_seed: str | None,
             fmt: str = "text", echo=None, note=None, game_type: str = "tortuga") -> dict:
    """Play a demo game; ``echo`` gets each round's summary as it ends (in ``fmt``), then the
    final result and the audit verdict (html: one document at the end); ``note`` a hint."""
    from . import record, summary
    from .. import games
    rules = games.get(game_type)
    players = players or DEFAULT_PLAYERS.get(game_type, rules.MIN_PLAYERS)
    if not rules.MIN_PLAYERS <= players <= rules.MAX_PLAYERS:
        raise ValueError(f"{game_type} is played by {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS} players, "
                         f"not {players}; try --players {DEFAULT_PLAYERS.get(game_type, rules.MIN_PLAYERS)}")
    game_id = game_id or f"demo-{secrets.token_hex(3)}"
    new_bot_game(store, game_id, NAMES[:players], variant, game_type=game_type)

    def show_round(number: int) -> None:
        if echo and fmt != "html":  # one html document at the end instead of one per round
            echo(summary.render_public(record.from_store(store, game_id), number, fmt)[1])

    play_bots(store, game_id, bot_seed or game_id, show_round)
    report = auditing.audit_store(store, game_id)
    final = record.from_store(store, game_id)
    if echo:
        if fmt == "html":
            echo(summary.render_all(final, fmt, audit=report)[1])
        else:
            echo(summary.render_audit(final, report, fmt)[1])
    if note:
        note(f"game {game_id} is in {getattr(store, 'path', 'the database')}; "
             f"try: pbem status {game_id} | pbem show {game_id} | pbem export {game_id} | pbem audit {game_id}")
    result = final.session.rules.result(final.session.state)
    return {"game": game_id, "result": result, "audit": report}
