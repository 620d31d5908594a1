"""The legal choices of each open decision, as canonical text, and the NMR defaults.

Kinds of decision (the word a choice starts with is in brackets):
    stow     set-up: a captain stows their treasure            (stow HOLD)
    action   a turn                                            (peek, reveal, force, move,
                                                                attack, maroon, mutiny,
                                                                shift, brawl)
    pick     forced to reveal one of two pointed-at cards      (pick SLOT)
    vote     a sealed vote card from the hand                  (vote N)
    loot     after a successful attack                         (stow HOLD | steal ...)
    shoot    Pistol: whom to maroon                            (shoot PLAYER)
    marque   Letter of Marque: which option                    (marque draw | marque send ...)
    top      Letter of Marque: the card put on the vote deck   (top N)
    fever    Cabin Fever: whose loyalty to shuffle with yours  (fever PLAYER)
    discard  marooned from Tortuga: the vote card given up     (discard N)
    give     a treasure map revealed: to whom it goes          (give PLAYER)
    fountain Fountain of Youth's owner about to be marooned    (fountain use | fountain keep)
    atlantis Atlantis's owner: a captain maroons them, or a    (atlantis go | atlantis stay)
             vote is called on the other ship
    place    advanced set-up: where the drawn pawn stands      (place SHIP N | place tortuga)

El Dorado adds options to ``vote`` (``vote A,B``); Atlantis adds ``atlantis go`` to its
owner's ``action`` (it is not their action: they are asked again). Every default keeps
the map (RULING map-default).
"""

from __future__ import annotations

from functools import lru_cache

from .board import rowboat_moves
from .maps import atlantis_target
from .model import HOLDS, SHIP_ROOM, SHIPS, State
from .setup import place_default, place_options
from .votes import loot_options

SYNTAX = {
    "stow": "stow british or stow french",
    "action": "peek A,B | reveal A | force PLAYER A,B | move rowboat | move SHIP|tortuga | "
              "attack | maroon PLAYER | mutiny | shift british|french | brawl | atlantis go (with "
              "Atlantis: not an action) (A, B: row slots 1-5)",
    "pick": "pick A (one of the two slots pointed at)",
    "vote": "vote N (N: the number of a card in your hand; vote A,B: two cards with El Dorado)",
    "loot": "stow HOLD, or steal SHIP HOLD to HOLD once the galleon is empty",
    "shoot": "shoot PLAYER (anyone, yourself included)",
    "marque": "marque draw, or marque send PLAYER SHIP (a player on Tortuga or in a rowboat)",
    "top": "top N (the number of the card in your hand to put on the vote deck)",
    "fever": "fever PLAYER (another player)",
    "discard": "discard N (the number of the card in your hand to give up)",
    "give": "give PLAYER (another player: the map's new owner)",
    "fountain": "fountain use (stay where you are; the map is discarded) or fountain keep",
    "atlantis": "atlantis go (to the last place of the other ship; the map is discarded) or atlantis stay",
    "place": "place SHIP N (a free place 1-5 on dutchman or jolly) or place tortuga",
}


def slots(s: State) -> list[int]:
    """1-based numbers of the row slots holding a face-down card."""
    return [i + 1 for i, card in enumerate(s.row) if card is not None]


def after(s: State, player: str) -> list[str]:
    """The other players, clockwise from ``player``."""
    k = s.players.index(player)
    return s.players[k + 1:] + s.players[:k]


def action_options(s: State, player: str) -> list[str]:
    k = s.players.index(player)
    out = list(_row_options(tuple(slots(s)), tuple(s.players[k + 1:] + s.players[:k])))
    out += rowboat_moves(s, player)
    if atlantis_target(s, player):
        out.append("atlantis go")
    ranks = s.ranks(player)
    where, ship = s.place_of(player)
    if "captain" in ranks:
        out.append("attack")
        out += [f"maroon {p}" for p in s.ships[ship][1:]]
    if "mate" in ranks:
        out.append("mutiny")
    if "boy" in ranks:
        out += [f"shift {a} to {b}" for a in HOLDS for b in HOLDS if a != b and s.holds[ship][a]]
    if "governor" in ranks:
        out.append("brawl")
    return out


