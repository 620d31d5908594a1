"""The same thing twice is recorded once (issue 7, item 3): a repeat of exactly what the
log holds exits 0 and says "already recorded; nothing changed", with the log byte for byte
as before; a different choice for something already recorded is refused."""

from __future__ import annotations

import re

import pytest

from pbem.protocol.armour import armour, extract_blocks
from pbem.protocol.commit import new_salt
from pbem.protocol.signing import sign

REPEAT = "already recorded; nothing changed"


def _options(cli, game, player) -> list[str]:
    return next(r for r in cli.json("private", game, player)["requests"] if r["sealed"])["options"]


def _seal(cli, game, player, *extra, pick=0) -> dict:
    return cli.json("seal", game, player, _options(cli, game, player)[pick], *extra)


def repeat(cli, game, *args, input=None):
    """Run a command that repeats what is recorded: exit 0, says so, changes nothing."""
    logged = cli.ok("log", game, "--json").stdout
    result = cli.ok(*args, input=input)
    assert REPEAT in result.stdout, result.stdout
    assert cli.ok("log", game, "--json").stdout == logged
    report = cli.json(*args, input=input)
    assert report["already_recorded"] is True and all(a["already_recorded"] for a in report["accepted"])
    assert cli.ok("log", game, "--json").stdout == logged
    return report


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def step(new_game, cli, helpers):
    """Game "g" in its first sealed step, everyone sealed (not yet committed)."""
    driver = new_game("g")
    sealed = {p: _seal(cli, "g", p) for p in helpers.PLAYERS}
    return driver, sealed


def _next_sealed_step_with(driver, player):
    return driver.until(lambda s: s.sealed is not None and (s.sealed.round, s.sealed.step) != (1, 1)
                        and player in s.sealed.waiting and not s.sealed.commits)


# ---------------------------------------------------------------------- commit and reveal


def test_commit_and_reveal_repeated_in_their_step_and_after_it(cli, step, helpers):
    driver, sealed = step
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    report = repeat(cli, "g", "commit", "g", "ani", sealed["ani"]["commitment"])
    assert report["accepted"][0] | {"kind": "commit", "player": "ani", "round": 1, "step": 1} == report["accepted"][0]
    ani = sealed["ani"]
    cli.ok("reveal", "g", "ani", ani["choice"], ani["salt"])
    repeat(cli, "g", "reveal", "g", "ani", ani["choice"], ani["salt"])
    repeat(cli, "g", "reveal", "g", "ani", ani["choice"].lower(), ani["salt"].upper())  # as a player may type it
    for player in ("alex", "frank", "lothar"):
        cli.ok("reveal", "g", player, sealed[player]["choice"], sealed[player]["salt"])
    # the step is over; the same mails processed again still change nothing
    session = _next_sealed_step_with(driver, "ani")
    repeat(cli, "g", "reveal", "g", "ani", ani["choice"], ani["salt"])
    repeat(cli, "g", "reveal", "g", "ani", ani["choice"], ani["salt"], "--step", "1.1")
    # a commitment binds its step: the old one sent again is not ani's commitment for the new step
    repeat(cli, "g", "commit", "g", "ani", ani["commitment"])
    repeat(cli, "g", "commit", "g", "ani", ani["commitment"], "--step", "1.1")
    assert cli.json("status", "g")["sealed_step"]["committed"] == []
    # ani now owes a reveal in the new step: the old reveal again is still a repeat
    new = {p: _seal(cli, "g", p) for p in session.sealed.waiting}
    for player, s in new.items():
        cli.ok("commit", "g", player, s["commitment"])
    repeat(cli, "g", "reveal", "g", "ani", ani["choice"], ani["salt"])
    cli.ok("reveal", "g", "ani", new["ani"]["choice"], new["ani"]["salt"])
    assert cli.json("audit", "g")["ok"]


