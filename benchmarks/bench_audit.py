"""The audit as a user pays it, against its floor. ``pbem audit`` is a new process: it opens
the store afresh (nothing kept in memory) and audits every game: the chain, the replay (every
commitment, signature, roll and draw) and the snapshots. Measured in CPU seconds, alternated
round by round with the floor in the same run, on a log of signed 4-player games played by
bots until it holds 14,000 events (about 53 games; ``--events`` to change).

The floor is what no audit can skip: SHA-256 over the same canonical bytes the audit hashes
(each event's ``prev_hash`` + stored body, each reveal's commitment preimage) plus an Ed25519
verify of the same signatures, with the bytes and keys made ready outside the timing.

Targets (issue 32): audit <= 1.3x its floor, and the 14,000-event log audited in <= 4 CPU s.

    python benchmarks/bench_audit.py [--events 14000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbem.protocol import commands, loading, offline, submissions  # noqa: E402
from pbem.protocol.moves import signed_body  # noqa: E402
from pbem.store import Store, audit  # noqa: E402

PLAYERS = ["ani", "alex", "frank", "lothar"]
TARGET_RATIO, TARGET_SECONDS = 1.3, 4.0


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


def floor_work(store, publics: dict) -> tuple[list[bytes], list]:
    """The bytes the audit hashes and the (key, signature, message) it verifies."""
    import json

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from pbem.protocol.commit import commitment_preimage
    from pbem.protocol.signing import parse_public_key, signed_message, strict_b64decode
    keys = {p: Ed25519PublicKey.from_public_bytes(parse_public_key(k)) for p, k in publics.items()}
    hashed, signed = [], []
    for game in store.games():
        commits = {}
        for prev, body, kind, text in store.conn.execute(
                "select prev_hash, body, kind, body from events where game = ? order by seq", [game]):
            hashed.append((prev + body).encode())
            data = json.loads(text)["data"]
            if kind == "commit":
                commits[(data["round"], data["step"], data["player"])] = data["commitment"]
            if kind == "reveal":
                hashed.append(commitment_preimage(game, data["round"], data["step"], data["player"],
                                                  data["choice"], data["salt"]))
            if "signature" in data:
                signed.append((keys[data["player"]], strict_b64decode(data["signature"]),
                               signed_message(signed_body(game, kind, data))))
    return hashed, signed


def floor_seconds(hashed: list[bytes], signed: list) -> float:
    sha256 = hashlib.sha256
    start = time.process_time()
    for item in hashed:
        sha256(item).hexdigest()
    for key, signature, message in signed:
        key.verify(signature, message)
    return time.process_time() - start


def audit_seconds(path: Path) -> tuple[float, float]:
    """CPU and wall seconds of auditing every game, as ``pbem audit`` does in a new process."""
    cpu, wall = time.process_time(), time.perf_counter()
    store = Store(path, create=False)
    for game in store.games():
        report = audit.audit_store(store, game)
        assert report["ok"], report
    store.close()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=14000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from pbem.protocol.signing import generate_keypair
    pairs = {p: generate_keypair() for p in PLAYERS}
    secrets = {p: s for p, (s, _) in pairs.items()}
    publics = {p: pub for p, (_, pub) in pairs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audit.db"
        store = Store(path)
        store.conn.execute("pragma synchronous = off")  # playing is not what is measured
        print(f"playing signed 4-player games up to {args.events:,} events...", flush=True)
        events, games = 0, 0
        while events < args.events:
            name = f"g{games}"
            commands.create_game(store, name, "tortuga", PLAYERS, {}, require_signatures=True, keys=publics, start=True)
            play_signed(store, name, secrets, name)
            games += 1
            events = store.conn.execute("select count(*) from events").fetchone()[0]
        hashed, signed = floor_work(store, publics)
        store.close()
        audits, walls, floors = [], [], []
        for _ in range(args.rounds):
            cpu, wall = audit_seconds(path)
            audits.append(cpu)
            walls.append(wall)
            floors.append(floor_seconds(hashed, signed))
    ratios = [a / f for a, f in zip(audits, floors)]
    print(f"{events:,} events in {games} games ({len(signed):,} signatures, {len(hashed):,} SHA-256 inputs); "
          f"{args.rounds} rounds alternated, CPU seconds")
    print(f"audit (new store, every game): min {min(audits):.2f} s, median {statistics.median(audits):.2f} s "
          f"= {events / statistics.median(audits):,.0f} events/CPU s; wall median {statistics.median(walls):.2f} s")
    print(f"floor (SHA-256 + Ed25519 only): min {min(floors):.2f} s, median {statistics.median(floors):.2f} s "
          f"= {events / statistics.median(floors):,.0f} events/CPU s")
    ratio, seconds = statistics.median(ratios), statistics.median(audits)
    print(f"audit / floor: median {ratio:.2f}x, min {min(ratios):.2f}x (target <= {TARGET_RATIO}x): "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    print(f"audit of the whole log: {seconds:.2f} CPU s (target <= {TARGET_SECONDS:.0f} s): "
          f"{'met' if seconds <= TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
