"""Tortuga 1667 state and card tables: plain data with a lossless JSON form.

The rules never change a state they were given. ``engine.apply`` changes and returns
``state._next()``, a copy on write: its lists and dicts are those of ``state`` until the
apply first reads one, which then gets its own copy; whatever the apply never touched stays
shared once it returns (nobody changes a state the rules returned: ``State.copy``, a deep
copy, gives one to change by hand). Both are written out for the shape each field has (a
list of card ids, a dict of lists, ...); the free-form fields (the queue, the votes, the
outcome, effects) go through ``_plain``.

Tables here are data (see docs/rules-1667.md for the rulings behind the marked ones):
the loyalty table by player count, the vote deck, and the event deck.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

SHIPS = ("dutchman", "jolly")  # the Flying Dutchman and the Jolly Roger
SHIP_NAMES = {"dutchman": "Flying Dutchman", "jolly": "Jolly Roger"}
HOLDS = ("british", "french")
TEAMS = ("british", "french", "dutch")
SHIP_ROOM = 5
HAND_SIZE = 3
ROW_SIZE = 5
GALLEON_START, TORTUGA_START = 4, 2
TREASURES = GALLEON_START + TORTUGA_START + len(SHIPS)  # one per captain at set-up

# players -> (British, French, Dutch) loyalty cards
LOYALTY = {4: (2, 2, 0), 5: (2, 2, 1), 6: (3, 3, 0), 7: (3, 3, 1), 8: (4, 4, 0), 9: (4, 4, 1)}
MIN_PLAYERS, MAX_PLAYERS = min(LOYALTY), max(LOYALTY)

# RULING vote-deck: 40 vote cards, 12 cannons, 12 water, 16 torches (30/30/40 per cent);
# under each top, half the cards carry a British flag and half a skull, crossed evenly.
ATTACK_TOPS = (("cannon", 12), ("water", 12), ("torch", 16))


def _vote_cards() -> tuple[tuple[str, str, str], ...]:
    cards = []
    for top, count in ATTACK_TOPS:
        for k in range(count):
            flag = "british" if k % 2 == 0 else "french"
            mark = "skull" if (k // 2) % 2 == 0 else "blank"
            cards.append((top, flag, mark))
    return tuple(cards)


VOTE_CARDS = _vote_cards()  # card id -> (attack top, brawl flag, mutiny mark)


def vote_face(card: int) -> str:
    return " ".join(VOTE_CARDS[card])


# Event cards: name -> copies in the box (6 helpful, 6 harmful, 3 treasure maps). Starred
# cards: three are drawn per game. With the Armada a game's event deck has 19 cards.
# RULING starred-cards: only the four starred cards the rules describe are in the box.
MAPS = ("fountain", "atlantis", "eldorado")
EVENT_COUNTS = {"pistol": 2, "marque": 4, "blackspot": 3, "albatross": 3,
                "fountain": 1, "atlantis": 1, "eldorado": 1}
STARRED = ("powder", "fever", "bells", "storm")
STARRED_IN_PLAY = 3
ARMADA = "armada"
EVENT_NAMES = {
    "pistol": "Pistol", "marque": "Letter of Marque", "blackspot": "Black Spot",
    "albatross": "Albatross", "fountain": "Fountain of Youth", "atlantis": "Atlantis",
    "eldorado": "El Dorado", "powder": "Black Powder", "fever": "Cabin Fever",
    "bells": "Eight Bells", "storm": "Stormy Seas", "armada": "Spanish Armada",
}
VARIANTS = ("standard", "advanced")  # the option "variant": the set-up (docs/rules-1667.md)


def _plain(value):
    """A deep copy of JSON-plain data, as a JSON round trip makes it (tuples become lists)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return [v if type(v) in _ATOMS else _plain(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _ATOMS else _plain(v) for k, v in value.items()}
    return value


_ATOMS = frozenset((int, str, bool, type(None), float))
_new_state = object.__new__


@dataclass
class State:
    players: list
    loyalty: dict = field(default_factory=dict)  # player -> british | french | dutch
    hands: dict = field(default_factory=dict)  # player -> sorted vote card ids
    vote_deck: list = field(default_factory=list)  # top first
    ships: dict = field(default_factory=dict)  # ship -> players, captain first
    tortuga: list = field(default_factory=list)  # governor first
    rowboats: dict = field(default_factory=dict)  # ship -> the player in its rowboat, or None
    sunk: bool = False  # Black Powder sank both rowboats
    holds: dict = field(default_factory=dict)  # dutchman | jolly | tortuga -> {british, french}
    galleon: int = GALLEON_START
    loose: int = TORTUGA_START  # treasures on Tortuga outside its holds
    events: list = field(default_factory=list)  # event card id -> name
    event_deck: list = field(default_factory=list)  # top first
    row: list = field(default_factory=list)  # five slots: event card id or None
    discard: list = field(default_factory=list)  # revealed event cards, oldest first
    removed: list = field(default_factory=list)  # out of play (the Armada in a tie-break)
    albatross: dict = field(default_factory=dict)  # player -> Albatross card ids in front of them
    maps: dict = field(default_factory=dict)  # player -> treasure map card ids they own
    variant: str = "standard"  # the set-up: standard | advanced
    slots: dict | None = None  # advanced set-up only: ship -> five places, player or None
    bag: list = field(default_factory=list)  # advanced set-up: pawns not drawn yet (seat order)
    seen: dict = field(default_factory=dict)  # player -> [{card, slot, turn, shuffle}]
    shuffles: int = 0  # how often the event row was rebuilt (a peek is true only within one)
    turn: int = 0  # seat whose turn it is
    turn_no: int = 1
    vote_no: int = 0
    queue: list = field(default_factory=list)  # open decisions, the first one is asked now
    vote: dict | None = None  # the vote being collected
    last_vote: dict | None = None  # public: kind, shuffled faces, outcome
    phase: str = "play"  # play | sudden (even-count tie-break) | over
    outcome: dict | None = None
    effects: list = field(default_factory=list)  # what the last apply did

    def copy(self) -> "State":
        """A deep copy: nothing in it is shared with this state."""
        return self._copy(True)

    def _next(self) -> "State":
        """The state ``apply`` changes: this one's values, its lists and dicts copied as the
        apply first reads them (``_Shared``), no effects yet. ``_close`` ends the changing."""
        mine = self.__dict__
        if "_from" in mine:
            raise RuntimeError("a state still being changed by apply cannot be copied on write")
        new = _new_state(State)
        d = new.__dict__
        for name in _SCALARS:
            d[name] = mine[name]
        d["effects"] = []
        d["_from"] = {name: mine[name] for name in _SHARED_NAMES}
        return new

    def _close(self) -> "State":
        """The apply is done: the parts it never read are those of the state it came
        from, shared as they are (neither state is ever changed again)."""
        d = self.__dict__
        shared = d.pop("_from")
        shared.update(d)  # what the apply copied or set, over what it left alone
        d.update(shared)
        return self

    def _copy(self, effects: bool) -> "State":
        # Every container is copied: the lists and dicts of atoms by list()/dict() (in C),
        # the nested ones one level down, the free-form ones by _plain. ``effects`` False
        # leaves the copy's effects empty (apply starts them afresh). A test checks over
        # whole games that this equals _plain field by field and shares no container.
        new = _new_state(State)
        new.players = list(self.players)
        new.loyalty = dict(self.loyalty)
        new.hands = {k: list(v) for k, v in self.hands.items()}
        new.vote_deck = list(self.vote_deck)
        new.ships = {k: list(v) for k, v in self.ships.items()}
        new.tortuga = list(self.tortuga)
        new.rowboats = dict(self.rowboats)
        new.sunk = self.sunk
        new.holds = {k: dict(v) for k, v in self.holds.items()}
        new.galleon = self.galleon
        new.loose = self.loose
        new.events = list(self.events)
        new.event_deck = list(self.event_deck)
        new.row = list(self.row)
        new.discard = list(self.discard)
        new.removed = list(self.removed)
        new.albatross = {k: list(v) for k, v in self.albatross.items()}
        new.maps = {k: list(v) for k, v in self.maps.items()}
        new.variant = self.variant
        slots = self.slots
        new.slots = None if slots is None else {k: list(v) for k, v in slots.items()}
        new.bag = list(self.bag)
        new.seen = {k: [dict(e) for e in v] for k, v in self.seen.items()}
        new.shuffles = self.shuffles
        new.turn = self.turn
        new.turn_no = self.turn_no
        new.vote_no = self.vote_no
        new.queue = _plain(self.queue)
        new.vote = _plain(self.vote)
        new.last_vote = _plain(self.last_vote)
        new.phase = self.phase
        new.outcome = _plain(self.outcome)
        new.effects = _plain(self.effects) if effects else []
        return new

    def to_json(self) -> dict:
        data = {"game": "tortuga1667"}
        for name in _FIELD_NAMES:
            data[name] = _plain(getattr(self, name))  # a deep, plain copy, as JSON would make it
        return data

    @classmethod
    def from_json(cls, data: dict) -> "State":
        data = _plain(data)  # nothing shared with the caller's data
        data.pop("game", None)
        return cls(**data)

    # --------------------------------------------------------------- where pawns are

    @property
    def round(self) -> int:
        """The protocol's round: the turn number (a vote's requests carry it)."""
        return self.turn_no

    @property
    def step(self) -> int:
        """The protocol's step: the number of the latest vote (counted over the game)."""
        return self.vote_no

    @property
    def n(self) -> int:
        return len(self.players)

    def place_of(self, player: str) -> tuple[str, str | None]:
        """("ship", ship) | ("tortuga", None) | ("rowboat", ship)."""
        for ship in SHIPS:
            if player in self.ships[ship]:
                return "ship", ship
        if player in self.tortuga:
            return "tortuga", None
        for ship in SHIPS:
            if self.rowboats[ship] == player:
                return "rowboat", ship
        raise AssertionError(f"{player} is nowhere")

    def ranks(self, player: str) -> list[str]:
        """captain, mate, boy (several may hold at once), governor."""
        where, ship = self.place_of(player)
        if where == "tortuga":
            return ["governor"] if self.tortuga[0] == player else []
        if where != "ship":
            return []
        crew = self.ships[ship]
        out = []
        if crew[0] == player:
            out.append("captain")
        if len(crew) > 1 and crew[1] == player:
            out.append("mate")
        if crew[-1] == player:
            out.append("boy")
        return out

    def holds_map(self, player: str, name: str) -> int | None:
        """The card id of the map ``name`` that ``player`` owns, or None."""
        for card in self.maps.get(player, []):
            if self.events[card] == name:
                return card
        return None

    def team_totals(self) -> dict:
        return {team: sum(self.holds[p][team] for p in self.holds) for team in HOLDS}


_FIELD_NAMES = tuple(f.name for f in fields(State))


def _lists(v: dict) -> dict:
    return {k: list(x) for k, x in v.items()}


# how each list or dict field is copied (the shapes of _copy); the rest are plain values
_COPIERS = {
    "players": list, "loyalty": dict, "hands": _lists, "vote_deck": list, "ships": _lists,
    "tortuga": list, "rowboats": dict, "holds": lambda v: {k: dict(x) for k, x in v.items()},
    "events": list, "event_deck": list, "row": list, "discard": list, "removed": list,
    "albatross": _lists, "maps": _lists, "slots": lambda v: None if v is None else _lists(v),
    "bag": list, "seen": lambda v: {k: [dict(e) for e in x] for k, x in v.items()},
    "queue": _plain, "vote": _plain, "last_vote": _plain, "outcome": _plain, "effects": _plain,
}
_SCALARS = tuple(name for name in _FIELD_NAMES if name not in _COPIERS)
_SHARED_NAMES = tuple(name for name in _COPIERS if name != "effects")  # apply starts effects afresh


class _Shared:
    """A list or dict field of a state made by ``State._next`` that the apply has not read
    yet: its value is still the object of the state it came from, so the first read
    copies it. The copy then sits in the instance's own ``__dict__``, which Python looks
    in first: a field comes through here at most once, and only while the apply runs."""

    __slots__ = ("name", "copy")

    def __init__(self, name: str, copy) -> None:
        self.name, self.copy = name, copy

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        try:
            value = self.copy(d["_from"][self.name])
        except KeyError:
            raise AttributeError(self.name) from None
        d[self.name] = value
        return value


for _name, _copier in _COPIERS.items():
    if _name != "effects":
        setattr(State, _name, _Shared(_name, _copier))
del _name, _copier
