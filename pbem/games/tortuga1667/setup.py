"""Set-up: loyalties, vote hands and deck, the event deck and row, pawns, treasures.

Every deal is drawn card by card from what is left (labelled draws), never pre-shuffled,
so each draw can be checked against the published seed once the game is over.
"""

from __future__ import annotations

import unicodedata

from ...text import quote
from .model import (
    ARMADA, EVENT_COUNTS, HAND_SIZE, HOLDS, LOYALTY, MAX_PLAYERS, MIN_PLAYERS, ROW_SIZE,
    SHIP_ROOM, SHIPS, STARRED, STARRED_IN_PLAY, TEAMS, VARIANTS, VOTE_CARDS, State,
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
        # ... and stays one word once read as choices are read (NFKC): U+00B4 becomes a space
        # and an accent, a fullwidth comma a comma, and a choice naming that player would split
        read = unicodedata.normalize("NFKC", name).replace(",", " ").split()
        if len(read) != 1:
            raise ValueError(f"player name {quote(name)} reads as {len(read)} words once its "
                             f"letters are normalised (NFKC: {quote(' '.join(read))}); choose "
                             f"plain letters or digits")
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


def check_options(options: dict | None) -> str:
    """The set-up variant named by the options (the one option Tortuga 1667 takes)."""
    options = dict(options or {})
    unknown = sorted(set(options) - {"variant"})
    if unknown:
        raise ValueError(f"Tortuga 1667 takes only the option variant (standard or advanced), "
                         f"not {', '.join(unknown)}")
    variant = options.get("variant") or "standard"
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {quote(variant)}; use standard or advanced")
    return variant


def setup(players, options: dict | None, rng) -> State:
    players = check_players(players)
    variant = check_options(options)
    s = State(list(players), variant=variant)
    british, french, dutch = LOYALTY[len(players)]
    cards = ["british"] * british + ["french"] * french + ["dutch"] * dutch
    s.loyalty = {p: draw(cards, rng, f"setup/loyalty/{p}") for p in players}
    assert set(s.loyalty.values()) <= set(TEAMS)

    votes = list(range(len(VOTE_CARDS)))
    for k in range(HAND_SIZE):
        for p in players:
            s.hands.setdefault(p, []).append(draw(votes, rng, f"setup/hand/{p}/{k}"))
    # RULING hand-order: a hand keeps its cards in the order they were drawn (new cards last), never
    # sorted: card numbers run cannon, water, torch, so a sorted hand's `top 1`, `discard 1` or a
    # late voter's default (all public) would tell the card's face
    s.vote_deck = deal_order(votes, rng, "setup/vote-deck")

    s.events = event_box(rng)
    armada = s.events.index(ARMADA)
    s.event_deck = build_event_deck([i for i in range(len(s.events)) if i != armada], armada, rng,
                                    "setup/event-deck")
    s.row = [s.event_deck.pop(0) for _ in range(ROW_SIZE)]

    s.ships = {ship: [] for ship in SHIPS}
    s.rowboats = {ship: None for ship in SHIPS}
    s.holds = {place: {h: 0 for h in HOLDS} for place in SHIPS + ("tortuga",)}
    s.albatross = {p: [] for p in players}
    s.maps = {p: [] for p in players}
    s.seen = {p: [] for p in players}
    if variant == "advanced":
        return _advanced(s, rng)
    # pawns from the bag: Dutchman captain, Jolly Roger captain, Dutchman mate, ...
    for k, p in enumerate(deal_order(list(players), rng, "setup/pawns")):
        s.ships[SHIPS[k % 2]].append(p)
    # each captain stows their treasure, the Jolly Roger's first; then its captain starts
    s.queue = [{"kind": "stow", "player": s.ships["jolly"][0], "ship": "jolly"},
               {"kind": "stow", "player": s.ships["dutchman"][0], "ship": "dutchman"},
               {"kind": "action", "player": s.ships["jolly"][0]}]
    s.turn = players.index(s.ships["jolly"][0])
    s.effects = [{"type": "setup", "dutchman": s.ships["dutchman"][:], "jolly": s.ships["jolly"][:],
                  "first": s.ships["jolly"][0]}]
    return s


# ----------------------------------------------------------------- the advanced set-up

def _advanced(s: State, rng) -> State:
    """The optional advanced set-up: the ships' treasures lie ready (one in the Dutchman's
    British hold, one in the Jolly Roger's French hold); pawns are drawn from the bag one at
    a time, and each one's player chooses where it stands (``place ...``)."""
    s.holds["dutchman"]["british"] = s.holds["jolly"]["french"] = 1
    s.slots = {ship: [None] * SHIP_ROOM for ship in SHIPS}
    s.bag = s.players[:]
    s.effects = [{"type": "setup", "variant": "advanced"}]
    _draw_pawn(s, rng)
    return s


def _draw_pawn(s: State, rng) -> None:
    k = len(s.players) - len(s.bag)
    p = draw(s.bag, rng, f"setup/pawns/{k}")
    s.queue.insert(0, {"kind": "place", "player": p})
    s.effects.append({"type": "drawn", "player": p})


def place_options(s: State) -> list[str]:
    out = [f"place {ship} {k + 1}" for ship in SHIPS for k, p in enumerate(s.slots[ship]) if p is None]
    return out + ["place tortuga"]


def place_default(s: State) -> str:
    """RULING advanced-default: the highest free place on the ship with fewer pawns (the
    Dutchman on a tie), as the standard set-up alternates; Tortuga once both are full."""
    free = [ship for ship in SHIPS if None in s.slots[ship]]
    if not free:
        return "place tortuga"
    ship = min(free, key=lambda x: (SHIP_ROOM - s.slots[x].count(None), SHIPS.index(x)))
    return f"place {ship} {s.slots[ship].index(None) + 1}"


def place(s: State, player: str, where: list[str], rng) -> None:
    """Put the drawn pawn where its player chose; the last one ends the set-up: the pawns
    close up below each captain (RULING advanced-gaps) and the first player is named."""
    if where[0] == "tortuga":
        s.tortuga.append(player)
    else:
        s.slots[where[0]][int(where[1]) - 1] = player
    for ship in SHIPS:
        s.ships[ship] = [p for p in s.slots[ship] if p is not None]
    s.effects.append({"type": "placed", "player": player, "place": " ".join(where)})
    if s.bag:
        _draw_pawn(s, rng)
        return
    s.slots = None
    # RULING advanced-first: the Jolly Roger's captain starts; with nobody aboard it the
    # Dutchman's captain, and with both ships empty the governor of Tortuga
    first = (s.ships["jolly"] or s.ships["dutchman"] or s.tortuga)[0]
    s.turn = s.players.index(first)
    s.queue.insert(0, {"kind": "action", "player": first})
    s.effects.append({"type": "setup", "dutchman": s.ships["dutchman"][:], "jolly": s.ships["jolly"][:],
                      "tortuga": s.tortuga[:], "first": first})