def test_a_different_commitment_or_reveal_for_a_recorded_one_is_refused(cli, step, helpers):
    _driver, sealed = step
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    other = cli.json("seal", "g", "ani", _options(cli, "g", "ani")[-1])
    cli.refused("g", "commit", "g", "ani", other["commitment"], match="can no longer be made or replaced")
    ani = sealed["ani"]
    cli.ok("reveal", "g", "ani", ani["choice"], ani["salt"])
    cli.refused("g", "reveal", "g", "ani", other["choice"], other["salt"], match="cannot be changed")
    cli.refused("g", "reveal", "g", "ani", ani["choice"], new_salt(), match="cannot be changed")


def test_a_replaced_commitment_sent_again_is_a_replacement_while_commitments_are_open(cli, step):
    _driver, sealed = step
    first, second = sealed["ani"], cli.json("seal", "g", "ani", _options(cli, "g", "ani")[-1])
    cli.ok("commit", "g", "ani", first["commitment"])
    cli.ok("commit", "g", "ani", second["commitment"])
    result = cli.ok("commit", "g", "ani", first["commitment"])  # ani changed their mind back
    assert REPEAT not in result.stdout and "recorded" in result.stdout
    assert [e["data"]["commitment"] for e in cli.log("g") if e["kind"] == "commit"][-1] == first["commitment"]


def test_a_choice_sealed_on_receipt_repeated(cli, step, helpers):
    """A moderator who processes the mail "frank: B,C" twice expects one commitment; a
    different choice replaces it while commitments are open, and is refused after."""
    _driver, _sealed = step
    options = _options(cli, "g", "frank")
    cli.ok("commit", "g", "frank", "--choice", options[0])
    repeat(cli, "g", "commit", "g", "frank", "--choice", options[0].lower())
    cli.ok("commit", "g", "frank", "--choice", options[-1])  # frank changed his mind
    sealed = {p: _seal(cli, "g", p) for p in ("ani", "alex", "lothar")}
    for player, s in sealed.items():
        cli.ok("commit", "g", player, s["commitment"])
    # every commitment is in: the tool revealed frank's held choice
    assert any(e["kind"] == "reveal" and e["data"]["player"] == "frank" for e in cli.log("g"))
    repeat(cli, "g", "commit", "g", "frank", "--choice", options[-1])
    if len(options) > 1:
        cli.refused("g", "commit", "g", "frank", "--choice", options[0], match="can no longer be made or replaced")


# ---------------------------------------------------------------------- decisions


def test_decision_repeated_after_the_game_moved_on_and_a_different_one_refused(cli, new_game, helpers):
    driver = new_game("g")
    session = driver.until(lambda s: s.sealed is None and any(not r.sealed for r in s.pending()))
    request = next(r for r in session.pending() if not r.sealed)
    player = request.player
    cli.ok("decide", "g", player, request.default)
    repeat(cli, "g", "decide", "g", player, request.default)
    repeat(cli, "g", "decide", "g", player, request.default.upper())
    others = [o for o in (request.options or ()) if o != request.default]
    owes_now = cli.json("private", "g", player)["requests"]
    if others and not any(not r["sealed"] for r in owes_now):
        cli.refused("g", "decide", "g", player, others[0], match="recorded decision is final")
    # later in the game the same mail again is still a repeat (unless it is a valid decision then)
    driver.move()
    driver.move()
    if not any(request.default in (r.get("options") or ()) for r in cli.json("private", "g", player)["requests"]):
        repeat(cli, "g", "decide", "g", player, request.default)
    assert cli.json("audit", "g")["ok"]


# ---------------------------------------------------------------------- signed blocks


@pytest.fixture
def signed(cli, tmp_path, helpers):
    """Game "s" requiring signatures, started; returns each player's key file."""
    keys, publics = {}, []
    for player in helpers.PLAYERS:
        keys[player] = tmp_path / f"{player}.key"
        publics += ["--key", f"{player}={cli.json('keygen', '-o', keys[player])['public_key']}"]
    cli.ok("new", "s", "--players", ",".join(helpers.PLAYERS), "--require-signatures", *publics, "--now")
    return keys


