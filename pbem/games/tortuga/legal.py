"""What each player may choose now, and the documented default for a late player.

Every function here reads a state and never changes it. Defaults are deterministic, legal,
and depend only on public information and the player's own secrets.
"""

from __future__ import annotations

from .choices import format_dice, format_order
from .model import ACTIONS, BOARD, CAPACITY, COLOURS, DICE_ROOM, RAID, SKULL, State, capacity

# Default preference for chests: purple scores double; white is wild in Tortuga.
CHEST_RANK = {"purple": 0, "white": 1, "red": 2, "blue": 3, "yellow": 4}


def selection_action(board, dice) -> int | None:
    """The action a non-empty selection would go to, SKULL for skulls only, None if mixed."""
    action = SKULL
    for d in dice:
        face = board.roll[d]
        if face == SKULL:
            continue
        if action == SKULL:
            action = face
        elif face != action:
            return None
    return action


def selection_error(board, dice) -> tuple[str, str] | None:
    """Why a non-empty selection of this player's rolled dice is not allowed, as (code,
    reason), or None."""
    action = selection_action(board, dice)
    if action is None:
        return "mixed-actions", "the selected dice show different actions (only skulls may join another action)"
    if action == SKULL:
        return None  # skulls alone can always be turned to fleet, crew or hunt
    room = board.room(action)
    if len(dice) > room:
        name = ACTIONS[action]
        if action in (BOARD, RAID):
            box = board.boat if action == BOARD else board.pirate
            token = "boat" if action == BOARD else "pirate"
            return "capacity", (f"{name} has room for {room} more dice ({token} on box {box} allows "
                                f"{capacity(box)}), not {len(dice)}")
        return "capacity", f"{name} has room for {room} more dice, not {len(dice)}"
    return None


def any_fits(board) -> bool:
    """Whether some legal selection exists: it does exactly when one die alone fits (a
    skull always does; an action die when its space has room)."""
    for d in range(5):
        face = board.roll[d]
        if face is None or board.dice[d] is not None:
            continue
        if face == SKULL or board.room(face) > 0:
            return True
    return False


# Every non-empty set of dice as a bit mask (bit d for die d), the dice it holds, and its
# place in the order selections are listed: smallest first, then in letter order.
_DICE_OF = tuple(tuple(d for d in range(5) if mask >> d & 1) for mask in range(32))
_RANK = [0] * 32
for _place, _mask in enumerate(sorted(range(1, 32), key=lambda m: (len(_DICE_OF[m]), _DICE_OF[m]))):
    _RANK[_mask] = _place
_RANK = tuple(_RANK)
_SUBMASKS = tuple(tuple(m for m in range(1, 32) if m & pool == m) for pool in range(32))  # non-empty


def _by_face(board) -> list[int]:
    """Per face (0..5), the mask of this player's rolled dice not yet placed that show it."""
    masks = [0, 0, 0, 0, 0, 0]
    roll, dice = board.roll, board.dice
    for d in range(5):
        face = roll[d]
        if face is not None and dice[d] is None:
            masks[face] |= 1 << d
    return masks


def legal_selections(board) -> list[tuple[int, ...]]:
    """Every legal selection, smallest first, then in letter order: any set of skulls, or
    dice of one action with any skulls, as many as that action has room for."""
    masks = [0, 0, 0, 0, 0, 0]  # _by_face, written out
    roll, on = board.roll, board.dice
    for d in (0, 1, 2, 3, 4):
        face = roll[d]
        if face is not None and on[d] is None:
            masks[face] |= 1 << d
    skulls = masks[SKULL]
    found = list(_SUBRANKS[skulls])  # selections as their places in the listed order
    for action in (0, 1, 2, 3, 4):
        own = masks[action]
        if own:
            used = on.count(action)  # board.room(action), written out
            limit = DICE_ROOM if action < BOARD else CAPACITY[board.boat if action == BOARD else board.pirate]
            if used < limit:
                found += _WITH_ACTION.get((own, skulls, limit - used)) or _with_action(own, skulls, limit - used)
    if len(found) > 1:
        found.sort()
    return list(map(_DICE_AT.__getitem__, found))


