"""Refused submissions through the command line: exit status 1, a one-line reason on stderr,
and the log exactly as before (same events, same chain head, same ``log --json``).
Usage errors exit 2, also changing nothing.
"""

from __future__ import annotations

import itertools
import json

import pytest

from pbem.protocol.armour import armour, extract_blocks
from pbem.protocol.commit import make_commitment, new_salt

LETTERS = "ABCDE"
ALL_SELECTIONS = [",".join(c) for n in range(1, 6) for c in itertools.combinations(LETTERS, n)] + ["none"]
# ("none" is illegal whenever some die fits: the only illegal choice when all five show one action)


def _select_request(cli, game: str, player: str) -> dict:
    private = cli.json("private", game, player)
    return next(r for r in private["requests"] if r["sealed"])


def _legal(cli, game, player) -> str:
    return _select_request(cli, game, player)["options"][0]


def _illegal_selection(cli, game, player) -> str:
    options = _select_request(cli, game, player)["options"]
    return next(s for s in ALL_SELECTIONS if s not in options)


def _seal(cli, game, player, choice=None, *extra) -> dict:
    return cli.json("seal", game, player, choice or _legal(cli, game, player), *extra)


@pytest.fixture
def step(new_game, cli):
    """Game "g", started; the first sealed step is open and waits for all four players."""
    new_game("g")
    return cli


# ---------------------------------------------------------------------- commit and reveal


def test_reveal_before_all_commitments_are_in_is_held_unseen(step, helpers):
    """docs/protocol.md, "A reveal sent early": checked now, kept out of the log (and out of
    everything the others see) until the last commitment, then recorded as the player's."""
    cli = step
    ani = _seal(cli, "g", "ani")
    cli.refused("g", "reveal", "g", "ani", ani["choice"], ani["salt"], match="no commitment in step 1.1 yet")
    cli.ok("commit", "g", "ani", ani["commitment"])
    before = cli.snapshot("g")
    other = _seal(cli, "g", "ani", ani["choice"])  # the same choice under another salt opens nothing
    cli.refused("g", "reveal", "g", "ani", other["choice"], other["salt"], match="does not match ani's commitment")
    held = cli.ok("reveal", "g", "ani", ani["choice"], ani["salt"]).stdout
    assert "held" in held and "once every commitment of the step is in" in held
    assert cli.snapshot("g") == before  # nothing in the log, the status or the head
    for where in (cli("log", "g").stdout, cli("status", "g").stdout, cli("private", "g", "alex").stdout):
        assert ani["salt"] not in where
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS if p != "ani"}
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    reveals = [e for e in cli.json("log", "g") if e["kind"] == "reveal"]
    assert [(e["data"]["player"], e["data"]["salt"], e["data"]["by"]) for e in reveals] == [("ani", ani["salt"], "player")]
    assert "already recorded" in cli.ok("reveal", "g", "ani", ani["choice"], ani["salt"]).stdout
    assert cli.ok("audit", "g").stdout.startswith(("OK", "INCOMPLETE"))


def test_an_early_reveal_is_dropped_by_a_new_commitment(step, helpers):
    cli = step
    first = _seal(cli, "g", "ani")
    cli.ok("commit", "g", "ani", first["commitment"])
    cli.ok("reveal", "g", "ani", first["choice"], first["salt"])
    second = _seal(cli, "g", "ani")
    cli.ok("commit", "g", "ani", second["commitment"])  # replaces the first: its reveal opens nothing now
    for player in helpers.PLAYERS[1:]:
        s = _seal(cli, "g", player)
        cli.ok("commit", "g", player, s["commitment"])
    assert not [e for e in cli.json("log", "g") if e["kind"] == "reveal"]
    assert "ani" in [w["player"] for w in cli.json("status", "g")["waiting"]]
    cli.ok("reveal", "g", "ani", second["choice"], second["salt"])


