"""Audit throughput on a log of many signed games, against the cost of only its SHA-256 and
Ed25519 work (the floor: re-hashing every event, checking every commitment, verifying every
signature). Target: audit within 5x of that floor.

Run: python benchmarks/bench_audit.py [--games 12]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pbem.protocol import commands, loading, offline, submissions
from pbem.store import audit
from pbem.protocol.canonical import event_hash
from pbem.protocol.commit import commitment_matches
from pbem.protocol.moves import signed_body
from pbem.protocol.signing import generate_keypair, verify
from pbem.store import Store

PLAYERS = ["ani", "alex", "frank", "lothar"]


def play_signed(store, game: str, keys: dict, seed: str) -> None:
    """Bots play a whole game in which every submission is a signed, armoured block."""
    session = loading.load(store, game)
    bots = {p: session.rules.bot(f"{seed}/{p}", "greedy" if i % 2 else "random") for i, p in enumerate(PLAYERS)}
    while not session.finished:
        step = session.sealed
        if step is not None:
            held = []
            for player in step.owes_commit():
                sealed = commands.seal(session, player, bots[player].choose(session.state, player, "select"))
                blocks = offline.signed_blocks(sealed, keys[player])
                submissions.submit(store, game, blocks["commit"])
                held.append(blocks["reveal"])
            submissions.submit(store, game, "\n".join(held))  # a mail with every reveal
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            submissions.submit(store, game, offline.decision_block(session, request.player, choice, keys[request.player]))
        session = loading.load(store, game)


def floor_seconds(rows_by_game: dict, publics: dict) -> float:
    start = time.perf_counter()
    for game, rows in rows_by_game.items():
        prev = "0" * 64
        commits = {}
        for row in rows:
            event = {k: row[k] for k in ("game", "seq", "kind", "at", "data")}
            prev = event_hash(prev, event)
            assert prev == row["hash"]
            data = row["data"]
            if row["kind"] == "commit":
                commits[(data["round"], data["step"], data["player"])] = data["commitment"]
            if row["kind"] == "reveal":
                key = (data["round"], data["step"], data["player"])
                assert commitment_matches(commits[key], game, *key[:2], key[2], data["choice"], data["salt"])
            if "signature" in data:
                assert verify(publics[data["player"]], signed_body(game, row["kind"], data), data["signature"])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    args = parser.parse_args()
    pairs = {p: generate_keypair() for p in PLAYERS}
    secrets = {p: s for p, (s, _) in pairs.items()}
    publics = {p: pub for p, (_, pub) in pairs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "audit.db")
        print(f"playing {args.games} signed 4-player games...")
        for g in range(args.games):
            name = f"g{g}"
            commands.create_game(store, name, "tortuga", PLAYERS, {}, require_signatures=True, keys=publics, start=True)
            play_signed(store, name, secrets, name)
        games = store.games()
        rows = {g: [e.export_dict() for e in store.events(g)] for g in games}
        events = sum(len(r) for r in rows.values())
        signed = sum(1 for r in rows.values() for e in r if "signature" in e["data"])
        start = time.perf_counter()
        for g in games:
            assert audit.audit_store(store, g)["ok"]
        audit_s = time.perf_counter() - start
        floor_s = floor_seconds(rows, publics)
    print(f"{events} events in {len(games)} games ({signed} signed)")
    print(f"audit: {audit_s:.2f} s = {events / audit_s:,.0f} events/s (full replay, snapshot check included)")
    print(f"floor (SHA-256 + Ed25519 only): {floor_s:.2f} s = {events / floor_s:,.0f} events/s")
    print(f"audit / floor: {audit_s / floor_s:.2f}x (target < 5x)")


if __name__ == "__main__":
    main()
