"""`pbem games`: the games in play are listed, the finished ones counted (`--all` lists
them too), from each game's head row (`game_heads`), and the listing says the same when
that cache says nothing and every game is read the long way."""

from __future__ import annotations

from pbem.mail import addresses
from pbem.store import Store, outbox


def _three_games(cli, finished_copy, new_game):
    """"done" (finished), "g" (in play) and "n" (not started)."""
    new_game("g")
    new_game("n", start=False)


def test_games_lists_the_games_in_play_and_counts_the_finished(cli, finished_copy, new_game):
    _three_games(cli, finished_copy, new_game)
    lines = cli.ok("games").stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["g", "n"]
    assert lines[0].startswith("g: round 1, ") and "waiting for" in lines[0]
    assert lines[1] == "n: not started"
    assert lines[2] == "1 finished game not shown (pbem games --all)"
    listed = cli.json("games")
    assert listed["games"] == ["g", "n"] and listed["finished_not_shown"] == 1
    every = cli.json("games", "--all")
    assert every["games"] == ["done", "g", "n"] and every["finished_not_shown"] == 0
    assert [d["finished"] for d in every["details"]] == [True, False, False]
    assert cli.ok("games", "--all").stdout.splitlines()[0] == "done: finished"


def test_games_says_the_same_when_the_cache_says_nothing(cli, finished_copy, new_game, pbem_db):
    _three_games(cli, finished_copy, new_game)
    before = [cli.ok("games").stdout, cli.ok("games", "--all").stdout]
    with Store(pbem_db) as store:
        with store.transaction():
            store.conn.execute("update game_heads set line = null, finished = 0, due = null, snap = null")
    assert [cli.ok("games").stdout, cli.ok("games", "--all").stdout] == before
    with Store(pbem_db) as store:
        with store.transaction():
            store.conn.execute("delete from snapshots")  # the head rows follow the snapshots they came from
        assert store.conn.execute("select count(*) from game_heads where snap is not null").fetchone()[0] == 0
    assert [cli.ok("games").stdout, cli.ok("games", "--all").stdout] == before
    with Store(pbem_db) as store:
        with store.transaction():
            store.conn.execute("delete from game_heads")  # the index itself gone: --all reads the log
    assert cli.ok("games", "--all").stdout == before[1]


def test_a_finished_game_with_mail_waiting_is_listed(cli, finished_copy, new_game, pbem_db):
    _three_games(cli, finished_copy, new_game)
    with Store(pbem_db) as store:
        with store.transaction():
            outbox.queue(store, game="done", kind="notice", recipient="ani@example.org", subject="[done] the end",
                         text="the end", at="2024-05-01T12:00:00Z")
    listed = cli.json("games")
    assert listed["games"] == ["done", "g", "n"] and listed["finished_not_shown"] == 0
    assert listed["details"][0]["mail"]["queued"] == 1
    assert cli.ok("games").stdout.splitlines()[0] == "done: finished; mail: 1 queued"


def test_each_write_keeps_the_head_row_and_audit_checks_it(cli, new_game, pbem_db):
    driver = new_game("g")
    driver.move()
    row = driver.store.head_row("g")
    assert row is not None and row[0] == driver.store.head("g")[0]
    assert row[1] == 0 and row[2] is None  # no deadline was set
    assert cli.ok("audit", "g").exit_code == 3  # INCOMPLETE: a game in play, nothing wrong
    with Store(pbem_db) as store:
        with store.transaction():
            store.conn.execute("update game_heads set line = replace(line, '\"started\":true', '\"started\":false')")
    result = cli("audit", "g")
    assert result.exit_code == 1
    head = driver.store.head("g")[0]
    assert f"event {head}: the game's cached head row (what 'pbem games' lists) differs" in result.stdout


def test_the_migration_fills_the_head_rows_of_games_already_there(finished_copy, new_game, pbem_db):
    driver = new_game("g")
    driver.move()
    driver.close()
    with Store(pbem_db) as store:
        # the cached columns (the chain checkpoints of m023 are set again by the next write)
        cached = "select game, seq, snap, finished, due, line, listing from game_heads order by game"
        rows = store.conn.execute(cached).fetchall()
        assert [r[0] for r in rows] == ["done", "g"]
        with store.transaction():  # back to a database from before m017 (and m025, which adds to its table)
            for trigger in ("append", "update", "delete", "unsnap", "resnap"):
                store.conn.execute(f"drop trigger game_heads_{trigger}")
            for trigger in ("insert", "update", "delete"):
                store.conn.execute(f"drop trigger chain_checks_{trigger}")
            store.conn.execute("drop table game_heads")
            store.conn.execute("drop index mail_deadlines_remind")
            store.conn.execute("delete from _migrations where name in "
                               "('m017_game_heads', 'm021_game_listing', 'm025_chain_checkpoints')")
    with Store(pbem_db) as store:
        assert store.conn.execute(cached).fetchall() == rows


def test_the_listing_kept_ready_says_what_the_long_way_says(cli, finished_copy, new_game, pbem_db):
    _three_games(cli, finished_copy, new_game)
    with Store(pbem_db) as store:  # started in 2999 with a 1h deadline: not overdue, so listed from its row
        addresses.create_game(store, "later", "tortuga", ["ani", "alex"], {},
                              {"ani": "ani@example.org", "alex": "alex@example.org"}, None,
                              at="2999-01-01T00:00:00Z", deadline_seconds=3600, start=True)
    with Store(pbem_db) as store:
        listings = dict(store.conn.execute("select game, listing from game_heads"))
        assert listings["g"].startswith("round 1, roll; waiting for ")
        assert listings["done"] == "finished" and listings["n"] == "not started"
        assert store.head_row("later")[2] is not None  # its earliest deadline is kept with it
    before = [cli.ok("games").stdout, cli.ok("games", "--all").stdout]
    assert [line.split(":")[0] for line in before[0].splitlines()[:3]] == ["g", "later", "n"]
    assert "mail: 2 queued" in before[0].splitlines()[1]
    with Store(pbem_db) as store:
        with store.transaction():  # without the ready text each game's fields are read, as --json does
            store.conn.execute("update game_heads set listing = null")
    assert [cli.ok("games").stdout, cli.ok("games", "--all").stdout] == before


def test_audit_checks_the_listing_kept_ready(cli, new_game, pbem_db):
    driver = new_game("g")
    driver.move()
    with Store(pbem_db) as store:
        with store.transaction():
            store.conn.execute("update game_heads set listing = 'round 9, move; waiting for nobody'")
    assert "round 9, move" in cli.ok("games").stdout  # a cache: what it says is listed ...
    result = cli("audit", "g")  # ... and audit finds it differs from a fresh replay
    assert result.exit_code == 1
    head = driver.store.head("g")[0]
    assert f"event {head}: the game's cached head row (what 'pbem games' lists) differs" in result.stdout
