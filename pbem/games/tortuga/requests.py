"""Which requests are open, their legal options and their documented defaults."""

from __future__ import annotations

from . import legal
from .model import ACTIONS, BOARD, CLOCKWISE, CREW, FLEET, HUNT, RAID, State

FCH = (FLEET, CREW, HUNT)


def open_requests(state: State) -> list[tuple[int, str, bool]]:
    """(seat, kind, sealed) for every request open now, in seat order from the start player."""
    s = state
    phase = s.phase
    if phase == "roll":
        order = CLOCKWISE[len(s.players)][s.start]
        rolling = s.rolling
        if rolling:
            sealed = s.sealed
            out = [(seat, "select", True) for seat in order if seat in rolling and _KEY[seat] not in sealed]
        elif s.skull_queue:
            out = [(s.skull_queue[0], "skull", False)]
        else:
            out = []
        if s.open_select:
            out += [(seat, "select", False) for seat in s.open_select]
        boards = s.boards
        for seat in order:
            if boards[seat].bonus_owed:
                out.append((seat, "bonus", False))
        return out
    if phase == "actions":
        return [(seat, kind, False) for seat, kind, _key in stage_requests(s)]
    if phase == "move":
        orders = s.orders
        return [(seat, "order", False) for seat in CLOCKWISE[len(s.players)][s.start] if _KEY[seat] not in orders]
    return []


_KEY = tuple(str(seat) for seat in range(64))  # a seat as the key of sealed and orders


def owed_by(state: State, seat: int) -> dict[str, bool]:
    """kind -> sealed for the requests open to one seat (what ``open_requests`` lists for
    it, computed without listing everyone's)."""
    s = state
    owed = {}
    if s.phase == "roll":
        if s.rolling and seat in s.rolling and str(seat) not in s.sealed:
            owed["select"] = True
        elif not s.rolling and s.skull_queue and s.skull_queue[0] == seat:
            owed["skull"] = False
        if seat in s.open_select:
            owed["select"] = False
        if s.boards[seat].bonus_owed:
            owed["bonus"] = False
    elif s.phase == "actions":
        owed = {kind: False for other, kind, _key in stage_requests(s) if other == seat}
    elif s.phase == "move" and str(seat) not in s.orders:
        owed["order"] = False
    return owed


# per stage of the actions phase: (action, position, decision key, kind) it asks for
_WANTED = {"fch": tuple((a, pos, f"{ACTIONS[a]}:{pos}", ACTIONS[a]) for a in FCH for pos in (1, 2)),
           **{f"{ACTIONS[a]}{pos}": ((a, pos, f"{ACTIONS[a]}:{pos}", ACTIONS[a]),)
              for a in (BOARD, RAID) for pos in (1, 2)}}


def stage_requests(s: State) -> list[tuple[int, str, str]]:
    positions, decisions = s.positions, s.decisions
    return [(seat, kind, key) for action, pos, key, kind in _WANTED[s.stage]
            if (seat := positions[action][pos - 1]) is not None and key not in decisions]


def options_for(state: State, seat: int, kind: str) -> list[str] | None:
    """The exact legal choice strings (None when there are too many to list)."""
    if kind == "select":
        opts = legal.select_options(state.boards[seat])
        return [o for o in opts if o != "none"] or opts
    if kind == "skull":
        return legal.skull_options(state, seat)
    if kind == "bonus":
        return legal.bonus_options(state, seat)
    if kind == "order":
        return legal.order_options(state, seat)
    action = ACTIONS.index(kind)
    pos = position(state, seat, action)
    if action in FCH:
        return [f"{kind}:go", f"{kind}:forfeit"]
    return legal.target_options(state, seat, action, pos)


def default_for(state: State, seat: int, kind: str) -> str:
    if kind == "select":
        return legal.default_select(state, seat) if has_legal(state, seat) else "none"
    if kind == "skull":
        return legal.skull_options(state, seat)[0]
    if kind == "bonus":
        return legal.default_bonus(state, seat)
    if kind == "order":
        return legal.default_order(state, seat)
    return f"{kind}:forfeit"


def has_legal(state, seat) -> bool:
    return legal.any_fits(state.boards[seat])


def position(state: State, seat: int, action: int) -> int:
    first, second = state.positions[action]
    return 1 if first == seat else 2