_BY_RANK = sorted(range(1, 32), key=_RANK.__getitem__)  # the mask at each place
_DICE_AT = tuple(_DICE_OF[m] for m in _BY_RANK)  # the dice at each place
_SUBRANKS = tuple(tuple(sorted(_RANK[m] for m in _SUBMASKS[pool])) for pool in range(32))
_WITH_ACTION: dict[tuple[int, int, int], tuple[int, ...]] = {}  # at most 32 * 32 * 5 entries


def _with_action(own: int, skulls: int, room: int) -> tuple[int, ...]:
    """The selections of an action's dice ``own`` (a mask) with any of ``skulls``, at
    least one of its own and at most ``room`` dice in all (as places in the listed order)."""
    key = (own, skulls, room)
    found = _WITH_ACTION.get(key)
    if found is None:
        found = _WITH_ACTION[key] = tuple(_RANK[m] for m in _SUBMASKS[own | skulls]
                                          if m & own and len(_DICE_OF[m]) <= room)
    return found


def select_options(board) -> list[str]:
    legal = legal_selections(board)
    return [format_dice(d) for d in legal] if legal else ["none"]


def default_select(state: State, seat: int) -> str:
    """Most valuable fit: for each action with room, its dice (highest values first, up to
    the room); the largest total wins, ties to the earlier action. Skulls stay in hand
    unless nothing else fits; then one skull (the earliest letter) is selected."""
    board = state.boards[seat]
    masks = _by_face(board)
    best = _best_fits(state.faces)
    text, best_total = None, 0
    for action in range(5):
        own = masks[action]
        if own:
            room = board.room(action)
            if room:
                fit, total = best[action, own, room]
                if total > best_total:
                    text, best_total = fit, total
    if text is None:
        skulls = masks[SKULL]
        return format_dice((_DICE_OF[skulls & -skulls][0],) if skulls else ())
    return text


_BEST_FITS: dict[tuple, dict] = {}  # per face table: (action, dice mask, room) -> (text, total)


def _best_fits(faces) -> dict:
    """For one face table, every (action, mask of its dice, room) and the dice
    ``default_select`` takes there: the highest values first (ties to the earlier letter),
    up to the room, as canonical text and their total."""
    table = _BEST_FITS.get(faces)
    if table is None:
        if len(_BEST_FITS) >= 8:  # face tables are few (one a game, nearly always the default): bounded
            _BEST_FITS.clear()
        table = _BEST_FITS[faces] = {}
        for action in range(5):
            for own in range(1, 32):
                ranked = sorted(_DICE_OF[own], key=lambda d: (-faces[d][action], d))
                for room in range(1, 6):
                    chosen = ranked[:room]
                    table[action, own, room] = format_dice(sorted(chosen)), sum(faces[d][action] for d in chosen)
    return table


def skull_options(state: State, seat: int) -> list[str]:
    board = state.boards[seat]
    k = len(board.held)
    return [f"skull:{ACTIONS[a]}" for a in range(5) if board.room(a) >= k]


def bonus_options(state: State, seat: int) -> list[str]:
    board = state.boards[seat]
    return list(_bonus_texts(tuple(board.bonus), state.bonus_supply > 0))


_BONUS_TEXTS: dict[tuple, tuple[str, ...]] = {}  # (bonus per action, supply left) -> options


def _bonus_texts(bonus: tuple, supply: bool) -> tuple[str, ...]:
    """Bonus choices for a board's tiles: new on each free space (while the supply lasts),
    then flip each 1; at most 3**5 * 2 entries."""
    key = (bonus, supply)
    texts = _BONUS_TEXTS.get(key)
    if texts is None:
        new = [f"bonus:new:{ACTIONS[a]}" for a in range(5) if bonus[a] == 0] if supply else []
        flip = [f"bonus:flip:{ACTIONS[a]}" for a in range(5) if bonus[a] == 1]
        texts = _BONUS_TEXTS[key] = tuple(new + flip)
    return texts


