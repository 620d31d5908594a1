"""'pbem replay --json' publishes every draw (label, n, value) in the order the rules made
them, so that an independent checker can compare its draws with pbem's one by one."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "games"
LABELS = {  # the label forms docs/protocol.md §4 lists
    "tortuga": re.compile(r"setup/[^/]+/chest[12]|r\d+/roll\d+/[^/]+(/reroll\d+)?/[A-E]|r\d+/hunt/[12]/(chest|tile[12])"
                          r"|r\d+/move/[^/]+"),
    "tortuga1667": re.compile(r"setup/(loyalty/[^/]+|hand/[^/]+/\d+|vote-deck/\d+|starred/\d+|event-deck/(\d+|armada)"
                              r"|pawns/\d+)|vote\d+/(shuffle|under)/\d+|t\d+/(bells/\d+|fever)|tiebreak\d+/\d+"),
}


def draw(seed: bytes, game: str, entropy: str, label: str, n: int) -> int:
    """§4's draw, written again from the document alone."""
    counter = 0
    while True:
        message = json.dumps(["pbem-rng-v1", game, entropy, label, counter], separators=(",", ":"),
                             ensure_ascii=False).encode()
        u = int.from_bytes(hmac.new(seed, message, hashlib.sha256).digest()[:4], "big")
        if u < 2 ** 32 - (2 ** 32 % n):
            return u % n
        counter += 1


@pytest.mark.parametrize("name,kind", [("three-players", "tortuga"), ("tortuga1667-nine-players", "tortuga1667")])
def test_replay_json_publishes_every_draw(name, kind):
    path = EXAMPLES / f"{name}.jsonl"
    result = CliRunner().invoke(app, ["replay", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    draws = json.loads(result.stdout)["draws"]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    seed = bytes.fromhex(next(r["data"]["seed"] for r in rows if r["kind"] == "seed_revealed"))
    entropy = next(r["data"]["client_entropy"] for r in rows if r["kind"] == "started")
    assert len(draws) > 50
    for d in draws:
        assert set(d) == {"label", "n", "value"}
        assert LABELS[kind].fullmatch(d["label"]), f"a label §4 does not list: {d['label']}"
        assert 0 <= d["value"] < d["n"] and draw(seed, rows[0]["game"], entropy, d["label"], d["n"]) == d["value"]


def test_replay_text_is_unchanged_by_the_draws(monkeypatch):
    monkeypatch.chdir(EXAMPLES.parents[1])
    text = CliRunner().invoke(app, ["replay", "examples/games/two-players.jsonl"]).stdout
    assert text == (EXAMPLES / "two-players.summary.txt").read_text(encoding="utf-8")
