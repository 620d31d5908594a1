"""How fast the email judge reads and answers mail, next to the floor of parsing the same mail.

Headline: messages read and answered per CPU second, that is ``pbem mail ingest`` followed by
the rendering ``pbem mail send`` does of every message the ingest queued (the judge's whole
work per message but SMTP). Target (issue 32): at least 500 messages per CPU second.

Builds an mbox of valid players' messages (default: 10,000) for several 4-player games
played in parallel (each message a real move: a sealed choice or an open decision with the
player's password), then ingests the whole mbox in one process into a fresh copy of the
games, and prints messages per second next to the floor: reading the same mbox and parsing
each message with the standard library's ``email`` alone, and the headline: the rate of
ingest followed by the rendering of every message it queued (``pbem mail send`` renders
summaries and private messages before it sends them).

    python benchmarks/bench_mail.py [--messages 10000] [--parallel 8]

Each run measures the ingest and its floor one after the other, in CPU seconds of this
process (``time.process_time``: steadier than the wall clock on a shared machine), and
prints the range and median over ``--repeat`` runs (default 3). Targets of the ingest alone
(issue 17): at least 1,000 messages per CPU second, and within 2x of parsing the same
messages with ``policy.default`` alone.
"""

from __future__ import annotations

import argparse
import mailbox
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.mail import ingest as pipeline  # noqa: E402
from pbem.mail import addresses  # noqa: E402
from pbem.protocol import loading, reports  # noqa: E402
from pbem.store import Store  # noqa: E402

PLAYERS = ["ani", "alex", "frank", "lothar"]
START = datetime(2030, 1, 1)


