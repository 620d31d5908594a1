"""Final scoring with a per-category breakdown."""

from __future__ import annotations

from .model import State

AREA_POINTS = (("tortuga", 3), ("fleet", 2), ("crew", 1))


def chest_points(board) -> int:
    """Tortuga 3, fleet 2, crew 1 per chest; purple counts double; island nothing."""
    total = 0
    for area, points in AREA_POINTS:
        for colour in getattr(board, area):
            total += points * (2 if colour == "purple" else 1)
    return total


def sets(board) -> int:
    """Most red-blue-yellow sets on the board; white chests in Tortuga are wild."""
    everywhere = board.tortuga + board.fleet + board.crew + board.island
    counts = [everywhere.count(c) for c in ("red", "blue", "yellow")]
    wild = board.tortuga.count("white")
    best = 0
    for n in range(1, (sum(counts) + wild) // 3 + 1):
        if sum(max(0, n - c) for c in counts) <= wild:
            best = n
    return best


def score_board(board) -> dict:
    breakdown = {
        "chests": chest_points(board),
        "sets": 3 * sets(board),
        "tracks": board.boat + board.pirate,
        "coins": sum(board.tiles),
    }
    breakdown["total"] = sum(breakdown.values())
    return breakdown


def result(state: State) -> dict | None:
    """Scores and winners once the game is over, else None. Ties share the victory."""
    if state.phase != "over":
        return None
    scores = {p: score_board(b) for p, b in zip(state.players, state.boards)}
    top = max(s["total"] for s in scores.values())
    return {"scores": scores, "winners": [p for p in state.players if scores[p]["total"] == top]}
