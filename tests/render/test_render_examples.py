"""The example games in examples/games/: each audits clean, replays in full, and renders
exactly its golden summaries.

After a deliberate change to the templates or the summaries, regenerate the golden files
from the repository root with

    python examples/make_examples.py --golden-only

and review the diff before committing it.
"""

from __future__ import annotations

import difflib
import json

import pytest
from typer.testing import CliRunner

from pbem.cli.app import app

EXAMPLES = ("two-players", "three-players", "four-players", "four-players-long")
GOLDEN = {"text": "summary.txt", "markdown": "summary.md"}
REGENERATE = "python examples/make_examples.py --golden-only"


@pytest.fixture
def in_root(games, monkeypatch):
    """Run from the repository root: the golden files quote examples/games/NAME.jsonl."""
    monkeypatch.chdir(games.ROOT)
    monkeypatch.delenv("PBEM_DB", raising=False)
    return lambda *args: CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_audits_clean_and_replays_in_full(in_root, name):
    result = in_root("audit", "--file", f"examples/games/{name}.jsonl", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["chain"] and report["replay"] == "full"
    assert report["finished"] and report["seed_revealed"]


@pytest.mark.parametrize("fmt", sorted(GOLDEN))
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_summaries_match_their_golden_files(in_root, games, name, fmt):
    golden = games.ROOT / "examples" / "games" / f"{name}.{GOLDEN[fmt]}"
    assert golden.exists(), f"{golden} is missing; make it with: {REGENERATE}"
    result = in_root("replay", f"examples/games/{name}.jsonl", "--format", fmt)
    assert result.exit_code == 0, result.output
    expected = golden.read_text(encoding="utf-8")
    if result.output != expected:
        diff = difflib.unified_diff(expected.splitlines(keepends=True), result.output.splitlines(keepends=True),
                                    fromfile=str(golden.relative_to(games.ROOT)), tofile="pbem replay (now)")
        shown = "".join(list(diff)[:120])
        pytest.fail(f"{golden.name} differs from the rendered summary (first lines of the diff below).\n"
                    f"If the change is intended, regenerate the golden files with: {REGENERATE}\n\n{shown}")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_renders_in_every_format(games, name):
    from pbem.render import summary
    record = games.example(name)
    for fmt in ("bbcode", "html"):
        models, text = summary.render_all(record, fmt)
        assert len(models["rounds"]) == record.rounds[-1].number and models["result"]["winners"]


def test_examples_cover_two_three_and_four_players_and_the_long_variant(games):
    seen = {}
    for name in EXAMPLES:
        record = games.example(name)
        seen[name] = (len(record.players), record.meta["options"].get("variant"))
    assert seen == {"two-players": (2, "standard"), "three-players": (3, "standard"),
                    "four-players": (4, "standard"), "four-players-long": (4, "long")}
