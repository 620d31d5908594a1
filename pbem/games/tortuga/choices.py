"""The text syntax of Tortuga choices: parsing (lenient) and canonical forms (strict).

    select   dice letters, e.g. ``B,C`` (any order, case or spacing); ``none`` when no die fits
    skull    ``skull:ACTION``                    turn skull-only dice, e.g. ``skull:raid``
    bonus    ``bonus:new:ACTION`` or ``bonus:flip:ACTION``
    fleet, crew, hunt   ``fleet:go`` or ``fleet:forfeit`` (likewise crew, hunt)
    board, raid         ``board:forfeit``, ``board:PLAYER`` or ``board:PLAYER:COLOUR``
    order    ``order:FLEET/CREW``  e.g. ``order:red,blue/purple``; ``-`` for an empty list

Colours may be abbreviated r, b, y, w, p. The canonical form (what is committed and
logged) is lower case with full names, dice letters upper case and sorted.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ...text import quote
from ..base import InvalidChoice
from .model import ACTIONS, COLOUR_ABBREV, COLOURS, LETTERS

KINDS = ("select", "skull", "bonus", "fleet", "crew", "hunt", "board", "raid", "order")
PREFIXED = frozenset(KINDS[1:])

SYNTAX = {
    "select": "dice letters showing one action (skulls are wild), e.g. B,C; 'none' only if no die fits",
    "skull": "skull:ACTION, e.g. skull:raid (ACTION: fleet, crew, hunt, board, raid)",
    "bonus": "bonus:new:ACTION (a new tile on a free space) or bonus:flip:ACTION (turn a 1 to 2)",
    "fleet": "fleet:go or fleet:forfeit",
    "crew": "crew:go or crew:forfeit",
    "hunt": "hunt:go or hunt:forfeit",
    "board": "board:PLAYER:COLOUR (COLOUR as required), board:PLAYER, or board:forfeit",
    "raid": "raid:PLAYER:COLOUR (COLOUR as required), raid:PLAYER, or raid:forfeit",
    "order": "order:FLEET/CREW, chests left to right, e.g. order:red,blue/purple ('-' if empty)",
}


def fold(name: str) -> str:
    """The form in which player names are compared: without regard to case or to the
    width of letters (NFKC, then case-folded), so 'board:ben' names a player 'Ｂｅｎ'."""
    return unicodedata.normalize("NFKC", name).casefold()


@lru_cache(maxsize=1024)  # the same few texts come again and again (fleet:go, B,C, ...)
def kind_of(text: str) -> str:
    """Which kind of request a choice text answers (by its prefix; dice otherwise)."""
    head = text.strip().split(":", 1)[0].strip().lower()
    return head if head in PREFIXED else "select"


def _format_dice(dice) -> str:
    return ",".join(LETTERS[i] for i in sorted(dice)) if dice else "none"


_SUBSETS = [tuple(i for i in range(5) if mask >> i & 1) for mask in range(32)]
CANONICAL_DICE = {_format_dice(d): d for d in _SUBSETS}
FORMATTED = {d: _format_dice(d) for d in _SUBSETS}


def format_dice(dice) -> str:
    """Canonical text of a set of dice: letters sorted, comma-separated; 'none' if empty."""
    key = dice if type(dice) is tuple else tuple(dice)
    text = FORMATTED.get(key)
    return text if text is not None else _format_dice(dice)


def parse_dice(text: str) -> tuple[int, ...]:
    known = CANONICAL_DICE.get(text)  # the canonical form, as bots and seal send it
    if known is not None:
        return known
    return _parse_dice(text)


def _parse_dice(text: str) -> tuple[int, ...]:
    cleaned = text.strip().upper()
    if cleaned in ("NONE", "-", ""):
        return ()
    letters = [c for c in cleaned.replace(",", " ").replace("+", " ").split()]
    if len(letters) == 1 and len(letters[0]) > 1 and letters[0].isalpha():
        letters = list(letters[0])  # "BC" as well as "B,C"
    dice = []
    for token in letters:
        if len(token) != 1 or token not in LETTERS:
            raise InvalidChoice(
                f"not understood: {quote(text.strip())}; name dice by letter A-E, e.g. B,C (or 'none')"
            )
        index = LETTERS.index(token)
        if index in dice:
            raise InvalidChoice(f"not understood: die {token} is named twice in {quote(text.strip())}")
        dice.append(index)
    return tuple(sorted(dice))


def parse_action(token: str, what: str) -> int:
    name = token.strip().lower()
    if name not in ACTIONS:
        raise InvalidChoice(f"not understood: {what} {quote(token.strip())}; use one of {', '.join(ACTIONS)}")
    return ACTIONS.index(name)


def parse_colour(token: str) -> str:
    name = token.strip().lower()
    name = COLOUR_ABBREV.get(name, name)
    if name not in COLOURS:
        raise InvalidChoice(f"not understood: colour {quote(token.strip())}; use one of {', '.join(COLOURS)} (or r, b, y, w, p)")
    return name


def parse_colour_list(text: str) -> list[str]:
    text = text.strip()
    if text in ("", "-"):
        return []
    return [parse_colour(t) for t in text.split(",")]


def format_order(fleet, crew) -> str:
    return f"order:{','.join(fleet) or '-'}/{','.join(crew) or '-'}"


def split(text: str, kind: str) -> list[str]:
    """The fields after the ``kind:`` prefix (the prefix itself may be omitted)."""
    parts = text.strip().split(":")
    if parts and parts[0].strip().lower() == kind:
        parts = parts[1:]
    return parts
