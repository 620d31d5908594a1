"""Tortuga (the dice game, 2-4 players): pure rules behind the ``pbem.games.base`` interface."""

from __future__ import annotations

from ..base import MAX_OPTIONS, Request
from .choices import SYNTAX, format_dice, parse_dice
from .engine import apply, check, check_players, default_for, open_requests, options_for, setup
from .model import State
from .scoring import result
from .views import public_effects, view

NAME = "tortuga"
EXAMPLES = {"sealed": "B,C", "open": "skull:raid"}  # for help texts (the email judge's)
MIN_PLAYERS, MAX_PLAYERS = 2, 4
OPTIONS = {"variant": ("standard", "long")}

__all__ = ["NAME", "setup", "pending", "check", "apply", "default", "view", "result",
           "to_json", "from_json", "public_effects", "check_players", "State"]


def pending(state: State) -> list[Request]:
    """Every open request, with its legal options (when few), syntax and NMR default."""
    out = []
    for seat, kind, sealed in open_requests(state):
        options = options_for(state, seat, kind)
        if options is not None and len(options) > MAX_OPTIONS:
            options = None
        out.append(Request(
            player=state.players[seat], kind=kind, sealed=sealed, round=state.round,
            step=state.step, default=default_for(state, seat, kind), syntax=SYNTAX[kind],
            options=tuple(options) if options is not None else None,
        ))
    return out


def parse_face_table(text: str) -> list[list[int]]:
    """A dice face table file (format in faces.py) as the ``faces`` option of ``setup``."""
    from .faces import parse
    return [list(row) for row in parse(text)]


def normalize(kind: str, text: str) -> str:
    """The canonical form of a choice's text, without a state (for offline sealing)."""
    if kind == "select":
        return format_dice(parse_dice(text))
    return text.strip()


def default(state: State, player: str, kind: str) -> str:
    return default_for(state, state.players.index(player), kind)


def bot(seed, style: str = "greedy"):
    """A bot player: ``bot.choose(state, player, kind) -> choice text``."""
    from .bots import GreedyBot, RandomBot
    inner = (GreedyBot if style == "greedy" else RandomBot)(seed)

    class _Bot:
        def choose(self, state: State, player: str, kind: str) -> str:
            return inner.choose(state, state.players.index(player), kind)

    return _Bot()


def to_json(state: State) -> dict:
    return state.to_json()


def from_json(data: dict) -> State:
    return State.from_json(data)
