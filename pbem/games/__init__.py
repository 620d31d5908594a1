"""Games: pure rules behind the interface described in ``pbem.games.base``."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..text import quote

GAMES = {"tortuga": "pbem.games.tortuga", "tortuga1667": "pbem.games.tortuga1667"}
# what each game's summaries call a round; known without importing the rules (status is fast)
ROUND_WORDS = {"tortuga": "round", "tortuga1667": "turn"}


def round_word(name: str | None) -> str:
    return ROUND_WORDS.get(name or "", "round")


class UnknownGame(LookupError):
    pass


def get(name: str) -> ModuleType:
    """The rules module of a game by name, e.g. ``get("tortuga")``."""
    try:
        return importlib.import_module(GAMES[name])
    except KeyError:
        raise UnknownGame(
            f"unknown game type {quote(name)}; known: {', '.join(sorted(GAMES))}"
        ) from None