def test_an_early_reveal_of_an_illegal_choice_is_refused_with_why(step):
    cli = step
    choice, salt = _illegal_selection(cli, "g", "ani"), new_salt()  # pbem seal would refuse it
    cli.ok("commit", "g", "ani", make_commitment("g", 1, 1, "ani", choice, salt))
    reason = cli.refused("g", "reveal", "g", "ani", choice, salt, match="is not allowed")
    assert "commit a legal choice instead" in reason


def test_commitment_after_the_first_reveal(step, helpers):
    cli = step
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS}
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    # once every commitment is in, none can be replaced, before and after the first reveal
    fresh = _seal(cli, "g", "alex")
    cli.refused("g", "commit", "g", "alex", fresh["commitment"], match="no longer")
    cli.ok("reveal", "g", "ani", sealed["ani"]["choice"], sealed["ani"]["salt"])
    cli.refused("g", "commit", "g", "alex", fresh["commitment"], match="no longer")
    again = make_commitment("g", 1, 1, "ani", sealed["ani"]["choice"], new_salt())
    cli.refused("g", "commit", "g", "ani", again, match="no longer")
    # the same reveal again changes nothing; a different one is refused
    again = cli.ok("reveal", "g", "ani", sealed["ani"]["choice"], sealed["ani"]["salt"])
    assert "already recorded; nothing changed" in again.stdout
    cli.refused("g", "reveal", "g", "ani", sealed["ani"]["choice"], new_salt(), match="cannot be changed")


def test_wrong_salt_different_choice_and_malformed_reveals(step, helpers):
    cli = step
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS}
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    alex = sealed["alex"]
    other_choice = next(o for o in _select_request(cli, "g", "alex")["options"] if o != alex["choice"])
    cli.refused("g", "reveal", "g", "alex", alex["choice"], new_salt(), match="does not match")
    cli.refused("g", "reveal", "g", "alex", alex["choice"], sealed["frank"]["salt"], match="does not match")
    cli.refused("g", "reveal", "g", "alex", other_choice, alex["salt"], match="does not match")
    # another player's full reveal does not open alex's commitment
    frank = sealed["frank"]
    cli.refused("g", "reveal", "g", "alex", frank["choice"], frank["salt"], match="does not match")
    cli.refused("g", "reveal", "g", "alex", alex["choice"], "zz" * 32, match="salt must be 64 hexadecimal")
    cli.refused("g", "reveal", "g", "alex", alex["choice"], alex["salt"][:-2], match="salt must be 64 hexadecimal")
    # and the right reveal still goes through afterwards
    cli.ok("reveal", "g", "alex", alex["choice"], alex["salt"])


def test_copied_commitment_of_another_player(step):
    cli = step
    ani = _seal(cli, "g", "ani")
    cli.ok("commit", "g", "ani", ani["commitment"])
    cli.refused("g", "commit", "g", "alex", ani["commitment"], match="another player")
    cli.refused("g", "commit", "g", "alex", ani["commitment"].upper(), match="another player")


def test_malformed_commitments(step):
    cli = step
    good = _seal(cli, "g", "ani")["commitment"]
    cli.refused("g", "commit", "g", "ani", "xyz", match="64 hexadecimal")
    cli.refused("g", "commit", "g", "ani", good[:-1], match="64 hexadecimal")
    cli.refused("g", "commit", "g", "ani", good + "0", match="64 hexadecimal")
    cli.refused("g", "commit", "g", "ani", "g" + good[1:], match="64 hexadecimal")


