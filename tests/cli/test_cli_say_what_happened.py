"""Commands say what happened (issue 7, item 7): an illegal committed choice that got the
default, errors as JSON under --json, one name for the private message's token, a replaced
client seed, and names or keys too alike to tell apart."""

from __future__ import annotations

import itertools
import json

import pytest
import typer.main

from pbem.cli.program import app
from pbem.protocol import offline
from pbem.protocol.commit import make_commitment, new_salt

LETTERS = "ABCDE"
SELECTIONS = [",".join(c) for n in range(1, 6) for c in itertools.combinations(LETTERS, n)] + ["none"]


def _sealed_request(cli, game, player) -> dict:
    return next(r for r in cli.json("private", game, player)["requests"] if r["sealed"])


def _illegal_commitment(cli, game, player) -> tuple[str, str, str]:
    """(illegal choice, salt, commitment) for the open step 1.1, made by hand."""
    options = _sealed_request(cli, game, player)["options"]
    illegal = next(s for s in SELECTIONS if s not in options)
    salt = new_salt()
    return illegal, salt, make_commitment(game, 1, 1, player, illegal, salt)


# ---------------------------------------------------------------------- an illegal committed choice


def test_a_reveal_of_an_illegal_choice_says_the_default_was_applied(new_game, cli, helpers):
    new_game("g")
    default = _sealed_request(cli, "g", "ani")["default"]
    illegal, salt, commitment = _illegal_commitment(cli, "g", "ani")
    cli.ok("commit", "g", "ani", commitment)
    for player in ("alex", "frank", "lothar"):
        cli.ok("commit", "g", player, "--choice", _sealed_request(cli, "g", player)["default"])
    first = cli.ok("reveal", "g", "ani", illegal, salt).stdout.split("\n")[0]
    assert "not allowed" in first and f"the default {default} was applied" in first
    [item] = cli.json("reveal", "g", "ani", illegal, salt)["accepted"]  # again: what was recorded
    assert item["already_recorded"] is True
    assert item["applied"] == default and "illegal" in item["illegal"]
    assert cli.log("g")[-1]["data"]["illegal"] == item["illegal"]


def test_an_illegal_choice_in_a_submitted_block_says_so_too(new_game, cli, tmp_path):
    new_game("g")
    default = _sealed_request(cli, "g", "ani")["default"]
    illegal, salt, commitment = _illegal_commitment(cli, "g", "ani")
    cli.ok("commit", "g", "ani", commitment)
    for player in ("alex", "frank", "lothar"):
        cli.ok("commit", "g", player, "--choice", _sealed_request(cli, "g", player)["default"])
    block = offline.submission_block("g", "reveal", {"player": "ani", "round": 1, "step": 1,
                                                      "choice": illegal, "salt": salt}, None)
    path = tmp_path / "reveal.txt"
    path.write_text(block)
    [item] = cli.json("submit", "g", path)["accepted"]
    assert item["already_recorded"] is False and item["applied"] == default and "illegal" in item["illegal"]


# ---------------------------------------------------------------------- errors under --json


def _failing_runs(tmp_path, public_key) -> dict[str, list[str]]:
    """For every command with --json, a run that fails (exit 1) on game "g" in play."""
    return {
        "address": ["address", "g", "zed", "zed@example.org"],
        "audit": ["audit", "nogame"], "client-seed": ["client-seed", "g", "ani", "too late"],
        "commit": ["commit", "g", "ani", "xyz"], "decide": ["decide", "g", "zed", "skull:raid"],
        "demo": ["demo", "--game-name", "g"], "games": ["games", "--db", str(tmp_path)],
        "key": ["key", "g", "ani", public_key], "keygen": ["keygen", "--public-of", str(tmp_path / "none.key")],
        "log": ["log", "nogame"], "new": ["new", "g", "--players", "a,b"],
        "nmr": ["nmr", "g", "zed"], "private": ["private", "g", "zed"],
        "replay": ["replay", str(tmp_path / "none.jsonl")], "reveal": ["reveal", "g", "ani", "A", "ab" * 32],
        "reveal-seed": ["reveal-seed", "g"], "seal": ["seal", "g", "ani", "Z"], "show": ["show", "nogame"],
        "start": ["start", "g"], "status": ["status", "nogame"], "submit": ["submit", "g", str(tmp_path / "none.txt")],
        "page": ["page", "nogame", "-o", str(tmp_path / "nogame.html")],
        "verify-page": ["verify-page", "-o", str(_a_file(tmp_path))],
        "pause": ["pause", "nogame", "--reason", "holidays"], "resume": ["resume", "g"],
        "extend": ["extend", "g", "zed", "24h"], "replace": ["replace", "g", "zed"],
        "back": ["back", "g", "ani"], "check-restore": ["check-restore", "--db", str(tmp_path)],
    }


def _a_file(tmp_path):
    path = tmp_path / "a-file"
    path.write_text("x")
    return path


