"""Nothing is written on top of a damaged game: before every write the chain is checked up
to its head, the snapshot against the event it was taken after, and the server seed
against ``seed_hash``. Every write command is then refused with one line that names the
first bad event and says to run ``pbem audit``, and the database is left as it was."""

from __future__ import annotations

import sqlite3

import pytest

from pbem.protocol.offline import submission_block
from pbem.protocol.signing import generate_keypair

PLAYERS = ("ani", "alex", "frank")


def dump(path) -> dict:
    """Everything a write could change: every row of events, secrets and snapshots."""
    conn = sqlite3.connect(path)
    conn.text_factory = bytes
    try:
        return {table: conn.execute(f"select * from {table} order by 1, 2").fetchall()
                for table in ("events", "secrets", "snapshots")}
    finally:
        conn.close()


def sql(path, statement: str, params=(), rows: int = 1) -> None:
    conn = sqlite3.connect(path)
    with conn:
        assert conn.execute(statement, params).rowcount == rows, statement
    conn.close()


def snapshot_row(path, full: bool) -> tuple[int, str]:
    """The game's one light snapshot (at the head) or one full snapshot (the newest state
    cached, a few events before): the fixture's game has one of each."""
    conn = sqlite3.connect(path)
    rows = conn.execute("select seq, state, full from snapshots order by seq").fetchall()
    conn.close()
    assert [r[2] for r in rows] == [1, 0], rows
    return next((seq, state) for seq, state, kind in rows if kind == full)


@pytest.fixture
def game(new_game, cli, pbem_db, tmp_path):
    """Game "g" in its first sealed step, ani committed and frank's choice sealed by the
    moderator; returns the argv of every write command, each one acceptable but for the
    damage (or refused only later, by the rules)."""
    new_game("g", players=PLAYERS)
    options = {p: cli.json("private", "g", p)["requests"][0]["options"] for p in PLAYERS}
    ani = cli.json("seal", "g", "ani", options["ani"][0])
    cli.ok("commit", "g", "ani", ani["commitment"])
    cli.ok("commit", "g", "frank", "--choice", options["frank"][0])
    alex = cli.json("seal", "g", "alex", options["alex"][0])
    block = tmp_path / "block.txt"
    block.write_text(alex["commit_block"], encoding="utf-8")
    other = submission_block("g", "decide", {"player": "alex", "round": 1, "step": 1, "choice": "skull:raid"}, None)
    return [
        ["commit", "g", "alex", alex["commitment"]],
        ["commit", "g", "alex", "--choice", options["alex"][0]],
        ["submit", "g", str(block)],
        ["submit", "g", "-", other],
        ["reveal", "g", "ani", ani["choice"], ani["salt"]],
        ["decide", "g", "alex", "skull:raid"],
        ["nmr", "g", "alex"],
        ["nmr", "g", "alex", "--force"],
        ["client-seed", "g", "ani", "late words"],
        ["key", "g", "ani", generate_keypair()[1]],
        ["start", "g"],
        ["reveal-seed", "g", "--force"],
    ]


def refused_everywhere(cli, path, commands, seq: int, match: str) -> None:
    for argv in commands:
        stdin = None
        if argv[:1] == ["submit"] and argv[2] == "-":
            argv, stdin = argv[:3], argv[3]
        before = dump(path)
        result = cli(*argv, input=stdin)
        reason = result.stderr.strip()
        assert result.exit_code == 1, (argv, result.exit_code, reason)
        assert "\n" not in reason and reason.startswith("pbem: game g is damaged: "), (argv, reason)
        assert f"event {seq}: " in reason and match in reason, (argv, reason)
        assert "pbem audit g" in reason, reason
        assert dump(path) == before, f"pbem {' '.join(argv)} changed the database"
    report = cli.json("log", "g")  # the log itself can still be read and exported
    assert report
    audit = cli("audit", "g", "--json")
    assert audit.exit_code == 1 and f"event {seq}:" in audit.stderr, audit.stderr


def test_an_edited_event_body(cli, game, pbem_db):
    body = sqlite3.connect(pbem_db).execute("select body from events where seq = 3").fetchone()[0]
    sql(pbem_db, "update events set body = ? where seq = 3", [body.replace('"player":"ani"', '"player":"alex"')])
    refused_everywhere(cli, pbem_db, game, 3, "hash does not match its contents")


def test_an_edited_kind_column(cli, game, pbem_db):
    sql(pbem_db, "update events set kind = 'nmr' where seq = 3")
    refused_everywhere(cli, pbem_db, game, 3, "does not agree with its row")


def test_a_head_whose_hash_was_replaced(cli, game, pbem_db):
    last = cli.log("g")[-1]["seq"]
    sql(pbem_db, "update events set hash = ? where seq = ?", ["ab" * 32, last])
    refused_everywhere(cli, pbem_db, game, last, "hash does not match its contents")


@pytest.mark.parametrize("full", [True, False], ids=["full", "light"])
def test_a_flipped_snapshot(cli, game, pbem_db, full):
    seq, state = snapshot_row(pbem_db, full)
    at = state.index('"round":') + len('"round":')
    flipped = state[:at] + ("2" if state[at] == "1" else "1") + state[at + 1:]
    sql(pbem_db, "update snapshots set state = ? where seq = ?", [flipped, seq])
    refused_everywhere(cli, pbem_db, game, seq, "snapshot")
    reason = cli("status", "g").stderr  # reads do not trust it either
    assert "damaged: event" in reason and "snapshot" in reason


@pytest.mark.parametrize("full", [True, False], ids=["full", "light"])
def test_a_snapshot_of_other_events(cli, game, pbem_db, full):
    """A snapshot moved to an earlier event no longer belongs to it."""
    seq, _ = snapshot_row(pbem_db, full)
    sql(pbem_db, "update snapshots set seq = seq - 1 where seq = ?", [seq])
    refused_everywhere(cli, pbem_db, game, seq - 1, "snapshot")


def test_a_replaced_server_seed(cli, game, pbem_db):
    sql(pbem_db, "update secrets set value = ? where name = 'server_seed'", ["07" * 32])
    refused_everywhere(cli, pbem_db, game, 1, "server seed")


def test_a_missing_server_seed(cli, game, pbem_db):
    sql(pbem_db, "delete from secrets where name = 'server_seed'")
    for argv in game[:1] + game[4:8]:
        before = dump(pbem_db)
        reason = cli(*argv).stderr.strip()
        assert reason.startswith("pbem: game g is damaged: event 1: the server seed of this game is missing"), reason
        assert dump(pbem_db) == before


def test_an_old_snapshot_is_ignored_and_the_state_rebuilt(cli, game, pbem_db):
    """A snapshot written before snapshots carried a digest is a cache like any other:
    the state is rebuilt from the events and the write goes ahead."""
    sql(pbem_db, "update snapshots set digest = null", rows=2)
    cli.ok(*game[0])
    assert cli.ok("audit", "g")
