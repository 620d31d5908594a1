"""A complete 4-player game played through the command line only, and the --json contracts.

Every sealed step: ``pbem seal`` (with the database, or offline with the private message's
context token), ``pbem commit``, ``pbem reveal``; every open decision: ``pbem decide`` with a
choice taken from ``pbem private --json``. Then audit, export and audit of the file.
"""

from __future__ import annotations

import json
import random

STATUS_KEYS = {"game", "round", "step", "phase", "chain_head", "finished", "waiting"}
HEX = set("0123456789abcdef")


def _is_hash(text) -> bool:
    return isinstance(text, str) and len(text) == 64 and set(text) <= HEX


def _check_status(status: dict, game: str) -> None:
    assert STATUS_KEYS <= set(status), STATUS_KEYS - set(status)
    assert status["game"] == game
    assert set(status["chain_head"]) == {"seq", "hash"} and _is_hash(status["chain_head"]["hash"])
    for entry in status["waiting"]:
        assert {"player", "kind", "sealed"} <= set(entry) <= {"player", "kind", "sealed", "since", "due", "overdue"}, entry
        assert isinstance(entry["sealed"], bool)


def _check_private(private: dict, player: str) -> None:
    assert private["player"] == player
    assert private["requests"], f"{player} is waiting but private shows no request"
    for request in private["requests"]:
        assert {"kind", "sealed", "default", "syntax"} <= set(request), request
        if request.get("options") is not None:
            assert request["default"] in request["options"] or request["kind"] == "order"
    sealed = [r for r in private["requests"] if r["sealed"]]
    assert private["context"] is not None  # one token: to seal, else to sign a decision
    assert private["context_kind"] == ("seal" if sealed else "decide")
    board = private["view"]["boards"][player]
    assert "tile_values" in board  # the player's own tiles
    if sealed and not sealed[0].get("committed"):
        assert board.get("roll"), "a player asked to select sees their own roll"


def _check_log_rows(rows: list[dict]) -> None:
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    for row in rows:
        assert {"seq", "kind", "hash"} <= set(row) and _is_hash(row["hash"])


