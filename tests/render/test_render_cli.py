"""The render layer behind the command line: show, replay, private --format, demo."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.protocol import commands, loading, reports
from pbem.render import environment, summary

FORMATS = ("text", "markdown", "bbcode", "html")
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


@pytest.fixture
def pbem(games, monkeypatch):
    """Run the command line in-process on the shared database; returns the result."""
    monkeypatch.delenv("PBEM_DB", raising=False)
    runner = CliRunner()

    def run(*args: str, db=None):
        target = str(db or games.store.path)
        return runner.invoke(app, ["--db", target, *args], catch_exceptions=False)

    return run


@pytest.mark.parametrize("fmt", FORMATS)
def test_show_renders_the_latest_round_of_a_live_game_with_who_is_waited_for(pbem, fmt):
    result = pbem("show", "hostile-live", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert "Waiting for:" in result.output and "round 2" in result.output.lower()
    assert "final result" not in result.output.lower()


def test_show_a_given_round_and_after_the_end_the_result(pbem, games):
    record = games.record("hostile")
    last = record.rounds[-1].number
    first = pbem("show", "hostile", "--round", "1")
    assert first.exit_code == 0 and "round 1" in first.output and "final result" not in first.output
    final = pbem("show", "hostile")
    assert f"round {last}" in final.output and "final result" in final.output
    assert "Server seed (revealed)" in final.output and "pbem audit --file hostile.jsonl" in final.output


def test_show_json_is_the_model_the_templates_get(pbem, games):
    result = pbem("show", "hostile", "--round", "2", "--json")
    model = json.loads(result.output)
    assert [r["round"] for r in model["rounds"]] == [2]
    assert model["rounds"][0]["chain_head"]["seq"] > 0
    assert model["result"] is None


def test_show_refuses_unknown_formats_and_rounds(pbem):
    assert pbem("show", "hostile", "--format", "pdf").exit_code == 2
    result = pbem("show", "hostile", "--round", "99")
    assert result.exit_code == 1 and "no round 99" in result.output


def test_show_a_game_that_has_not_started(pbem, games, tmp_path):
    from pbem.store import Store
    db = tmp_path / "new.db"
    with Store(db) as store:
        commands.create_game(store, "waiting", "tortuga", ["ani", "alex"], {}, at=AT)
    for fmt in FORMATS:
        result = pbem("show", "waiting", "--format", fmt, db=db)
        assert result.exit_code == 0 and "has not started yet" in result.output


@pytest.mark.parametrize("fmt", FORMATS)
def test_private_takes_a_format_and_json_is_unchanged(pbem, games, fmt):
    session = loading.load(games.store, "hostile-live")
    player = session.players[1]
    result = pbem("private", "hostile-live", player, "--format", fmt)
    assert result.exit_code == 0
    assert result.output == summary.render_private(session, player, fmt)[1]
    as_json = pbem("private", "hostile-live", player, "--json")
    assert json.loads(as_json.output) == json.loads(json.dumps(reports.private(session, player)))


def test_private_text_is_the_default(pbem, games):
    player = games.HOSTILE[0]
    result = pbem("private", "hostile-live", player)
    assert result.output.startswith("hostile-live - Tortuga - private message for <script>x</script>")
    assert "pbem seal --context pbem1." in result.output or "nothing is asked" in result.output.lower() \
        or "waiting for the other" in result.output


def test_replay_prints_every_round_then_the_result(pbem, games):
    path = games.ROOT / "examples" / "games" / "two-players.jsonl"
    result = pbem("replay", str(path), "--format", "markdown")
    record = games.example("two-players")
    for r in record.rounds:
        assert f"round {r.number}\n" in result.output
    assert "final result" in result.output and f"pbem audit --file {path}" in result.output


def test_command_line_start_up_imports_no_jinja():
    code = ("import sys, pbem.cli.program; "
            "print(sorted(m for m in sys.modules if m.startswith(('jinja2', 'markupsafe', 'pbem.render'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_templates_folder_can_be_overridden(games, tmp_path, monkeypatch):
    import shutil
    folder = tmp_path / "templates"
    shutil.copytree(environment.templates_dir(), folder)
    round_txt = folder / "tortuga" / "round.txt"
    round_txt.write_text("CUSTOM {{ r.round }}\n" + round_txt.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("PBEM_TEMPLATES", str(folder))
    _model, text = summary.render_public(games.record("hostile"), 1, "text")
    assert text.startswith("CUSTOM 1")
    monkeypatch.setenv("PBEM_TEMPLATES", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="PBEM_TEMPLATES"):
        summary.render_public(games.record("hostile"), 1, "text")


def test_html_is_self_contained(games):
    record = games.example("three-players")
    _models, doc = summary.render_all(record, "html")
    lowered = doc.lower()
    assert lowered.startswith("<!doctype html>") and lowered.rstrip().endswith("</html>")
    for outside in ("<script", "<link", "src=", "href=", "url(", "@import", "@font-face", "<img", "<iframe"):
        assert outside not in lowered, outside
    assert lowered.count("<svg class=\"board\"") == len(record.rounds) * 3


def test_boards_at_the_end_of_the_last_round_are_the_final_public_view(games):
    record = games.record("hostile")
    model, _ = summary.render_public(record, None, "text")
    final = record.session.rules.view(record.session.state, None)
    for board in model["rounds"][0]["boards"]:
        seen = final["boards"][board["player"]]
        assert (board["boat"], board["pirate"]) == (seen["boat"], seen["pirate"])
        assert [board[a] for a in ("tortuga", "fleet", "crew", "island")] == \
               [seen[a] for a in ("tortuga", "fleet", "crew", "island")]
    for number in range(1, record.rounds[-1].number + 1):
        rnd = summary.render_public(record, number, "text")[0]["rounds"][0]
        for board in rnd["boards"]:  # every die is placed by the end of a round
            assert sum(len(s["dice"]) for s in board["spaces"]) == 5


# ---------------------------------------------------------------------------- demo

def test_demo_on_a_fresh_machine_creates_its_database(tmp_path, monkeypatch):
    db = tmp_path / "nowhere" / "yet" / "pbem.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    result = CliRunner().invoke(app, ["demo", "--players", "2", "--game-name", "d1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert db.exists()
    out = result.output
    assert out.index("d1 - Tortuga - round 1") < out.index("round 2") < out.index("final result")
    assert out.index("final result") < out.index("Audit: OK.")
    audited = CliRunner().invoke(app, ["audit", "d1", "--json"])
    assert json.loads(audited.output)["ok"]


def test_demo_with_db_option_and_markdown(tmp_path, monkeypatch):
    monkeypatch.delenv("PBEM_DB", raising=False)
    db = tmp_path / "given.db"
    result = CliRunner().invoke(app, ["demo", "--db", str(db), "--players", "3", "--format", "markdown",
                                      "--game-name", "d2"], catch_exceptions=False)
    assert result.exit_code == 0 and db.exists()
    assert "## d2 · Tortuga · round 1" in result.output and "**Audit: OK.**" in result.output


def test_demo_temp_leaves_no_database_and_html_is_one_document(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_DB", str(tmp_path / "untouched.db"))
    result = CliRunner().invoke(app, ["demo", "--temp", "--players", "2", "--format", "html"], catch_exceptions=False)
    assert result.exit_code == 0
    assert not (tmp_path / "untouched.db").exists()
    doc = result.output
    assert doc.count("<!DOCTYPE html>") == 1 and doc.rstrip().endswith("</html>")
    assert "Audit: OK." in doc and "Final result" in doc


def test_demo_json_reports_result_and_audit(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--temp", "--players", "2", "--json"], catch_exceptions=False)
    report = json.loads(result.output)
    assert report["audit"]["ok"] and report["result"]["winners"]


def test_a_game_ended_early_says_so(pbem, tmp_path):
    from pbem.store import Store
    db = tmp_path / "early.db"
    with Store(db) as store:
        commands.create_game(store, "early", "tortuga", ["ani", "alex"], {}, start=True, at=AT)
        commands.reveal_seed(store, "early", True, at=AT)
        seed = store.get_secret("early", loading.SEED)
    for fmt in FORMATS:
        result = pbem("show", "early", "--format", fmt, db=db)
        assert result.exit_code == 0 and "Play has ended" in result.output and seed in result.output
        assert "Waiting for" not in result.output


def test_replay_needs_a_revealed_seed(pbem, tmp_path, games):
    lines = (games.ROOT / "examples" / "games" / "two-players.jsonl").read_text(encoding="utf-8").splitlines(True)
    unrevealed = tmp_path / "cut.jsonl"
    unrevealed.write_text("".join(l for l in lines if '"kind":"seed_revealed"' not in l), encoding="utf-8")
    result = pbem("replay", str(unrevealed))
    assert result.exit_code == 1 and "no revealed seed" in result.output
