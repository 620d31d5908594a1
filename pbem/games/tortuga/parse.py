"""Parsing each kind of choice against a state (canonical forms are in choices.py)."""

from __future__ import annotations

from functools import lru_cache

from ...text import quote
from ..base import IllegalChoice, InvalidChoice
from . import choices as syn
from . import legal
from .model import ACTIONS, LETTERS
from .requests import options_for


def _parse_select(state, seat, text):
    """Checks the selection itself (the options are listed only when it is refused)."""
    dice = syn.parse_dice(text)
    board = state.boards[seat]
    problem = None  # (code, reason)
    for d in dice:
        if board.dice[d] is not None:
            problem = "die-placed", f"die {LETTERS[d]} is already on {ACTIONS[board.dice[d]]}"
        elif board.roll[d] is None:
            problem = "die-not-rolled", f"die {LETTERS[d]} was not rolled in this step"
        if problem:
            break
    if problem is None and dice:
        problem = legal.selection_error(board, dice)
    if problem is None and not dice and legal.any_fits(board):
        problem = "must-select", "at least one die fits, so a selection is required"
    if problem:
        code, why = problem
        opts = options_for(state, seat, "select")
        raise IllegalChoice(f"illegal: {syn.format_dice(dice)}: {why}; legal: {', '.join(opts)}", tuple(opts), code)
    return dice


# Parsing skull, bonus, go and order choices depends on the text alone (a target's on the
# players too): each is cached, as the same few texts come again and again (a refusal is
# raised afresh each time).

def _parse_skull(state, seat, text):
    return _skull_of(text)


@lru_cache(maxsize=256)
def _skull_of(text):
    parts = syn.split(text, "skull")
    if len(parts) != 1:
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {syn.SYNTAX['skull']}")
    return syn.parse_action(parts[0], "action")


def _parse_bonus(state, seat, text):
    return _bonus_of(text)


@lru_cache(maxsize=256)
def _bonus_of(text):
    parts = syn.split(text, "bonus")
    if len(parts) != 2 or parts[0].strip().lower() not in ("new", "flip"):
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {syn.SYNTAX['bonus']}")
    return parts[0].strip().lower(), syn.parse_action(parts[1], "action")


def _parse_go(state, seat, text):
    return _go_of(text)


@lru_cache(maxsize=256)
def _go_of(text):
    kind = syn.kind_of(text)
    parts = syn.split(text, kind)
    word = parts[0].strip().lower() if len(parts) == 1 else ""
    if word not in ("go", "forfeit"):
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {syn.SYNTAX[kind]}")
    return word


def _parse_target(state, seat, text):
    return _target_of(tuple(state.players), text)


@lru_cache(maxsize=1024)
def _target_of(players, text):
    kind = syn.kind_of(text)
    parts = syn.split(text, kind)
    if len(parts) == 1 and syn.fold(parts[0].strip()) == "forfeit":
        return None
    if len(parts) not in (1, 2) or not parts[0].strip():
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {syn.SYNTAX[kind]}")
    wanted = syn.fold(parts[0].strip())
    matches = [i for i, p in enumerate(players) if syn.fold(p) == wanted]
    if not matches:
        raise InvalidChoice(f"not understood: no player {quote(parts[0].strip())}; players: {', '.join(players)}",
                            code="unknown-player")
    colour = syn.parse_colour(parts[1]) if len(parts) == 2 else None
    return matches[0], colour


def parse_order(state, seat, text):
    """(fleet, crew): the chests listed for each area, as tuples."""
    return _order_of(text)


@lru_cache(maxsize=1024)
def _order_of(text):
    parts = syn.split(text, "order")
    if len(parts) != 1 or parts[0].count("/") != 1:
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {syn.SYNTAX['order']}")
    fleet, crew = parts[0].split("/")
    return tuple(syn.parse_colour_list(fleet)), tuple(syn.parse_colour_list(crew))


def check_order(state, seat, parsed):
    fleet, crew = parsed
    board = state.boards[seat]
    kf, kc = legal.order_limits(state, seat)
    for listed, source, k, area, src in ((fleet, board.crew, kf, "fleet", "crew"),
                                          (crew, board.island, kc, "crew", "island")):
        if len(listed) != k:
            raise IllegalChoice(f"illegal: the {area} area takes {k} chest(s) from your {src} area "
                                f"({', '.join(source) or 'empty'}), you listed {len(listed)}; "
                                f"e.g. {legal.default_order(state, seat)}", code="order-count")
        for colour in dict.fromkeys(listed):  # the first listed first, whatever the hash seed
            if listed.count(colour) > source.count(colour):
                raise IllegalChoice(f"illegal: your {src} area has {source.count(colour)} {colour} "
                                    f"chest(s), you listed {listed.count(colour)}; e.g. {legal.default_order(state, seat)}",
                                    code="order-chests")


PARSERS = {"select": _parse_select, "skull": _parse_skull, "bonus": _parse_bonus,
           "fleet": _parse_go, "crew": _parse_go, "hunt": _parse_go, "board": _parse_target,
           "raid": _parse_target, "order": parse_order}


def _canon_target(state, seat, parsed, kind):
    if parsed is None:
        return f"{kind}:forfeit"
    target, colour = parsed
    return f"{kind}:{state.players[target]}" + (f":{colour}" if colour else "")


CANON = {
    "select": lambda s, seat, p: syn.format_dice(p),
    "skull": lambda s, seat, p: f"skull:{ACTIONS[p]}",
    "bonus": lambda s, seat, p: f"bonus:{p[0]}:{ACTIONS[p[1]]}",
    "fleet": lambda s, seat, p: f"fleet:{p}", "crew": lambda s, seat, p: f"crew:{p}",
    "hunt": lambda s, seat, p: f"hunt:{p}",
    "board": lambda s, seat, p: _canon_target(s, seat, p, "board"),
    "raid": lambda s, seat, p: _canon_target(s, seat, p, "raid"),
    "order": lambda s, seat, p: syn.format_order(*p),
}
