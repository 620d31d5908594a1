"""Tortuga rules: setup, the open requests, checking and applying choices.

Flow of a round (see docs/rules.md for the rules in full):
  roll    sealed select steps; after each: reveals, forced open rerolls, skull turns
          (clockwise from the start player), bonus tiles for players already done
  actions totals and positions; fleet/crew/hunt positions asked at once, then board 1st,
          board 2nd, raid 1st, raid 2nd one after another; then surplus to the centre
  move    one chest each from the bag; every player's ordering; chests move; end check
"""

from __future__ import annotations

import unicodedata

from ..base import IllegalChoice, InvalidChoice, NotYourTurn
from . import choices as syn
from . import legal
from .faces import DEFAULT_FACES, validate as validate_faces
from .model import (
    ACTIONS, BOARD, COLOURS, CREW, END_CHESTS, FACE_NAMES, FLEET, HUNT, LETTERS, RAID, SKULL,
    TILE_VALUES, Board, State, capacity, clamp,
)

FCH = (FLEET, CREW, HUNT)
STAGES = ("fch", "board1", "board2", "raid1", "raid2")
NAME_FORBIDDEN = ",:"


def label_name(name: str) -> str:
    """A player's name inside a random-draw label: '%' and '/' percent-encoded, so that
    labels split on '/' unambiguously whatever the names."""
    return name.replace("%", "%25").replace("/", "%2F")


# ----------------------------------------------------------------------------- setup

def check_players(players) -> tuple[str, ...]:
    players = tuple(players)
    if not 2 <= len(players) <= 4:
        raise ValueError(f"Tortuga takes 2 to 4 players, got {len(players)}")
    seen = set()
    for name in players:
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(f"player name {name!r} must be non-empty without surrounding spaces")
        if len(name) > 40:
            raise ValueError(f"player name {name[:20]!r}... is longer than 40 characters")
        invisible = [c for c in name if unicodedata.category(c) in ("Cf", "Zl", "Zp")]
        if invisible:
            raise ValueError(f"player name {name!r} holds an invisible character "
                             f"(U+{ord(invisible[0]):04X}) that would let two names look alike; remove it")
        bad = [c for c in NAME_FORBIDDEN if c in name]
        if bad:
            raise ValueError(f"player name {name!r} may not contain {' '.join(bad)} (used by the choice syntax)")
        if name.lower() in ("forfeit", "none", "go"):
            raise ValueError(f"player name {name!r} is reserved by the choice syntax; choose another")
        if name.lower() in seen:
            raise ValueError(f"player name {name!r} is given twice (names differ by more than case)")
        seen.add(name.lower())
    return players


def setup(players, options: dict | None, rng) -> State:
    options = dict(options or {})
    players = check_players(players)
    variant = options.get("variant", "standard")
    if variant not in END_CHESTS:
        raise ValueError(f"unknown variant {variant!r}; use standard or long")
    start_name = options.get("start") or players[0]
    if start_name not in players:
        raise ValueError(f"start player {start_name!r} is not one of {', '.join(players)}")
    faces = validate_faces(options.get("faces") or DEFAULT_FACES)
    s = State(players, variant, faces, players.index(start_name))
    s.boards = [Board() for _ in players]
    s._owned = set(range(len(players)))
    for seat in s.clockwise():
        name = players[seat]
        first = _draw_chest(s, rng, f"setup/{label_name(name)}/chest1")
        second = _draw_chest(s, rng, f"setup/{label_name(name)}/chest2")
        s.boards[seat].island.append(first)
        s.boards[seat].crew.append(second)
        s.effects.append({"type": "setup", "player": name, "island": first, "crew": second})
    s.effects.append({"type": "round", "round": 1, "start_player": start_name})
    _advance(s, rng)
    return s


# ----------------------------------------------------------------------------- requests

