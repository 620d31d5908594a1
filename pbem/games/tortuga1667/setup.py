"""Set-up: loyalties, vote hands and deck, the event deck and row, pawns, treasures.

Every deal is drawn card by card from what is left (labelled draws), never pre-shuffled,
so each draw can be checked against the published seed once the game is over.
"""

from __future__ import annotations

import unicodedata

from ...text import quote
from .model import (
    ARMADA, EVENT_COUNTS, HAND_SIZE, HOLDS, LOYALTY, MAX_PLAYERS, MIN_PLAYERS, ROW_SIZE,
    SHIPS, STARRED, STARRED_IN_PLAY, TEAMS, VOTE_CARDS, State,
)

RESERVED = {"rowboat", "tortuga", "dutchman", "jolly", "british", "french", "to"}


def fold(name: str) -> str:
    """Player names are compared without regard to case or letter width (NFKC, casefold)."""
    return unicodedata.normalize("NFKC", name).casefold()


def check_players(players) -> tuple[str, ...]:
    players = tuple(players)
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ValueError(f"Tortuga 1667 takes {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(players)}")
    seen = set()
    for name in players:
        if not isinstance(name, str) or not name or len(name) > 40:
            raise ValueError(f"player name {quote(name)} must be 1 to 40 characters")
        # a name is one word of visible characters: choices name players inside a line
        odd = [c for c in name if c.isspace() or c == "," or unicodedata.category(c)[0] in "CZ"]
        if odd:
            raise ValueError(f"player name {quote(name)} may not contain spaces, commas or "
                             f"invisible characters (U+{ord(odd[0]):04X})")
        key = fold(name)
        if key in RESERVED:
            raise ValueError(f"player name {quote(name)} is a word of the choice syntax; choose another")
        if key in seen:
            raise ValueError(f"player name {quote(name)} is given twice (names must differ by more "
                             f"than case or the width of their letters)")
        seen.add(key)
    return players


def draw(pool: list, rng, label: str):
    """Take one item from ``pool`` (changed in place) by a labelled draw."""
    return pool.pop(rng.below(label, len(pool)))


def deal_order(pool: list, rng, label: str) -> list:
    pool = list(pool)
    return [draw(pool, rng, f"{label}/{k}") for k in range(len(pool))]


def event_box(rng) -> list[str]:
    """The event cards of one game: the plain cards, three starred cards, the Armada."""
    names = [name for name, count in EVENT_COUNTS.items() for _ in range(count)]
    starred = list(STARRED)
    names += sorted(draw(starred, rng, f"setup/starred/{k}") for k in range(STARRED_IN_PLAY))
    return names + [ARMADA]


def build_event_deck(cards: list[int], armada: int | None, rng, label: str) -> list[int]:
    """The cards in drawn order, with the Armada (if any) among the last five."""
    deck = deal_order(cards, rng, label)
    if armada is not None:
        tail = min(4, len(deck))
        deck.insert(len(deck) - tail + rng.below(f"{label}/armada", tail + 1), armada)
    return deck


def setup(players, options: dict | None, rng) -> State:
    players = check_players(players)
    options = dict(options or {})
    if options:
        raise ValueError(f"Tortuga 1667 takes no options yet (got {', '.join(sorted(options))})")
    s = State(list(players))
    british, french, dutch = LOYALTY[len(players)]
    cards = ["british"] * british + ["french"] * french + ["dutch"] * dutch
    s.loyalty = {p: draw(cards, rng, f"setup/loyalty/{p}") for p in players}
    assert set(s.loyalty.values()) <= set(TEAMS)

    votes = list(range(len(VOTE_CARDS)))
    for k in range(HAND_SIZE):
        for p in players:
            s.hands.setdefault(p, []).append(draw(votes, rng, f"setup/hand/{p}/{k}"))
    s.hands = {p: sorted(h) for p, h in s.hands.items()}
    s.vote_deck = deal_order(votes, rng, "setup/vote-deck")

    s.events = event_box(rng)
    armada = s.events.index(ARMADA)
    s.event_deck = build_event_deck([i for i in range(len(s.events)) if i != armada], armada, rng,
                                    "setup/event-deck")
    s.row = [s.event_deck.pop(0) for _ in range(ROW_SIZE)]

    # pawns from the bag: Dutchman captain, Jolly Roger captain, Dutchman mate, ...
    s.ships = {ship: [] for ship in SHIPS}
    for k, p in enumerate(deal_order(list(players), rng, "setup/pawns")):
        s.ships[SHIPS[k % 2]].append(p)
    s.rowboats = {ship: None for ship in SHIPS}
    s.holds = {place: {h: 0 for h in HOLDS} for place in SHIPS + ("tortuga",)}
    s.albatross = {p: [] for p in players}
    s.seen = {p: [] for p in players}
    # each captain stows their treasure, the Jolly Roger's first; then its captain starts
    s.queue = [{"kind": "stow", "player": s.ships["jolly"][0], "ship": "jolly"},
               {"kind": "stow", "player": s.ships["dutchman"][0], "ship": "dutchman"},
               {"kind": "action", "player": s.ships["jolly"][0]}]
    s.turn = players.index(s.ships["jolly"][0])
    s.effects = [{"type": "setup", "dutchman": s.ships["dutchman"][:], "jolly": s.ships["jolly"][:],
                  "first": s.ships["jolly"][0]}]
    return s
