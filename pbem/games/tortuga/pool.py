"""The bag, the treasure tile pool and the centre island: draws and deposits."""

from __future__ import annotations

from .model import COLOURS, TILE_VALUES, State


def label_name(name: str) -> str:
    """A player's name inside a random-draw label: '%' and '/' percent-encoded, so that
    labels split on '/' unambiguously whatever the names."""
    return name.replace("%", "%25").replace("/", "%2F")


def draw(counts: list, items: tuple, rng, label: str):
    """Draw one item from a pool given as counts per item (bag colours, tile values): a
    draw in range(total) taken in the order of ``items``. An empty pool draws nothing."""
    total = sum(counts)
    if not total:
        return None
    k = rng.below(label, total)
    for i, count in enumerate(counts):
        if k < count:
            counts[i] -= 1
            return items[i]
        k -= count
    raise AssertionError("unreachable")


def draw_chest(s: State, rng, label: str) -> str | None:
    return draw(s.bag, COLOURS, rng, label)


def draw_tile(s: State, rng, label: str) -> int | None:
    return draw(s.pool, TILE_VALUES, rng, label)


def deposit(s: State, seat: int, area: str, chests: list[str]) -> None:
    if not chests:
        return
    to_centre, to_bag = [], []
    for colour in chests:
        if s.n > 2 and colour not in s.centre:
            s.centre.append(colour)
            to_centre.append(colour)
        else:
            s.bag[COLOURS.index(colour)] += 1
            to_bag.append(colour)
    s.effects.append({"type": "deposit", "player": s.players[seat], "area": area,
                      "chests": chests, "to_centre": to_centre, "to_bag": to_bag})
