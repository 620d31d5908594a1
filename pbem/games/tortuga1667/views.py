"""What one player, or the public, may see of a state: the only way state leaves the rules.

Secret to everyone but their owner: loyalty cards (until the game is over), vote cards in
hands, which card each voter played, face-down event cards and the order of both decks,
what a player saw when peeking, the card a Letter of Marque put on the vote deck. Effects
carry their secret part under ``private`` keyed by player; a viewer sees only their own.
"""

from __future__ import annotations

import json

from .model import SHIPS, State, vote_face


def _effects(effects: list, viewer: str | None) -> list[dict]:
    out = []
    for effect in effects:
        shown = {k: v for k, v in effect.items() if k != "private"}
        mine = effect.get("private", {}).get(viewer) if viewer is not None else None
        if mine is not None:
            shown["private"] = mine
        out.append(json.loads(json.dumps(shown)))
    return out


def seen_by(s: State, player: str) -> list[dict]:
    """A player's peeks, oldest first, with whether the card still lies where they saw it."""
    out = []
    for e in s.seen[player]:
        there = e["shuffle"] == s.shuffles and s.row[e["slot"] - 1] == e["card"]
        out.append({"card": s.events[e["card"]], "slot": e["slot"], "turn": e["turn"], "still_there": there})
    return out


def view(s: State, viewer: str | None = None) -> dict:
    """Everything ``viewer`` may see (None: the public)."""
    row = [{"slot": k + 1, "card": "down" if c is not None else None} for k, c in enumerate(s.row)]
    data = {
        "game": "tortuga1667",
        "viewer": viewer,
        "players": s.players[:],
        "phase": s.phase,
        "turn": s.players[s.turn],
        "turn_no": s.turn_no,
        "ships": {ship: s.ships[ship][:] for ship in SHIPS},
        "tortuga": s.tortuga[:],
        "rowboats": dict(s.rowboats),
        "rowboats_sunk": s.sunk,
        "holds": json.loads(json.dumps(s.holds)),
        "galleon": s.galleon,
        "tortuga_loose": s.loose,
        "row": row,
        "event_deck": len(s.event_deck),
        "discard": [s.events[c] for c in s.discard],
        "removed": [s.events[c] for c in s.removed],
        "albatross": {p: len(cards) for p, cards in s.albatross.items()},
        "maps": {p: [s.events[c] for c in cards] for p, cards in s.maps.items()},
        "variant": s.variant,
        "hand_sizes": {p: len(h) for p, h in s.hands.items()},
        "vote_deck": len(s.vote_deck),
        "vote": None,
        "last_vote": json.loads(json.dumps(s.last_vote)),
        "waiting": _waiting(s),
        "effects": _effects(s.effects, viewer),
    }
    if s.slots is not None:  # the advanced set-up is placing pawns
        data["placing"] = {"slots": json.loads(json.dumps(s.slots)), "bag": len(s.bag)}
    if s.vote is not None:
        data["vote"] = {k: s.vote[k] for k in ("kind", "caller", "ship")}
        data["vote"]["voters"] = s.vote["voters"][:]
        data["vote"]["voted"] = [p for p in s.vote["voters"] if p in s.vote["cards"]]
    if s.phase == "over":
        data["loyalty"] = dict(s.loyalty)
        data["outcome"] = json.loads(json.dumps(s.outcome))
    if viewer in s.players:
        data["my_loyalty"] = s.loyalty[viewer]
        data["hand"] = [{"n": k + 1, "card": vote_face(c)} for k, c in enumerate(s.hands[viewer])]
        data["seen"] = seen_by(s, viewer)
        for e in data["seen"]:
            if e["still_there"]:
                data["row"][e["slot"] - 1]["known"] = e["card"]
        if s.vote is not None and viewer in s.vote["cards"]:
            data["vote"]["mine"] = " + ".join(vote_face(c) for c in s.vote["cards"][viewer])
    return data


def _waiting(s: State) -> list[str]:
    from .engine import owed  # noqa: PLC0415 (engine imports nothing from here)
    return [f"{p}:{kind}" for p, kind, _ in owed(s)]
