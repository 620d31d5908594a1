"""A finished Tortuga 1667 game has no turn: its viewer (``pbem page``) names whose turn each
turn was, and for the last one says the game is over instead of "Turn of"."""

from __future__ import annotations

import re
from pathlib import Path

from pbem.render import viewer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "games"


def sections(html: str) -> list[str]:
    text = re.sub(r"<svg.*?</svg>|<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))
    return re.split(r"Tortuga 1667 - turn \d+", text)[1:]


def test_a_finished_games_last_turn_is_not_anyones_turn():
    html = viewer.from_export((EXAMPLES / "tortuga1667-five-players.jsonl").read_text(encoding="utf-8"))
    turns = sections(html)
    assert len(turns) == 34
    assert all("Turn of: " in t for t in turns[:-1])  # the turns before: whose they were
    last = turns[-1]
    assert "Turn of" not in last, last[:300]
    assert "Last turn: frank's; the game is over, nobody's turn now" in last
