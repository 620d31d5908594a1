"""Does a move cost more late in a long game than early on? It should not: the state is
kept (a snapshot at the head, and one before each round), not rebuilt from the first event.

Plays long games through the email judge's write path (every write queues its mail, as
``pbem mail ingest`` does) and measures, in this process's CPU time:

    move      one protocol write (commit, reveal or decision, with its snapshot and mail)
    summary   rendering one round's public summary, as ``pbem mail send`` does
    private   rendering one player's private message

in the first fifth of each game against the last fifth, and prints late / early: the
floor is the same work early in the same games, in the same run. Target (issue 17): the
ratio stays near 1 (O(1) in the game's length).

    python benchmarks/bench_long.py [--games 3] [--game tortuga1667]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--game", choices=sorted(SETUPS), default="tortuga")
    args = parser.parse_args(argv)
    players, options = SETUPS[args.game]
    figures = {"move": ([], []), "summary": ([], []), "private": ([], [])}
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
            for fig, found in zip(figures["move"], early_late(costs, last)):
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
            print(f"  {what:8s} first fifth {a * 1000:7.2f} ms   last fifth {b * 1000:7.2f} ms   "
                  f"ratio {b / a:5.2f}x  ({len(early)} and {len(late)} samples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
