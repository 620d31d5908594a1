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

from pbem.cli.program import app

EXAMPLES = ("two-players", "three-players", "four-players", "four-players-long",
            "tortuga1667-five-players", "tortuga1667-nine-players")
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


def test_examples_cover_every_player_count_end_and_variant(games):
    seen = {}
    for name in EXAMPLES:
        record = games.example(name)
        seen[name] = (record.meta["game_type"], len(record.players), record.meta["options"].get("variant"))
    assert seen == {"two-players": ("tortuga", 2, "standard"), "three-players": ("tortuga", 3, "standard"),
                    "four-players": ("tortuga", 4, "standard"), "four-players-long": ("tortuga", 4, "long"),
                    "tortuga1667-five-players": ("tortuga1667", 5, "standard"),
                    "tortuga1667-nine-players": ("tortuga1667", 9, "advanced")}


@pytest.mark.parametrize("name", [n for n in EXAMPLES if n.startswith("tortuga1667")])
def test_1667_examples_hold_anonymous_votes_disclosed_at_the_end(games, name):
    """Every vote was an anonymous step: its reveals are held (no public reveal), its batch
    digest is public, and the disclosure before the seed names every one of them."""
    events = [json.loads(line) for line in (games.ROOT / "examples" / "games" / f"{name}.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in events]
    assert "reveal" not in kinds and kinds.count("sealed_batch") >= 3 and kinds[-2:] == ["disclosed", "seed_revealed"]
    batches = {(e["data"]["round"], e["data"]["step"]) for e in events if e["kind"] == "sealed_batch"}
    disclosed = {(s["round"], s["step"]) for s in events[-2]["data"]["steps"]}
    assert batches == disclosed
