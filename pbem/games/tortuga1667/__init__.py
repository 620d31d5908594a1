"""Tortuga 1667 (hidden loyalties, 4-9 players): pure rules behind ``pbem.games.base``.

Every rule of the seed is built (docs/rules-1667.md). The one option is ``variant``:
``standard`` (the default) or ``advanced`` (the optional advanced set-up).
"""

from __future__ import annotations

from functools import partial

from ...text import quote
from ..base import MAX_OPTIONS, InvalidChoice, Request
from . import legal
from .engine import apply, check, owed
from .model import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, State
from .parse import KIND_OF_WORD, first_word, words
from .setup import check_players, setup
from .views import view

NAME = "tortuga1667"
EXAMPLES = {"sealed": "vote 2", "open": "peek 2,4"}  # for help texts (the email judge's)
OPTIONS = {"variant": VARIANTS}

__all__ = ["NAME", "MIN_PLAYERS", "MAX_PLAYERS", "setup", "pending", "check", "normalize", "apply", "default",
           "view", "headline", "result", "to_json", "from_json", "check_players", "State"]


def pending(state: State) -> list[Request]:
    """Every open request: a vote asks each voter at once, sealed and anonymous (the judge
    alone sees who played which card until the end); anything else is open."""
    out = []
    for player, kind, entry in owed(state):
        options = legal.options(state, player, kind, entry)
        out.append(Request(
            player=player, kind=kind, sealed=kind == "vote", round=state.turn_no,
            step=state.vote_no, anonymous=kind == "vote", default=legal.default(state, player, kind, entry),
            syntax=legal.SYNTAX[kind],
            options=tuple(options) if len(options) <= MAX_OPTIONS else None,
            all_options=tuple(options) if len(options) > MAX_OPTIONS else None,
            prompt=partial(legal.describe, options),  # read only when a message is written
        ))
    return out


def headline(state: State) -> dict:
    """Where the game stands, as the public view says it (``pbem.games.base``): the turn
    (the protocol's round), the latest vote's number, the phase; no start player. Read for
    every status report, without building the whole view."""
    return {"round": state.turn_no, "step": state.vote_no, "phase": state.phase, "start_player": None}


def looks_like_choice(text: str) -> bool:
    """Whether a line looks meant as a choice of this game: it starts with one of the game's
    words (peek, vote, reveal, force, ...). A greeting or a sign-off does not."""
    return first_word(text) in KIND_OF_WORD and len(words(text)) <= 8


def normalize(kind: str, text: str) -> str:
    """The canonical form of a choice's text without a state (for sealing offline): a vote
    is ``vote N``, or ``vote A,B`` (El Dorado's two cards, A < B); other choices keep their
    words, single-spaced."""
    w = words(text)
    if kind != "vote":
        return " ".join(w)
    if len(w) == 2 and w[0].casefold() == "vote" and w[1].isdecimal():
        return f"vote {int(w[1])}"
    if len(w) == 3 and w[0].casefold() == "vote" and w[1].isdecimal() and w[2].isdecimal() and int(w[1]) != int(w[2]):
        a, b = sorted((int(w[1]), int(w[2])))
        return f"vote {a},{b}"
    raise InvalidChoice(f"not understood: {quote(text.strip())}; {legal.SYNTAX['vote']}")


def default(state: State, player: str, kind: str) -> str:
    for p, k, entry in owed(state):
        if p == player and k == kind:
            return legal.default(state, player, kind, entry)
    raise ValueError(f"{player} owes no {kind} choice now")


def result(state: State) -> dict | None:
    """Once the Armada has ended the game: the winning side, the team totals, every
    loyalty. A player's score is their team's treasure (the Dutch player: the tie)."""
    if state.phase != "over":
        return None
    outcome = state.outcome
    totals = outcome["totals"]
    winner = outcome["winner"]
    scores = {}
    for p in state.players:
        team = state.loyalty[p]
        scores[p] = {"team": team, "total": totals.get(team, totals["british"] if team == "dutch" else 0)}
    if winner == "draw":
        winners = [p for p in state.players if state.loyalty[p] != "dutch"]
    else:
        winners = [p for p in state.players if state.loyalty[p] == winner]
    return {"winner": winner, "totals": totals, "loyalty": dict(state.loyalty),
            "scores": scores, "winners": winners}


def bot(seed, style: str = "random"):
    """A bot player: ``bot.choose(state, player, kind, request=None) -> choice text``
    (``request``: the player's open request of that kind, when the caller already has it
    from ``pending``; else the bot works it out). Styles: "random" (uniform over the legal
    choices) and "greedy" or "informed" (plays for its loyalty from its player's view alone)."""
    from .bots import InformedBot, RandomBot
    if style in ("greedy", "informed"):
        return InformedBot(seed)
    if style == "random":
        return RandomBot(seed)
    raise ValueError(f"unknown bot style {style!r}; styles: random, greedy, informed")


def to_json(state: State) -> dict:
    return state.to_json()


def from_json(data: dict) -> State:
    return State.from_json(data)
