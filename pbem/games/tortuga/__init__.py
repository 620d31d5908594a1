"""Tortuga (the dice game, 2-4 players): pure rules behind the ``pbem.games.base`` interface."""

from __future__ import annotations

import re

from ..base import MAX_OPTIONS, Request
from .choices import PREFIXED, SYNTAX, format_dice, parse_dice
from .engine import apply, check, check_players, default_for, open_requests, options_for, setup
from .model import State
from .scoring import result
from .views import public_effects, view

NAME = "tortuga"
EXAMPLES = {"sealed": "B,C", "open": "skull:raid"}  # for help texts (the email judge's)
MIN_PLAYERS, MAX_PLAYERS = 2, 4
OPTIONS = {"variant": ("standard", "long")}

__all__ = ["NAME", "setup", "pending", "check", "apply", "default", "view", "headline", "result",
           "to_json", "from_json", "public_effects", "check_players", "State"]


def pending(state: State) -> list[Request]:
    """Every open request, with its legal options (when few), syntax and NMR default."""
    out = []
    for seat, kind, sealed in open_requests(state):
        options = every = options_for(state, seat, kind)
        if options is not None and len(options) > MAX_OPTIONS:
            options = None
        out.append(Request(
            player=state.players[seat], kind=kind, sealed=sealed, round=state.round,
            step=state.step, default=default_for(state, seat, kind), syntax=SYNTAX[kind],
            options=tuple(options) if options is not None else None,
            all_options=tuple(every) if options is None and every is not None else None,
        ))
    return out


def parse_face_table(text: str) -> list[list[int]]:
    """A dice face table file (format in faces.py) as the ``faces`` option of ``setup``."""
    from .faces import parse
    return [list(row) for row in parse(text)]


_DICE_LIST = re.compile(r"(?:[A-Ea-e](?:\s*[,;\s]\s*[A-Ea-e])*|[A-E]{2,5}|none)[.!]?", re.IGNORECASE)


def looks_like_choice(text: str) -> bool:
    """Whether a line looks meant as a choice of this game (a mail's greeting or sign-off does
    not): a KIND:... prefix, or dice letters (B,C / B C / BC / none). The email judge refuses
    such a line when it is wrong, and reads past any other line."""
    head = text.strip().split(":", 1)
    if len(head) == 2 and head[0].strip().lower() in PREFIXED:
        return True
    word = text.strip()
    return bool(_DICE_LIST.fullmatch(word)) and (word.lower() == "none" or not word.isalpha() or word.isupper())


def normalize(kind: str, text: str) -> str:
    """The canonical form of a choice's text, without a state (for offline sealing)."""
    if kind == "select":
        return format_dice(parse_dice(text))
    return text.strip()


def default(state: State, player: str, kind: str) -> str:
    return default_for(state, state.players.index(player), kind)


def headline(state: State) -> dict:
    """Round, step, phase and start player, as ``view`` gives them (``pbem.games.base``)."""
    return {"round": state.round, "step": state.step, "phase": state.phase,
            "start_player": state.players[state.start]}


def bot(seed, style: str = "greedy"):
    """A bot player: ``bot.choose(state, player, kind, request=None) -> choice text``
    (``request``, the open request from ``pending`` when the caller holds it, is not needed
    here)."""
    from .bots import GreedyBot, RandomBot
    inner = (GreedyBot if style == "greedy" else RandomBot)(seed)

    class _Bot:
        def choose(self, state: State, player: str, kind: str, request=None) -> str:
            return inner.choose(state, state.players.index(player), kind)

    return _Bot()


def to_json(state: State) -> dict:
    return state.to_json()


def from_json(data: dict) -> State:
    return State.from_json(data)