def open_requests(state: State) -> list[tuple[int, str, bool]]:
    """(seat, kind, sealed) for every request open now, in seat order from the start player."""
    s = state
    out = []
    if s.phase == "roll":
        if s.rolling:
            out += [(seat, "select", True) for seat in s.clockwise()
                    if seat in s.rolling and str(seat) not in s.sealed]
        elif s.skull_queue:
            out.append((s.skull_queue[0], "skull", False))
        out += [(seat, "select", False) for seat in s.open_select]
        out += [(seat, "bonus", False) for seat in s.clockwise() if s.boards[seat].bonus_owed]
    elif s.phase == "actions":
        out += [(seat, kind, False) for seat, kind, _key in _stage_requests(s)]
    elif s.phase == "move":
        out += [(seat, "order", False) for seat in s.clockwise() if str(seat) not in s.orders]
    return out


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
        owed = {kind: False for other, kind, _key in _stage_requests(s) if other == seat}
    elif s.phase == "move" and str(seat) not in s.orders:
        owed["order"] = False
    return owed


def _stage_requests(s: State) -> list[tuple[int, str, str]]:
    if s.stage == "fch":
        wanted = [(a, pos) for a in FCH for pos in (1, 2)]
    else:
        wanted = [(BOARD if s.stage.startswith("board") else RAID, int(s.stage[-1]))]
    out = []
    for action, pos in wanted:
        seat = s.positions[action][pos - 1]
        key = f"{ACTIONS[action]}:{pos}"
        if seat is not None and key not in s.decisions:
            out.append((seat, ACTIONS[action], key))
    return out


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
    pos = _position(state, seat, action)
    if action in FCH:
        return [f"{kind}:go", f"{kind}:forfeit"]
    return legal.target_options(state, seat, action, pos)


def default_for(state: State, seat: int, kind: str) -> str:
    if kind == "select":
        return legal.default_select(state, seat) if _has_legal(state, seat) else "none"
    if kind == "skull":
        return legal.skull_options(state, seat)[0]
    if kind == "bonus":
        return legal.default_bonus(state, seat)
    if kind == "order":
        return legal.default_order(state, seat)
    return f"{kind}:forfeit"


def _has_legal(state, seat) -> bool:
    return legal.any_fits(state.boards[seat])


def _position(state: State, seat: int, action: int) -> int:
    first, second = state.positions[action]
    return 1 if first == seat else 2


# ----------------------------------------------------------------------------- checking

def _seat(state: State, player: str) -> int:
    try:
        return state.players.index(player)
    except ValueError:
        raise NotYourTurn(f"{player!r} is not a player in this game ({', '.join(state.players)})") from None


def validate(state: State, player: str, text: str) -> tuple[int, str, str, object]:
    """Check a choice without applying it: (seat, kind, canonical text, parsed value)."""
    seat = _seat(state, player)
    if not isinstance(text, str) or not text.strip():
        raise InvalidChoice("empty choice; send the choice text, e.g. B,C or fleet:go")
    owed = owed_by(state, seat)
    kind = syn.kind_of(text)
    if kind == "select" and kind not in owed and owed:
        try:
            syn.parse_dice(text)
        except InvalidChoice:  # neither dice nor a known prefix: say what is expected
            hints = "; ".join(f"{k}: {syn.SYNTAX[k]}" for k in owed)
            raise InvalidChoice(f"not understood: {text.strip()!r}; {player} owes {hints}") from None
    if kind not in owed:
        if owed:
            raise NotYourTurn(
                f"{player} owes no {kind} choice now; open for {player}: {', '.join(owed)}"
            )
        waiting = ", ".join(f"{state.players[s]} ({k})" for s, k, _ in open_requests(state))
        raise NotYourTurn(f"{player} owes no choice now; waiting for {waiting or 'nobody: the game is over'}")
    try:
        parsed = _PARSERS[kind](state, seat, text)
    except InvalidChoice as exc:  # say what would be legal, not only the syntax
        options = options_for(state, seat, kind)
        hint = (f"legal: {', '.join(options)}" if options is not None
                else f"e.g. {default_for(state, seat, kind)}")
        raise InvalidChoice(f"{exc}; {hint}", tuple(options) if options else None) from None
    canonical = _CANON[kind](state, seat, parsed)
    if kind == "select":  # checked in full by _parse_select; listing options is costly
        return seat, kind, canonical, parsed
    if kind == "order":  # checked directly: the orderings can be many
        try:
            _check_order(state, seat, parsed)
        except IllegalChoice as exc:
            options = options_for(state, seat, kind)
            if options is None:
                raise
            raise IllegalChoice(f"{exc}; legal: {', '.join(options)}", tuple(options)) from None
        return seat, kind, canonical, parsed
    options = options_for(state, seat, kind)
    if options is not None and canonical not in options:
        raise IllegalChoice(f"illegal: {canonical} is not allowed now; legal: {', '.join(options)}",
                            tuple(options))
    if options is None:
        _check_order(state, seat, parsed)
    return seat, kind, canonical, parsed