def test_complete_game_through_the_command_line(cli, tmp_path, helpers):
    game, players = "cli4", helpers.PLAYERS
    rnd = random.Random(20240501)
    created = cli.json("new", game, "--players", ",".join(players), "--start", "alex")
    assert _is_hash(created["seed_hash"]) and created["started"] is False
    for player in players:
        cli.ok("client-seed", game, player, f"{player}'s words")
    cli.ok("start", game)

    sealed_steps = decisions = offline = 0
    seen_kinds = set()
    for _ in range(3000):
        status = cli.json("status", game)
        _check_status(status, game)
        if status["finished"]:
            break
        waiting = status["waiting"]
        assert waiting, "an unfinished game waits for someone"
        sealed_waiting = [w for w in waiting if w["sealed"]]
        if sealed_waiting:  # open decisions may wait alongside; the sealed step goes first
            assert all(w["kind"] == "commit" for w in sealed_waiting)
            held = {}
            for entry in sealed_waiting:
                player = entry["player"]
                private = cli.json("private", game, player)
                _check_private(private, player)
                request = next(r for r in private["requests"] if r["sealed"])
                choice = helpers.pick(request, rnd)
                if (sealed_steps + len(held)) % 2:  # half the seals offline, from the token alone
                    sealed = cli.json("seal", "--context", private["context"], choice)
                    offline += 1
                else:
                    sealed = cli.json("seal", game, player, choice)
                assert _is_hash(sealed["commitment"]) and _is_hash(sealed["salt"])
                assert (sealed["round"], sealed["step"]) == (status["round"], status["step"])
                held[player] = sealed
                after = cli.json("commit", game, player, sealed["commitment"])
                assert player not in {w["player"] for w in after["waiting"] if w["kind"] == "commit"}
            middle = cli.json("status", game)
            assert {w["player"] for w in middle["waiting"] if w["sealed"]} == set(held)
            assert all(w["kind"] == "reveal" for w in middle["waiting"] if w["sealed"])
            for player, sealed in held.items():
                cli.ok("reveal", game, player, sealed["choice"], sealed["salt"])
            sealed_steps += 1
        else:
            entry = waiting[0]
            private = cli.json("private", game, entry["player"])
            _check_private(private, entry["player"])
            request = next(r for r in private["requests"] if r["kind"] == entry["kind"])
            assert request["sealed"] is False
            seen_kinds.add(entry["kind"])
            cli.ok("decide", game, entry["player"], helpers.pick(request, rnd))
            decisions += 1
    else:
        raise AssertionError("the game did not finish")

    assert sealed_steps >= 5 and decisions >= 5 and offline >= 2, (sealed_steps, decisions, offline)
    assert status["finished"] is True and status["waiting"] == []
    assert set(status["scores"]) == set(players)
    assert all(isinstance(total, int) for total in status["scores"].values())
    assert status["seed_revealed"] is True  # automatic at the end

    log = cli.log(game)
    _check_log_rows(log)
    assert log[-1]["kind"] == "seed_revealed"
    assert status["chain_head"] == {"seq": log[-1]["seq"], "hash": log[-1]["hash"]}
    kinds = {row["kind"] for row in log}
    assert {"created", "client_seed", "started", "commit", "reveal", "decide", "seed_revealed"} <= kinds
    assert cli("reveal-seed", game).exit_code == 1  # already published; nothing to do

    audit = cli.ok("audit", game)
    assert "OK: complete" in audit.stdout
    report = cli.json("audit", game)
    assert report["ok"] and report["replay"] == "full" and report["scores"] == status["scores"]

    exported = tmp_path / "cli4.jsonl"
    cli.ok("export", game, "-o", exported)
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    _check_log_rows(lines)
    assert lines == log
    head = f"{log[-1]['seq']}:{log[-1]['hash']}"
    file_report = cli.json("audit", "--file", exported, "--head", head)
    assert file_report["ok"] and file_report["replay"] == "full"
    assert file_report["scores"] == status["scores"] and file_report["events"] == len(log)

    text = cli.ok("status", game).stdout
    assert "finished" in text and log[-1]["hash"] in text
    final_private = cli.json("private", game, "ani")
    assert final_private["requests"] == [] and final_private["context"] is None and final_private["context_kind"] is None


def test_moderator_sealed_choices_reveal_themselves(cli, new_game, helpers):
    """Players with only email send their choice to the moderator (commit --choice)."""
    new_game("m")
    rnd = random.Random(5)
    status = cli.json("status", "m")
    held = {}
    for entry in status["waiting"]:
        player = entry["player"]
        request = cli.json("private", "m", player)["requests"][0]
        choice = helpers.pick(request, rnd)
        if player in ("frank", "lothar"):
            cli.ok("commit", "m", player, "--choice", choice)
        else:
            held[player] = cli.json("seal", "m", player, choice)
            cli.ok("commit", "m", player, held[player]["commitment"])
    middle = cli.json("status", "m")
    assert middle["sealed_step"]["moderator_sealed"] == ["frank", "lothar"]
    # the moderator's reveals went in as soon as every commitment was in
    assert {w["player"] for w in middle["waiting"]} == {"ani", "alex"}
    for player, sealed in held.items():
        cli.ok("reveal", "m", player, sealed["choice"], sealed["salt"])
    after = cli.json("status", "m")
    assert (after["round"], after["step"]) != (1, 1) or not after["waiting"][0]["sealed"]
    moderator = [r for r in cli.log("m") if r["kind"] == "reveal" and r["data"]["by"] == "moderator"]
    assert {r["data"]["player"] for r in moderator} == {"frank", "lothar"}
    assert cli.ok("audit", "m")