def test_commitment_for_another_step_or_round(new_game, cli, helpers):
    driver = new_game("g")
    # --step naming a step that is not open
    ani = _seal(cli, "g", "ani")
    cli.refused("g", "commit", "g", "ani", ani["commitment"], "--step", "1.2", match="open sealed step is round 1 step 1")
    cli.refused("g", "commit", "g", "ani", ani["commitment"], "--step", "2.1", match="round 2 step 1")
    cli.refused("g", "commit", "g", "ani", ani["commitment"], "--step", "0.0")
    # sealed for step 1.1 but not used there: play the step with other seals
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS}
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    for player, s in sealed.items():
        cli.ok("reveal", "g", player, s["choice"], s["salt"])
    cli.refused("g", "reveal", "g", "ani", ani["choice"], ani["salt"], "--step", "1.1")
    # move on (with bots) to the next sealed step in which ani rolls
    session = driver.until(lambda s: s.sealed is not None and (s.sealed.round, s.sealed.step) != (1, 1)
                           and "ani" in s.sealed.waiting)
    r, s = session.sealed.round, session.sealed.step
    # the old step's commitment is accepted as opaque text, but its reveal cannot open it here
    cli.ok("commit", "g", "ani", ani["commitment"])
    others = {p: _seal(cli, "g", p) for p in session.sealed.waiting if p != "ani"}
    for player, o in others.items():
        cli.ok("commit", "g", player, o["commitment"])
    reason = cli.refused("g", "reveal", "g", "ani", ani["choice"], ani["salt"], match="does not match")
    assert f"{r}.{s}" in reason
    cli.refused("g", "reveal", "g", "ani", ani["choice"], ani["salt"], "--step", "1.1",
                match=f"open sealed step is round {r} step {s}")
    cli.refused("g", "commit", "g", "ani", ani["commitment"], "--step", "1.1")


# ---------------------------------------------------------------------- choices and decisions


def test_illegal_sealed_choices(step):
    cli = step
    illegal = _illegal_selection(cli, "g", "ani")
    cli.refused("g", "seal", "g", "ani", illegal, match="illegal")
    cli.refused("g", "seal", "g", "ani", "Z", match="not understood")
    cli.refused("g", "commit", "g", "ani", "--choice", illegal, match="illegal")
    token = cli.json("private", "g", "ani")["context"]
    cli.refused("g", "seal", "--context", token, illegal, match="illegal")
    cli.refused("g", "seal", "--context", token[:-3], "A", match="token")
    cli.refused("g", "seal", "--context", "not-a-token", "A", match="token")


def test_committed_illegal_choice_gets_the_default_and_the_log_says_why(step, helpers):
    """A player who seals an illegal choice by hand gets the documented default at reveal."""
    cli = step
    illegal = _illegal_selection(cli, "g", "ani")
    default = _select_request(cli, "g", "ani")["default"]
    salt = new_salt()
    cli.ok("commit", "g", "ani", make_commitment("g", 1, 1, "ani", illegal, salt))
    others = {p: _seal(cli, "g", p) for p in helpers.PLAYERS if p != "ani"}
    for player, s in others.items():
        cli.ok("commit", "g", player, s["commitment"])
    cli.ok("reveal", "g", "ani", illegal, salt)
    event = cli.log("g")[-1]
    assert event["kind"] == "reveal" and event["data"]["choice"] == illegal
    assert event["data"]["applied"] == default and "illegal" in event["data"]["illegal"]
    for player, s in others.items():
        cli.ok("reveal", "g", player, s["choice"], s["salt"])
    cli.ok("audit", "g")