def check(state: State, player: str, text: str) -> str:
    """The canonical form of a legal choice, or a ChoiceError saying what is allowed."""
    return validate(state, player, text)[2]


def _parse_select(state, seat, text):
    """Checks the selection itself (the options are listed only when it is refused)."""
    dice = syn.parse_dice(text)
    board = state.boards[seat]
    why = None
    for d in dice:
        if board.dice[d] is not None:
            why = f"die {LETTERS[d]} is already on {ACTIONS[board.dice[d]]}"
        elif board.roll[d] is None:
            why = f"die {LETTERS[d]} was not rolled in this step"
        if why:
            break
    if why is None and dice:
        why = legal.selection_error(board, dice)
    if why is None and not dice and legal.any_fits(board):
        why = "at least one die fits, so a selection is required"
    if why:
        opts = options_for(state, seat, "select")
        raise IllegalChoice(f"illegal: {syn.format_dice(dice)}: {why}; legal: {', '.join(opts)}", tuple(opts))
    return dice


def _parse_skull(state, seat, text):
    parts = syn.split(text, "skull")
    if len(parts) != 1:
        raise InvalidChoice(f"not understood: {text.strip()!r}; {syn.SYNTAX['skull']}")
    return syn.parse_action(parts[0], "action")


def _parse_bonus(state, seat, text):
    parts = syn.split(text, "bonus")
    if len(parts) != 2 or parts[0].strip().lower() not in ("new", "flip"):
        raise InvalidChoice(f"not understood: {text.strip()!r}; {syn.SYNTAX['bonus']}")
    return parts[0].strip().lower(), syn.parse_action(parts[1], "action")


def _parse_go(state, seat, text):
    kind = syn.kind_of(text)
    parts = syn.split(text, kind)
    word = parts[0].strip().lower() if len(parts) == 1 else ""
    if word not in ("go", "forfeit"):
        raise InvalidChoice(f"not understood: {text.strip()!r}; {syn.SYNTAX[kind]}")
    return word


def _parse_target(state, seat, text):
    kind = syn.kind_of(text)
    parts = syn.split(text, kind)
    if len(parts) == 1 and parts[0].strip().lower() == "forfeit":
        return None
    if len(parts) not in (1, 2) or not parts[0].strip():
        raise InvalidChoice(f"not understood: {text.strip()!r}; {syn.SYNTAX[kind]}")
    wanted = parts[0].strip().lower()
    matches = [i for i, p in enumerate(state.players) if p.lower() == wanted]
    if not matches:
        raise InvalidChoice(f"not understood: no player {parts[0].strip()!r}; players: {', '.join(state.players)}")
    colour = syn.parse_colour(parts[1]) if len(parts) == 2 else None
    return matches[0], colour


def _parse_order(state, seat, text):
    parts = syn.split(text, "order")
    if len(parts) != 1 or parts[0].count("/") != 1:
        raise InvalidChoice(f"not understood: {text.strip()!r}; {syn.SYNTAX['order']}")
    fleet, crew = parts[0].split("/")
    return syn.parse_colour_list(fleet), syn.parse_colour_list(crew)


