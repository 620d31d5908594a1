"""Phase 3: a chest each, every player's ordering, chests move on; the end of a round."""

from __future__ import annotations

from . import legal
from .model import END_CHESTS, State
from .parse import parse_order
from .pool import deposit, draw_chest, label_name


def enter_move(s: State, rng) -> None:
    s.phase, s.stage, s.orders = "move", "", {}
    for seat in s.clockwise():
        chest = draw_chest(s, rng, f"r{s.round}/move/{label_name(s.players[seat])}")
        if chest:
            s.board(seat).island.append(chest)
        s.effects.append({"type": "draw", "player": s.players[seat], "chest": chest})
    for seat in s.clockwise():
        if legal.single_order(s, seat):
            s.orders[str(seat)] = legal.default_order(s, seat)


def move_chests(s: State, rng) -> None:
    for seat in s.clockwise():
        board = s.board(seat)
        fleet, crew = parse_order(s, seat, s.orders[str(seat)])
        to_tortuga = board.fleet
        board.tortuga.extend(to_tortuga)
        left_crew, left_island = board.crew[:], board.island[:]
        for colour in fleet:
            left_crew.remove(colour)
        for colour in crew:
            left_island.remove(colour)
        board.fleet, board.crew, board.island = list(fleet), list(crew), []
        s.effects.append({"type": "move", "player": s.players[seat], "to_tortuga": to_tortuga,
                          "fleet": board.fleet[:], "crew": board.crew[:],
                          "order": s.orders[str(seat)]})
        deposit(s, seat, "fleet", left_crew)
        deposit(s, seat, "crew", left_island)
    goal = END_CHESTS[s.variant]
    if any(len(b.tortuga) >= goal for b in s.boards):
        s.phase, s.orders = "over", {}
        s.effects.append({"type": "game_over", "round": s.round})
        return
    s.start = (s.start + 1) % s.n
    s.round += 1
    s.phase, s.step, s.orders = "roll", 0, {}
    s.positions, s.totals, s.decisions, s.targets = [], [], {}, {}
    for seat in range(s.n):
        board = s.board(seat)
        board.dice, board.roll, board.held = [None] * 5, [None] * 5, []
    s.effects.append({"type": "round", "round": s.round, "start_player": s.players[s.start]})
