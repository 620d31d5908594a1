"""Games: pure rules behind the interface described in ``pbem.games.base``."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..text import quote

GAMES = {"tortuga": "pbem.games.tortuga", "tortuga1667": "pbem.games.tortuga1667"}


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
