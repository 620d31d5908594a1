"""Tortuga state: plain data with a lossless JSON form.

State objects are never mutated once handed out. ``engine.apply`` works on a copy made
with ``State.copy`` (boards are copied on first write, see ``State.board``) and returns it;
that keeps the engine fast without giving up purity at its boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ACTIONS = ("fleet", "crew", "hunt", "board", "raid")
FLEET, CREW, HUNT, BOARD, RAID = range(5)
SKULL = 5  # face index of the skull; faces 0..4 show the actions in ACTIONS order
FACE_NAMES = ACTIONS + ("skull",)
LETTERS = "ABCDE"
COLOURS = ("red", "blue", "yellow", "white", "purple")
COLOUR_ABBREV = {"r": "red", "b": "blue", "y": "yellow", "w": "white", "p": "purple"}
BAG_START = (10, 10, 10, 5, 5)
TILE_VALUES = (1, 2, 3)
POOL_START = (17, 9, 4)
BONUS_TILES = 20
TRACK_MIN, TRACK_MAX, TRACK_START = 1, 8, 3
DICE_ROOM = 5  # fleet, crew and hunt spaces hold up to five dice
END_CHESTS = {"standard": 6, "long": 8}


_new_state = object.__new__


def plain_copy(value):
    """A deep copy of JSON-plain data, so no output shares anything mutable with a state."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def capacity(box: int) -> int:
    """Chests (and BOARD/RAID dice) a token on ``box`` allows: 1 | 2-3 | 4-5 | 6-8."""
    if box <= 1:
        return 1
    if box <= 3:
        return 2
    if box <= 5:
        return 3
    return 4


CLOCKWISE = {n: tuple(tuple((start + k) % n for k in range(n)) for start in range(n)) for n in range(1, 10)}
CAPACITY = (1, 1, 2, 2, 3, 3, 4, 4, 4)  # by box 0..8 (box 0 never occurs)


def clamp(box: int) -> int:
    return TRACK_MIN if box < TRACK_MIN else TRACK_MAX if box > TRACK_MAX else box


@dataclass(slots=True)
class Board:
    """One player's board. Areas are ordered left to right."""

    boat: int = TRACK_START
    pirate: int = TRACK_START
    tortuga: list = field(default_factory=list)
    fleet: list = field(default_factory=list)
    crew: list = field(default_factory=list)
    island: list = field(default_factory=list)
    tiles: list = field(default_factory=list)  # coin values: secret to everyone else
    bonus: list = field(default_factory=lambda: [0] * 5)  # per action: 0 none, 1 or 2
    dice: list = field(default_factory=lambda: [None] * 5)  # action index per die, or None
    roll: list = field(default_factory=lambda: [None] * 5)  # face per unassigned die
    held: list = field(default_factory=list)  # dice selected as skulls, awaiting a turn
    bonus_owed: int = 0

    def copy(self) -> "Board":
        return Board(
            self.boat, self.pirate, self.tortuga[:], self.fleet[:], self.crew[:],
            self.island[:], self.tiles[:], self.bonus[:], self.dice[:], self.roll[:],
            self.held[:], self.bonus_owed,
        )

    def unassigned(self) -> list[int]:
        dice, held = self.dice, self.held
        if held:
            return [i for i in range(5) if dice[i] is None and i not in held]
        return [i for i in range(5) if dice[i] is None]

    def dice_on(self, action: int) -> int:
        return self.dice.count(action)

    def room(self, action: int) -> int:
        if action == BOARD:
            limit = CAPACITY[self.boat]
        elif action == RAID:
            limit = CAPACITY[self.pirate]
        else:
            limit = DICE_ROOM
        used = self.dice.count(action)
        return limit - used if used < limit else 0

    def to_json(self) -> dict:
        return {
            "boat": self.boat, "pirate": self.pirate, "tortuga": self.tortuga[:],
            "fleet": self.fleet[:], "crew": self.crew[:], "island": self.island[:],
            "tiles": self.tiles[:], "bonus": self.bonus[:], "dice": self.dice[:],
            "roll": self.roll[:], "held": self.held[:], "bonus_owed": self.bonus_owed,
        }

    @classmethod
    def from_json(cls, d: dict) -> "Board":
        return cls(
            d["boat"], d["pirate"], list(d["tortuga"]), list(d["fleet"]), list(d["crew"]),
            list(d["island"]), list(d["tiles"]), list(d["bonus"]), list(d["dice"]),
            list(d["roll"]), list(d["held"]), d["bonus_owed"],
        )


