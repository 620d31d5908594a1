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

from ...text import quote
from ..base import IllegalChoice, InvalidChoice, NotYourTurn
from . import choices as syn
from .actions import STAGES, action_totals, enter_actions, finish_stage, rank, surplus  # noqa: F401
from .faces import DEFAULT_FACES, validate as validate_faces
from .model import ACTIONS, END_CHESTS, SKULL, Board, State
from .move import enter_move, move_chests  # noqa: F401
from .choices import CANONICAL_DICE
from .parse import CANON, PARSERS, check_order, parse_order  # noqa: F401
from .pool import draw_chest, label_name  # noqa: F401
from .requests import (  # noqa: F401
    FCH, default_for, has_legal, open_requests, options_for, owed_by, position, stage_requests,
)
from .roll import (  # noqa: F401
    assign, clear_roll, free, open_step, place_selection, resolve_step, settle_bonus, take_bonus,
)

NAME_FORBIDDEN = ",:"


# ----------------------------------------------------------------------------- setup

def check_players(players) -> tuple[str, ...]:
    players = tuple(players)
    if not 2 <= len(players) <= 4:
        raise ValueError(f"Tortuga takes 2 to 4 players, got {len(players)}")
    seen = set()
    for name in players:
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(f"player name {quote(name)} must be non-empty without surrounding spaces")
        if len(name) > 40:
            raise ValueError(f"player name {quote(name, 20)} is longer than 40 characters")
        # Names must be told apart by eye: no invisible or look-alike characters (format
        # characters, odd spaces, control characters other than a newline or tab, which the
        # outputs show escaped), and one spelling per letter (composed form, NFC).
        odd = [c for c in name if unicodedata.category(c) in ("Cf", "Zl", "Zp", "Co", "Cs")
               or (unicodedata.category(c) == "Zs" and c != " ")
               or (unicodedata.category(c) == "Cc" and c not in "\n\t")]
        if odd:
            raise ValueError(f"player name {quote(name)} holds an invisible or look-alike character "
                             f"(U+{ord(odd[0]):04X}) that would let two names look alike; remove it")
        if unicodedata.normalize("NFC", name) != name:
            raise ValueError(f"player name {quote(name)} is not in composed form; write it as "
                             f"{quote(unicodedata.normalize('NFC', name))}")
        bad = [c for c in NAME_FORBIDDEN if c in name]
        if bad:
            raise ValueError(f"player name {quote(name)} may not contain {' '.join(bad)} (used by the choice syntax)")
        key = syn.fold(name)
        if key in ("forfeit", "none", "go"):
            raise ValueError(f"player name {quote(name)} is reserved by the choice syntax; choose another")
        if key in seen:
            raise ValueError(f"player name {quote(name)} is given twice (names must differ by more than "
                             f"case or the width of their letters)")
        seen.add(key)
    return players


def setup(players, options: dict | None, rng) -> State:
    options = dict(options or {})
    players = check_players(players)
    variant = options.get("variant", "standard")
    if variant not in END_CHESTS:
        raise ValueError(f"unknown variant {quote(variant)}; use standard or long")
    start_name = options.get("start") or players[0]
    if start_name not in players:
        raise ValueError(f"start player {quote(start_name)} is not one of {', '.join(players)}")
    faces = validate_faces(options.get("faces") or DEFAULT_FACES)
    s = State(players, variant, faces, players.index(start_name))
    s.boards = [Board() for _ in players]
    s._owned = set(range(len(players)))
    for seat in s.clockwise():
        name = players[seat]
        first = draw_chest(s, rng, f"setup/{label_name(name)}/chest1")
        second = draw_chest(s, rng, f"setup/{label_name(name)}/chest2")
        s.boards[seat].island.append(first)
        s.boards[seat].crew.append(second)
        s.effects.append({"type": "setup", "player": name, "island": first, "crew": second})
    s.effects.append({"type": "round", "round": 1, "start_player": start_name})
    _advance(s, rng)
    return s