def test_every_failure_under_json_is_one_json_document_on_stdout(new_game, cli, tmp_path):
    new_game("g")
    runs = _failing_runs(tmp_path, cli.json("keygen")["public_key"])
    group = typer.main.get_command(app)
    with_json = {name for name, command in group.commands.items() if any("--json" in p.opts for p in command.params)}
    assert set(runs) == with_json  # a new command with --json gets a case here
    for name, argv in runs.items():
        reason = cli.refused("g", *argv, "--json")
        result = cli(*argv, "--json")
        error = json.loads(result.stdout)  # one JSON document, nothing else on stdout
        assert error == {"error": reason.removeprefix("pbem: "), "code": 1}, name


@pytest.mark.parametrize("argv", [
    ["commit", "g", "ani"], ["reveal", "g", "ani", "A", "ab" * 32, "--step", "x"], ["status"],
    ["new", "h", "--players", "a,b", "--deadline", "soon"], ["export", "g"], ["statu", "g"],
    ["seal", "--context", "pbem1.x.y", "A", "B"],
])
def test_usage_errors_under_json_are_json_too(new_game, cli, argv):
    new_game("g")
    cli.refused("g", *argv, "--json", code=2)
    result = cli(*argv, "--json")
    error = json.loads(result.stdout)
    assert error["code"] == 2 and error["error"] and "\n" not in error["error"]
    assert result.exit_code == 2 and error["error"] in result.stderr


def test_without_json_errors_stay_off_stdout(new_game, cli):
    new_game("g")
    result = cli("status", "nogame")
    assert result.exit_code == 1 and result.stdout == ""
    result = cli("commit", "g", "ani")
    assert result.exit_code == 2 and result.stdout == ""


def test_a_failed_audit_under_json_carries_the_error(finished_copy, cli, tmp_path):
    text = cli.ok("export", "done").stdout
    lines = text.splitlines()
    event = json.loads(lines[3])
    event["at"] = "1999-01-01T00:00:00Z"
    lines[3] = json.dumps(event)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = cli("audit", "--file", path, "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["ok"] is False
    assert report["code"] == 1 and report["error"].startswith("audit failed")


# ---------------------------------------------------------------------- the private message's token


def test_the_token_has_one_name_for_sealed_and_open_requests(new_game, cli):
    driver = new_game("g")
    sealed = cli.json("private", "g", "ani")
    assert sealed["context"] and sealed["context_kind"] == "seal"
    session = driver.until(lambda s: s.sealed is None and any(not r.sealed for r in s.pending()))
    player = next(r.player for r in session.pending() if not r.sealed)
    open_ = cli.json("private", "g", player)
    assert open_["context"] and open_["context_kind"] == "decide" and "decision_context" not in open_


# ---------------------------------------------------------------------- client seeds, names, keys


def test_a_second_client_seed_says_it_replaced_the_first(new_game, cli):
    new_game("g", start=False)
    first = cli.json("client-seed", "g", "ani", "parrot")
    assert first["replaced"] is False and first["already_recorded"] is False
    assert "replaced" not in cli.ok("client-seed", "g", "alex", "kraken").stdout
    text = cli.ok("client-seed", "g", "ani", "monkey").stdout
    assert "replaced the earlier one" in text
    second = cli.json("client-seed", "g", "ani", "island")
    assert second["replaced"] is True and second["already_recorded"] is False
    logged = cli.log("g")
    again = cli.json("client-seed", "g", "ani", "island")
    assert again["already_recorded"] is True and again["replaced"] is False and cli.log("g") == logged


def test_game_names_that_differ_only_by_case_are_refused(new_game, cli):
    new_game("g1", start=False)
    cli.refused("g1", "new", "G1", "--players", "ani,alex", match="only by case")
    assert cli.json("games")["games"] == ["g1"]


def test_player_names_that_differ_only_by_case_or_width_are_refused(new_game, cli):
    new_game("g", start=False)
    cli.refused("g", "new", "h", "--players", "Ani,ani", match="given twice")
    cli.refused("g", "new", "h", "--players", "Ben,Ｂｅｎ", match="given twice")
    assert cli.json("games")["games"] == ["g"]


def test_one_public_key_is_not_registered_for_two_players(new_game, cli, helpers):
    key, other = cli.json("keygen")["public_key"], cli.json("keygen")["public_key"]
    new_game("g", start=False, extra=["--key", f"ani={key}"])
    cli.refused("g", "new", "h", "--players", "ani,alex", "--key", f"ani={key}", "--key", f"alex={key}",
                match="already registered for ani")
    cli.refused("g", "key", "g", "alex", key, match="already registered for ani")
    assert cli.json("key", "g", "ani", key)["already_recorded"] is True  # the same again: a no-op
    cli.ok("key", "g", "alex", other)
    replaced = cli.json("key", "g", "ani", cli.json("keygen")["public_key"])
    assert replaced["replaced"] is True
    cli.ok("key", "g", "frank", key)  # ani holds another key now, so this one is free