@dataclass(slots=True)
class State:
    players: tuple
    variant: str
    faces: tuple  # faces[die][action] -> value 1..5
    start: int  # seat index of the start player
    round: int = 1
    phase: str = "roll"  # roll | actions | move | over
    step: int = 0  # sealed roll step within the round
    stage: str = ""  # actions: fch | board1 | board2 | raid1 | raid2
    bag: list = field(default_factory=lambda: list(BAG_START))
    pool: list = field(default_factory=lambda: list(POOL_START))
    bonus_supply: int = BONUS_TILES
    centre: list = field(default_factory=list)
    boards: list = field(default_factory=list)
    rolling: list = field(default_factory=list)  # seats in the current sealed step
    sealed: dict = field(default_factory=dict)  # seat(str) -> revealed choice, this step
    skull_queue: list = field(default_factory=list)  # seats owing a skull turn, in order
    open_select: list = field(default_factory=list)  # seats owing an open select (reroll)
    positions: list = field(default_factory=list)  # per action: [1st seat|None, 2nd|None]
    totals: list = field(default_factory=list)  # per action: per seat total or None
    decisions: dict = field(default_factory=dict)  # "fleet:1" -> choice (fch batch)
    targets: dict = field(default_factory=dict)  # "board"/"raid" -> seat targeted by 1st
    orders: dict = field(default_factory=dict)  # seat(str) -> order choice (move phase)
    effects: list = field(default_factory=list)  # what the last apply did, for summaries
    _owned: set = field(default_factory=set, repr=False, compare=False)

    def copy(self) -> "State":
        """A copy to change: lists copied one level down (boards on first write, see
        ``board``). Built slot by slot: this runs on every apply. Shared, not copied: what
        the rules never change in place but replace (``rolling``, ``positions``,
        ``totals``), and the dicts of choices made (``sealed``, ``decisions``, ``targets``,
        ``orders``), which the rules replace with a changed copy when they add one."""
        new = _new_state(State)
        new.players, new.variant, new.faces, new.start = self.players, self.variant, self.faces, self.start
        new.round, new.phase, new.step, new.stage = self.round, self.phase, self.step, self.stage
        new.bag, new.pool, new.bonus_supply = self.bag[:], self.pool[:], self.bonus_supply
        new.centre, new.boards, new.rolling = self.centre[:], self.boards[:], self.rolling
        new.sealed, new.skull_queue, new.open_select = self.sealed, self.skull_queue[:], self.open_select[:]
        new.positions, new.totals = self.positions, self.totals
        new.decisions, new.targets, new.orders = self.decisions, self.targets, self.orders
        new.effects, new._owned = [], set()
        return new

    def board(self, seat: int) -> Board:
        """The board of ``seat`` for writing: copied the first time it is touched."""
        if seat not in self._owned:
            self.boards[seat] = self.boards[seat].copy()
            self._owned.add(seat)
        return self.boards[seat]

    @property
    def n(self) -> int:
        return len(self.players)

    def seat_of(self, player: str) -> int:
        return self.players.index(player)

    def clockwise(self) -> tuple[int, ...]:
        """Seats in order from the start player, clockwise."""
        return CLOCKWISE[len(self.players)][self.start]

    def to_json(self) -> dict:
        return {
            "game": "tortuga", "players": list(self.players), "variant": self.variant,
            "faces": [list(row) for row in self.faces], "start": self.start,
            "round": self.round, "phase": self.phase, "step": self.step, "stage": self.stage,
            "bag": self.bag[:], "pool": self.pool[:], "bonus_supply": self.bonus_supply,
            "centre": self.centre[:], "boards": [b.to_json() for b in self.boards],
            "rolling": self.rolling[:], "sealed": dict(self.sealed),
            "skull_queue": self.skull_queue[:], "open_select": self.open_select[:],
            "positions": [p[:] for p in self.positions],
            "totals": [t[:] for t in self.totals], "decisions": dict(self.decisions),
            "targets": dict(self.targets), "orders": dict(self.orders),
            "effects": plain_copy(self.effects),
        }

    @classmethod
    def from_json(cls, d: dict) -> "State":
        return cls(
            tuple(d["players"]), d["variant"], tuple(tuple(r) for r in d["faces"]),
            d["start"], d["round"], d["phase"], d["step"], d["stage"], list(d["bag"]),
            list(d["pool"]), d["bonus_supply"], list(d["centre"]),
            [Board.from_json(b) for b in d["boards"]], list(d["rolling"]),
            dict(d["sealed"]), list(d["skull_queue"]), list(d["open_select"]),
            [list(p) for p in d["positions"]], [list(t) for t in d["totals"]],
            dict(d["decisions"]), dict(d["targets"]), dict(d["orders"]),
            plain_copy(d["effects"]),
        )
