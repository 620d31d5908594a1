"""Pawns on the board: marooning, boarding a ship, the Albatross, rowboats."""

from __future__ import annotations

from .model import SHIP_ROOM, SHIPS, State


def take_off(s: State, player: str) -> tuple[str, str | None]:
    """Lift a pawn from where it stands (those below it move up); says where it was."""
    where, ship = s.place_of(player)
    if where == "ship":
        s.ships[ship].remove(player)
    elif where == "tortuga":
        s.tortuga.remove(player)
    else:
        s.rowboats[ship] = None
    return where, ship


def maroon(s: State, player: str, why: str) -> None:
    """Send a pawn to the last place on Tortuga. From Tortuga itself it also costs a vote
    card, which its owner chooses (a decision asked next)."""
    where, ship = take_off(s, player)
    s.tortuga.append(player)
    s.effects.append({"type": "maroon", "player": player, "from": ship or where, "why": why})
    if where == "tortuga" and s.hands[player]:
        s.queue.insert(0, {"kind": "discard", "player": player})


def board_ship(s: State, player: str, ship: str, why: str) -> None:
    """Put a pawn last on a ship (first if the ship is empty), then check the Albatross."""
    assert len(s.ships[ship]) < SHIP_ROOM
    take_off(s, player)
    s.ships[ship].append(player)
    s.effects.append({"type": "board", "player": player, "ship": ship, "why": why})
    check_albatross(s)


def albatrosses(s: State, ship: str) -> int:
    return sum(len(s.albatross[p]) for p in s.ships[ship])


def check_albatross(s: State) -> None:
    """Two Albatross cards on one ship maroon its whole crew, the lowest rank first (so the
    cabin boy lands highest on Tortuga and the captain lowest)."""
    for ship in SHIPS:
        if albatrosses(s, ship) >= 2:
            for p in reversed(s.ships[ship][:]):
                maroon(s, p, "albatross")


def rowboat_moves(s: State, player: str) -> list[str]:
    """Where a pawn may go with the move action, as canonical choices.

    RULING rowboats: each rowboat lies between its ship and Tortuga; from a ship one may
    step into that ship's rowboat, from Tortuga into either, and from a rowboat onto its
    ship (if it has room) or last onto Tortuga."""
    if s.sunk:
        return []
    where, ship = s.place_of(player)
    if where == "rowboat":
        out = [f"move {ship}"] if len(s.ships[ship]) < SHIP_ROOM else []
        return out + ["move tortuga"]
    boats = [ship] if where == "ship" else list(SHIPS)
    return [f"move rowboat {b}" for b in boats if s.rowboats[b] is None]


def do_move(s: State, player: str, target: list[str]) -> None:
    if target[0] == "rowboat":
        take_off(s, player)
        s.rowboats[target[1]] = player
        s.effects.append({"type": "rowboat", "player": player, "ship": target[1]})
    elif target[0] == "tortuga":
        take_off(s, player)
        s.tortuga.append(player)
        s.effects.append({"type": "land", "player": player})
    else:
        board_ship(s, player, target[0], "rowboat")
