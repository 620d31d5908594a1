"""Fixtures for the render tests: games played by bots through the real protocol.

Helpers are handed out by fixtures (``games``), not imported: every test directory has its
own ``conftest`` module.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pbem.protocol import commands
from pbem.render.demo import play_bots
from pbem.render import record
from pbem.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("two-players", "three-players", "four-players", "four-players-long")

# Player names may hold any character but ',' and ':'. These must print literally everywhere.
HOSTILE = ["<script>x</script>", "[url=x]y[/url]", "*a*_b_|c|", "{{7*7}}"]
ODD = ["new\nline", "`tick` ~x~ #1", "&amp;\tevil", "@everyone"]
HOSTILE_SEED = "<img src=x onerror=alert(1)> [b]x[/b] *y* {{7*7}}\nz"
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


def new_game(store, game_id: str, names, client_seeds: dict | None = None) -> None:
    commands.create_game(store, game_id, "tortuga", list(names), {}, at=AT)
    for player, text in (client_seeds or {}).items():
        commands.add_client_seed(store, game_id, player, text, at=AT)
    commands.start_game(store, game_id, at=AT)


def stop_mid_step(min_round: int):
    """A stop condition for ``play_bots``: in round ``min_round`` or later, inside a sealed
    step after its first commitment (some committed, some not)."""
    def until(session) -> bool:
        step = session.sealed
        return (session.state.round >= min_round and step is not None
                and 0 < len(step.commits) < len(step.waiting))
    return until


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    """One database with the games the tests share:
    hostile      finished, HOSTILE names and a hostile client seed
    odd          finished, ODD names (newline, backticks, entity, bidi override, @everyone)
    hostile-live in round 2, in a sealed step with some commitments in
    """
    opened = Store(tmp_path_factory.mktemp("render") / "games.db")
    new_game(opened, "hostile", HOSTILE, {HOSTILE[0]: HOSTILE_SEED, HOSTILE[3]: "{{7*7}} [/code]"})
    play_bots(opened, "hostile", "render/hostile", at=AT)
    new_game(opened, "odd", ODD, {ODD[0]: "line one\nline two"})
    play_bots(opened, "odd", "render/odd", at=AT)
    new_game(opened, "hostile-live", HOSTILE)
    play_bots(opened, "hostile-live", "render/live", until=stop_mid_step(2), at=AT)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def games(store):
    return SimpleNamespace(
        ROOT=ROOT, EXAMPLES=EXAMPLES, HOSTILE=HOSTILE, ODD=ODD, HOSTILE_SEED=HOSTILE_SEED,
        new_game=new_game, stop_mid_step=stop_mid_step, store=store, AT=AT,
        record=lambda game_id: record.from_store(store, game_id),
        example=lambda name: record.from_export(
            (ROOT / "examples" / "games" / f"{name}.jsonl").read_text(encoding="utf-8")),
    )
