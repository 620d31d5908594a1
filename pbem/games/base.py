"""The one small interface between the adjudication layer and a game's rules.

A game is a module object (see ``pbem.games.get``) offering pure functions over plain,
JSON-serialisable state. The protocol layer knows nothing else about a game.

    setup(players, options, rng)        -> state
    pending(state)                      -> list[Request]   the requests open now
    check(state, player, choice)        -> str             canonical choice, or raises
    apply(state, player, choice, rng)   -> state           a new state; the old one unchanged
    default(state, player, kind)        -> str             the documented NMR default
    view(state, player | None)          -> dict            exactly what that viewer may see
    headline(state)                     -> dict            optional: round, step, phase and
                                                           start_player as view(state, None)
                                                           gives them (see ``headline``)
    result(state)                       -> dict | None     scores once the game is over
    to_json(state) / from_json(data)                       lossless round-trip

``rng`` is any object with ``below(label: str, n: int) -> int`` (see
``pbem.protocol.rng.RandomSource``). Games never import from other pbem layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ChoiceError(Exception):
    """A submitted choice was refused. ``str(error)`` is a one-line message for the player;
    ``code`` is a short fixed word for the kind of refusal, which the log records next to
    the message for a committed choice that turns out illegal, so a verifier can compare it
    (the words a game uses are listed in docs/protocol.md)."""

    code = "refused"

    def __init__(self, message: str, legal: tuple[str, ...] | None = None, code: str | None = None):
        super().__init__(message)
        self.legal = legal
        if code is not None:
            self.code = code


class InvalidChoice(ChoiceError):
    """Not understood: the text does not follow the choice syntax."""

    code = "syntax"


class IllegalChoice(ChoiceError):
    """Understood, but not allowed now; ``legal`` lists what would be (when few)."""

    code = "not-allowed"


class NotYourTurn(ChoiceError):
    """The player has no open request that this choice could answer."""

    code = "not-your-turn"


class _Lazy:
    """A dataclass field that may be given as a zero-argument function: it is called the
    first time the field is read, and its value kept (a request's ``prompt`` is read only
    when a private message is written, while the engine and its bots build requests at
    every move)."""

    def __set_name__(self, owner, name: str) -> None:
        self.key = f"_lazy_{name}"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return ""  # the field's default
        value = obj.__dict__[self.key]
        if callable(value):
            value = obj.__dict__[self.key] = value()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.key] = value


@dataclass(frozen=True)
class Request:
    """One open request: ``player`` owes a choice of ``kind``.

    ``sealed`` requests are collected as commitments first (``round`` and ``step`` name
    the sealed step); open ones are answered in the clear. A sealed step whose requests
    are ``anonymous`` keeps its reveals with the judge: the public log shows who has
    revealed, then one digest of the whole step, and the game's state sees the step only
    once every reveal is in, applied in the order of the requests (so the game must not let
    one anonymous choice depend on another of the same step). Who chose what is disclosed
    when the game ends (docs/protocol.md, section 11). ``options`` are the exact legal
    choice strings when there are at most ``MAX_OPTIONS`` of them, else None (then
    ``syntax`` says what to send; ``all_options`` then lists them all, when the game can,
    for the stand-in). ``default`` is what NMR applies. ``prompt`` (the legal
    choices in words) may be given as a function, called when it is first read.
    """

    player: str
    kind: str
    sealed: bool
    round: int
    step: int
    default: str
    syntax: str
    options: tuple[str, ...] | None = None
    anonymous: bool = False
    prompt: str = _Lazy()
    info: dict = field(default_factory=dict, compare=False)
    all_options: tuple[str, ...] | None = field(default=None, compare=False, repr=False)


MAX_OPTIONS = 50


def headline(rules, state) -> dict:
    """Where a game stands, for the status report: ``round``, ``step``, ``phase`` and
    ``start_player`` of the public view (round and step default to the state's, the start
    player to None). A game may offer ``headline(state)`` giving exactly these, cheaper than
    its whole view: the status report is made at every write."""
    own = getattr(rules, "headline", None)
    if own is not None:
        return own(state)
    view = rules.view(state, None)
    return {"round": view.get("round", state.round), "step": view.get("step", state.step),
            "phase": view["phase"], "start_player": view.get("start_player")}