@lru_cache(maxsize=1024)
def _row_options(cards: tuple, others: tuple) -> tuple:
    """peek, reveal and force over the face-down slots ``cards``, forcing ``others`` (the
    other players clockwise): the bulk of a turn's options, the same for many turns."""
    out = []
    # with one card left (the Armada, or the last of a tie-break) nobody may peek or force
    if len(cards) >= 2:
        out += [f"peek {a},{b}" for a in cards for b in cards if a < b]
    out += [f"reveal {a}" for a in cards]
    if len(cards) >= 2:
        out += [f"force {p} {a},{b}" for p in others for a in cards for b in cards if a != b]
    return tuple(out)


@lru_cache(maxsize=1024)
def _row_set(cards: tuple, others: tuple) -> frozenset:
    return frozenset(_row_options(cards, others))


def row_option(s: State, player: str, text: str) -> bool:
    """Whether ``text`` is one of the peeks, reveals and forces ``player``'s action may be
    now (always among the action's options; the other actions are not)."""
    k = s.players.index(player)
    return text in _row_set(tuple(slots(s)), tuple(s.players[k + 1:] + s.players[:k]))


def is_option(s: State, player: str, kind: str, entry: dict, text: str) -> bool:
    """``text in options(s, player, kind, entry)``, without listing a turn's options when
    ``text`` is one of its peeks, reveals or forces (most turns' choice)."""
    if kind == "action" and row_option(s, player, text):
        return True
    return text in options(s, player, kind, entry)


def options(s: State, player: str, kind: str, entry: dict) -> list[str]:
    if kind == "stow":
        return [f"stow {h}" for h in HOLDS]
    if kind == "action":
        return action_options(s, player)
    if kind == "pick":
        return [f"pick {a}" for a in entry["slots"]]
    if kind in ("vote", "top", "discard"):
        size = len(s.hands[player])
        out = [f"{kind} {k}" for k in range(1, size + 1)]
        if kind == "vote" and s.holds_map(player, "eldorado") is not None:
            out += [f"vote {a},{b}" for a in range(1, size + 1) for b in range(a + 1, size + 1)]
        return out
    if kind == "give":
        return [f"give {p}" for p in after(s, player)]
    if kind == "fountain":
        return ["fountain keep", "fountain use"]
    if kind == "atlantis":
        return ["atlantis stay", "atlantis go"]
    if kind == "place":
        return place_options(s)
    if kind == "loot":
        return loot_options(s, player)
    if kind == "shoot":
        return [f"shoot {p}" for p in after(s, player) + [player]]
    if kind == "fever":
        return [f"fever {p}" for p in after(s, player)]
    if kind == "marque":
        sends = [f"marque send {p} {ship}" for p in s.tortuga + [s.rowboats[b] for b in SHIPS if s.rowboats[b]]
                 for ship in SHIPS if len(s.ships[ship]) < SHIP_ROOM]
        return ["marque draw"] + sends
    raise AssertionError(kind)


def default(s: State, player: str, kind: str, entry: dict) -> str:
    """RULING defaults: what a late player does (docs/rules-1667.md, section Defaults)."""
    if kind == "action":
        cards = slots(s)
        if len(cards) < 2:
            return f"reveal {cards[0]}"
        # the seed's own timeout rule: peek at two cards, here the first two not yet seen
        known = {e["slot"] for e in s.seen[player] if e["shuffle"] == s.shuffles
                 and s.row[e["slot"] - 1] == e["card"]}
        fresh = [c for c in cards if c not in known]
        a, b = sorted((fresh + [c for c in cards if c in known])[:2])
        return f"peek {a},{b}"
    if kind == "top":
        return f"top {s.hands[player].index(entry['drawn']) + 1}"
    if kind == "place":
        return place_default(s)
    return options(s, player, kind, entry)[0]


def describe(opts: list[str]) -> str:
    """The legal options in one line: all of them when few, else grouped by their word."""
    if len(opts) <= 12:
        return ", ".join(opts)
    groups: dict[str, list[str]] = {}
    for o in opts:
        word = o.partition(" ")[0]
        group = groups.get(word)
        if group is None:
            groups[word] = [o]
        else:
            group.append(o)
    parts = []
    for word, group in groups.items():
        if word == "peek":
            parts.append(f"peek any two of slots {','.join(str(x) for x in _slots_in(group))}")
        elif word == "force":  # "force PLAYER A,B": the players in order of first mention
            players = list(dict.fromkeys([o.split(" ", 2)[1] for o in group]))
            parts.append(f"force PLAYER A,B (PLAYER: {', '.join(players)})")
        else:
            parts += group
    return ", ".join(parts)


def _slots_in(group: list[str]) -> list[int]:
    return sorted({int(x) for o in group for x in o.split()[1].split(",")})
