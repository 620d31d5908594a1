"""Event cards: revealing one, and what each card does (the table ``EFFECTS``).

A card's effect either happens at once or asks its revealer a decision (queued first, so
it is answered before anything else happens).
"""

from __future__ import annotations

from .board import check_albatross, maroon
from .maps import threaten
from .model import HOLDS, ROW_SIZE, SHIPS, State
from .setup import build_event_deck, deal_order


def reveal(s: State, player: str, slot: int, rng) -> None:
    """Turn over the card in ``slot`` (0-based), refill the slot from the deck, resolve it."""
    card = s.row[slot]
    s.row[slot] = s.event_deck.pop(0) if s.event_deck else None
    name = s.events[card]
    s.effects.append({"type": "reveal", "player": player, "slot": slot + 1, "card": name})
    keep, effect = EFFECTS[name]
    if keep == "discard":
        s.discard.append(card)
    effect(s, player, card, rng)


def _ask(kind):
    def effect(s, player, card, rng):
        s.queue.insert(0, {"kind": kind, "player": player})
    return effect


def _black_spot(s, player, card, rng):
    threaten(s, player, "blackspot")


def _map(s, player, card, rng):
    # the revealer holds the map only until they give it away (the next decision)
    s.maps.setdefault(player, []).append(card)
    s.queue.insert(0, {"kind": "give", "player": player, "card": card})


def _albatross(s, player, card, rng):
    s.albatross[player].append(card)
    check_albatross(s)


def _black_powder(s, player, card, rng):
    s.effects.append({"type": "powder", "aboard": [s.rowboats[ship] for ship in SHIPS if s.rowboats[ship] is not None]})
    # the Dutchman's rowboat lands first, so its pawn gets the better place on Tortuga
    for ship in SHIPS:
        if s.rowboats[ship] is not None:
            maroon(s, s.rowboats[ship], "powder")
    s.sunk = True


def _eight_bells(s, player, card, rng):
    where, ship = s.place_of(player)
    label = f"t{s.turn_no}/bells"
    if where == "ship":
        s.ships[ship] = deal_order(s.ships[ship], rng, label)
        s.effects.append({"type": "bells", "place": ship, "order": s.ships[ship][:]})
    elif where == "tortuga":
        s.tortuga = deal_order(s.tortuga, rng, label)
        s.effects.append({"type": "bells", "place": "tortuga", "order": s.tortuga[:]})
    else:  # RULING rowboat-place: a rowboat is no ship and no island; nothing happens
        s.effects.append({"type": "bells", "place": None})


def _stormy_seas(s, player, card, rng):
    where, ship = s.place_of(player)
    if where == "ship":
        s.galleon += sum(s.holds[ship].values())
        s.holds[ship] = {h: 0 for h in HOLDS}
    elif where == "tortuga":
        s.loose += sum(s.holds["tortuga"].values())
        s.holds["tortuga"] = {h: 0 for h in HOLDS}
    s.effects.append({"type": "storm", "place": ship or (where if where == "tortuga" else None)})


def _armada(s, player, card, rng):
    totals = s.team_totals()
    s.effects.append({"type": "armada", "totals": totals})
    if totals["british"] != totals["french"] or s.n % 2:
        s.discard.append(card)
    if totals["british"] != totals["french"]:
        finish(s, "british" if totals["british"] > totals["french"] else "french")
    elif s.n % 2:
        finish(s, "dutch")
    else:
        sudden_death(s, card, rng)


def finish(s: State, winner: str) -> None:
    s.phase = "over"
    s.queue = []
    s.outcome = {"winner": winner, "totals": s.team_totals()}
    s.effects.append({"type": "end", "winner": winner})


def sudden_death(s: State, armada: int, rng) -> None:
    """Even count, teams tied: the Armada leaves the game, every event card not in front of
    a player is shuffled into a new deck, five are laid out, and the first team ahead wins.
    RULING tie-break-pool: the discard pile, the row and the rest of the deck all go in."""
    s.removed.append(armada)
    pool = s.discard + [c for c in s.row if c is not None] + s.event_deck
    s.discard = []
    s.shuffles += 1
    s.event_deck = build_event_deck(pool, None, rng, f"tiebreak{s.shuffles}")
    s.row = [s.event_deck.pop(0) if s.event_deck else None for _ in range(ROW_SIZE)]
    s.phase = "sudden"
    s.effects.append({"type": "tie-break"})


# name -> (where the card goes once revealed, what it does)
EFFECTS = {
    "pistol": ("discard", _ask("shoot")),
    "marque": ("discard", _ask("marque")),
    "blackspot": ("discard", _black_spot),
    "albatross": ("keep", _albatross),
    "fountain": ("keep", _map),  # kept by its owner until used, then discarded
    "atlantis": ("keep", _map),
    "eldorado": ("keep", _map),
    "powder": ("discard", _black_powder),
    "fever": ("discard", _ask("fever")),
    "bells": ("discard", _eight_bells),
    "storm": ("discard", _stormy_seas),
    "armada": ("keep", _armada),  # ends the game, or leaves it in a tie-break
}


def swap_loyalties(s: State, player: str, other: str, rng) -> None:
    """Cabin Fever: the two loyalty cards are shuffled and dealt back, one each."""
    cards = [s.loyalty[player], s.loyalty[other]]
    first = cards.pop(rng.below(f"t{s.turn_no}/fever", 2))
    s.loyalty[player], s.loyalty[other] = first, cards[0]
    s.effects.append({"type": "fever", "player": player, "other": other,
                      "private": {player: {"loyalty": s.loyalty[player]},
                                  other: {"loyalty": s.loyalty[other]}}})
