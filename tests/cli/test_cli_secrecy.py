"""Secrecy: what is public (status, show, log, export before reveal-seed, audit) and what
other players receive (private --json and text) never holds a player's unrevealed roll,
sealed choice or salt, treasure tile values, or the server seed."""

from __future__ import annotations

import json

import pytest
import random
import sqlite3


SHOW_FORMATS = ("text", "markdown", "bbcode", "html")


def public_outputs(cli, game: str) -> dict[str, str]:
    """Everything anyone may read about ``game``: name -> output text."""
    out = {
        "status": cli.ok("status", game).stdout,
        "status --json": cli.ok("status", game, "--json").stdout,
        "log": cli.ok("log", game).stdout,
        "log --json": cli.ok("log", game, "--json").stdout,
        "export": cli.ok("export", game).stdout,
        "games": cli.ok("games", "--json").stdout,
        "show --json": cli.ok("show", game, "--json").stdout,
    }
    for fmt in SHOW_FORMATS:
        out[f"show --format {fmt}"] = cli.ok("show", game, "--format", fmt).stdout
    audit = cli("audit", game, "--json")
    assert audit.exit_code in (0, 3) and json.loads(audit.stdout)["ok"], audit.stderr  # OK or INCOMPLETE
    out["audit --json"] = audit.stdout
    return out


def private_outputs(cli, game: str, player: str) -> dict[str, str]:
    return {f"private {player}": cli.ok("private", game, player).stdout,
            f"private {player} --json": cli.ok("private", game, player, "--json").stdout}


def json_outputs(outputs: dict[str, str]) -> dict[str, object]:
    """The outputs that are JSON (or JSON Lines), parsed."""
    parsed = {}
    for name, text in outputs.items():
        if name == "export":
            parsed[name] = [json.loads(line) for line in text.splitlines()]
        elif "--json" in name:
            parsed[name] = json.loads(text)
    return parsed