def test_decisions_from_players_not_asked_and_illegal_decisions(new_game, cli, helpers):
    driver = new_game("g")
    session = driver.until(lambda s: any(not r.sealed for r in s.pending()))
    request = next(r for r in session.pending() if not r.sealed)
    asked = request.player
    idle = [p for p in helpers.PLAYERS if not session.requests_of(p)]
    sealed_players = [p for p in helpers.PLAYERS if any(r.sealed for r in session.requests_of(p))]
    private = cli.json("private", "g", asked)
    entry = next(r for r in private["requests"] if r["kind"] == request.kind)
    for player in idle:
        cli.refused("g", "decide", "g", player, entry["default"], match="owes no")
    for player in sealed_players:
        cli.refused("g", "decide", "g", player, entry["default"], match="sealed")
    cli.refused("g", "decide", "g", asked, "nonsense")
    cli.refused("g", "decide", "g", asked, "")
    other_kind = "fleet:go" if request.kind != "fleet" else "crew:go"
    cli.refused("g", "decide", "g", asked, other_kind)
    if entry.get("options"):
        actions = ("fleet", "crew", "hunt", "board", "raid")
        candidates = [f"{request.kind}:{a}" for a in actions] + [f"{request.kind}:go", f"{request.kind}:forfeit"]
        for candidate in candidates:
            if candidate not in entry["options"]:
                cli.refused("g", "decide", "g", asked, candidate)
    cli.ok("decide", "g", asked, entry["default"])
    cli.ok("audit", "g")


# ---------------------------------------------------------------------- names


@pytest.mark.parametrize("args", [
    ("status", "nogame"), ("private", "nogame", "ani"), ("log", "nogame"), ("export", "nogame"),
    ("audit", "nogame"), ("show", "nogame"), ("reveal-seed", "nogame"), ("seal", "nogame", "ani", "A"),
    ("commit", "nogame", "ani", "ab" * 32), ("reveal", "nogame", "ani", "A", "ab" * 32),
    ("decide", "nogame", "ani", "skull:fleet"), ("nmr", "nogame", "ani"), ("start", "nogame"),
    ("client-seed", "nogame", "ani", "x"), ("commit", "nogame", "ani", "--choice", "A"),
])
def test_unknown_game(step, args):
    step.refused("g", *args, match="no game 'nogame'")


@pytest.mark.parametrize("args", [
    ("private", "g", "zed"), ("seal", "g", "zed", "A"), ("commit", "g", "zed", "ab" * 32),
    ("commit", "g", "zed", "--choice", "A"), ("reveal", "g", "zed", "A", "ab" * 32),
    ("decide", "g", "zed", "skull:fleet"), ("nmr", "g", "zed"),
])
def test_unknown_player(step, args):
    step.refused("g", *args, match="no player 'zed'")


def test_unknown_player_before_start(new_game, cli):
    new_game("g", start=False)
    cli.refused("g", "client-seed", "g", "zed", "words", match="no player 'zed'")
    cli.refused("g", "key", "g", "zed", cli.json("keygen")["public_key"], match="no player 'zed'")
    cli.refused("g", "new", "h", "--players", "ani,alex", "--key", "zed=" + cli.json("keygen")["public_key"],
                match="zed")
    assert cli.json("games")["games"] == ["g"]


# ---------------------------------------------------------------------- signatures


@pytest.fixture
def signed(cli, tmp_path, pbem_db, helpers):
    """Game "s" requiring signatures; keys from keygen, two registered at new, two with key."""
    keys = {}
    for player in helpers.PLAYERS:
        path = tmp_path / f"{player}.key"
        out = cli.json("keygen", "-o", path)
        assert "secret_key" not in out and path.read_text().strip()
        keys[player] = (path, out["public_key"])
    cli.ok("new", "s", "--players", ",".join(helpers.PLAYERS), "--require-signatures",
           "--key", f"ani={keys['ani'][1]}", "--key", f"alex={keys['alex'][1]}")
    cli.ok("key", "s", "frank", keys["frank"][1])
    cli.ok("key", "s", "lothar", keys["lothar"][1])
    cli.ok("start", "s")
    assert cli.json("status", "s")["require_signatures"] is True
    return keys


def _signed_seal(cli, keys, player, signer=None):
    return cli.json("seal", "s", player, _legal(cli, "s", player), "--key", keys[signer or player][0])