def test_signed_commit_reveal_and_decision_repeated(cli, signed, tmp_path, helpers, driver_for):
    keys = signed
    sealed = {p: _seal(cli, "s", p, "--key", keys[p]) for p in helpers.PLAYERS}
    commit = _file(tmp_path, "ani-commit.txt", sealed["ani"]["commit_block"])
    cli.ok("submit", "s", commit)
    repeat(cli, "s", "submit", "s", commit)
    # a different body under a used nonce is still a replay, even validly signed
    body = dict(extract_blocks(sealed["ani"]["commit_block"])[0]["body"])
    body["commitment"] = _seal(cli, "s", "ani", "--key", keys["ani"])["commitment"]
    forged = armour({"body": body, "sig": sign(keys["ani"].read_text().strip(), body)})
    cli.refused("s", "submit", "s", _file(tmp_path, "forged.txt", forged), match="replayed")
    for player in ("alex", "frank", "lothar"):
        cli.ok("submit", "s", _file(tmp_path, f"{player}-commit.txt", sealed[player]["commit_block"]))
    repeat(cli, "s", "submit", "s", commit)  # after every commitment is in
    reveal = _file(tmp_path, "ani-reveal.txt", sealed["ani"]["reveal_block"])
    cli.ok("submit", "s", reveal)
    report = repeat(cli, "s", "submit", "s", reveal)
    assert report["accepted"][0]["kind"] == "reveal" and report["accepted"][0]["applied"] == sealed["ani"]["choice"]
    body["kind"], body["choice"], body["salt"] = "reveal", sealed["ani"]["choice"], new_salt()
    del body["commitment"]
    forged = armour({"body": body, "sig": sign(keys["ani"].read_text().strip(), body)})
    cli.refused("s", "submit", "s", _file(tmp_path, "forged.txt", forged), match="cannot be changed")
    for player in ("alex", "frank", "lothar"):
        cli.ok("submit", "s", _file(tmp_path, f"{player}-reveal.txt", sealed[player]["reveal_block"]))
    repeat(cli, "s", "submit", "s", reveal)  # after the step
    repeat(cli, "s", "submit", "s", commit)
    # an open decision, signed
    driver = driver_for("s")
    session = driver.session()
    while not any(not r.sealed for r in session.pending()):
        for player in session.sealed.owes_commit():
            s = _seal(cli, "s", player, "--key", keys[player])
            cli.ok("submit", "s", _file(tmp_path, "c.txt", s["commit_block"]))
            _file(tmp_path, f"{player}.r", s["reveal_block"])
        for player in list(session.sealed.waiting):
            cli.ok("submit", "s", tmp_path / f"{player}.r")
        session = driver.session()
    request = next(r for r in session.pending() if not r.sealed)
    made = cli.json("decide", "s", request.player, request.default, "--key", keys[request.player])
    decision = _file(tmp_path, "decision.txt", made["block"])
    cli.ok("submit", "s", decision)
    repeat(cli, "s", "submit", "s", decision)
    assert cli.json("audit", "s")["ok"]


def test_a_reply_quoting_the_earlier_block_records_only_the_new_one(cli, signed, tmp_path, helpers):
    keys = signed
    sealed = {p: _seal(cli, "s", p, "--key", keys[p]) for p in helpers.PLAYERS}
    cli.ok("submit", "s", _file(tmp_path, "ani-commit.txt", sealed["ani"]["commit_block"]))
    for player in ("alex", "frank", "lothar"):
        cli.ok("submit", "s", _file(tmp_path, f"{player}-commit.txt", sealed[player]["commit_block"]))
    quoted = "\n".join("> " + line for line in sealed["ani"]["commit_block"].splitlines())
    reply = _file(tmp_path, "reply.txt", f"Here is my reveal.\n\n{sealed['ani']['reveal_block']}\n\n"
                                         f"On Monday you wrote:\n> my commitment:\n{quoted}\n")
    before = len(cli.log("s"))
    result = cli.ok("submit", "s", reply)
    assert "reveal of ani for round 1 step 1 recorded" in result.stdout
    assert f"commitment of ani for round 1 step 1: {REPEAT}" in result.stdout
    log = cli.log("s")
    assert [e["kind"] for e in log[before:]] == ["reveal"]
    report = repeat(cli, "s", "submit", "s", reply)  # and the whole reply again: nothing new
    assert [(a["kind"], a["already_recorded"]) for a in report["accepted"]] == [("reveal", True), ("commit", True)]


