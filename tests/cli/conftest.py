"""Fixtures for the command-line tests: a private database per test, a fast in-process
runner, helpers that check a refusal changed nothing, and quick ways (bots through the real
protocol) to reach the states a test needs.

Helpers are handed out by fixtures rather than imported, because every test directory has
its own ``conftest`` module (pytest runs with ``--import-mode=importlib``).
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer.testing
from typer.testing import CliRunner

from pbem.cli.program import app

REPO_ROOT = Path(__file__).resolve().parents[2]
PLAYERS = ("ani", "alex", "frank", "lothar")
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock

# Typer rebuilds the click command tree on every invoke (~50 ms); the tree never changes
# during a run, so build it once. Behaviour is the same as a fresh ``pbem`` process.
if hasattr(typer.testing, "_get_command"):  # a private helper: without it, only slower
    typer.testing._get_command = functools.lru_cache(maxsize=None)(typer.testing._get_command)


@pytest.fixture(autouse=True)
def pbem_db(tmp_path, monkeypatch) -> Path:
    """Every test gets its own database through $PBEM_DB: no test touches the user's data."""
    path = tmp_path / "pbem.db"
    monkeypatch.setenv("PBEM_DB", str(path))
    # a crash point left in the environment would kill the test run itself
    monkeypatch.delenv("PBEM_CRASH_AT", raising=False)
    return path


class Cli:
    """``cli("status", "g")`` runs the command line in-process and returns click's Result."""

    def __init__(self):
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None):
        result = self.runner.invoke(app, [str(a) for a in args], input=input)
        # audit's third verdict, INCOMPLETE (a game in play), exits 3 (docs/protocol.md §13)
        codes = (0, 1, 2, 3) if args and args[0] == "audit" else (0, 1, 2)
        if result.exit_code not in codes or (
            result.exception is not None and not isinstance(result.exception, SystemExit)
        ):
            raise AssertionError(
                f"pbem {' '.join(map(str, args))} crashed (exit {result.exit_code}): "
                f"{result.exception!r}\n{result.stderr}"
            ) from result.exception
        return result

    def ok(self, *args: str, input: str | None = None):
        result = self(*args, input=input)
        if args and args[0] == "audit" and result.exit_code == 3:  # INCOMPLETE: nothing failed
            verdict = (json.loads(result.stdout)["verdict_line"] if "--json" in args else result.stdout)
            assert verdict.startswith("INCOMPLETE: "), result.stdout
            return result
        assert result.exit_code == 0, f"pbem {' '.join(map(str, args))}: {result.stderr}"
        return result

    def json(self, *args: str, input: str | None = None):
        return json.loads(self.ok(*args, "--json", input=input).stdout)

    def log(self, game: str) -> list[dict]:
        return self.json("log", game)

    def snapshot(self, game: str) -> tuple:
        """What must not change when a command is refused: the log, its head, its count."""
        text = self.ok("log", game, "--json").stdout
        status = self.json("status", game)
        return text, status["chain_head"], len(json.loads(text)), status

    def refused(self, game: str, *args: str, code: int = 1, match: str | None = None,
                input: str | None = None) -> str:
        """Run a command that must be refused: exit ``code``, a one-line reason on stderr
        (a usage error, exit 2, is one line too), and the game's log, head and status exactly as before."""
        before = self.snapshot(game)
        result = self(*args, input=input)
        after = self.snapshot(game)
        command = "pbem " + " ".join(map(str, args))
        assert result.exit_code == code, f"{command}: exit {result.exit_code}, stderr {result.stderr!r}"
        assert after == before, f"{command} was refused but changed the log"
        reason = result.stderr.strip()
        assert reason, f"{command}: no reason on stderr"
        if code in (1, 2):
            assert "\n" not in reason, f"{command}: the reason is not one line: {reason!r}"
            assert reason.startswith("pbem: "), reason
            assert "Traceback" not in reason
        if match is not None:
            assert match.lower() in reason.lower(), f"{command}: {reason!r} does not say {match!r}"
        return reason


@pytest.fixture
def cli() -> Cli:
    return Cli()


# ---------------------------------------------------------------------- reaching states


