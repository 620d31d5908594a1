"""Does a move cost more late in a long game than early on? It should not, as a user pays it:
each ``pbem`` command and each ``pbem mail ingest`` is a new process, which opens the store,
checks the game's chain before it writes (from the checkpoint, pbem.store.damage) and loads
the game's state (from its snapshot) before it writes one move.

Headline, ``move``: the CPU time (and wall time) of one move as a new process makes it (a
new ``Store`` on the file, nothing kept in memory: open, check, load, write with its
snapshot and queued mail, commit, close) at event 50, 500, 2,000 and 10,000 of one long
game, alternated round by round in the same run (each measured on a fresh copy of the game
at that event), with each position's median and its ratio to event 50. The long game is
synthetic but legal: a mail game of Tortuga in which one player replaces their commitment
of the first step again and again (every replacement is an event); the measured move is
one more such replacement. Target (issue 32): the move at event 10,000 costs <= 1.1x the
move at event 50.

``--rendering`` adds the figures of issue 17, in one kept process: a round's public summary
and a player's private message in the first fifth against the last fifth of played games.

    python benchmarks/bench_long.py [--rounds 15] [--rendering --games 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.cli.common import open_store  # noqa: E402
from pbem.mail import addresses, letters  # noqa: E402
from pbem.protocol import commands, loading  # noqa: E402
from pbem.render import summary  # noqa: E402
from pbem.store import Store  # noqa: E402

AT = "2030-01-01T10:00:00Z"
SETUPS = {"tortuga": (["ani", "alex", "frank", "lothar"], {"variant": "long"}),
          "tortuga1667": (["ani", "alex", "frank", "lothar", "mary", "nick", "olga", "pete", "quin"], {})}


def timed(costs: list, seq_before: int, call):
    started = time.process_time()
    result = call()
    costs.append((seq_before, time.process_time() - started))
    return result


def play(store, game: str, seed: str) -> list[tuple[int, float]]:
    """Bots play the game to its end (as ``pbem.render.demo.play_bots``); the CPU cost of
    each write, by the event it followed."""
    costs: list[tuple[int, float]] = []
    session = loading.load(store, game)
    bots = {p: session.rules.bot(f"{seed}/{p}", "random") for p in session.players}
    while not session.finished:
        step = session.sealed
        if step is not None:
            held = {}
            for player in step.owes_commit():
                sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
                held[player] = sealed
                session = timed(costs, session.seq, lambda: commands.commit(
                    store, game, player, sealed["commitment"], (sealed["round"], sealed["step"]), at=AT))
            for player, sealed in held.items():
                session = timed(costs, session.seq, lambda: commands.reveal(
                    store, game, player, sealed["choice"], sealed["salt"], at=AT))
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind, request=request)
            session = timed(costs, session.seq, lambda: commands.decide(store, game, request.player, choice, at=AT))
    return costs


def early_late(items: list[tuple[int, float]], last: int) -> tuple[list[float], list[float]]:
    early = [c for at, c in items if at <= last / 5]
    late = [c for at, c in items if at >= last * 4 / 5]
    return early, late


POSITIONS = (50, 500, 2000, 10000)
TARGET = 1.1


def replacement(store, game: str, n: int):
    """The next move of the synthetic game: ani replaces her commitment of the open step."""
    session = loading.load(store, game)
    sealed = commands.seal(session, "ani", "ABCDE"[n % 5])
    return lambda target: commands.commit(target, game, "ani", sealed["commitment"],
                                          (sealed["round"], sealed["step"]), at=AT)


def long_games(folder: Path) -> dict[int, Path]:
    """The synthetic game copied at each position (its file closed, its WAL folded in)."""
    players, options = SETUPS["tortuga"]
    path = folder / "grow.db"
    store = Store(path)
    store.conn.execute("pragma synchronous = off")  # building is not what is measured
    addresses.create_game(store, "long", "tortuga", players, {**options},
                          {p: f"{p}@example.org" for p in players}, None, at=AT, start=True)
    copies, n = {}, 0
    for position in POSITIONS:
        while store.head("long")[0] < position:
            replacement(store, "long", n)(store)
            n += 1
        store.conn.execute("pragma wal_checkpoint(truncate)")
        copies[position] = folder / f"at{position}.db"
        shutil.copyfile(path, copies[position])
    store.close()
    return copies


def new_process_move(pristine: Path, work: Path, n: int) -> tuple[float, float]:
    """CPU and wall seconds of one move as a new process makes it, on a fresh copy."""
    shutil.copyfile(pristine, work)
    for suffix in ("-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    probe = Store(work)  # the seal is the player's work, on their machine: not measured
    move = replacement(probe, "long", n)
    probe.close()
    cpu, wall = time.process_time(), time.perf_counter()
    store = open_store(work)  # as the CLI opens it (its mail and page hooks)
    move(store)
    store.close()
    return time.process_time() - cpu, time.perf_counter() - wall


def moves(rounds: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        copies = long_games(Path(tmp))
        cpu: dict[int, list] = {p: [] for p in POSITIONS}
        wall: dict[int, list] = {p: [] for p in POSITIONS}
        for r in range(rounds):
            for position in (POSITIONS if r % 2 == 0 else POSITIONS[::-1]):
                c, w = new_process_move(copies[position], Path(tmp) / "work.db", r)
                cpu[position].append(c)
                wall[position].append(w)
    base_cpu, base_wall = statistics.median(cpu[POSITIONS[0]]), statistics.median(wall[POSITIONS[0]])
    print(f"a move as a new process makes it (new store, nothing kept), {rounds} rounds alternated; medians")
    for position in POSITIONS:
        c, w = statistics.median(cpu[position]), statistics.median(wall[position])
        print(f"  move at event {position:6,d}: CPU {c * 1000:6.2f} ms (min {min(cpu[position]) * 1000:6.2f}) "
              f"ratio {c / base_cpu:5.2f}x   wall {w * 1000:6.2f} ms ratio {w / base_wall:5.2f}x")
    ratio = statistics.median(cpu[POSITIONS[-1]]) / base_cpu
    print(f"move at event {POSITIONS[-1]:,} / move at event {POSITIONS[0]}: {ratio:.2f}x CPU "
          f"(target <= {TARGET}x): {'met' if ratio <= TARGET else 'NOT met'}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--rendering", action="store_true", help="also the rendering figures of issue 17")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--game", choices=sorted(SETUPS), default="tortuga")
    args = parser.parse_args(argv)
    moves(args.rounds)
    return rendering(args) if args.rendering else 0


def rendering(args) -> int:
    players, options = SETUPS[args.game]
    figures = {"move (kept store)": ([], []), "summary": ([], []), "private": ([], [])}
    events = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "long.db")
        store.conn.execute("pragma synchronous = off")  # the disk is not what is measured
        for g in range(args.games):
            game = f"long{g}"
            addresses.create_game(store, game, args.game, players, {**options},
                                  {p: f"{p}.{game}@example.org" for p in players}, None, at=AT, start=True)
            costs = play(store, game, f"long/{g}")
            last = store.head(game)[0]
            events.append(last)
            for fig, found in zip(figures["move (kept store)"], early_late(costs, last)):
                fig += found
            specs = [part["spec"] for (text,) in store.conn.execute(
                "select render from outbox where game = ? and render is not null", [game])
                for part in json.loads(text).get("parts", []) if "spec" in part]
            rendered = []
            for spec in specs:
                if spec["what"] == "summary":
                    started = time.process_time()
                    letters.materialize(store, game, json.dumps(spec))
                    rendered.append((spec["upto"], time.process_time() - started))
            for fig, found in zip(figures["summary"], early_late(rendered, last)):
                fig += found
            # private messages at the head of a copy of the game stopped early and late
            session_costs = []
            for upto in range(10, last, max(1, last // 20)):
                from pbem.protocol.session import Session
                seed = bytes.fromhex(store.get_secret(game, loading.SEED))
                session = Session.replay(game, store.events(game, upto=upto), seed,
                                         held=loading.held_source(store, game))
                if session.finished or not session.pending():
                    continue
                player = session.pending()[0].player
                started = time.process_time()
                summary.render_private(session, player, "text")
                session_costs.append((upto, time.process_time() - started))
            for fig, found in zip(figures["private"], early_late(session_costs, last)):
                fig += found
    print(f"{args.games} {args.game} games of {len(players)} players, {statistics.mean(events):.0f} events each "
          f"on average; CPU time of this process; medians")
    for what, (early, late) in figures.items():
        if early and late:
            a, b = statistics.median(early), statistics.median(late)
            print(f"  {what:17s} first fifth {a * 1000:7.2f} ms   last fifth {b * 1000:7.2f} ms   "
                  f"ratio {b / a:5.2f}x  ({len(early)} and {len(late)} samples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