def _check_order(state, seat, parsed):
    fleet, crew = parsed
    board = state.boards[seat]
    kf, kc = legal.order_limits(state, seat)
    for listed, source, k, area, src in ((fleet, board.crew, kf, "fleet", "crew"),
                                          (crew, board.island, kc, "crew", "island")):
        if len(listed) != k:
            raise IllegalChoice(f"illegal: the {area} area takes {k} chest(s) from your {src} area "
                                f"({', '.join(source) or 'empty'}), you listed {len(listed)}; "
                                f"e.g. {legal.default_order(state, seat)}")
        for colour in set(listed):
            if listed.count(colour) > source.count(colour):
                raise IllegalChoice(f"illegal: your {src} area has {source.count(colour)} {colour} "
                                    f"chest(s), you listed {listed.count(colour)}; e.g. {legal.default_order(state, seat)}")


_PARSERS = {"select": _parse_select, "skull": _parse_skull, "bonus": _parse_bonus,
            "fleet": _parse_go, "crew": _parse_go, "hunt": _parse_go, "board": _parse_target,
            "raid": _parse_target, "order": _parse_order}


def _canon_target(state, seat, parsed, kind):
    if parsed is None:
        return f"{kind}:forfeit"
    target, colour = parsed
    return f"{kind}:{state.players[target]}" + (f":{colour}" if colour else "")


_CANON = {
    "select": lambda s, seat, p: syn.format_dice(p),
    "skull": lambda s, seat, p: f"skull:{ACTIONS[p]}",
    "bonus": lambda s, seat, p: f"bonus:{p[0]}:{ACTIONS[p[1]]}",
    "fleet": lambda s, seat, p: f"fleet:{p}", "crew": lambda s, seat, p: f"crew:{p}",
    "hunt": lambda s, seat, p: f"hunt:{p}",
    "board": lambda s, seat, p: _canon_target(s, seat, p, "board"),
    "raid": lambda s, seat, p: _canon_target(s, seat, p, "raid"),
    "order": lambda s, seat, p: syn.format_order(*p),
}


# ----------------------------------------------------------------------------- applying

def apply(state: State, player: str, text: str, rng) -> State:
    """A new state with the choice applied; ``state`` itself is left unchanged."""
    seat, kind, canonical, parsed = validate(state, player, text)
    s = state.copy()
    if kind == "select":
        if seat in s.open_select:
            s.open_select.remove(seat)
            board = s.board(seat)
            _place_selection(s, seat, board, parsed)
            _clear_roll(board)
        else:
            s.sealed[str(seat)] = canonical
            if len(s.sealed) == len(s.rolling):
                _resolve_step(s, rng)
    elif kind == "skull":
        s.skull_queue.pop(0)
        board = s.board(seat)
        _assign(s, seat, board, board.held, parsed, "skull")
        board.held = []
    elif kind == "bonus":
        _take_bonus(s, seat, *parsed)
        for other in s.clockwise():  # taking the last tile may leave others one way, or none
            _settle_bonus(s, other)
    elif kind == "order":
        s.orders[str(seat)] = canonical
    else:
        action = ACTIONS.index(kind)
        s.decisions[f"{kind}:{_position(s, seat, action)}"] = canonical
    _advance(s, rng)
    return s


def _advance(s: State, rng) -> None:
    """Carry the game forward until some player owes a choice (or it is over)."""
    while True:
        if s.phase == "roll":
            if s.rolling or s.skull_queue or s.open_select:
                return
            if any(b.bonus_owed for b in s.boards):
                # placed before anyone rolls again: holding a tile back until every die is
                # down would let its owner use what nobody else knew at the time
                return
            if any(b.unassigned() for b in s.boards):
                _open_step(s, rng)
                return
            _enter_actions(s)
        elif s.phase == "actions":
            if _stage_requests(s):
                return
            _finish_stage(s, rng)
        elif s.phase == "move":
            if len(s.orders) < s.n:
                return
            _move_chests(s, rng)
        else:
            return


# --- roll phase

def _open_step(s: State, rng) -> None:
    s.step += 1
    s.rolling = [seat for seat in range(s.n) if s.boards[seat].unassigned()]
    s.sealed = {}
    for seat in s.rolling:
        board = s.board(seat)
        _roll(s, board, f"r{s.round}/roll{s.step}/{label_name(s.players[seat])}", rng)
    s.effects.append({"type": "step", "round": s.round, "step": s.step,
                      "players": [s.players[i] for i in s.rolling]})