# ----------------------------------------------------------------------------- checking

def _seat(state: State, player: str) -> int:
    try:
        return state.players.index(player)
    except ValueError:
        raise NotYourTurn(f"{quote(player)} is not a player in this game ({', '.join(state.players)})",
                          code="not-a-player") from None


def validate(state: State, player: str, text: str) -> tuple[int, str, str, object]:
    """Check a choice without applying it: (seat, kind, canonical text, parsed value)."""
    seat = _seat(state, player)
    if type(text) is str and state.phase == "roll" and text in CANONICAL_DICE and (
            seat in state.open_select or (seat in state.rolling and str(seat) not in state.sealed)):
        # the common case, canonical dice for a selection the player owes: what the steps
        # below would find (kind select, owed). Accepted here when _parse_select would
        # accept it (rolled dice not yet placed, of one action but for skulls, within its
        # room); anything else goes to _parse_select, which refuses it in its own words.
        dice = CANONICAL_DICE[text]
        board = state.boards[seat]
        on, roll, action = board.dice, board.roll, SKULL
        for d in dice:
            face = roll[d]
            if on[d] is not None or face is None:
                break
            if face != SKULL:
                if action == SKULL:
                    action = face
                elif face != action:
                    break
        else:
            if dice and (action == SKULL or len(dice) <= board.room(action)):
                return seat, "select", text, dice
        return seat, "select", text, PARSERS["select"](state, seat, text)
    exact = _EXACT.get(text) if type(text) is str else None
    if exact is not None and exact[0] in owed_by(state, seat) and _plainly_legal(state, seat, *exact):
        # a canonical skull, bonus, fleet, crew or hunt choice, owed and legal: what the
        # steps below would return (anything else goes through them, refusals included)
        return seat, exact[0], text, exact[1]
    if not isinstance(text, str) or not text.strip():
        raise InvalidChoice("empty choice; send the choice text, e.g. B,C or fleet:go")
    owed = owed_by(state, seat)
    kind = syn.kind_of(text)
    if kind == "select" and kind not in owed and owed:
        try:
            syn.parse_dice(text)
        except InvalidChoice:  # neither dice nor a known prefix: say what is expected
            hints = "; ".join(f"{k}: {syn.SYNTAX[k]}" for k in owed)
            raise InvalidChoice(f"not understood: {quote(text.strip())}; {player} owes {hints}") from None
    if kind not in owed:
        if owed:
            raise NotYourTurn(
                f"{player} owes no {kind} choice now; open for {player}: {', '.join(owed)}"
            )
        waiting = ", ".join(f"{state.players[s]} ({k})" for s, k, _ in open_requests(state))
        raise NotYourTurn(f"{player} owes no choice now; waiting for {waiting or 'nobody: the game is over'}")
    try:
        parsed = PARSERS[kind](state, seat, text)
    except InvalidChoice as exc:  # say what would be legal, not only the syntax
        options = options_for(state, seat, kind)
        hint = (f"legal: {', '.join(options)}" if options is not None
                else f"e.g. {default_for(state, seat, kind)}")
        raise InvalidChoice(f"{exc}; {hint}", tuple(options) if options else None, exc.code) from None
    canonical = CANON[kind](state, seat, parsed)
    if kind == "select" or _plainly_legal(state, seat, kind, parsed):
        # a selection is checked in full by _parse_select; the other kinds are checked
        # directly when legal (listing their options is costly), and listed when refused
        return seat, kind, canonical, parsed
    if kind == "order":  # checked directly: the orderings can be many
        try:
            check_order(state, seat, parsed)
        except IllegalChoice as exc:
            options = options_for(state, seat, kind)
            if options is None:
                raise
            raise IllegalChoice(f"{exc}; legal: {', '.join(options)}", tuple(options), exc.code) from None
        return seat, kind, canonical, parsed
    options = options_for(state, seat, kind)
    if options is not None and canonical not in options:
        raise IllegalChoice(f"illegal: {canonical} is not allowed now; legal: {', '.join(options)}",
                            tuple(options))
    if options is None:
        check_order(state, seat, parsed)
    return seat, kind, canonical, parsed


