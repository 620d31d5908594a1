"""No tracebacks: faults in the file, the database or the process end in one line on stderr
and exit status 1 (130 for Ctrl-C), and change nothing. Each fault is made for real: a
read-only file or folder, a row deleted or damaged with SQLite, a real SIGINT."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

PLAYERS = ("ani", "alex", "frank")
# root ignores file permissions; without these capabilities it obeys them like anyone
AS_USER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []


def dump(path) -> dict:
    conn = sqlite3.connect(path)
    conn.text_factory = bytes
    try:
        return {table: conn.execute(f"select * from {table} order by 1, 2").fetchall()
                for table in ("events", "secrets", "snapshots")}
    finally:
        conn.close()


def sql(path, statement: str, params=()) -> None:
    conn = sqlite3.connect(path)
    with conn:
        assert conn.execute(statement, params).rowcount >= 1, statement
    conn.close()


def one_line(result, code: int = 1) -> str:
    reason = result.stderr.strip()
    assert result.exit_code == code, (result.exit_code, reason)
    assert reason.startswith("pbem: ") and "\n" not in reason and "Traceback" not in reason, reason
    return reason


@pytest.fixture
def step(new_game, cli, helpers):
    """Game "g" in its first sealed step: frank sent his choice to the moderator, ani has
    committed; returns alex's seal (his commitment completes the step)."""
    new_game("g", players=PLAYERS)
    choice = {p: cli.json("private", "g", p)["requests"][0]["options"][0] for p in PLAYERS}
    cli.ok("commit", "g", "frank", "--choice", choice["frank"])
    ani = cli.json("seal", "g", "ani", choice["ani"])
    cli.ok("commit", "g", "ani", ani["commitment"])
    return cli.json("seal", "g", "alex", choice["alex"])


