"""How fast the judge builds and flattens its outgoing mail, next to the standard library's way.

Plays a 5-player Tortuga 1667 game by its bots through the mail judge (a move a minute; every
summary and private message queued and rendered as ``pbem mail send`` does), then measures,
over all the mail the game queued, in CPU seconds of this process (``time.process_time``,
the best of ``--repeat`` rounds, the two ways alternated in each round):

- compose: ``send.compose`` with ``sendpolicy.SEND_POLICY`` (each header value parsed once)
  against the same with ``email.policy.default``;
- flatten: ``sendpolicy.wire_bytes`` against what ``smtplib.SMTP.send_message`` does
  (``BytesGenerator(fp).flatten(message, linesep="\\r\\n")``);

and checks that both ways give the same bytes. The board pictures are drawn, and their MIME
parts made, once before the rounds (their drawing is measured by bench_board_picture.py;
``--no-pictures`` leaves them out, as on a judge without resvg-py).

    python benchmarks/bench_send.py [--moves 40] [--repeat 5] [--no-pictures]
"""

from __future__ import annotations

import argparse
import functools
import io
import sys
import tempfile
import time
from datetime import datetime, timedelta
from email.generator import BytesGenerator
from email.policy import default
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.mail import ingest as pipeline  # noqa: E402
from pbem.mail import addresses, pictures, send, sendpolicy  # noqa: E402
from pbem.protocol import loading, reports  # noqa: E402
from pbem.store import Store, outbox  # noqa: E402

PLAYERS = ["ani", "alex", "frank", "lothar", "mary"]
T0 = datetime(2030, 1, 1, 10)
FMT = "%Y-%m-%dT%H:%M:%SZ"


def play(path: Path, moves: int) -> list:
    """A game played by mail for ``moves`` moves (or to its end); every row it queued, rendered."""
    import re
    store = Store(path)
    addresses.create_game(store, "g1", "tortuga1667", PLAYERS, {}, {p: f"{p}@example.org" for p in PLAYERS},
                          "table@example.org", at=T0.strftime(FMT), start=True)
    send.render_pending(store)
    passwords = {}
    for row in outbox.listing(store):
        found = re.search(r"Your mail password for this game: (\S+)", row.body_text)
        if found:
            passwords[row.recipient.split("@")[0]] = found.group(1)
    for minute in range(1, moves + 1):
        session = loading.load(store, "g1")
        owed = reports.waiting(session) if not session.finished else []
        if not owed:
            break
        entry = owed[0]
        player = entry["player"]
        kind = session.sealed.kind if entry["sealed"] else entry["kind"]
        choice = session.rules.default(session.state, player, kind)
        body = f"password {passwords[player]}\n" + (f"seal {choice}" if entry["sealed"] else choice)
        raw = (f"From: {player}@example.org\nTo: judge@example.org\nSubject: [g1] move\n"
               f"Message-ID: <m{minute}@example.org>\n\n{body}\n").encode()
        pipeline.ingest(store, raw, (T0 + timedelta(minutes=minute)).strftime(FMT), ("judge@example.org",))
    send.render_pending(store)
    rows = outbox.listing(store)
    store.close()
    return rows


def smtplib_flatten(message) -> bytes:
    buffer = io.BytesIO()
    BytesGenerator(buffer).flatten(message, linesep="\r\n")
    return buffer.getvalue()


def compose_all(rows, policy) -> list:
    saved = sendpolicy.SEND_POLICY
    sendpolicy.SEND_POLICY = policy
    try:
        return [send.compose(row, "judge@example.org") for row in rows]
    finally:
        sendpolicy.SEND_POLICY = saved


def timed(work):
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-pictures", action="store_true")
    args = parser.parse_args()
    if args.no_pictures:
        pictures._available = lambda: False
    with tempfile.TemporaryDirectory() as folder:
        rows = play(Path(folder) / "judge.db", args.moves)
    send._PICTURE_PARTS = 10 ** 6  # every picture drawn and its part made once, here
    pictures._render = functools.lru_cache(maxsize=None)(pictures._render.__wrapped__)
    compose_all(rows, default)
    compose_all(rows, sendpolicy.SEND_POLICY)
    best = {"compose, default policy": [], "compose, SEND_POLICY": [], "flatten, smtplib": [],
            "flatten, wire_bytes": []}
    for _ in range(args.repeat):
        took, theirs = timed(lambda: compose_all(rows, default))
        best["compose, default policy"].append(took)
        took, ours = timed(lambda: compose_all(rows, sendpolicy.SEND_POLICY))
        best["compose, SEND_POLICY"].append(took)
        took, flat_theirs = timed(lambda: [smtplib_flatten(m) for m in theirs])
        best["flatten, smtplib"].append(took)
        took, flat_ours = timed(lambda: [sendpolicy.wire_bytes(m) for m in ours])
        best["flatten, wire_bytes"].append(took)
        assert flat_ours == flat_theirs, "the bytes differ"
    size = sum(map(len, flat_ours)) / len(flat_ours)
    print(f"{len(rows)} messages of a 5-player 1667 game, {size / 1000:.1f} kB each on the wire "
          f"({'no pictures' if args.no_pictures else 'with the board pictures'}); the same bytes both ways")
    for name, times in best.items():
        print(f"  {name:24} {min(times) / len(rows) * 1000:6.2f} ms per message (best of {args.repeat})")
    for what, ours, theirs in (("compose", "compose, SEND_POLICY", "compose, default policy"),
                               ("flatten", "flatten, wire_bytes", "flatten, smtplib")):
        print(f"  {what}: {min(best[theirs]) / min(best[ours]):.2f}x faster")


if __name__ == "__main__":
    main()