class Driver:
    """Plays a game through the library with bots, to reach a wanted state quickly.

    Every step goes through ``pbem.protocol.commands`` (the same code as the command line),
    so the log is a real one. Its events are stamped ``at`` (the library never reads the
    clock for a test), or later when the command line wrote later events.
    """

    at = AT

    def __init__(self, path: Path, game: str):
        from pbem.store import Store

        self.path, self.game = path, game
        self.store = Store(path)

    def close(self) -> None:
        self.store.close()

    def session(self):
        from pbem.protocol import loading

        return loading.load(self.store, self.game)

    def bots(self, session, seed: str = "bots"):
        return {p: session.rules.bot(f"{seed}/{p}", "greedy" if i % 2 == 0 else "random")
                for i, p in enumerate(session.players)}

    def move(self, seed: str = "bots") -> None:
        """One move: a whole sealed step (everyone commits, then reveals), or one decision."""
        from pbem.protocol import commands

        session = self.session()
        bots = self.bots(session, seed)
        step = session.sealed
        if step is not None:
            held = {}
            for player in step.owes_commit():
                choice = bots[player].choose(session.state, player, "select")
                held[player] = commands.seal(session, player, choice)
                session = commands.commit(self.store, self.game, player, held[player]["commitment"],
                                          (step.round, step.step), at=self.at)
            for player, sealed in held.items():
                commands.reveal(self.store, self.game, player, sealed["choice"], sealed["salt"], at=self.at)
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            commands.decide(self.store, self.game, request.player, choice, at=self.at)

    def until(self, predicate, seed: str = "bots", limit: int = 2000):
        """Move until ``predicate(session)`` holds (checked before every move)."""
        for _ in range(limit):
            session = self.session()
            if predicate(session):
                return session
            if session.finished:
                raise AssertionError("the game ended before the wanted state was reached")
            self.move(seed)
        raise AssertionError("the wanted state was not reached")

    def finish(self, seed: str = "bots"):
        return self.until(lambda s: s.finished, seed)


@pytest.fixture
def driver_for(pbem_db):
    """``driver_for("g")`` (or ``driver_for("g", SomeDriverClass)``): a Driver on a game of
    this test's database, closed at the end of the test."""
    drivers = []

    def make(game: str, cls=None) -> Driver:
        driver = (cls or Driver)(pbem_db, game)
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        driver.close()


@pytest.fixture
def new_game(cli, driver_for):
    """``new_game("g", start=True, ...)``: create a game through the command line and hand
    back a Driver for it."""

    def make(game: str = "g", players=PLAYERS, start: bool = True, extra=()) -> Driver:
        cli.ok("new", game, "--players", ",".join(players), *(["--now"] if start else []), *extra)
        return driver_for(game)

    return make


@pytest.fixture(scope="session")
def finished_template(tmp_path_factory) -> Path:
    """A database holding one finished 4-player game "done" (its seed revealed), played
    by bots through the protocol; tests copy it with ``finished_copy``."""
    from pbem.protocol import commands
    from pbem.store import Store

    path = tmp_path_factory.mktemp("finished") / "done.db"
    with Store(path) as store:
        commands.create_game(store, "done", "tortuga", list(PLAYERS), {"variant": "standard"}, at=AT)
        for player in PLAYERS:
            commands.add_client_seed(store, "done", player, f"{player} rolls", at=AT)
        commands.start_game(store, "done", at=AT)
    driver = Driver(path, "done")
    driver.finish("template")
    driver.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    driver.close()
    return path


@pytest.fixture(scope="session")
def last_move_template(tmp_path_factory):
    """A database holding game "end" one decision before its end: returns the path and the
    ``pbem decide`` argv of that last decision (it writes the decision and the seed)."""
    from pbem.protocol import commands
    from pbem.store import Store

    def ends_the_game(driver, seed):
        def check(session):
            if session.sealed is not None or session.finished:
                return False
            request = session.pending()[0]
            choice = driver.bots(session, seed)[request.player].choose(session.state, request.player, request.kind)
            after = session.rules.apply(session.state, request.player, choice, session.rng)
            if session.rules.result(after) is None:
                return False
            check.argv = ["decide", "end", request.player, choice]
            return True
        return check

    for attempt in range(5):  # a game may also end on a sealed step; then try another
        path = tmp_path_factory.mktemp("last-move") / "end.db"
        with Store(path) as store:
            commands.create_game(store, "end", "tortuga", list(PLAYERS), {"variant": "standard"}, start=True, at=AT)
        driver = Driver(path, "end")
        seed = f"last-move/{attempt}"
        check = ends_the_game(driver, seed)
        try:
            driver.until(check, seed)
        except AssertionError:
            continue
        finally:
            driver.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            driver.close()
        return path, check.argv
    raise AssertionError("no game ended on a decision")


@pytest.fixture
def finished_copy(finished_template, pbem_db) -> Path:
    """The finished game "done", copied into this test's database."""
    shutil.copy(finished_template, pbem_db)
    return pbem_db


# ---------------------------------------------------------------------- processes


@pytest.fixture
def pbem_process(pbem_db):
    """Start a real ``pbem`` process (python -m pbem.cli.app ARGS) on this test's database."""

    def start(*args: str, crash_at: str | None = None, extra_env: dict | None = None) -> subprocess.Popen:
        env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(REPO_ROOT)}
        env.pop("PBEM_CRASH_AT", None)
        if crash_at is not None:
            env["PBEM_CRASH_AT"] = crash_at
        env.update(extra_env or {})
        return subprocess.Popen([sys.executable, "-m", "pbem.cli.app", *map(str, args)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return start


def pick(request: dict, rnd: random.Random) -> str:
    """A choice for a request of ``private --json``: one of its options, else its default."""
    return rnd.choice(request["options"]) if request.get("options") else request["default"]


@pytest.fixture
def helpers():
    return SimpleNamespace(pick=pick, PLAYERS=PLAYERS, REPO_ROOT=REPO_ROOT, Driver=Driver)