def _block_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_signatures_missing_invalid_and_replayed(cli, signed, tmp_path, helpers):
    keys = signed
    ani = _signed_seal(cli, keys, "ani")
    # missing: a plain commitment
    cli.refused("s", "commit", "s", "ani", ani["commitment"], match="requires signed")
    cli.refused("s", "seal", "s", "ani", ani["choice"], match="add --key")  # pbem will not make one
    unsigned = extract_blocks(ani["commit_block"])[0]
    del unsigned["sig"]  # an unsigned block made by hand
    cli.refused("s", "submit", "s", _block_file(tmp_path, "u.txt", armour(unsigned)), match="requires signed")
    # invalid: alex's block signed with frank's key
    forged = _signed_seal(cli, keys, "alex", signer="frank")
    cli.refused("s", "submit", "s", _block_file(tmp_path, "f.txt", forged["commit_block"]), match="not valid")
    # invalid: a signed block whose body was changed afterwards
    payload = extract_blocks(ani["commit_block"])[0]
    payload["body"]["commitment"] = _signed_seal(cli, keys, "ani")["commitment"]
    cli.refused("s", "submit", "s", _block_file(tmp_path, "c.txt", armour(payload)), match="not valid")
    payload = extract_blocks(ani["commit_block"])[0]
    payload["body"]["player"] = "alex"
    cli.refused("s", "submit", "s", _block_file(tmp_path, "p.txt", armour(payload)), match="not valid")
    # the same signed block twice: recorded once (a repeat, not a replay)
    block = _block_file(tmp_path, "ani-commit.txt", ani["commit_block"])
    accepted = cli.json("submit", "s", block)
    assert accepted["accepted"] == [{"kind": "commit", "player": "ani", "round": 1, "step": 1,
                                     "already_recorded": False}]
    logged = cli.log("s")
    assert cli.json("submit", "s", block)["accepted"][0]["already_recorded"] is True
    assert cli.log("s") == logged
    # the rest commit with signed blocks sent together in one mail (quoted, as a reply would)
    others = {p: _signed_seal(cli, keys, p) for p in helpers.PLAYERS if p != "ani"}
    mail = "Moves below.\n\n" + "\n".join("> " + line for o in others.values()
                                          for line in o["commit_block"].splitlines())
    cli.ok("submit", "s", _block_file(tmp_path, "mail.txt", mail))
    # a plain reveal is refused: reveals must be signed too
    cli.refused("s", "reveal", "s", "ani", ani["choice"], ani["salt"], match="requires signed")
    reveal = _block_file(tmp_path, "ani-reveal.txt", ani["reveal_block"])
    cli.ok("submit", "s", reveal)
    assert cli.json("submit", "s", reveal)["already_recorded"] is True
    for player, o in others.items():
        cli.ok("submit", "s", _block_file(tmp_path, f"{player}-reveal.txt", o["reveal_block"]))
    assert cli.json("status", "s")["chain_head"]["seq"] == 12  # created, 2 keys, started, 4 + 4
    assert cli.json("audit", "s")["ok"]
    signed_events = [r for r in cli.log("s") if r["kind"] in ("commit", "reveal")]
    assert len(signed_events) == 8 and all(r["data"].get("signature") for r in signed_events)


