"""What one player, or the public, may see of a state: the only way state leaves the rules.

Hidden from everyone but the owner: the dice of an unrevealed roll, a revealed choice of a
step that has not resolved, treasure tile values (others see how many tiles), and the
``secret`` part of effects. The tile pool shows only its size.
"""

from __future__ import annotations

from .model import ACTIONS, FACE_NAMES, LETTERS, State, plain_copy


def _effect_for(effect: dict, viewer: str | None) -> dict:
    shown = {k: plain_copy(v) for k, v in effect.items() if k != "secret"}
    if "secret" in effect and viewer is not None and effect["secret"].get("player") == viewer:
        shown["secret"] = plain_copy(effect["secret"])
    return shown


def public_effects(effects, viewer: str | None = None) -> list[dict]:
    return [_effect_for(e, viewer) for e in effects]


def board_view(state: State, seat: int, viewer: str | None) -> dict:
    board = state.boards[seat]
    own = viewer == state.players[seat]
    in_sealed_step = seat in state.rolling
    shows_roll = own or (not in_sealed_step and seat in state.open_select)
    view = {
        "boat": board.boat,
        "pirate": board.pirate,
        "tortuga": board.tortuga[:],
        "fleet": board.fleet[:],
        "crew": board.crew[:],
        "island": board.island[:],
        "bonus": {ACTIONS[a]: board.bonus[a] for a in range(5) if board.bonus[a]},
        "dice": {LETTERS[d]: (ACTIONS[a] if a is not None else None) for d, a in enumerate(board.dice)},
        "held": [LETTERS[d] for d in board.held],
        "tiles": len(board.tiles),
        "bonus_owed": board.bonus_owed,
    }
    if shows_roll:
        view["roll"] = {LETTERS[d]: FACE_NAMES[f] for d, f in enumerate(board.roll) if f is not None}
    if own:
        view["tile_values"] = sorted(board.tiles, reverse=True)
        if str(seat) in state.sealed:
            view["revealed"] = state.sealed[str(seat)]
    return view


def view(state: State, viewer: str | None = None) -> dict:
    """Everything ``viewer`` may see (None: the public)."""
    s = state
    name = lambda seat: s.players[seat] if seat is not None else None  # noqa: E731
    return {
        "game": "tortuga",
        "viewer": viewer,
        "players": list(s.players),
        "variant": s.variant,
        "round": s.round,
        "phase": s.phase,
        "step": s.step,
        "stage": s.stage,
        "start_player": s.players[s.start],
        "bag": sum(s.bag),
        "bag_colours": dict(zip(("red", "blue", "yellow", "white", "purple"), s.bag)),
        "tile_pool": sum(s.pool),
        "bonus_supply": s.bonus_supply,
        "centre": s.centre[:],
        "boards": {p: board_view(s, i, viewer) for i, p in enumerate(s.players)},
        "positions": {ACTIONS[a]: [name(x) for x in pos] for a, pos in enumerate(s.positions)},
        "totals": {ACTIONS[a]: {s.players[i]: t for i, t in enumerate(ts) if t is not None}
                   for a, ts in enumerate(s.totals)},
        "effects": public_effects(s.effects, viewer),
    }