def _roll(s: State, board: Board, label: str, rng) -> None:
    for d in board.unassigned():
        board.roll[d] = rng.below(f"{label}/{LETTERS[d]}", 6)


def _roll_text(board: Board) -> dict:
    return {LETTERS[d]: FACE_NAMES[board.roll[d]] for d in range(5) if board.roll[d] is not None}


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
    for seat in s.clockwise():
        board = s.boards[seat]
        if seat not in rolled and not board.unassigned():
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


# --- action phase

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


def _enter_actions(s: State) -> None:
    s.phase, s.stage = "actions", "fch"
    s.totals, s.positions, s.decisions, s.targets = [], [], {}, {}
    for action in range(5):
        totals = action_totals(s, action)
        order = rank(s, totals)
        first = order[0] if order else None
        second = order[1] if len(order) > 1 and s.n > 2 else None
        s.totals.append(totals)
        s.positions.append([first, second])
        s.effects.append({
            "type": "totals", "action": ACTIONS[action],
            "totals": {s.players[i]: t for i, t in enumerate(totals) if t is not None},
            "first": s.players[first] if first is not None else None,
            "second": s.players[second] if second is not None else None,
        })


def _finish_stage(s: State, rng) -> None:
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
    _surplus(s)
    _enter_move(s, rng)


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
        chest = _draw_chest(s, rng, f"{label}/chest")
        if chest:
            board.island.append(chest)
    draws = 2 if pos == 1 and s.n > 2 else 1
    drawn = [t for t in (_draw_tile(s, rng, f"{label}/tile{k}") for k in range(1, draws + 1)) if t]
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
        s.targets[kind] = target
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


def _deposit(s: State, seat: int, area: str, chests: list[str]) -> None:
    if not chests:
        return
    to_centre, to_bag = [], []
    for colour in chests:
        if s.n > 2 and colour not in s.centre:
            s.centre.append(colour)
            to_centre.append(colour)
        else:
            s.bag[COLOURS.index(colour)] += 1
            to_bag.append(colour)
    s.effects.append({"type": "deposit", "player": s.players[seat], "area": area,
                      "chests": chests, "to_centre": to_centre, "to_bag": to_bag})


def _surplus(s: State) -> None:
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
                _deposit(s, seat, area, extra)


# --- move phase

def _enter_move(s: State, rng) -> None:
    s.phase, s.stage, s.orders = "move", "", {}
    for seat in s.clockwise():
        chest = _draw_chest(s, rng, f"r{s.round}/move/{label_name(s.players[seat])}")
        if chest:
            s.board(seat).island.append(chest)
        s.effects.append({"type": "draw", "player": s.players[seat], "chest": chest})
    for seat in s.clockwise():
        if legal.single_order(s, seat):
            s.orders[str(seat)] = legal.default_order(s, seat)


def _move_chests(s: State, rng) -> None:
    for seat in s.clockwise():
        board = s.board(seat)
        fleet, crew = _parse_order(s, seat, s.orders[str(seat)])
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
        _deposit(s, seat, "fleet", left_crew)
        _deposit(s, seat, "crew", left_island)
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


# --- bag and pool

def _draw(counts: list, items: tuple, rng, label: str):
    """Draw one item from a pool given as counts per item (bag colours, tile values): a
    draw in range(total) taken in the order of ``items``. An empty pool draws nothing."""
    total = sum(counts)
    if not total:
        return None
    k = rng.below(label, total)
    for i, count in enumerate(counts):
        if k < count:
            counts[i] -= 1
            return items[i]
        k -= count
    raise AssertionError("unreachable")


def _draw_chest(s: State, rng, label: str) -> str | None:
    return _draw(s.bag, COLOURS, rng, label)


def _draw_tile(s: State, rng, label: str) -> int | None:
    return _draw(s.pool, TILE_VALUES, rng, label)