def test_signed_game_decisions(cli, signed, tmp_path, driver_for, helpers):
    """Open decisions in a signed game need a signed block too, and a player can make one."""
    keys = signed
    driver = driver_for("s", _signed_driver(helpers.Driver, keys))
    session = driver.until(lambda s: any(not r.sealed for r in s.pending()))
    request = next(r for r in session.pending() if not r.sealed)
    player = request.player
    entry = next(r for r in cli.json("private", "s", player)["requests"] if r["kind"] == request.kind)
    cli.refused("s", "decide", "s", player, entry["default"], match="requires signed")
    before = cli.log("s")
    made = cli.json("decide", "s", player, entry["default"], "--key", keys[player][0])
    other = next(p for p in keys if p != player)
    forged = cli.json("decide", "s", player, entry["default"], "--key", keys[other][0])
    assert cli.log("s") == before  # making a block records nothing
    cli.refused("s", "submit", "s", _block_file(tmp_path, "forged.txt", forged["block"]), match="not valid")
    block = _block_file(tmp_path, "decision.txt", made["block"])
    accepted = cli.json("submit", "s", block)["accepted"]
    assert [(a["kind"], a["player"], a["already_recorded"]) for a in accepted] == [("decide", player, False)]
    last = cli.log("s")[-1]
    assert last["kind"] == "decide" and last["data"]["signature"] and last["data"]["player"] == player
    logged = cli.log("s")
    assert cli.json("submit", "s", block)["accepted"][0]["already_recorded"] is True  # no longer owed: a repeat
    assert cli.log("s") == logged
    assert cli.json("audit", "s")["ok"]


def _signed_driver(Driver, keys):
    """A Driver class that moves a signed game on with bots, signing every submission."""
    from pbem.protocol import commands, offline, submissions

    def secret(player):
        return keys[player][0].read_text(encoding="utf-8").strip()

    class SignedDriver(Driver):
        def move(self, seed="bots"):
            session = self.session()
            bots = self.bots(session, seed)
            step = session.sealed
            if step is None:
                request = session.pending()[0]
                choice = bots[request.player].choose(session.state, request.player, request.kind)
                block = offline.decision_block(session, request.player, choice, secret(request.player))
                submissions.submit(self.store, self.game, block, at=self.at)
                return
            held = {}
            for player in step.owes_commit():
                sealed = commands.seal(session, player, bots[player].choose(session.state, player, "select"))
                held[player] = offline.signed_blocks(sealed, secret(player))
                submissions.submit(self.store, self.game, held[player]["commit"], at=self.at)
            for blocks in held.values():
                submissions.submit(self.store, self.game, blocks["reveal"], at=self.at)

    return SignedDriver


# ---------------------------------------------------------------------- usage errors


@pytest.mark.parametrize("args", [
    ("bogus",), ("status",), ("commit", "g", "ani"), ("commit", "g", "ani", "ab" * 32, "--choice", "A"),
    ("commit", "g", "ani", "ab" * 32, "--step", "x"), ("reveal", "g", "ani"), ("reveal", "g", "ani", "A", "ab" * 32, "--step", "3"),
    ("seal", "g", "ani"), ("seal", "--context", "pbem1.x.y"), ("seal", "--context", "pbem1.x.y", "A", "B"),
    ("audit",), ("audit", "g", "--file", "x.jsonl"), ("audit", "g", "--head", "12"),
    ("new", "h"), ("new", "h", "--players", "a,b", "--deadline", "soon"),
    ("new", "h", "--players", "a,b", "--key", "noequals"), ("log", "g", "extra"), ("demo", "--players", "9"),
    ("demo", "--game", "chess"), ("demo", "--game", "tortuga1667", "--players", "3"), ("demo", "--players", "1"),
    ("status", "g", "--no-such-option"),
])
def test_usage_errors_exit_2(step, args):
    reason = step.refused("g", *args, code=2)
    assert "Traceback" not in reason


def test_refusals_leave_the_game_playable(step, helpers):
    """After a burst of refusals the step still completes and the log audits clean."""
    cli = step
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS}
    for player, s in sealed.items():
        assert cli("reveal", "g", player, s["choice"], s["salt"]).exit_code == 1
        assert cli("commit", "g", player, "0" * 63).exit_code == 1
        cli.ok("commit", "g", player, s["commitment"])
    for player, s in sealed.items():
        assert cli("reveal", "g", player, s["choice"], new_salt()).exit_code == 1
        cli.ok("reveal", "g", player, s["choice"], s["salt"])
    report = cli.json("audit", "g")
    assert report["ok"] and report["events"] == len(cli.log("g"))
    assert json.dumps(report)  # a plain JSON report