def run(*args, db, extra_env=None, prefix=()):
    env = {**os.environ, "PBEM_DB": str(db), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("PBEM_CRASH_AT", None)
    env.pop("PBEM_INTERRUPT_AT", None)
    env.update(extra_env or {})
    return subprocess.run([*prefix, sys.executable, "-m", "pbem.cli.app", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------------- read-only database


@pytest.mark.skipif(AS_USER and shutil.which("setpriv") is None, reason="needs setpriv to act as a non-root user")
@pytest.mark.parametrize("read_only", [("file",), ("folder",), ("file", "folder")])
def test_a_read_only_database(step, pbem_db, read_only):
    """A database file without write permission, or in a folder without it (after a clean
    close, when SQLite has no -wal and -shm files there and cannot create them)."""
    conn = sqlite3.connect(pbem_db)  # the state a clean close leaves: the WAL folded in
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for extra in pbem_db.parent.glob("pbem.db-*"):
        extra.unlink()
    before = dump(pbem_db)
    targets = {"file": (pbem_db, 0o444), "folder": (pbem_db.parent, 0o555)}
    modes = {name: targets[name][0].stat().st_mode for name in read_only}
    for name in read_only:
        targets[name][0].chmod(targets[name][1])
    try:
        for argv in (["commit", "g", "alex", step["commitment"]], ["new", "h", "--players", "ani,bob"],
                     ["status", "g"]):
            done = run(*argv, db=pbem_db, prefix=AS_USER)
            reason = done.stderr.strip()
            if argv[0] == "status" and done.returncode == 0:
                continue  # reading needs no write access (when SQLite can open the file)
            assert done.returncode == 1, (argv, done.returncode, reason)
            assert reason.startswith("pbem: ") and "\n" not in reason, reason
            assert "read-only" in reason, reason
    finally:
        for name, mode in modes.items():
            targets[name][0].chmod(mode)
    assert dump(pbem_db) == before


# ---------------------------------------------------------------------- damaged rows


def test_a_missing_held_secret(cli, step, pbem_db):
    """frank's choice was sealed by the moderator; its salt is gone, so alex's commitment,
    which would bring frank's reveal with it, is refused and nothing is written."""
    sql(pbem_db, "delete from secrets where name like 'held/%'")
    before = dump(pbem_db)
    reason = one_line(cli("commit", "g", "alex", step["commitment"]))
    assert "frank" in reason and "held/1/1/frank" in reason and "missing" in reason, reason
    assert dump(pbem_db) == before


def test_an_unreadable_held_secret(cli, step, pbem_db):
    sql(pbem_db, "update secrets set value = '{not json' where name like 'held/%'")
    before = dump(pbem_db)
    assert "unreadable" in one_line(cli("commit", "g", "alex", step["commitment"]))
    assert dump(pbem_db) == before


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"v": 3}', '{"v": 3, "game_id": "g", "meta": 7}'])
def test_a_corrupted_snapshot(cli, step, pbem_db, text):
    """A snapshot that is not JSON or not of the right shape, even with a valid digest
    (written through the store), is refused as damage by reads and writes alike."""
    from pbem.store import Store

    with Store(pbem_db) as store:
        seq, _ = store.latest_snapshot("g")
        store.put_snapshot("g", seq, text)
    before = dump(pbem_db)
    for argv in (["status", "g"], ["private", "g", "ani"], ["commit", "g", "alex", step["commitment"]]):
        reason = one_line(cli(*argv))
        assert f"damaged: event {seq}: the cached snapshot cannot be read" in reason, reason
    assert dump(pbem_db) == before
    assert f"event {seq}:" in one_line(cli("audit", "g"))


def test_a_hash_column_that_is_not_utf8(cli, step, pbem_db):
    """One byte of a stored hash flipped to 0xff: SQLite hands back bytes that are not
    UTF-8; the store reads them as U+FFFD, so the checks name the event."""
    conn = sqlite3.connect(pbem_db)
    seq, digest = conn.execute("select seq, hash from events where seq = 3").fetchone()
    conn.close()
    sql(pbem_db, "update events set hash = cast(? as text) where seq = ?", [b"\xff" + digest[1:].encode(), seq])
    before = dump(pbem_db)
    reason = one_line(cli("commit", "g", "alex", step["commitment"]))
    assert f"damaged: event {seq}: hash does not match its contents (stored not a hex hash" in reason, reason
    for argv in (["audit", "g"], ["log", "g"], ["export", "g"], ["status", "g"], ["private", "g", "ani"]):
        result = cli(*argv)
        assert result.exit_code in (0, 1) and "Traceback" not in result.stderr, (argv, result.stderr)
    assert f"event {seq}:" in one_line(cli("audit", "g"))
    assert dump(pbem_db) == before


# ---------------------------------------------------------------------- Ctrl-C


def interrupted(done) -> None:
    assert (done.returncode, done.stderr) == (130, "pbem: interrupted\n"), (done.returncode, done.stderr)


@pytest.mark.parametrize("point", ["start", "imports"])
def test_ctrl_c_during_start_up(step, pbem_db, point):
    """A real SIGINT at the start (handler in place, nothing heavy imported yet) and
    half-way through the imports (typer loaded, the commands not yet)."""
    before = dump(pbem_db)
    interrupted(run("commit", "g", "alex", step["commitment"], db=pbem_db, extra_env={"PBEM_INTERRUPT_AT": point}))
    done = run("commit", "g", "alex", step["commitment"], "--json", db=pbem_db, extra_env={"PBEM_INTERRUPT_AT": point})
    interrupted(done)
    assert json.loads(done.stdout) == {"error": "interrupted", "code": 130}
    assert dump(pbem_db) == before


@pytest.mark.parametrize("point, written", [("append:before-insert", False), ("append:after-insert", False),
                                            ("commit:before", False), ("commit:after", True)])
def test_ctrl_c_during_a_write(cli, step, pbem_db, point, written):
    """A SIGINT inside the transaction leaves the log as before; one after the commit, as
    after (the three events of alex's commitment and frank's reveal are all there)."""
    before = cli.log("g")
    interrupted(run("commit", "g", "alex", step["commitment"], db=pbem_db, extra_env={"PBEM_INTERRUPT_AT": point}))
    after = cli.log("g")
    assert after == before if not written else after[:len(before)] == before and len(after) > len(before)
    assert cli.ok("audit", "g")


def _wait_for_events(db: Path, game: str, count: int, child, limit: float = 600.0) -> None:
    """Until ``game`` has ``count`` events or the child has ended (``limit`` only guards
    against a hang; the loop ends long before on any machine)."""
    end = time.monotonic() + limit
    while child.poll() is None and time.monotonic() < end:
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                if conn.execute("select count(*) from events where game = ?", (game,)).fetchone()[0] >= count:
                    return
            finally:
                conn.close()
        except sqlite3.OperationalError:  # no file or no table yet
            pass
        time.sleep(0.01)


def test_ctrl_c_at_several_moments_of_a_running_game(tmp_path, pbem_db):
    """Ctrl-C sent from outside while ``pbem demo`` plays (each move one transaction):
    one line, exit 130, and a log that audits clean up to where it stopped."""
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # Ctrl-C once the game has this many events: a condition, not a time, so that a busy
    # machine (where the child may still be starting Python after a second) tests the same
    for number, events in enumerate((1, 40)):
        game = f"d{number}"
        child = subprocess.Popen([sys.executable, "-m", "pbem.cli.app", "demo", "--game-name", game, "--json"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for_events(pbem_db, game, events, child)
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=120)
        if child.returncode == 0:  # a fast machine finished first: nothing to interrupt
            continue
        assert (child.returncode, err) == (130, "pbem: interrupted\n")
        audit = run("audit", game, "--json", db=pbem_db)
        if audit.returncode == 1 and "no game" in audit.stderr:
            continue  # stopped before the game was created
        assert audit.returncode in (0, 3) and json.loads(audit.stdout)["ok"], audit.stderr  # OK or INCOMPLETE
