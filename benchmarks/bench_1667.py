"""Benchmark Tortuga 1667: complete random-bot games per CPU second, 5 and 9 players.

    python benchmarks/bench_1667.py                   # 300 engine games, 20 protocol games
    python benchmarks/bench_1667.py --games 1000 --protocol-games 0 --style informed
    python benchmarks/bench_1667.py --game-bots       # with the game's own RandomBot

Engine: setup, then ``pending`` / the bot's choice (handed the request ``pending`` gave) /
``apply`` until the game is over, through the pure rules alone. Its random bots are the
bench's ``UniformBot``: one draw among every legal choice, the same distribution as the
game's ``RandomBot``, which instead shuffles about a hundred candidate actions a turn so
that its seeded games (and the examples made from them) never change; ``--game-bots``
measures with that one. Protocol: the same bots through ``pbem.protocol`` on a
temporary database (every choice logged, every vote committed and revealed, as ``pbem
demo`` plays), each command a write transaction of its own as at the command line, next
to its floor: as many committed transactions, each logging one event of the same mean size
and nothing else (the fsync of each commit is most of it). Skipped with a note while 1667
is not a registered game.

Each figure and its floor alternate round by round in the same run (``--rounds``), and are
printed with their median and worst (min) rate, in this process's CPU time
(``time.process_time``, steadier on a busy machine) and in wall time (which counts the
fsync waits of the protocol's commits), with the ratio of each to its floor. Targets: the
engine with 5 players >= 250 games per CPU second (issue 17), the protocol with 5 players
>= 50 (issue 32).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pbem import games
from pbem.games import tortuga1667 as game
from pbem.games.tortuga1667.bots import legal_options
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy")


class CountingSource(RandomSource):
    """A random source that notes every draw (label, range), to time the draws alone."""

    # RandomSource itself notes each draw (label, range, value) in ``draws`` when it is a list
    __slots__ = ()


class UniformBot:
    """A random player for the bench: one draw among every legal choice of its request
    (the listed options, else the rules' whole list), so every game is a legal random game."""

    def __init__(self, seed: str):
        self.random = random.Random(seed).random

    def choose(self, state, player: str, kind: str, request=None) -> str:
        options = request.options if request is not None else None
        if options is None:
            options = legal_options(state, player, kind)
        return options[int(self.random() * len(options))]


def make_bot(seed: str, style: str, game_bots: bool):
    return UniformBot(seed) if style == "random" and not game_bots else game.bot(seed, style)


def draw_plans(players: int, games_: int, style: str, game_bots: bool = False) -> list:
    """Every labelled draw of each of the same games (played, not timed)."""
    plans = []
    for seed in range(games_):
        source = RandomSource.for_testing(f"bench1667/{seed}", game_id=f"b{seed}")
        counting = CountingSource(source._seed, source.game_id, source.client_entropy)
        counting.draws = []
        engine_game(players, seed, style, rng=counting, game_bots=game_bots)
        plans.append(counting.draws)
    return plans


def rng_floor(plans: list) -> tuple[float, float]:
    """(CPU, wall seconds) of the same games' provably fair draws alone (every labelled
    HMAC-SHA256 draw): no engine that keeps the log's randomness contract goes under it."""
    started, wall = time.process_time(), time.perf_counter()
    for seed, plan in enumerate(plans):
        rng = RandomSource.for_testing(f"bench1667/{seed}", game_id=f"b{seed}")
        for label, n, _value in plan:
            rng.below(label, n)
    return time.process_time() - started, time.perf_counter() - wall


def engine_game(players: int, seed: int, style: str, rng=None, game_bots: bool = False) -> int:
    """One complete game through the pure rules; returns the number of choices applied."""
    rng = rng or RandomSource.for_testing(f"bench1667/{seed}", game_id=f"b{seed}")
    state = game.setup(NAMES[:players], None, rng)
    bots = {p: make_bot(f"{seed}/{p}", style, game_bots) for p in state.players}
    applies = 0
    while True:
        requests = game.pending(state)
        if not requests:
            break
        r = requests[0]
        state = game.apply(state, r.player, bots[r.player].choose(state, r.player, r.kind, request=r), rng)
        applies += 1
    assert state.phase == "over", "game did not end"
    return applies


def bench_engine(players: int, games_: int, style: str, game_bots: bool = False) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, choices applied) of the games."""
    started, wall = time.process_time(), time.perf_counter()
    applies = sum(engine_game(players, seed, style, game_bots=game_bots) for seed in range(games_))
    return time.process_time() - started, time.perf_counter() - wall, applies


def protocol_game(store, name: str, players: int, seed: int, style: str, game_bots: bool = False) -> int:
    """One complete game through the protocol: created, started, every open decision sent
    with ``decide``, every sealed vote committed by all voters and then revealed (the loop
    of ``pbem.render.demo.play_bots``, with the engine bench's bots in every seat, handed
    the request at hand). Each command is a write transaction of its own, as at the
    command line. Returns the number of commands."""
    from pbem.protocol import commands, loading

    at = "2026-01-01T00:00:00Z"
    commands.create_game(store, name, "tortuga1667", list(NAMES[:players]), {}, start=True, at=at)
    writes = 1
    session = loading.load(store, name)
    bots = {p: make_bot(f"{seed}/{p}", style, game_bots) for p in session.players}
    while not session.finished:
        step = session.sealed
        if step is not None:
            held = {}
            for player in step.owes_commit():
                request = next(r for r in session.requests_of(player) if r.sealed)
                sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind,
                                                                            request=request))
                held[player] = sealed
                session = commands.commit(store, name, player, sealed["commitment"],
                                          (sealed["round"], sealed["step"]), at=at)
            for player, sealed in held.items():
                session = commands.reveal(store, name, player, sealed["choice"], sealed["salt"], at=at)
            writes += 2 * len(held)
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind, request=request)
            session = commands.decide(store, name, request.player, choice, at=at)
            writes += 1
    return writes


def bench_protocol(folder: Path, players: int, games_: int, style: str, game_bots: bool = False):
    """(CPU, wall seconds, write transactions, mean event size) of the games through the
    protocol on a new database."""
    from pbem.store import Store

    store = Store(folder / f"bench{players}.db")
    try:
        started, wall = time.process_time(), time.perf_counter()
        writes = sum(protocol_game(store, f"p{players}-{seed}", players, seed, style, game_bots)
                     for seed in range(games_))
        cpu, wall = time.process_time() - started, time.perf_counter() - wall
        size = store.conn.execute("select avg(length(body)) from events").fetchone()[0]
    finally:
        store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{folder / f'bench{players}.db'}{suffix}").unlink(missing_ok=True)
    return cpu, wall, writes, size


def commit_floor(folder: Path, writes: int, size: float) -> tuple[float, float]:
    """(CPU, wall seconds) of the protocol's storage floor: as many write transactions on a
    new database, each logging one event of the same mean size and nothing else, committed
    as the store commits (WAL, synchronous=FULL)."""
    from pbem.store import Store

    store = Store(folder / "floor.db")
    try:
        store.conn.execute("create table floor (game text, seq integer, body text, primary key (game, seq))")
        body = "x" * round(size)
        started, wall = time.process_time(), time.perf_counter()
        for seq in range(writes):
            with store.transaction():
                store.conn.execute("insert into floor values ('g', ?, ?)", [seq, body])
        return time.process_time() - started, time.perf_counter() - wall
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{folder / 'floor.db'}{suffix}").unlink(missing_ok=True)


def report(what: str, games_: int, runs: list, floors: list, target: float | None) -> None:
    """Median and worst rates of ``runs`` and ``floors`` ((cpu, wall, ...) each), and ratios."""
    for name, times in ((what, runs), ("floor", floors)):
        for clock, index in (("CPU", 0), ("wall", 1)):
            rates = sorted(games_ / t[index] for t in times)
            print(f"    {name:9s} games per {clock:4s} second: median {statistics.median(rates):8.1f}   "
                  f"worst {rates[0]:8.1f}   best {rates[-1]:8.1f}")
    for clock, index in (("CPU", 0), ("wall", 1)):
        ratios = sorted(r[index] / f[index] for r, f in zip(runs, floors))
        print(f"    {what} / floor, {clock}: median {statistics.median(ratios):.2f}x, min {ratios[0]:.2f}x")
    if target is not None:
        rate = statistics.median(games_ / r[0] for r in runs)
        print(f"    {what}: {rate:.1f} games per CPU second (target >= {target:g}): "
              f"{'met' if rate >= target else 'NOT met'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="engine games per player count (default 300)")
    parser.add_argument("--protocol-games", type=int, default=20,
                        help="protocol games per player count (default 20; 0 skips)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of figure then floor (default 5)")
    parser.add_argument("--style", choices=("random", "informed"), default="random",
                        help="the bots in every seat (default random)")
    parser.add_argument("--game-bots", action="store_true",
                        help="random style: the game's RandomBot in the engine games, not the bench's UniformBot")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}; {args.rounds} rounds, each figure alternated with its floor")
    bots = {("random", False): "random bots (UniformBot)", ("random", True): "random bots (the game's)"}.get(
        (args.style, args.game_bots), f"{args.style} bots")
    for players in (5, 9):
        engine_game(players, -1, args.style, game_bots=args.game_bots)  # warm-up
        plans = draw_plans(players, args.games, args.style, args.game_bots)
        runs, floors = [], []
        for _ in range(args.rounds):
            runs.append(bench_engine(players, args.games, args.style, args.game_bots))
            floors.append(rng_floor(plans))
        print(f"engine   {players} players, {bots}, {args.games} games per round "
              f"({runs[0][2] / args.games:.1f} choices per game); floor: the same games' draws alone")
        report("engine", args.games, runs, floors, 250 if players == 5 else None)
    if not args.protocol_games:
        return 0
    try:
        games.get("tortuga1667")
    except games.UnknownGame:
        print("protocol: skipped: tortuga1667 is not a registered game in this checkout")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for players in (5, 9):
            runs, floors = [], []
            for _ in range(args.rounds):
                run = bench_protocol(folder, players, args.protocol_games, args.style, args.game_bots)
                runs.append(run)
                floors.append(commit_floor(folder, run[2], run[3]))
            print(f"protocol {players} players, {args.style} bots, {args.protocol_games} games per round "
                  f"({runs[0][2] / args.protocol_games:.0f} commands per game, each its own transaction); "
                  f"floor: as many commits of one event each")
            report("protocol", args.protocol_games, runs, floors, 50 if players == 5 else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
