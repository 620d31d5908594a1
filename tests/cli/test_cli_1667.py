"""Tortuga 1667 from the command line: new, start, decisions, and votes sealed, committed
and revealed with the database, up to the end; the log, export and audit never show a held
vote before the disclosure, and the export audits clean after it."""

import json
import random

PLAYERS = "ani,bo,cy,dee,eve"
VOTES = ("attack", "mutiny", "brawl")


def choose(session, player, kind, rnd):
    from pbem.games.tortuga1667 import legal
    from pbem.games.tortuga1667.engine import owed
    entry = next(e for p, k, e in owed(session.state) if p == player and k == kind)
    options = legal.options(session.state, player, kind, entry)
    votes = [o for o in options if o in VOTES]
    return votes[0] if votes else rnd.choice(options)


def test_a_game_of_1667_by_command_line(cli, pbem_db):
    from pbem.protocol import loading
    from pbem.store import Store
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.refused("g", "new", "h", "--game", "tortuga1667", "--players", "ani,bo,cy", match="4 to 9 players")
    cli.ok("start", "g")
    rnd = random.Random(7)
    salts, votes = [], 0
    for _ in range(600):
        status = cli.json("status", "g")
        if status["finished"]:
            break
        with Store(pbem_db) as store:
            session = loading.load(store, "g")
        step = session.sealed
        if step is None:
            request = session.pending()[0]
            cli.ok("decide", "g", request.player, choose(session, request.player, request.kind, rnd))
            continue
        votes += 1
        sealed = {}
        for player in step.waiting:
            sealed[player] = cli.json("seal", "g", player, choose(session, player, "vote", rnd))
            cli.ok("commit", "g", player, sealed[player]["commitment"])
        if votes == 1:  # bad input: one line, nothing changed (the held reveals neither)
            player, seal = next(iter(sealed.items()))
            cli.refused("g", "reveal", "g", player, seal["choice"], "ab" * 32, match="does not match")
        for player, seal in sealed.items():
            out = cli.ok("reveal", "g", player, seal["choice"], seal["salt"]).stdout
            assert "holds it until the game ends" in out and seal["choice"] not in out
            salts.append(seal["salt"])
            if votes == 1 and player == next(iter(sealed)) and len(sealed) > 1:
                again = cli.ok("reveal", "g", player, seal["choice"], seal["salt"]).stdout
                assert "already recorded" in again
                cli.refused("g", "reveal", "g", player, seal["choice"], "cd" * 32, match="already settled")
        log = cli.ok("log", "g").stdout + cli.ok("log", "g", "--json").stdout + cli.ok("export", "g").stdout
        assert "vote " not in log and not any(salt in log for salt in salts)
        assert "sealed_batch" in log
    else:
        raise AssertionError("the game did not end")
    assert votes
    export = cli.ok("export", "g").stdout
    kinds = [json.loads(line)["kind"] for line in export.splitlines()]
    assert kinds[-2:] == ["disclosed", "seed_revealed"] and all(salt in export for salt in salts)
    (pbem_db.parent / "g.jsonl").write_text(export)
    text = cli.ok("audit", "--file", pbem_db.parent / "g.jsonl").stdout
    assert "OK: complete" in text and "each checked against its commitment" in text
    assert "OK: complete" in cli.ok("audit", "g").stdout


def test_the_advanced_set_up_says_pawns_are_being_placed(cli):
    """While pawns are placed nobody has a turn yet: the messages say so, not "ani's turn"."""
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS, "--variant", "advanced")
    cli.ok("start", "g")
    waiting = cli.json("status", "g")["waiting"]
    assert [w["kind"] for w in waiting] == ["place"]
    for fmt in ("text", "markdown"):
        shown = cli.ok("show", "g", "--format", fmt).stdout
        assert "pawns are being placed" in shown and "'s turn" not in shown.split("pawns are being placed")[1][:40]
    private = cli.ok("private", "g", "ani").stdout
    assert "set-up: pawns are being placed" in private and "ani's turn" not in private