def stamp(n: int) -> str:
    return (START + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


def message(game: str, player: str, body: str, number: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"{player}.{game}@example.org"
    msg["To"] = "judge@example.org"
    msg["Subject"] = f"Re: [{game}] your move"
    msg["Message-ID"] = f"<bench{number}@example.org>"
    msg.set_content(body)
    return msg.as_bytes()


def create_games(path: Path, count: int) -> dict:
    """``count`` games with addresses; returns {game: {player: password}}."""
    import re
    store = Store(path)
    passwords = {}
    for number in range(count):
        game = f"b{number}"
        addresses.create_game(store, game, "tortuga", PLAYERS, {}, {p: f"{p}.{game}@example.org" for p in PLAYERS},
                              None, at=stamp(0), start=True)
        passwords[game] = {}
        for (recipient, body) in store.conn.execute("select recipient, body_text from outbox where game = ?", (game,)):
            found = re.search(r"Your mail password for this game: (\S+)", body)
            if found:
                passwords[game][recipient.split(".")[0]] = found.group(1)
    store.close()
    return passwords


def next_move(store, game: str, passwords: dict) -> tuple[str, str] | None:
    session = loading.load(store, game)
    if session.finished:
        return None
    owed = reports.waiting(session)
    if not owed:
        return None
    entry = owed[0]
    player = entry["player"]
    if entry["sealed"]:
        choice = session.rules.default(session.state, player, session.sealed.kind)
        return player, f"password {passwords[player]}\nseal {choice}\n"
    choice = session.rules.default(session.state, player, entry["kind"])
    return player, f"password {passwords[player]}\n{choice}\n"


def build_mbox(db: Path, mbox_path: Path, passwords: dict, total: int, parallel: int) -> int:
    """Play the games by mail in a scratch copy, writing each message to the mbox."""
    store = Store(db)
    box = mailbox.mbox(str(mbox_path))
    games = list(passwords)
    active, waiting_games, written = games[:parallel], games[parallel:], 0
    while written < total and active:
        for game in list(active):
            move = next_move(store, game, passwords[game])
            if move is None:
                active.remove(game)
                if waiting_games:
                    active.append(waiting_games.pop(0))
                continue
            raw = message(game, move[0], move[1], written)
            result = pipeline.ingest(store, raw, stamp(written + 1))
            if result.outcome != "applied":
                raise SystemExit(f"generator: message {written} was {result.outcome}: {result.lines}")
            box.add(raw)
            written += 1
            if written >= total:
                break
    box.flush()
    box.close()
    store.close()
    return written


def floor(mbox_path: Path, content: bool = True) -> float:
    """Messages per CPU second of parsing the mbox's messages with the standard library's
    ``email`` (policy ``default``) alone: with ``content``, also finding and decoding the
    plain-text body, as any reader of the mail must."""
    import email
    from email import policy
    box = mailbox.mbox(str(mbox_path))
    raws = [box.get_bytes(key) for key in box.iterkeys()]
    start = time.process_time()
    for raw in raws:
        msg = email.message_from_bytes(raw, policy=policy.default)
        if content:
            msg.get_body(("plain",)).get_content()
    return len(raws) / (time.process_time() - start)


def judge_rate(db: Path, mbox_path: Path) -> tuple[float, int, float]:
    """``pbem mail ingest --mbox`` as the command runs it: batches of messages, one
    transaction (one commit) per batch, a savepoint per message. Messages per CPU second
    (the messages are read from the mbox first, as the floor reads them); the count; and
    messages per CPU second of the ingest and the rendering of what it queued."""
    store = Store(db)
    box = mailbox.mbox(str(mbox_path))
    raws = [box.get_bytes(key) for key in box.iterkeys()]
    start = time.process_time()
    ticks = iter(range(1, 10**9))
    results = pipeline.ingest_many(store, iter(raws), lambda: stamp(next(ticks)))
    spent = time.process_time() - start
    rate = len(results) / spent
    count = len(results)
    applied = sum(r.outcome == "applied" for r in results)
    # then what 'pbem mail send' does first: render the bodies of every message queued
    # (summaries, and private messages, which ingest keeps as their models)
    from pbem.mail.send import render_pending
    start = time.process_time()
    render_pending(store)
    whole = count / (spent + time.process_time() - start)
    store.close()
    if applied != count:
        raise SystemExit(f"only {applied} of {count} messages applied: the benchmark is not measuring valid mail")
    return rate, count, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pbem-bench-mail-") as folder:
        folder = Path(folder)
        blank = folder / "blank.db"
        games = max(args.parallel, args.messages // 60 + 1)
        passwords = create_games(blank, games)
        shutil.copy(blank, folder / "scratch.db")
        written = build_mbox(folder / "scratch.db", folder / "mail.mbox", passwords, args.messages, args.parallel)
        rates, floors, parses = [], [], []
        for run in range(args.repeat):  # each run on a fresh copy of the games as created
            shutil.copy(blank, folder / f"bench{run}.db")
            rates.append(judge_rate(folder / f"bench{run}.db", folder / "mail.mbox"))
            floors.append(floor(folder / "mail.mbox", content=False))
            parses.append(floor(folder / "mail.mbox"))
    count = rates[0][1]
    ratios = [f / r for (r, _, _), f in zip(rates, floors)]
    wholes = [w for _, _, w in rates]
    print(f"messages: {count} valid moves in {games} games, {args.parallel} in parallel (generated {written}); "
          f"{args.repeat} runs, CPU time of this process")
    whole = statistics.median(wholes)
    print(f"read and answered (mail ingest, then mail send's rendering): median {whole:,.0f} messages per CPU "
          f"second, {min(wholes):,.0f} - {max(wholes):,.0f} (target >= 500): {'met' if whole >= 500 else 'NOT met'}")
    print(f"pbem mail ingest alone:               {min(r for r, _, _ in rates):7,.0f} - {max(r for r, _, _ in rates):7,.0f} "
          f"messages per CPU second (target >= 1,000)")
    print(f"floor, email policy.default parse:    {min(floors):7,.0f} - {max(floors):7,.0f} messages per CPU second")
    print(f"       and the plain body decoded:    {min(parses):7,.0f} - {max(parses):7,.0f} messages per CPU second")
    print(f"ratio: ingest is {min(ratios):.2f}x - {max(ratios):.2f}x the policy.default floor, run by run "
          f"(target: within 2x)")


if __name__ == "__main__":
    main()