def target_options(state: State, seat: int, action: int, position: int) -> list[str]:
    """Targets for BOARD/RAID: 1st names the chest to take from the target's area; 2nd names
    the chest to claim from the centre island."""
    name = ACTIONS[action]
    excluded = {seat}
    if position == 2 and name in state.targets:
        excluded.add(state.targets[name])
    options = [f"{name}:forfeit"]
    for other in range(state.n):
        if other in excluded:
            continue
        player = state.players[other]
        if position == 1:
            area = state.boards[other].fleet if action == BOARD else state.boards[other].crew
            colours = sorted(set(area), key=COLOURS.index)
        else:
            colours = sorted(set(state.centre), key=COLOURS.index)
        if colours:
            options.extend(f"{name}:{player}:{c}" for c in colours)
        else:
            options.append(f"{name}:{player}")
    return options


def order_limits(state: State, seat: int) -> tuple[int, int]:
    """How many chests the fleet and crew areas take in the move phase."""
    board = state.boards[seat]
    return (min(capacity(board.boat), len(board.crew)),
            min(capacity(board.pirate), len(board.island)))


def _arrangements(chests: list[str], k: int, cap: int) -> list[tuple[str, ...]]:
    """Distinct ordered choices of k chests from a multiset (at most cap + 1 of them)."""
    counts = {c: chests.count(c) for c in COLOURS if c in chests}
    out: list[tuple[str, ...]] = []

    def walk(prefix):
        if len(out) > cap:
            return
        if len(prefix) == k:
            out.append(tuple(prefix))
            return
        for colour in COLOURS:
            if counts.get(colour, 0):
                counts[colour] -= 1
                prefix.append(colour)
                walk(prefix)
                prefix.pop()
                counts[colour] += 1

    walk([])
    return out


def single_order(state: State, seat: int) -> bool:
    """Whether the move phase leaves this player exactly one way to order their chests."""
    board = state.boards[seat]
    kf, kc = order_limits(state, seat)
    return (kf == 0 or len(set(board.crew)) == 1) and (kc == 0 or len(set(board.island)) == 1)


def order_options(state: State, seat: int, cap: int = 50) -> list[str] | None:
    """All distinct orderings as choice strings, or None when there are more than ``cap``."""
    board = state.boards[seat]
    kf, kc = order_limits(state, seat)
    key = (tuple(board.crew), tuple(board.island), kf, kc, cap)
    found = _ORDERS.get(key, False)
    if found is False:
        if len(_ORDERS) >= 4096:  # the chests a player holds repeat: keep the table bounded
            _ORDERS.clear()
        fleets = _arrangements(board.crew, kf, cap)
        crews = _arrangements(board.island, kc, cap)
        found = _ORDERS[key] = (None if len(fleets) * len(crews) > cap
                                else tuple(format_order(f, c) for f in fleets for c in crews))
    return None if found is None else list(found)


_ORDERS: dict[tuple, tuple[str, ...] | None] = {}  # (crew, island, kf, kc, cap) -> order_options


def default_order(state: State, seat: int) -> str:
    """Most valuable first: purple, white, red, blue, yellow (stable within a colour)."""
    board = state.boards[seat]
    kf, kc = order_limits(state, seat)
    fleet = sorted(board.crew, key=CHEST_RANK.__getitem__)[:kf]
    crew = sorted(board.island, key=CHEST_RANK.__getitem__)[:kc]
    return format_order(fleet, crew)


def default_bonus(state: State, seat: int) -> str:
    """A new tile on the first free space (fleet, crew, hunt, board, raid), else flip the
    first '1' in that order."""
    options = bonus_options(state, seat)
    return options[0] if options else ""