# canonical choice texts that name no player -> (kind, parsed value), as PARSERS reads them
_EXACT = {
    **{f"{kind}:{word}": (kind, word) for kind in ("fleet", "crew", "hunt") for word in ("go", "forfeit")},
    **{f"skull:{name}": ("skull", action) for action, name in enumerate(ACTIONS)},
    **{f"bonus:{how}:{name}": ("bonus", (how, action)) for how in ("new", "flip") for action, name in enumerate(ACTIONS)},
}


def _plainly_legal(state: State, seat: int, kind: str, parsed) -> bool:
    """Whether a parsed choice is among ``options_for`` (True only if it is: False sends it
    on to the full check, which lists the options in its refusal)."""
    if kind in ("fleet", "crew", "hunt"):
        return True  # go or forfeit, both always allowed (_parse_go refuses anything else)
    board = state.boards[seat]
    if kind == "skull":
        return board.room(parsed) >= len(board.held)
    if kind == "bonus":
        how, action = parsed
        return board.bonus[action] == 0 and state.bonus_supply > 0 if how == "new" else board.bonus[action] == 1
    if kind in ("board", "raid"):  # as legal.target_options lists them
        if parsed is None:
            return True
        target, colour = parsed
        if target == seat:
            return False
        if position(state, seat, ACTIONS.index(kind)) == 1:
            area = state.boards[target].fleet if kind == "board" else state.boards[target].crew
        elif state.targets.get(kind, seat) == target:
            return False
        else:
            area = state.centre
        return colour in area if area else colour is None
    return False


def check(state: State, player: str, text: str) -> str:
    """The canonical form of a legal choice, or a ChoiceError saying what is allowed."""
    return validate(state, player, text)[2]


# ----------------------------------------------------------------------------- applying

def apply(state: State, player: str, text: str, rng) -> State:
    """A new state with the choice applied; ``state`` itself is left unchanged."""
    seat, kind, canonical, parsed = validate(state, player, text)
    s = state.copy()
    if kind == "select":
        if seat in s.open_select:
            s.open_select.remove(seat)
            board = s.board(seat)
            place_selection(s, seat, board, parsed)
            clear_roll(board)
        else:
            sealed = s.sealed = {**s.sealed, str(seat): canonical}  # shared with the old state: replaced
            if len(sealed) < len(s.rolling):
                return s  # the step stays open: _advance would return at once
            resolve_step(s, rng)
    elif kind == "skull":
        s.skull_queue.pop(0)
        board = s.board(seat)
        assign(s, seat, board, board.held, parsed, "skull")
        board.held = []
    elif kind == "bonus":
        take_bonus(s, seat, *parsed)
        for other in s.clockwise():  # taking the last tile may leave others one way, or none
            settle_bonus(s, other)
    elif kind == "order":
        s.orders = {**s.orders, str(seat): canonical}
    else:
        action = ACTIONS.index(kind)
        s.decisions = {**s.decisions, f"{kind}:{position(s, seat, action)}": canonical}
    _advance(s, rng)
    return s


def _advance(s: State, rng) -> None:
    """Carry the game forward until some player owes a choice (or it is over)."""
    while True:
        if s.phase == "roll":
            if s.rolling or s.skull_queue or s.open_select:
                return
            boards = s.boards
            for b in boards:
                if b.bonus_owed:
                    # placed before anyone rolls again: holding a tile back until every die
                    # is down would let its owner use what nobody else knew at the time
                    return
            for b in boards:
                if free(b):
                    open_step(s, rng)
                    return
            enter_actions(s)
        elif s.phase == "actions":
            if stage_requests(s):
                return
            finish_stage(s, rng)
        elif s.phase == "move":
            if len(s.orders) < s.n:
                return
            move_chests(s, rng)
        else:
            return
