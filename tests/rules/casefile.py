"""Rule case files: a readable TOML file per rule area, each case a prestate, the choices
made, and the expected poststate (or the expected refusal). Read by this one small parser.

    [[case]]
    name = "short description"
    ruling = "capacity"               # the ruling or rulebook example it pins
    players = ["ani", "alex", "frank"]
    start = "ani"                     # default: the first player
    enter = "roll"                    # roll | actions | move | surplus | setup (how the
                                      # engine continues from the prestate)
    choices = ["ani: B,C", "alex: none"]
    error = "illegal"                 # optional: the last choice must be refused
                                      # (invalid | illegal | turn); state must not change
    error_contains = "room for 1"
    error_code = "capacity"           # the refusal's fixed code (docs/protocol.md, section 2)
    rng = { "r1/roll1/ani/reroll1/A" = 0 }   # optional scripted draws: label -> value
    [case.state]    bag = {red = 1}, pool = {2 = 1}, centre = [...], round, step, bonus_supply
    [case.boards.ani]  boat, pirate, tortuga, fleet, crew, island, tiles, bonus = {fleet = 1},
                       dice = {A = "fleet"}, roll = {B = "board"}, held = ["C"]
    [case.expect]   dotted paths into the probe (see ``probe``) -> expected value
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pbem.games.base import IllegalChoice, InvalidChoice, NotYourTurn
from pbem.games.tortuga import engine, scoring
from pbem.games.tortuga.faces import DEFAULT_FACES, validate as validate_faces
from pbem.games.tortuga.model import ACTIONS, COLOURS, FACE_NAMES, LETTERS, TILE_VALUES, Board, State
from pbem.protocol.rng import RandomSource

ERRORS = {"invalid": InvalidChoice, "illegal": IllegalChoice, "turn": NotYourTurn}
CASES_DIR = Path(__file__).parent / "cases"


class ScriptedSource:
    """Scripted draws for the labels a case names; a fixed seeded source for the rest."""

    def __init__(self, script: dict):
        self.script = dict(script)
        self.fallback = RandomSource.for_testing("case-files")
        self.used: list[str] = []

    def below(self, label: str, n: int) -> int:
        self.used.append(label)
        if label in self.script:
            value = self.script[label]
            if isinstance(value, str):
                value = FACE_NAMES.index(value)
            assert 0 <= value < n, f"scripted {label}={value} out of range({n})"
            return value
        return self.fallback.below(label, n)


CASE_KEYS = {"name", "ruling", "players", "start", "variant", "enter", "choices", "error",
             "error_contains", "error_code", "rng", "state", "boards", "expect", "options"}
BOARD_KEYS = {"boat", "pirate", "tortuga", "fleet", "crew", "island", "tiles", "bonus", "dice",
              "roll", "held", "bonus_owed"}


def load_cases(path: Path | None = None) -> list[tuple[str, dict]]:
    # Tortuga 1667 cases (1667-*.toml) have their own reader: casefile1667.py
    paths = [path] if path else sorted(p for p in CASES_DIR.glob("*.toml") if not p.name.startswith("1667-"))
    cases = []
    for p in paths:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        for case in data.get("case", []):
            name = f"{p.stem}: {case.get('name')}"
            # keys written after a [case.boards.x] header land in that table: catch it
            unknown = set(case) - CASE_KEYS
            for board in case.get("boards", {}).values():
                unknown |= set(board) - BOARD_KEYS
            if unknown or "name" not in case or "ruling" not in case:
                raise ValueError(f"{name}: unknown keys {sorted(unknown)} or no name/ruling")
            cases.append((name, case))
    return cases


def _counts(table: dict | None, keys, default) -> list[int]:
    if table is None:
        return list(default)
    return [int(table.get(str(k), 0)) for k in keys]


def build(case: dict) -> tuple[State, ScriptedSource]:
    """The prestate of a case, continued by the engine as ``enter`` says."""
    players = tuple(case["players"])
    rng = ScriptedSource(case.get("rng", {}))
    if case.get("enter") == "setup":
        return engine.setup(players, case.get("options", {}), rng), rng
    st = case.get("state", {})
    faces = validate_faces(case.get("options", {}).get("faces") or DEFAULT_FACES)
    s = State(players, case.get("variant", "standard"), faces, players.index(case.get("start", players[0])))
    s.round = st.get("round", 1)
    s.step = st.get("step", 0)
    s.bag = _counts(st.get("bag"), COLOURS, (10, 10, 10, 5, 5))
    s.pool = _counts(st.get("pool"), TILE_VALUES, (17, 9, 4))
    s.bonus_supply = st.get("bonus_supply", 20)
    s.centre = list(st.get("centre", []))
    boards_spec = case.get("boards", {})
    s.boards = []
    for name in players:
        spec = boards_spec.get(name, {})
        b = Board(boat=spec.get("boat", 3), pirate=spec.get("pirate", 3),
                  tortuga=list(spec.get("tortuga", [])), fleet=list(spec.get("fleet", [])),
                  crew=list(spec.get("crew", [])), island=list(spec.get("island", [])),
                  tiles=list(spec.get("tiles", [])))
        for action, value in spec.get("bonus", {}).items():
            b.bonus[ACTIONS.index(action)] = value
        for letter, action in spec.get("dice", {}).items():
            b.dice[LETTERS.index(letter)] = ACTIONS.index(action)
        for letter, face in spec.get("roll", {}).items():
            b.roll[LETTERS.index(letter)] = FACE_NAMES.index(face)
        b.held = [LETTERS.index(x) for x in spec.get("held", [])]
        b.bonus_owed = spec.get("bonus_owed", 0)
        s.boards.append(b)
    s._owned = set(range(len(players)))
    enter = case.get("enter", "roll")
    if enter == "roll":
        s.phase = "roll"
        rolled = [i for i, b in enumerate(s.boards) if any(f is not None for f in b.roll)]
        if rolled:  # a sealed step is open with the given rolls
            s.step = max(s.step, 1)
            s.rolling = rolled
        s.skull_queue = [players.index(p) for p in st.get("skull_queue", [])]
        engine._advance(s, rng)
    elif enter == "actions":
        engine.enter_actions(s)
        engine._advance(s, rng)
    elif enter == "surplus":
        engine.surplus(s)
        s.phase = "done"
    elif enter == "move":
        engine.enter_move(s, rng)
        engine._advance(s, rng)
    else:
        raise ValueError(f"unknown enter {enter!r}")
    s._owned = set()
    return s, rng


def probe(s: State) -> dict:
    """The state in the readable shape expectations are written against."""
    boards = {}
    for name, b in zip(s.players, s.boards):
        boards[name] = {
            "boat": b.boat, "pirate": b.pirate, "tortuga": b.tortuga, "fleet": b.fleet,
            "crew": b.crew, "island": b.island, "tiles": sorted(b.tiles),
            "bonus": {ACTIONS[a]: v for a, v in enumerate(b.bonus) if v},
            "dice": {LETTERS[d]: ACTIONS[a] for d, a in enumerate(b.dice) if a is not None},
            "held": [LETTERS[d] for d in b.held], "bonus_owed": b.bonus_owed,
            "score": scoring.score_board(b),
        }
    return {
        "phase": s.phase, "round": s.round, "step": s.step, "stage": s.stage,
        "start": s.players[s.start], "centre": s.centre,
        "bag": dict(zip(COLOURS, s.bag)), "bag_total": sum(s.bag),
        "pool": {str(v): n for v, n in zip(TILE_VALUES, s.pool)}, "bonus_supply": s.bonus_supply,
        "boards": boards,
        "open": [f"{s.players[seat]}:{kind}" for seat, kind, _ in engine.open_requests(s)],
        "options": {f"{s.players[seat]}:{kind}": engine.options_for(s, seat, kind)
                    for seat, kind, _ in engine.open_requests(s)},
        "defaults": {f"{s.players[seat]}:{kind}": engine.default_for(s, seat, kind)
                     for seat, kind, _ in engine.open_requests(s)},
        "positions": {ACTIONS[a]: [s.players[x] if x is not None else "" for x in pos]
                      for a, pos in enumerate(s.positions)},
        "totals": {ACTIONS[a]: {s.players[i]: t for i, t in enumerate(ts) if t is not None}
                   for a, ts in enumerate(s.totals)},
        "effects": [e["type"] for e in s.effects],
        "result": scoring.result(s),
    }


def lookup(tree, path: str):
    node = tree
    for part in path.split("."):
        if isinstance(node, dict):
            if part not in node:
                raise KeyError(f"{path}: no {part!r} (have {', '.join(map(str, node))})")
            node = node[part]
        else:
            node = node[int(part)]
    return node


def run(case: dict):
    """Play a case; return (final state, error or None). Asserts a refusal changes nothing."""
    state, rng = build(case)
    error = None
    lines = case.get("choices", [])
    for i, line in enumerate(lines):
        player, _, choice = line.partition(":")
        before = state.to_json()
        try:
            state = engine.apply(state, player.strip(), choice.strip(), rng)
        except (InvalidChoice, IllegalChoice, NotYourTurn) as exc:
            assert state.to_json() == before, "a refused choice changed the state"
            if i != len(lines) - 1 or "error" not in case:
                raise
            error = exc
    return state, error
