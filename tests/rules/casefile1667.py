"""Rule case files for Tortuga 1667 (tests/rules/cases/1667-*.toml), in the same manner as
``casefile.py``: a prestate, the choices made, the expected poststate or refusal.

    [[case]]
    name = "..."; ruling = "..."          # the ruling or rulebook rule it pins
    players = ["ani", "bo", "cy", "dee"]
    enter = "setup"                       # optional: start from setup() with scripted draws
    options = { variant = "advanced" }    # optional: the set-up's options (with enter)
    choices = ["ani: peek 1,2"]
    error = "illegal"; error_code = "..."; error_contains = "..."   # optional
    rng = { "vote1/shuffle/0" = 0 }       # optional scripted draws: label -> value
    [case.state]                          # the prestate (omitted parts: defaults below)
    dutchman = ["ani", "bo"]; jolly = ["cy", "dee"]; tortuga = []   # default: seat order
    rowboats = { dutchman = "x" }; sunk = false
    holds = { dutchman = { british = 1 } }; galleon = 4; loose = 2
    loyalty = { ani = "british" }         # default: British, French, ... Dutch last if odd
    hands = { ani = ["cannon british skull"] }   # faces; default: three cards each by id
    vote_deck = ["torch french blank"]    # faces on top; the unused cards follow
    row = ["pistol", "", ...]             # five slots, "" empty; default five Black Spots
    event_deck = ["armada"]; discard = []; albatross = { ani = 1 }
    maps = { ani = ["fountain"] }         # treasure maps in front of players
    turn = "ani"                          # whose action is open (default the first player)
    [case.expect]                         # dotted paths into ``probe`` -> expected value
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from casefile import ERRORS, ScriptedSource, lookup  # noqa: F401 (re-exported for the test)
from pbem.games import tortuga1667 as game
from pbem.games.base import IllegalChoice, InvalidChoice, NotYourTurn
from pbem.games.tortuga1667 import engine, legal
from pbem.games.tortuga1667.model import HOLDS, LOYALTY, SHIPS, VOTE_CARDS, State, vote_face

CASES_DIR = Path(__file__).parent / "cases"
CASE_KEYS = {"name", "ruling", "players", "enter", "options", "choices", "error", "error_contains",
             "error_code", "rng", "state", "expect"}
STATE_KEYS = {"dutchman", "jolly", "tortuga", "rowboats", "sunk", "holds", "galleon", "loose",
              "loyalty", "hands", "vote_deck", "row", "event_deck", "discard", "albatross", "turn",
              "seen", "maps"}


def load_cases() -> list[tuple[str, dict]]:
    cases = []
    for p in sorted(CASES_DIR.glob("1667-*.toml")):
        for case in tomllib.loads(p.read_text(encoding="utf-8")).get("case", []):
            name = f"{p.stem}: {case.get('name')}"
            unknown = (set(case) - CASE_KEYS) | (set(case.get("state", {})) - STATE_KEYS)
            if unknown or "name" not in case or "ruling" not in case:
                raise ValueError(f"{name}: unknown keys {sorted(unknown)} or no name/ruling")
            cases.append((name, case))
    return cases


def _default_loyalty(players) -> dict:
    b, f, d = LOYALTY[len(players)]
    teams = [t for pair in zip(["british"] * b, ["french"] * f) for t in pair] + ["dutch"] * d
    return dict(zip(players, teams))


def build(case: dict) -> tuple[State, ScriptedSource]:
    players = list(case["players"])
    rng = ScriptedSource(case.get("rng", {}))
    if case.get("enter") == "setup":
        return game.setup(players, case.get("options"), rng), rng
    st = case.get("state", {})
    s = State(players)
    s.tortuga = list(st.get("tortuga", []))
    s.rowboats = {ship: st.get("rowboats", {}).get(ship) for ship in SHIPS}
    elsewhere = set(s.tortuga) | set(s.rowboats.values())
    aboard = [p for p in players if p not in elsewhere]
    s.ships = {"dutchman": list(st.get("dutchman", aboard[0::2][:5])),
               "jolly": list(st.get("jolly", aboard[1::2][:5]))}
    s.sunk = st.get("sunk", False)
    s.holds = {place: {h: st.get("holds", {}).get(place, {}).get(h, 0) for h in HOLDS}
               for place in SHIPS + ("tortuga",)}
    s.galleon, s.loose = st.get("galleon", 4), st.get("loose", 2)
    s.loyalty = {**_default_loyalty(players), **st.get("loyalty", {})}
    free = list(range(len(VOTE_CARDS)))

    def take(face: str) -> int:
        card = next(c for c in free if vote_face(c) == face)
        free.remove(card)
        return card

    hands = st.get("hands", {})
    s.hands = {p: [take(f) for f in hands[p]] if p in hands else [] for p in players}  # in the order written
    for p in players:
        if p not in hands:
            s.hands[p] = sorted(free.pop(0) for _ in range(3))
    s.vote_deck = [take(f) for f in st.get("vote_deck", [])] + free
    row = st.get("row", ["blackspot"] * 5)
    deck = st.get("event_deck", ["armada"])
    discard = st.get("discard", [])
    albatross = st.get("albatross", {})
    maps = st.get("maps", {})
    s.events = [n for n in row if n] + deck + discard + ["albatross"] * sum(albatross.values())
    s.events += [name for p in players for name in maps.get(p, [])]
    ids = iter(range(len(s.events)))
    s.row = [next(ids) if n else None for n in row]
    s.event_deck = [next(ids) for _ in deck]
    s.discard = [next(ids) for _ in discard]
    s.albatross = {p: [next(ids) for _ in range(albatross.get(p, 0))] for p in players}
    s.maps = {p: [next(ids) for _ in maps.get(p, [])] for p in players}
    s.seen = {p: [] for p in players}
    for p, slots in st.get("seen", {}).items():
        s.seen[p] = [{"card": s.row[x - 1], "slot": x, "turn": 0, "shuffle": 0} for x in slots]
    turn = st.get("turn", players[0])
    s.turn = players.index(turn)
    s.queue = [{"kind": "action", "player": turn}]
    return s, rng


def probe(s: State) -> dict:
    requests = game.pending(s)
    return {
        "phase": s.phase, "turn": s.players[s.turn], "turn_no": s.turn_no,
        "dutchman": s.ships["dutchman"], "jolly": s.ships["jolly"], "tortuga": s.tortuga,
        "rowboats": {k: v or "" for k, v in s.rowboats.items()}, "sunk": s.sunk,
        "holds": s.holds, "galleon": s.galleon, "loose": s.loose, "totals": s.team_totals(),
        "loyalty": s.loyalty,
        "hands": {p: [vote_face(c) for c in h] for p, h in s.hands.items()},
        "hand_sizes": {p: len(h) for p, h in s.hands.items()},
        "vote_deck_top": [vote_face(c) for c in s.vote_deck[:3]],
        "vote_deck_bottom": [vote_face(c) for c in s.vote_deck[-4:]],
        "vote_deck_size": len(s.vote_deck),
        "row": [s.events[c] if c is not None else "" for c in s.row],
        "event_deck": [s.events[c] for c in s.event_deck],
        "event_deck_size": len(s.event_deck),
        "discard": [s.events[c] for c in s.discard],
        "removed": [s.events[c] for c in s.removed],
        "box": sorted(s.events),
        "vote_table": {face: sum(face in card for card in VOTE_CARDS)
                       for face in ("cannon", "water", "torch", "british", "french", "skull", "blank")},
        "albatross": {p: len(c) for p, c in s.albatross.items()},
        "maps": {p: [s.events[c] for c in cards] for p, cards in s.maps.items() if cards},
        "slots": s.slots or {},
        "open": [f"{r.player}:{r.kind}" for r in requests],
        "sealed": [r.sealed for r in requests],
        "options": {f"{r.player}:{r.kind}": legal.options(s, r.player, r.kind, e)
                    for r, (_, _, e) in zip(requests, engine.owed(s))},
        "others": {f"{r.player}:{r.kind}": [o for o in legal.options(s, r.player, r.kind, e)
                                            if o.split()[0] not in ("peek", "reveal", "force")]
                   for r, (_, _, e) in zip(requests, engine.owed(s))},
        "defaults": {f"{r.player}:{r.kind}": r.default for r in requests},
        "last_vote": s.last_vote or {},
        "shown": len((s.last_vote or {}).get("cards", [])),
        "effects": [e["type"] for e in s.effects],
        "result": game.result(s) or {},
        "public": game.view(s, None),
        "view": {p: game.view(s, p) for p in s.players},
    }


def run(case: dict):
    """Play a case; return (final state, error or None). A refusal must change nothing."""
    state, rng = build(case)
    error = None
    lines = case.get("choices", [])
    for i, line in enumerate(lines):
        player, _, choice = line.partition(":")
        before = state.to_json()
        try:
            state = game.apply(state, player.strip(), choice.strip(), rng)
        except (InvalidChoice, IllegalChoice, NotYourTurn) as exc:
            assert state.to_json() == before, "a refused choice changed the state"
            if i != len(lines) - 1 or "error" not in case:
                raise
            error = exc
    return state, error
