"""Phase 2: totals and positions, then fleet, crew, hunt, board and raid; the surplus."""

from __future__ import annotations

from .model import ACTIONS, BOARD, CLOCKWISE, FLEET, CREW, RAID, TILE_VALUES, State, capacity, clamp
from .move import enter_move
from .pool import deposit, draw_chest, draw_tile
from .requests import FCH

STAGES = ("fch", "board1", "board2", "raid1", "raid2")


def action_totals(s: State, action: int) -> list[int | None]:
    totals = []
    for board in s.boards:
        dice = [d for d in range(5) if board.dice[d] == action]
        totals.append(sum(s.faces[d][action] for d in dice) + board.bonus[action] if dice else None)
    return totals


def rank(s: State, totals) -> list[int]:
    """Competitors best first; ties to the start player, then clockwise from them."""
    competing = [seat for seat in range(s.n) if totals[seat] is not None]
    return sorted(competing, key=lambda seat: (-totals[seat], (seat - s.start) % s.n))


def enter_actions(s: State) -> None:
    s.phase, s.stage = "actions", "fch"
    s.decisions, s.targets = {}, {}
    players, faces = s.players, s.faces
    n = len(players)
    clockwise = CLOCKWISE[n][s.start]
    # action_totals for every action in one pass over the boards
    totals = [[None] * n, [None] * n, [None] * n, [None] * n, [None] * n]
    for seat, board in enumerate(s.boards):
        for d, action in enumerate(board.dice):
            if action is not None:
                row = totals[action]
                row[seat] = (row[seat] or 0) + faces[d][action]
        bonus = board.bonus
        for action in (0, 1, 2, 3, 4):
            if totals[action][seat] is not None:
                totals[action][seat] += bonus[action]
    positions, effects = [], s.effects
    for action in (0, 1, 2, 3, 4):
        row = totals[action]
        # rank: best first, ties to the start player, then clockwise from them
        order = sorted((seat for seat in clockwise if row[seat] is not None), key=lambda seat: -row[seat])
        first = order[0] if order else None
        second = order[1] if len(order) > 1 and n > 2 else None
        positions.append([first, second])
        effects.append({
            "type": "totals", "action": ACTIONS[action],
            "totals": {players[i]: t for i, t in enumerate(row) if t is not None},
            "first": players[first] if first is not None else None,
            "second": players[second] if second is not None else None,
        })
    s.totals, s.positions = totals, positions


def finish_stage(s: State, rng) -> None:
    if s.stage == "fch":
        for action in FCH:
            for pos in (1, 2):
                seat = s.positions[action][pos - 1]
                if seat is not None:
                    _resolve_fch(s, seat, action, pos, s.decisions[f"{ACTIONS[action]}:{pos}"], rng)
    else:
        action = BOARD if s.stage.startswith("board") else RAID
        pos = int(s.stage[-1])
        seat = s.positions[action][pos - 1]
        if seat is not None:
            _resolve_attack(s, seat, action, pos, s.decisions[f"{ACTIONS[action]}:{pos}"])
    index = STAGES.index(s.stage) + 1
    if index < len(STAGES):
        s.stage = STAGES[index]
        return
    surplus(s)
    enter_move(s, rng)


def _forfeit(s, seat, action, pos) -> None:
    s.effects.append({"type": "forfeit", "player": s.players[seat], "action": ACTIONS[action],
                      "position": pos})


def _resolve_fch(s: State, seat: int, action: int, pos: int, choice: str, rng) -> None:
    if choice.endswith(":forfeit"):
        _forfeit(s, seat, action, pos)
        return
    board = s.board(seat)
    name = s.players[seat]
    if action in (FLEET, CREW):
        steps = 1 if pos == 2 or s.n == 2 else 2
        attr = "boat" if action == FLEET else "pirate"
        before = getattr(board, attr)
        setattr(board, attr, clamp(before + steps))
        s.effects.append({"type": "advance", "player": name, "action": ACTIONS[action],
                          "position": pos, "from": before, "to": getattr(board, attr)})
        return
    label = f"r{s.round}/hunt/{pos}"
    chest = None
    if pos == 1:
        chest = draw_chest(s, rng, f"{label}/chest")
        if chest:
            board.island.append(chest)
    draws = 2 if pos == 1 and s.n > 2 else 1
    drawn = [t for t in (draw_tile(s, rng, f"{label}/tile{k}") for k in range(1, draws + 1)) if t]
    kept = max(drawn) if drawn else None
    if kept is not None:
        board.tiles.append(kept)
        drawn.remove(kept)
    for value in drawn:  # the other tile goes back to the pool
        s.pool[TILE_VALUES.index(value)] += 1
    s.effects.append({"type": "hunt", "player": name, "position": pos, "chest": chest,
                      "tiles_drawn": len(drawn) + (kept is not None),
                      "tile_kept": kept is not None,
                      "secret": {"player": name, "kept": kept, "returned": drawn}})


def _resolve_attack(s: State, seat: int, action: int, pos: int, choice: str) -> None:
    if choice.endswith(":forfeit"):
        _forfeit(s, seat, action, pos)
        return
    kind = ACTIONS[action]
    parts = choice.split(":")
    target = s.players.index(parts[1])
    colour = parts[2] if len(parts) == 3 else None
    actor, victim = s.board(seat), s.board(target)
    attr = "boat" if action == BOARD else "pirate"
    if pos == 1:
        s.targets = {**s.targets, kind: target}  # shared with the old state: replaced
        if colour:
            area = victim.fleet if action == BOARD else victim.crew
            index = len(area) - 1 - area[::-1].index(colour)  # the rightmost of that colour
            area.pop(index)
            actor.island.append(colour)
    elif colour:
        s.centre.remove(colour)
        actor.island.append(colour)
    before = getattr(victim, attr)
    setattr(victim, attr, clamp(before - 1))
    defended = victim.dice_on(action) > 0
    actor_before = getattr(actor, attr)
    if defended:
        setattr(actor, attr, clamp(actor_before - 1))
    s.effects.append({
        "type": "attack", "action": kind, "player": s.players[seat], "position": pos,
        "target": s.players[target], "chest": colour, "from_centre": pos == 2,
        "target_box": [before, getattr(victim, attr)], "defended": defended,
        "actor_box": [actor_before, getattr(actor, attr)],
    })


def surplus(s: State) -> None:
    """After board and raid: chests beyond capacity leave from the right."""
    for seat in s.clockwise():
        board = s.boards[seat]
        for area, box in (("fleet", board.boat), ("crew", board.pirate)):
            chests = getattr(board, area)
            cap = capacity(box)
            if len(chests) > cap:
                board = s.board(seat)
                chests = getattr(board, area)
                extra = chests[cap:]
                del chests[cap:]
                deposit(s, seat, area, extra)