def leaves(value, path=()):
    """Every (path, leaf) of a JSON value; a path is a tuple of keys and indexes."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))
    else:
        yield path, value


def _select(cli, game, player):
    return next(r for r in cli.json("private", game, player)["requests"] if r["sealed"])


def _seed(path, game) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("select value from secrets where game = ? and name = 'server_seed'", (game,)).fetchone()[0]
    finally:
        conn.close()


def _held(path, game, player) -> dict:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("select name, value from secrets where game = ? and name like ?",
                            (game, f"held/%/{player}")).fetchall()
    finally:
        conn.close()
    assert len(rows) == 1, rows
    return json.loads(rows[0][1])


def _roll_text(roll: dict) -> str:
    return ", ".join(f"{d}={f}" for d, f in roll.items())


# ---------------------------------------------------------------------- rolls


def test_unrevealed_rolls_stay_with_their_player(cli, new_game, helpers):
    new_game("g")
    players = helpers.PLAYERS
    own = {p: cli.json("private", "g", p) for p in players}
    rolls = {p: own[p]["view"]["boards"][p]["roll"] for p in players}
    assert all(len(r) == 5 for r in rolls.values())
    others = {p: private_outputs(cli, "g", p) for p in players}

    def check(stage: str, hidden: set[str]):
        public = public_outputs(cli, "g")
        for player in hidden:
            roll = rolls[player]
            for viewer in players:
                if viewer == player:
                    continue
                view = json.loads(others[viewer][f"private {viewer} --json"])
                board = view["view"]["boards"][player]
                assert "roll" not in board, f"{stage}: {viewer} sees {player}'s roll"
                for path, value in leaves(view):
                    assert "roll" not in path or path[:3] == ("view", "boards", viewer), \
                        f"{stage}: {viewer}'s view holds a roll at {path}"
                if rolls[viewer] != roll:
                    assert _roll_text(roll) not in others[viewer][f"private {viewer}"], stage
            for name, parsed in json_outputs(public).items():
                for path, value in leaves(parsed):
                    assert "roll" not in path, f"{stage}: {name} holds a roll at {path}"
            for name, text in public.items():
                assert _roll_text(roll) not in text, f"{stage}: {name} shows {player}'s roll"

    check("nobody committed", set(players))
    # the player sees their own roll, in JSON and in text
    assert _roll_text(rolls["ani"]) in cli.ok("private", "g", "ani").stdout or \
        all(f in cli.ok("private", "g", "ani").stdout for f in rolls["ani"].values())
    sealed = {p: cli.json("seal", "g", p, _select(cli, "g", p)["default"]) for p in players}
    for player in players[:-1]:
        cli.ok("commit", "g", player, sealed[player]["commitment"])
    others = {p: private_outputs(cli, "g", p) for p in players}
    check("three committed", set(players))


# ---------------------------------------------------------------------- choices and salts


def test_sealed_choices_and_salts_stay_secret_until_revealed(cli, new_game, helpers, pbem_db):
    new_game("g")
    rnd = random.Random(11)
    players = helpers.PLAYERS
    sealed = {}
    for player in ("ani", "alex"):
        sealed[player] = cli.json("seal", "g", player, helpers.pick(_select(cli, "g", player), rnd))
        cli.ok("commit", "g", player, sealed[player]["commitment"])
    cli.ok("commit", "g", "frank", "--choice", helpers.pick(_select(cli, "g", "frank"), rnd))
    frank = _held(pbem_db, "g", "frank")  # what the moderator's tool sealed for frank
    secret = {"ani": sealed["ani"], "alex": sealed["alex"], "frank": frank}

    def check(stage: str, hidden: list[str]):
        outputs = public_outputs(cli, "g")
        for viewer in players:
            outputs.update(private_outputs(cli, "g", viewer))
        for player in hidden:
            salt, choice = secret[player]["salt"], secret[player]["choice"]
            for name, text in outputs.items():
                if name.startswith(f"private {player}") and player != "frank":
                    continue
                assert salt not in text and salt.upper() not in text, f"{stage}: {name} holds {player}'s salt"
            for name, parsed in json_outputs(outputs).items():
                if name.startswith(f"private {player}"):
                    continue
                for path, value in leaves(parsed):
                    if path and path[-1] in ("choice", "applied", "selected", "revealed", "salt"):
                        assert value != choice or not _about(parsed, path, player), \
                            f"{stage}: {name} holds {player}'s sealed choice at {path}"
                    assert value != salt, f"{stage}: {name} holds {player}'s salt at {path}"

    check("three of four committed", ["ani", "alex", "frank"])
    lothar = cli.json("seal", "g", "lothar", helpers.pick(_select(cli, "g", "lothar"), rnd))
    cli.ok("commit", "g", "lothar", lothar["commitment"])
    secret["lothar"] = lothar
    # every commitment is in: the moderator revealed frank's; the others are still sealed
    check("all committed", ["ani", "alex", "lothar"])
    cli.ok("reveal", "g", "ani", sealed["ani"]["choice"], sealed["ani"]["salt"])
    check("ani revealed", ["alex", "lothar"])


def _about(document, path, player) -> bool:
    """Whether the object holding ``path`` concerns ``player`` (its 'player' field, or a
    'boards' entry of that player)."""
    node = document
    for key in path[:-1]:
        if isinstance(node, dict) and node.get("player") == player:
            return True
        node = node[key]
        if key == player:
            return True
    return isinstance(node, dict) and node.get("player") == player


# ---------------------------------------------------------------------- treasure tiles


HIDDEN_KEYS = {"tile_values", "secret", "kept", "returned"}


def test_treasure_tile_values_stay_with_their_owner(cli, new_game, helpers):
    """Tile values (1-3) are small numbers that appear everywhere, so the check is on the
    structure: no field that holds tile values (or an effect's secret part) reaches anyone
    but the owner; others see only how many tiles a player has."""
    # a random game reaches two tile holders before its end almost always; when it does
    # not, take the next game (the seed is random, so each game is a fresh try)
    for attempt in range(8):
        game = f"g{attempt}"
        driver = new_game(game)
        try:
            session = driver.until(lambda s: not s.finished and sum(
                1 for p in s.players if s.rules.view(s.state, p)["boards"][p]["tile_values"]) >= 2)
            break
        except AssertionError as exc:
            if "ended before" not in str(exc):
                raise
    else:
        pytest.fail("eight games ended before two players held treasure tiles")
    owners = {}
    for player in helpers.PLAYERS:
        board = cli.json("private", game, player)["view"]["boards"][player]
        if board["tile_values"]:
            owners[player] = board["tile_values"]
            assert board["tiles"] == len(board["tile_values"])
            assert all(v in (1, 2, 3) for v in board["tile_values"])
    assert len(owners) >= 2, owners
    outputs = public_outputs(cli, game)
    for viewer in helpers.PLAYERS:
        outputs.update(private_outputs(cli, game, viewer))
    for name, parsed in json_outputs(outputs).items():
        viewer = name.split()[1] if name.startswith("private") else None
        for path, value in leaves(parsed):
            keys = [k for k in path if isinstance(k, str)]
            own = viewer is not None and _about(parsed, path, viewer)
            hidden = HIDDEN_KEYS & set(keys)
            assert not hidden or own, f"{name}: {sorted(hidden)} at {path}"
            tile_keys = [k for k in keys if "tile" in k.lower() or "treasure" in k.lower()]
            listed = isinstance(path[-1], int) and isinstance(value, int) and not isinstance(value, bool)
            assert not (tile_keys and listed) or own, f"{name}: tile values listed at {path}"
        if isinstance(parsed, dict) and "view" in parsed:
            for player, values in owners.items():
                board = parsed["view"]["boards"][player]
                assert board["tiles"] == len(values)  # others see how many
                if player != viewer:
                    assert "tile_values" not in board
    assert not session.finished


# ---------------------------------------------------------------------- the server seed


def test_server_seed_appears_nowhere_before_it_is_revealed(cli, new_game, helpers, pbem_db):
    driver = new_game("g")
    driver.until(lambda s: s.state.round >= 2 and s.sealed is not None)
    seed = _seed(pbem_db, "g")
    assert len(seed) == 64
    outputs = public_outputs(cli, "g")
    for player in helpers.PLAYERS:
        outputs.update(private_outputs(cli, "g", player))
    sealer = next(p for p in helpers.PLAYERS if any(r["sealed"] for r in cli.json("private", "g", p)["requests"]))
    outputs["seal"] = cli.ok("seal", "g", sealer, _select(cli, "g", sealer)["default"]).stdout
    for name, text in outputs.items():
        assert seed not in text.lower(), f"{name} holds the server seed"
    assert cli.json("status", "g")["seed_revealed"] is False
    # a mid-game reveal-seed is refused (it would let anyone predict every later roll)
    cli.refused("g", "reveal-seed", "g", match="--force")
    # with --force it is published and play ends for good
    assert cli.json("reveal-seed", "g", "--force")["seed"] == seed
    assert any(r["kind"] == "seed_revealed" and r["data"]["seed"] == seed for r in cli.log("g"))
    status = cli.json("status", "g")
    assert status["seed_revealed"] is True and status["waiting"] == []
    player = next(p for p in helpers.PLAYERS if p != "ani")
    cli.refused("g", "commit", "g", player, "ab" * 32, match="published")
    cli.refused("g", "nmr", "g", player, "--force")
    cli.refused("g", "reveal-seed", "g", "--force", match="already")
    assert cli.json("audit", "g")["ok"]


def test_server_seed_hidden_before_play(cli, new_game, pbem_db):
    new_game("g", start=False)
    cli.ok("client-seed", "g", "ani", "words")
    seed = _seed(pbem_db, "g")
    outputs = {"status": cli.ok("status", "g").stdout, "status --json": cli.ok("status", "g", "--json").stdout,
               "log --json": cli.ok("log", "g", "--json").stdout, "export": cli.ok("export", "g").stdout,
               "private": cli.ok("private", "g", "ani", "--json").stdout}
    for name, text in outputs.items():
        assert seed not in text.lower(), f"before the start: {name} holds the server seed"
    cli.refused("g", "reveal-seed", "g")
