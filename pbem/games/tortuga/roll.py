"""Phase 1: sealed roll steps, reveals, forced open rerolls, skull turns, bonus tiles."""

from __future__ import annotations

from . import choices as syn
from . import legal
from .model import ACTIONS, FACE_NAMES, LETTERS, SKULL, Board, State
from .pool import label_name


def _open_step(s: State, rng) -> None:
    s.step += 1
    boards, players = s.boards, s.players
    rolling = s.rolling = [seat for seat in range(len(boards)) if boards[seat].unassigned()]
    s.sealed = {}
    head = f"r{s.round}/roll{s.step}/"
    for seat in rolling:
        _roll(s, s.board(seat), head + label_name(players[seat]), rng)
    s.effects.append({"type": "step", "round": s.round, "step": s.step,
                      "players": [players[i] for i in rolling]})


def _roll(s: State, board: Board, label: str, rng) -> None:
    """Roll the board's unplaced dice: die d's label is ``label/`` and its letter."""
    roll, below, label = board.roll, rng.below, label + "/"
    for d in board.unassigned():
        roll[d] = below(label + LETTERS[d], 6)


def _roll_text(board: Board) -> dict:
    roll = board.roll
    return {LETTERS[d]: FACE_NAMES[roll[d]] for d in range(5) if roll[d] is not None}


def _resolve_step(s: State, rng) -> None:
    rolled = set(s.rolling)
    for seat in s.clockwise():
        if seat not in rolled:
            continue
        board = s.board(seat)
        dice = syn.parse_dice(s.sealed[str(seat)])
        s.effects.append({"type": "reveal", "player": s.players[seat], "roll": _roll_text(board),
                          "selected": syn.format_dice(dice)})
        if dice:
            _place_selection(s, seat, board, dice)
            _clear_roll(board)
        else:
            _forced_reroll(s, seat, board, rng)
    boards = s.boards
    for seat in s.clockwise():
        if seat not in rolled and not boards[seat].unassigned():
            self_board = s.board(seat)
            self_board.bonus_owed += 1
            s.effects.append({"type": "bonus_award", "player": s.players[seat]})
            _settle_bonus(s, seat)
    s.rolling = []
    s.sealed = {}


def _place_selection(s: State, seat: int, board: Board, dice) -> None:
    action = legal.selection_action(board, dice)
    if action == SKULL:
        board.held = list(dice)
        order = s.clockwise()
        s.skull_queue.append(seat)
        s.skull_queue.sort(key=order.index)
        s.effects.append({"type": "held", "player": s.players[seat], "dice": syn.format_dice(dice)})
    else:
        _assign(s, seat, board, dice, action, "select")


def _assign(s, seat, board, dice, action, how) -> None:
    for d in dice:
        board.dice[d] = action
    s.effects.append({"type": "assign", "player": s.players[seat], "dice": syn.format_dice(dice),
                      "action": ACTIONS[action], "how": how})


def _clear_roll(board: Board) -> None:
    board.roll = [None] * 5


def _forced_reroll(s: State, seat: int, board: Board, rng) -> None:
    for attempt in range(1, 10_000):
        _roll(s, board, f"r{s.round}/roll{s.step}/{label_name(s.players[seat])}/reroll{attempt}", rng)
        fits = legal.any_fits(board)
        s.effects.append({"type": "reroll", "player": s.players[seat], "attempt": attempt,
                          "roll": _roll_text(board), "fits": fits})
        if fits:
            s.open_select.append(seat)
            return
    raise RuntimeError("forced reroll did not end")  # probability below 10**-1000


def _take_bonus(s: State, seat: int, how: str, action: int) -> None:
    board = s.board(seat)
    if how == "new":
        board.bonus[action] = 1
        s.bonus_supply -= 1
    else:
        board.bonus[action] = 2
    board.bonus_owed -= 1
    s.effects.append({"type": "bonus", "player": s.players[seat], "how": how, "action": ACTIONS[action]})


def _settle_bonus(s: State, seat: int) -> None:
    """Resolve owed bonus tiles that leave no choice: none possible, or only one way."""
    while s.boards[seat].bonus_owed:
        options = legal.bonus_options(s, seat)
        if len(options) > 1:
            return
        if not options:
            board = s.board(seat)
            board.bonus_owed -= 1
            s.effects.append({"type": "bonus_none", "player": s.players[seat]})
            continue
        _, how, action = options[0].split(":")
        _take_bonus(s, seat, how, ACTIONS.index(action))
