"""Phase 1: sealed roll steps, reveals, forced open rerolls, skull turns, bonus tiles."""

from __future__ import annotations

from . import choices as syn
from . import legal
from .model import ACTIONS, FACE_NAMES, LETTERS, SKULL, Board, State
from .pool import label_name


_FORMATTED = syn.FORMATTED  # sorted dice tuple -> canonical text


def free(board: Board) -> list[int]:
    """``board.unassigned()``, written out (every roll step asks it of every board)."""
    dice = board.dice
    if None not in dice:
        return []
    held = board.held
    if held:
        return [d for d in (0, 1, 2, 3, 4) if dice[d] is None and d not in held]
    return [d for d in (0, 1, 2, 3, 4) if dice[d] is None]


def open_step(s: State, rng) -> None:
    s.step += 1
    boards, players = s.boards, s.players
    head = f"r{s.round}/roll{s.step}/"
    below = rng.below
    rolling = []
    for seat in range(len(boards)):
        unplaced = free(boards[seat])
        if unplaced:
            rolling.append(seat)
            board = s.board(seat)
            roll, label = board.roll, head + label_name(players[seat]) + "/"
            for d in unplaced:  # die d's label is the player's and its letter
                roll[d] = below(label + LETTERS[d], 6)
    s.rolling = rolling
    s.sealed = {}
    s.effects.append({"type": "step", "round": s.round, "step": s.step,
                      "players": [players[i] for i in rolling]})


def _roll(s: State, board: Board, label: str, rng) -> None:
    """Roll the board's unplaced dice: die d's label is ``label/`` and its letter."""
    roll, below, label = board.roll, rng.below, label + "/"
    for d in free(board):
        roll[d] = below(label + LETTERS[d], 6)


def _roll_text(board: Board) -> dict:
    roll = board.roll
    return {LETTERS[d]: FACE_NAMES[roll[d]] for d in (0, 1, 2, 3, 4) if roll[d] is not None}


def resolve_step(s: State, rng) -> None:
    rolled, sealed, players, effects = s.rolling, s.sealed, s.players, s.effects
    boards, owned = s.boards, s._owned
    for seat in s.clockwise():
        if seat not in rolled:
            continue
        if seat in owned:  # s.board(seat), written out
            board = boards[seat]
        else:
            board = boards[seat] = boards[seat].copy()
            owned.add(seat)
        dice = syn.parse_dice(sealed[str(seat)])
        text = _FORMATTED[dice]
        roll = board.roll
        effects.append({"type": "reveal", "player": players[seat],
                        "roll": {LETTERS[d]: FACE_NAMES[roll[d]] for d in (0, 1, 2, 3, 4) if roll[d] is not None},
                        "selected": text})
        if dice:
            place_selection(s, seat, board, dice, text)
            board.roll = [None] * 5
        else:
            _forced_reroll(s, seat, board, rng)
    for seat in s.clockwise():
        if seat not in rolled and not free(boards[seat]):
            self_board = s.board(seat)
            self_board.bonus_owed += 1
            effects.append({"type": "bonus_award", "player": players[seat]})
            settle_bonus(s, seat)
    s.rolling = []
    s.sealed = {}


def place_selection(s: State, seat: int, board: Board, dice, text: str | None = None) -> None:
    """Place a selection (``dice`` a sorted tuple, ``text`` its canonical form if known)."""
    roll, action = board.roll, SKULL  # legal.selection_action, written out
    for d in dice:
        face = roll[d]
        if face != SKULL:
            if action == SKULL:
                action = face
            elif face != action:
                action = None
                break
    if action == SKULL:
        board.held = list(dice)
        order = s.clockwise()
        s.skull_queue.append(seat)
        s.skull_queue.sort(key=order.index)
        s.effects.append({"type": "held", "player": s.players[seat], "dice": text or syn.format_dice(dice)})
    else:
        on = board.dice
        for d in dice:
            on[d] = action
        s.effects.append({"type": "assign", "player": s.players[seat], "dice": text or syn.format_dice(dice),
                          "action": ACTIONS[action], "how": "select"})


def assign(s, seat, board, dice, action, how) -> None:
    for d in dice:
        board.dice[d] = action
    s.effects.append({"type": "assign", "player": s.players[seat], "dice": syn.format_dice(dice),
                      "action": ACTIONS[action], "how": how})


def clear_roll(board: Board) -> None:
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


def take_bonus(s: State, seat: int, how: str, action: int) -> None:
    board = s.board(seat)
    if how == "new":
        board.bonus[action] = 1
        s.bonus_supply -= 1
    else:
        board.bonus[action] = 2
    board.bonus_owed -= 1
    s.effects.append({"type": "bonus", "player": s.players[seat], "how": how, "action": ACTIONS[action]})


def settle_bonus(s: State, seat: int) -> None:
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
        take_bonus(s, seat, how, ACTIONS.index(action))