def test_a_text_holding_the_same_new_block_twice_records_it_once(cli, signed, tmp_path, helpers):
    keys = signed
    ani = _seal(cli, "s", "ani", "--key", keys["ani"])
    report = cli.json("submit", "s", _file(tmp_path, "twice.txt", ani["commit_block"] + "\n\n" + ani["commit_block"]))
    assert [a["already_recorded"] for a in report["accepted"]] == [False, True]
    assert [e["kind"] for e in cli.log("s")].count("commit") == 1


def test_unsigned_blocks_repeated_in_a_reply(cli, step, tmp_path, helpers):
    """Unsigned blocks (a game without signatures): the quoted old block is skipped too."""
    _driver, sealed = step
    for player, s in sealed.items():
        cli.ok("submit", "g", _file(tmp_path, f"{player}.txt", s["commit_block"]))
    reply = sealed["ani"]["reveal_block"] + "\n" + re.sub("(?m)^", "> ", sealed["ani"]["commit_block"])
    report = cli.json("submit", "g", _file(tmp_path, "reply.txt", reply))
    assert [(a["kind"], a["already_recorded"]) for a in report["accepted"]] == [("reveal", False), ("commit", True)]
    repeat(cli, "g", "submit", "g", tmp_path / "reply.txt")


# ---------------------------------------------------------------------- the README's promise


def test_the_readme_promise_holds_for_every_kind(cli, step, tmp_path, helpers):
    """README: the same submission processed twice is a no-op, and blocks can be pasted
    into a reply. Every kind, sent twice, is recorded once."""
    readme = " ".join((helpers.REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "Anything processed twice is recorded once" in readme
    assert "paste them into a reply" in readme
    driver, sealed = step
    for player, s in sealed.items():
        mail = _file(tmp_path, f"{player}.txt", s["commit_block"])
        cli.ok("submit", "g", mail)
        repeat(cli, "g", "submit", "g", mail)
        repeat(cli, "g", "commit", "g", player, s["commitment"])
    for player, s in sealed.items():
        cli.ok("reveal", "g", player, s["choice"], s["salt"])
        repeat(cli, "g", "reveal", "g", player, s["choice"], s["salt"])
        repeat(cli, "g", "submit", "g", _file(tmp_path, f"{player}-r.txt", s["reveal_block"]))
    session = driver.until(lambda s: any(not r.sealed for r in s.pending()))
    request = next(r for r in session.pending() if not r.sealed)
    cli.ok("decide", "g", request.player, request.default)
    repeat(cli, "g", "decide", "g", request.player, request.default)
    assert cli.json("audit", "g")["ok"]


def test_a_replaced_commitment_says_so(cli, new_game):
    """Until every commitment is in, a player may replace their own: the last one counts,
    and the output says that it replaced the earlier one."""
    new_game("g")
    first = cli.json("private", "g", "ani")["requests"][0]
    options = first.get("options") or [first["default"]]
    cli.ok("commit", "g", "ani", "--choice", options[0])
    other = options[-1] if len(options) > 1 else options[0]
    out = cli.ok("commit", "g", "ani", "--choice", other).stdout
    if other != options[0]:
        assert "it replaces their earlier one" in out
        assert cli.json("commit", "g", "alex", "--choice", cli.json("private", "g", "alex")["requests"][0]["default"])["accepted"][0]["replaced"] is False
