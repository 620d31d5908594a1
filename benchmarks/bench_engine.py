"""Benchmark the Tortuga engine: complete 4-player bot games on one core.

    python benchmarks/bench_engine.py                 # 300 games, the game's own bots
    python benchmarks/bench_engine.py --games 1000 --loop bots --profile 25
    python benchmarks/bench_engine.py --uniform       # the bench's UniformBot in every seat
    python benchmarks/bench_engine.py --games 50 --parts 60   # where a game's time goes

Prints games per CPU second (everything: setup, bots choosing, pending, apply), the time
spent inside ``apply`` alone per call, and the average number of applies per game, against
the floor: the same games' provably fair draws alone (every labelled HMAC-SHA256 draw,
``pbem.protocol.rng``). Engine and floor alternate round by round in the same run
(``--rounds``, default 5); each is printed with its min and median, in CPU and wall time,
and so is the engine's ratio to the floor. Target (issue 17): at least 1,000 games per CPU
second.

Bots: by default the game's own, greedy and random alternating seats (the figures of
earlier sessions). ``--uniform`` seats the bench's ``UniformBot`` everywhere instead: one
draw among every legal choice of the request (the same distribution as the game's
``RandomBot``), so every game is a legal, uniformly random game; its games are not the
same games (a uniform player forfeits often), so its figure is printed with its own
applies per game and its own floor.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import time

from pbem.games import tortuga
from pbem.games.tortuga import legal
from pbem.games.tortuga.bots import GreedyBot, RandomBot
from pbem.games.tortuga.choices import format_dice
from pbem.games.tortuga.engine import open_requests, options_for
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee")


class UniformBot:
    """A random player for the bench: one draw among every legal choice of its request
    (every legal selection, the listed options, or every ordering when there are too many
    to list), so every game is a legal, uniformly random game."""

    def __init__(self, seed: str):
        self.random = random.Random(seed).random

    def choose(self, state, seat: int, kind: str) -> str:
        if kind == "select":
            selections = legal.legal_selections(state.boards[seat])
            return format_dice(selections[int(self.random() * len(selections))]) if selections else "none"
        options = options_for(state, seat, kind)
        if options is None:  # more orderings than are listed: all of them
            options = legal.order_options(state, seat, cap=10**9)
        return options[int(self.random() * len(options))]


def make_bots(seed: int, uniform: bool) -> list:
    if uniform:
        return [UniformBot(f"{seed}/{seat}") for seat in range(len(NAMES))]
    return [(GreedyBot if (seat + seed) % 2 else RandomBot)(f"{seed}/{seat}") for seat in range(len(NAMES))]


def play_game(seed: int, loop: str = "bots", timer=time.perf_counter, rng=None,
              uniform: bool = False) -> tuple[int, float]:
    """One complete game, greedy and random bots alternating seats (which seat starts
    greedy alternates by seed), or ``UniformBot`` in every seat. Returns (applies, seconds
    spent inside apply).

    ``loop`` picks how the next request is found: "pending" is the public interface (it
    also builds every open request's options and default, as the adjudicator does);
    "bots" is the bare engine loop of ``bots.play`` (``open_requests``)."""
    rng = rng or RandomSource.for_testing(f"bench/{seed}", game_id=f"bench-{seed}")
    state = tortuga.setup(NAMES, {}, rng)
    bots = make_bots(seed, uniform)
    applies, in_apply = 0, 0.0
    apply = tortuga.apply
    while True:
        if loop == "pending":
            requests = tortuga.pending(state)
            if not requests:
                break
            seat, kind = state.players.index(requests[0].player), requests[0].kind
        else:
            requests = open_requests(state)
            if not requests:
                break
            seat, kind, _sealed = requests[0]
        choice = bots[seat].choose(state, seat, kind)
        started = timer()
        state = apply(state, state.players[seat], choice, rng)
        in_apply += timer() - started
        applies += 1
    assert state.phase == "over", "game did not end"
    return applies, in_apply


class CountingSource(RandomSource):
    """A random source that notes every draw (label, range), to time the draws alone."""

    # RandomSource itself notes each draw (label, range, value) in ``draws`` when it is a list
    __slots__ = ()


def draws_of(seed: int, uniform: bool = False) -> list[tuple[str, int]]:
    """Every labelled draw one benchmark game makes (the game is played, not timed)."""
    source = RandomSource.for_testing(f"bench/{seed}", game_id=f"bench-{seed}")
    counting = CountingSource(source._seed, source.game_id, source.client_entropy)
    counting.draws = []
    play_game(seed, rng=counting, uniform=uniform)
    return counting.draws


def draw_plans(games: int, uniform: bool = False) -> list:
    """Every labelled draw of each of the same games (played, not timed)."""
    return [draws_of(seed, uniform) for seed in range(games)]


def rng_floor(plans: list) -> tuple[float, float]:
    """(CPU, wall seconds) of the provably fair draws alone: the HMAC-SHA256 blocks of every
    labelled draw the games make (``pbem.protocol.rng``), a cost no engine that keeps the
    log's randomness contract can go under."""
    started, wall = time.process_time(), time.perf_counter()
    for seed, plan in enumerate(plans):
        rng = RandomSource.for_testing(f"bench/{seed}", game_id=f"bench-{seed}")
        for label, n, _value in plan:
            rng.below(label, n)
    return time.process_time() - started, time.perf_counter() - wall


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned (no sched_setaffinity)"


def run(games: int, loop: str = "bots", uniform: bool = False) -> dict:
    applies = 0
    in_apply = 0.0
    started = time.perf_counter()
    cpu_started = time.process_time()
    for seed in range(games):
        n, t = play_game(seed, loop, uniform=uniform)
        applies += n
        in_apply += t
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {
        "games": games,
        "seconds": elapsed,
        "games_per_second": games / elapsed,
        "games_per_cpu_second": games / cpu,
        "cpu": cpu,
        "applies_per_game": applies / games,
        "us_per_apply": in_apply / applies * 1e6,
        "apply_share": in_apply / elapsed,
    }


def profile(games: int, loop: str, top: int = 25, uniform: bool = False) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for seed in range(games):
        play_game(seed, loop, uniform=uniform)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def parts(games: int, uniform: bool = False) -> None:
    """Where a game's time goes, part by part: the same games recorded, then each part timed
    alone over every recorded position (best of 5): what the part alone would allow. The
    skeleton (draws, one bare State.copy per apply, the request lookup, checking the choice)
    is what any engine behind this interface pays before a single rule runs."""
    from pbem.games.tortuga.engine import validate
    moves, plans = [], []
    for seed in range(games):
        rng = RandomSource.for_testing(f"bench/{seed}", game_id=f"bench-{seed}")
        rng.draws = []
        state = tortuga.setup(NAMES, {}, rng)
        bots = make_bots(seed, uniform)
        while requests := open_requests(state):
            seat, kind, _sealed = requests[0]
            choice = bots[seat].choose(state, seat, kind)
            moves.append((state, seat, kind, NAMES[seat], choice, rng, bots[seat]))
            state = tortuga.apply(state, NAMES[seat], choice, rng)
        plans.append(rng.draws)
        rng.draws = None

    def draws():
        for seed, plan in enumerate(plans):
            below = RandomSource.for_testing(f"bench/{seed}", game_id=f"bench-{seed}").below
            for label, n, _value in plan:
                below(label, n)

    def each(body):
        def run_all():
            for move in moves:
                body(*move)
        return run_all

    apply = tortuga.apply
    timed = [
        ("the draws alone", draws),
        ("a bare State.copy per apply", each(lambda st, *rest: st.copy())),
        ("open_requests per position", each(lambda st, *rest: open_requests(st))),
        ("validate per choice", each(lambda st, seat, kind, name, choice, *rest: validate(st, name, choice))),
        ("the bots' choices", each(lambda st, seat, kind, name, choice, rng, bot: bot.choose(st, seat, kind))),
        ("apply, all of it", each(lambda st, seat, kind, name, choice, rng, bot: apply(st, name, choice, rng))),
    ]
    ms = {}
    print(f"parts of {games} games ({len(moves) / games:.0f} applies, {sum(map(len, plans)) / games:.0f} draws per game; "
          f"ms of CPU per game, and the games per CPU second that part alone would allow):")
    for name, body in timed:
        best = min(_cpu(body) for _ in range(5))
        ms[name] = best / games * 1e3
        print(f"  {name:40s} {ms[name]:6.3f} ms  {games / best:8.0f} /s")
    skeleton = sum(ms[k] for k in ("the draws alone", "a bare State.copy per apply", "open_requests per position",
                                   "validate per choice"))
    rules = ms["apply, all of it"] - ms["the draws alone"] - ms["a bare State.copy per apply"] - ms["validate per choice"]
    print(f"  {'skeleton (draws, copy, lookup, check)':40s} {skeleton:6.3f} ms  {1e3 / skeleton:8.0f} /s")
    print(f"  {'the rules themselves (apply less those)':40s} {rules:6.3f} ms")


def _cpu(body) -> float:
    started = time.process_time()
    body()
    return time.process_time() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="games to play (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of engine then floor (default 5)")
    parser.add_argument("--warmup", type=int, default=10, help="games played before timing")
    parser.add_argument("--profile", type=int, metavar="GAMES", default=0,
                        help="afterwards, profile this many games with cProfile")
    parser.add_argument("--loop", choices=("pending", "bots"), default="bots",
                        help="find the next request as bots.play does (default) or with pending() (which also builds options and defaults)")
    parser.add_argument("--uniform", action="store_true",
                        help="seat the bench's UniformBot everywhere (uniformly random legal games) instead of "
                             "the game's greedy and random bots")
    parser.add_argument("--parts", type=int, metavar="GAMES", default=0,
                        help="afterwards, time each part of this many games alone (draws, copy, lookup, check, bots, apply)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one core")
    args = parser.parse_args(argv)

    print(f"python {sys.version.split()[0]}, {'not pinned' if args.no_pin else pin_to_one_core()}")
    for seed in range(args.warmup):
        play_game(-1 - seed, args.loop, uniform=args.uniform)
    plans = draw_plans(args.games, args.uniform)
    draws = sum(map(len, plans)) / args.games
    engine, floor = [], []
    for _ in range(args.rounds):  # alternated, so both see the same machine
        engine.append(run(args.games, args.loop, args.uniform))
        floor.append(rng_floor(plans))
    bots = "UniformBot in every seat" if args.uniform else "the game's greedy and random bots"
    games = args.games
    print(f"{games} games of 4 players per round, {args.rounds} rounds, engine and floor alternated "
          f"(loop: {args.loop}; bots: {bots})")

    def line(what: str, seconds: list) -> None:
        rates = sorted(games / s for s in seconds)
        print(f"  {what:34s} median {statistics.median(rates):9.1f}   worst {rates[0]:9.1f}   best {rates[-1]:9.1f}")
    line("engine, games per CPU second", [r["cpu"] for r in engine])
    line("engine, games per wall second", [r["seconds"] for r in engine])
    line("floor (draws), games per CPU s", [c for c, _w in floor])
    line("floor (draws), games per wall s", [w for _c, w in floor])
    cpu_ratios = sorted(r["cpu"] / c for r, (c, _w) in zip(engine, floor))
    wall_ratios = sorted(r["seconds"] / w for r, (_c, w) in zip(engine, floor))
    print(f"  ratio engine / floor: CPU median {statistics.median(cpu_ratios):.2f}x (min {cpu_ratios[0]:.2f}x), "
          f"wall median {statistics.median(wall_ratios):.2f}x (min {wall_ratios[0]:.2f}x); "
          f"the floor is {draws:.0f} HMAC-SHA256 draws per game, same seeds")
    rate = statistics.median(games / r["cpu"] for r in engine)
    print(f"  games per CPU second: {rate:.1f} (target >= 1,000): {'met' if rate >= 1000 else 'NOT met'}")
    last = engine[-1]
    print(f"  applies per game      {last['applies_per_game']:8.1f}")
    print(f"  microseconds / apply  {last['us_per_apply']:8.1f}   (inside apply only)")
    print(f"  share of time in apply {last['apply_share']:7.1%}   (the rest: bots, pending, setup)")
    if args.parts:
        parts(args.parts, args.uniform)
    if args.profile:
        profile(args.profile, args.loop, uniform=args.uniform)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
