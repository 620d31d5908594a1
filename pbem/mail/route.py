"""The route stage of an incoming message: whose it is, and for which game.

``sender``: the sender's seats in the judge's games; mail from an address that plays no game
here (an unknown sender, or a former player of the game it names) is answered with why,
once a day, and goes no further. ``seat``: the seat the message is for, from a line
'game GAME', a [GAME] tag in the subject, or the sender's only game.
"""

from __future__ import annotations

import re

from ..protocol.times import shift
from ..store import judge as tables
from .away import former_refusal
from .lines import read_lines
from .outcome import Stop

GAME_TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")


def sender(store, msg, lines: list[str], now: str) -> list:
    """The sender's rows (``tables.players_at``), at least one; else a ``Stop``. ``lines``:
    the message's command lines (``command_lines(msg.text)``)."""
    if not msg.sender:
        raise Stop("not answered: no sender address")
    registered = tables.players_at(store, msg.sender)
    _former(store, msg, registered, now, lines)
    if not registered:
        if tables.strikes_since(store, msg.sender, "unknown", shift(now, -86400)):
            raise Stop("not answered: unknown sender (already answered today)")
        if not _deliverable(msg.sender):  # ani@example.org. and the like: no answer can reach it
            raise Stop(f"not answered: unknown sender at an address that cannot be answered ({msg.sender[:80]})")
        tables.strike(store, msg.sender, "unknown", now)
        raise Stop("unknown sender", f"The address {msg.sender} is not registered with this judge for any game, "
                                     f"so nothing was done. Ask your moderator to register it "
                                     f"(pbem address GAME PLAYER EMAIL).")
    return registered


def seat(store, msg, reading, registered):
    """The sender's row in the game the message is for; else a ``Stop`` that says why."""
    games = {row.game: row for row in registered}
    tags = [m.group(1) for m in GAME_TAG.finditer(msg.subject)]
    named = reading.game or next((tag for tag in tags if tag in games), None)
    if named is None:  # a tag like [SPAM] is no game; a tag naming a game elsewhere is a wrong address
        named = next((tag for tag in tags if _has_game(store, tag)), None)
    if named is not None:
        if named not in games:
            raise Stop("refused: not a player of that game",
                       f"{msg.sender} plays no game named {named!r} here; your games: {', '.join(sorted(games))}.")
        return games[named]
    if len(games) == 1:
        return next(iter(games.values()))
    raise Stop("refused: which game?", f"{msg.sender} plays several games here ({', '.join(sorted(games))}): "
                                       f"put the game in the subject as [GAME], or add a line 'game GAME'.")


def _former(store, msg, registered, now: str, lines: list[str]) -> None:
    """Mail from someone who left a seat (pbem replace) for the game it names, or from an
    address that plays no game here now: refused with why (once a day). ``lines``: the
    message's command lines (``command_lines(msg.text)``)."""
    named = read_lines(lines).game or next(
        (m.group(1) for m in GAME_TAG.finditer(msg.subject) if _has_game(store, m.group(1))), None)
    if registered and (named is None or named in {row.game for row in registered}):
        return
    answer = former_refusal(store, msg.sender, named)
    if answer is None:
        return
    if tables.strikes_since(store, msg.sender, "former", shift(now, -86400)):
        raise Stop("not answered: former player (already answered today)")
    tables.strike(store, msg.sender, "former", now)
    raise Stop("refused: former player", answer)


def _has_game(store, game: str) -> bool:
    """``store.has_game``: whether ``game`` has an event, asked of its last one (an index
    lookup) rather than by counting them all."""
    return store.head(game)[0] > 0


def _deliverable(address: str) -> bool:
    from ..store.outbox import ADDRESS_PATTERN
    return len(address) <= 254 and ADDRESS_PATTERN.fullmatch(address) is not None