def test_a_late_voter_is_announced_without_their_card(cli):
    """An anonymous vote's default is public (the player was late) but not its card."""
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.ok("start", "g")
    while (waiting := cli.json("status", "g")["waiting"])[0]["kind"] == "stow":
        cli.ok("decide", "g", waiting[0]["player"], "stow british")
    cli.ok("decide", "g", waiting[0]["player"], "attack")
    voters = [w["player"] for w in cli.json("status", "g")["waiting"]]
    cli.ok("commit", "g", voters[0], "--choice", "vote 1")
    for late in voters[1:]:
        cli.ok("nmr", "g", late, "--force")
    shown = cli.ok("show", "g", "--round", "1").stdout  # the vote was in turn 1, whoever plays now
    for late in voters[1:]:
        assert f"{late}: no commitment in time; the documented default applies (which card stays secret)" in shown
    assert "vote 1" not in shown


def test_a_player_name_starting_with_a_dash_is_refused(cli):
    """`pbem private g -x` would read -x as an option: such a name is refused at `new`,
    saying why and what would do, and no game is made."""
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.refused("g", "new", "h", "--game", "tortuga1667", "--players", "-x,bo,cy,dee,eve",
                match="player name '-x' starts with '-', which the command line would read as an option; "
                      "start it with a letter or digit, e.g. 'x'")
    cli.refused("g", "new", "h", "--players", "ani,--help", match="starts with '-'")
    assert "h" not in cli.ok("games").stdout.split()


def test_a_player_name_that_splits_once_normalised_is_refused(cli):
    """A choice is read after NFKC, which makes 'bob´' two words: no choice could name such a
    player, so `new` refuses the name, on one line, and no game is made."""
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.refused("g", "new", "h", "--game", "tortuga1667", "--players", "bob\u00b4,bo,cy,dee,eve",
                match="player name 'bob\u00b4' reads as 2 words once its letters are normalised")
    assert "h" not in cli.ok("games").stdout.split()


def test_status_says_turn_as_the_summaries_do(cli):
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.ok("new", "t", "--players", "ani,bo,cy")
    cli.ok("start", "g")
    cli.ok("start", "t")
    status = cli.ok("status", "g").stdout
    assert "turn 1, phase play" in status and "round 1" not in status
    assert "- turn 1 (in progress)" in cli.ok("show", "g").stdout  # the same word
    assert cli.json("status", "g")["round_word"] == "turn"
    games = cli.ok("games").stdout
    assert "g: turn 1, play;" in games and "t: round 1, " in games
    assert "round 1, step 1, phase roll" in cli.ok("status", "t").stdout  # Tortuga keeps its rounds and steps


def test_a_decision_from_an_earlier_turn_sent_out_of_turn_is_not_your_turn(cli, pbem_db):
    """Not "already recorded": that decision was that turn's; now it is someone else's turn."""
    from pbem.protocol import loading
    from pbem.store import Store
    cli.ok("new", "g", "--game", "tortuga1667", "--players", PLAYERS)
    cli.ok("start", "g")
    rnd, made = random.Random(3), []
    for _ in range(200):
        with Store(pbem_db) as store:
            session = loading.load(store, "g")
        if session.state.round >= 4 or session.sealed is not None:
            break
        request = session.pending()[0]
        from pbem.games.tortuga1667 import legal
        from pbem.games.tortuga1667.engine import owed
        entry = next(e for p, k, e in owed(session.state) if p == request.player and k == request.kind)
        options = [o for o in legal.options(session.state, request.player, request.kind, entry)
                   if o.split()[0] not in VOTES]  # no vote: decisions only
        if not options:
            break
        choice = rnd.choice(options)
        cli.ok("decide", "g", request.player, choice)
        made.append((session.state.round, request.player, choice))
    now = cli.json("status", "g")
    owing = {w["player"] for w in now["waiting"]}
    turn, player, choice = next(m for m in made if m[0] < now["round"] and m[1] not in owing)
    # the same decision again within its own turn would be a repeat; from an earlier turn, it is not
    cli.refused("g", "decide", "g", player, choice, match=f"it is not {player}'s turn")
