"""The three treasure maps: Fountain of Youth, Atlantis, El Dorado.

The seed lets an owner use a map at any moment. By mail that would need a message out of
turn, so pbem asks the owner an open question at each moment where a map could change
something, and only then (docs/rules-1667.md, Treasure maps):

    fountain   before a Black Spot, a Pistol or a captain maroons its owner
    atlantis   when a captain maroons its owner; when a vote is called on the other ship;
               at the start of the owner's own turn (an option of the action, not an action)
    eldorado   in a vote: two cards instead of one (an option of the vote)

Every question's default keeps the map, so a late owner changes nothing.
"""

from __future__ import annotations

from .board import board_ship, maroon
from .model import SHIP_ROOM, SHIPS, State, vote_face

# the marooning causes the Fountain of Youth can prevent
FOUNTAIN_CAUSES = ("blackspot", "pistol", "captain")


def give(s: State, giver: str, owner: str, card: int) -> None:
    """A revealed map goes to its owner; El Dorado brings them a vote card from the top of
    the vote deck at once."""
    s.maps[giver].remove(card)
    s.maps.setdefault(owner, []).append(card)
    name = s.events[card]
    s.effects.append({"type": "map-given", "player": giver, "owner": owner, "map": name})
    if name == "eldorado" and s.vote_deck:
        drawn = s.vote_deck.pop(0)
        s.hands[owner] = s.hands[owner] + [drawn]
        s.effects.append({"type": "eldorado-draw", "player": owner,
                          "private": {owner: {"drew": vote_face(drawn)}}})


def use(s: State, player: str, name: str) -> None:
    """A used map leaves its owner for the discard pile."""
    card = s.holds_map(player, name)
    s.maps[player].remove(card)
    s.discard.append(card)
    s.effects.append({"type": "map-used", "player": player, "map": name})


def other_ship(ship: str) -> str:
    return SHIPS[1 - SHIPS.index(ship)]


def atlantis_target(s: State, player: str) -> str | None:
    """The ship Atlantis would carry ``player`` to now: the other ship, if they own the map,
    stand on a ship, and the other ship has room; else None."""
    if s.holds_map(player, "atlantis") is None:
        return None
    where, ship = s.place_of(player)
    if where != "ship":
        return None
    target = other_ship(ship)
    return target if len(s.ships[target]) < SHIP_ROOM else None


def sail(s: State, player: str) -> None:
    """Atlantis: to the last place of the other ship (the Albatross is checked on boarding)."""
    target = atlantis_target(s, player)
    use(s, player, "atlantis")
    board_ship(s, player, target, "atlantis")


def _maroon_matters(s: State, player: str) -> bool:
    """False only for a pawn already last on Tortuga with no vote card left to lose."""
    return not (s.tortuga and s.tortuga[-1] == player and not s.hands[player])


def threaten(s: State, player: str, why: str, by: str | None = None) -> None:
    """A Black Spot, a Pistol or a captain would maroon ``player``: ask the owner of a map
    that could save them first (Fountain of Youth, then Atlantis), else maroon."""
    if why in FOUNTAIN_CAUSES and s.holds_map(player, "fountain") is not None \
            and _maroon_matters(s, player):
        s.queue.insert(0, {"kind": "fountain", "player": player, "why": why, "by": by})
    elif why == "captain" and atlantis_target(s, player):
        s.queue.insert(0, {"kind": "atlantis", "player": player, "why": "maroon", "by": by})
    else:
        maroon(s, player, why)


def answer_fountain(s: State, player: str, choice: str, entry: dict) -> None:
    if choice == "fountain use":
        use(s, player, "fountain")
        by = {"by": entry["by"]} if entry.get("by") else {}  # who shot, or which captain
        s.effects.append({"type": "spared", "player": player, "why": entry["why"], **by})
    elif entry["why"] == "captain" and atlantis_target(s, player):
        s.queue.insert(0, {"kind": "atlantis", "player": player, "why": "maroon", "by": entry["by"]})
    else:
        maroon(s, player, entry["why"])


def answer_atlantis_maroon(s: State, player: str, choice: str, entry: dict) -> None:
    """RULING atlantis-maroon: sailing away from a captain's maroon gives the captain their
    action back: they are asked for an action again, in the same turn."""
    if choice == "atlantis go":
        sail(s, player)
        s.queue.insert(0, {"kind": "action", "player": entry["by"]})
    else:
        maroon(s, player, "captain")


def vote_question(s: State, ship: str | None) -> str | None:
    """Who is asked whether to sail to a ship where a vote was just called: the Atlantis
    owner standing on the other ship, if the voting ship has room."""
    if ship is None:
        return None
    for p in s.ships[other_ship(ship)]:
        if atlantis_target(s, p) == ship:
            return p
    return None
