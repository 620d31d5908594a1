"""How the judge's work per command grows with the size of its database.

Builds two judge databases: a small one with 10 games and a big one with 10,000 (most
finished, 200 in play; every game with addresses, deadlines and its newest sent mail), then
measures, in this process's CPU time (``time.process_time``), the same work in each:

    move     a move by mail (``pbem mail ingest`` of one valid message) in a game in play,
             each as a new process makes it: with nothing kept about any game
    status   ``pbem status GAME`` (in process, through the command line's own function)
    games    ``pbem games``
    tick     ``pbem mail tick`` when nothing is due

and prints each as a ratio: big / small, measured pair by pair in the same run (the
floor is the small judge). Target (issue 17): each within 1.3x.

    python benchmarks/bench_scale.py                     # 10 vs 10,000 games
    python benchmarks/bench_scale.py --games 2000 --repeat 5
    python benchmarks/bench_scale.py --keep DIR      # build the judges in DIR and keep them
    python benchmarks/bench_scale.py --reuse DIR     # measure judges kept earlier (same --games)
    python benchmarks/bench_scale.py --reuse DIR --only games,status   # only these commands

The games are Tortuga games with three players, played by bots through the judge
(``pbem.mail.judge``) once, then copied under new names: each copy's events are rehashed
for its own name, its snapshots re-bound to them, its mail rows renamed. A copy is loaded
from the full snapshot at its head, never replayed from its first event: its commitments
and draws are bound to the template's name, so a copy does not audit clean (it is there to
be measured).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.mail import addresses, deadlines, judge  # noqa: E402
from pbem.mail import ingest as pipeline  # noqa: E402
from pbem.protocol import cache, loading, reports  # noqa: E402
from pbem.protocol.snapshot import head_columns  # noqa: E402
from pbem.render.demo import play_bots  # noqa: E402
from pbem.store import Store  # noqa: E402

PLAYERS = ["ani", "alex", "frank"]
AT = "2030-01-01T10:00:00Z"
TEMPLATES = ("Tfin0", "Tfin1", "Tfin2", "Tplay")  # finished games, and one in play
OUTBOX_KEPT = 12  # sent mail kept per copied game (the newest): the outbox of a real judge, but smaller
RUN = f"{os.getpid()}-{time.time_ns()}"
GAME_TABLES = ("secrets", "mail_players", "mail_games", "mail_deadlines", "mail_reminders")


def address(player: str, game: str) -> str:
    return f"{player}.{game.lower()}@example.org"


def build_templates(path: Path) -> dict:
    """The template games, played through the judge; returns the in-play game's passwords."""
    store = Store(path)
    store.conn.execute("pragma synchronous = off")  # a scratch file: no need to wait for the disk
    passwords = {}
    for n, name in enumerate(TEMPLATES):
        addresses.create_game(store, name, "tortuga", PLAYERS, {}, {p: address(p, name) for p in PLAYERS},
                              None, at=AT, start=True, deadline_seconds=48 * 3600,
                              deadlines={"remind": 12 * 3600, "grace": 0, "on_late": "default"})
        if name == "Tplay":
            play_bots(store, name, f"scale/{n}", at=AT, until=lambda s: s.state.round >= 3)
            for recipient, body in store.conn.execute(
                    "select recipient, body_text from outbox where game = ?", (name,)):
                found = re.search(r"Your mail password for this game: (\S+)", body)
                if found:
                    passwords[recipient.split(".")[0]] = found.group(1)
        else:
            play_bots(store, name, f"scale/{n}", at=AT)
    store.conn.execute("update outbox set state = 'sent', sent_at = ?", [AT])
    # A copy draws its dice under its own name, so the template's events do not replay in it:
    # each template ends with a full snapshot at its head, and a copy is loaded from it
    # without replaying any of them (the events a run adds replay, drawn under the copy's name).
    with store.transaction():
        for name in TEMPLATES:
            session, head = loading.load(store, name), store.head(name)
            data = cache.snapshot_data(session, head, full=True)
            store.put_snapshot(name, head[0], json.dumps(data, separators=(",", ":")), round=session.state.round,
                               head=head_columns(data["status"]), at_head=head, full=True)
    store.close()
    return passwords


def template_passwords(path: Path) -> dict:
    """The in-play template game's passwords, from the welcome mail kept in ``path``."""
    store = Store(path)
    passwords = {}
    for recipient, body in store.conn.execute("select recipient, body_text from outbox where game = 'Tplay'"):
        found = re.search(r"Your mail password for this game: (\S+)", body)
        if found:
            passwords[recipient.split(".")[0]] = found.group(1)
    store.close()
    return passwords


def clone(conn, template: str, new: str) -> None:
    """Copy game ``template`` as ``new``: events rehashed, snapshots re-bound, mail rows renamed."""
    from pbem.store.snapshots import snapshot_digest
    prev, hashes = "0" * 64, {0: "0" * 64}
    rows = []
    old_tag, new_tag = f',"game":"{template}",', f',"game":"{new}",'
    for seq, kind, at, body in conn.execute(
            "select seq, kind, at, body from events where game = ? order by seq", [template]).fetchall():
        body = body.replace(old_tag, new_tag, 1)
        digest = hashlib.sha256((prev + body).encode()).hexdigest()
        rows.append((new, seq, kind, at, body, prev, digest))
        prev = hashes[seq] = digest
    conn.executemany("insert into events (game, seq, kind, at, body, prev_hash, hash) values (?,?,?,?,?,?,?)", rows)
    snaps = []
    for seq, state, round_, full in conn.execute("select seq, state, round, full from snapshots where game = ?",
                                                 [template]).fetchall():
        state = state.replace(f'"{template}"', f'"{new}"')
        snaps.append((new, seq, state, snapshot_digest(new, seq, hashes[seq], state), round_, full))
    conn.executemany("insert into snapshots (game, seq, state, digest, round, full) values (?,?,?,?,?,?)", snaps)
    if conn.execute("select 1 from sqlite_master where name = 'game_heads'").fetchone():
        # the head row's cache, as Store.put_snapshot writes it (its listing line names no game);
        # not the template's chain checkpoint (pbem.store.damage), which names its hashes: the
        # copy's first write checks its chain from the first event and sets its own
        kept = ("game", "seq", "checked", "checked_hash", "checked_schema", "recheck")
        columns = ", ".join(r[1] for r in conn.execute("pragma table_info(game_heads)") if r[1] not in kept)
        conn.execute(f"update game_heads set ({columns}) = (select {columns} "
                     "from game_heads t where t.game = ?) where game = ?", [template, new])
    for table in GAME_TABLES:
        cols = [r[1] for r in conn.execute(f"pragma table_info({table})")]
        values = ", ".join("?" if c == "game" else ("replace(address, ?, ?)" if c == "address" else
                                                   ("? || message_id" if c == "message_id" else c)) for c in cols)
        params = []
        for c in cols:
            if c == "game":
                params.append(new)
            elif c == "address":
                params += [f".{template.lower()}@", f".{new.lower()}@"]
            elif c == "message_id":
                params.append(f"{new}.")
        conn.execute(f"insert into {table} ({', '.join(cols)}) select {values} from {table} where game = ?",
                     params + [template])
    cols = [r[1] for r in conn.execute("pragma table_info(outbox)") if r[1] != "id"]
    values = ", ".join({"game": "?", "recipient": "replace(recipient, ?, ?)",
                        "message_id": "replace(message_id, '<', '<' || ? || '.')"}.get(c, c) for c in cols)
    conn.execute(f"insert into outbox ({', '.join(cols)}) select {values} from outbox where game = ? "
                 f"order by id desc limit {OUTBOX_KEPT}", [new, f".{template.lower()}@", f".{new.lower()}@", new, template])
    conn.execute("insert into mail_seen (key, game, sender, at, outcome) select ? || key, ?, sender, at, outcome "
                 "from mail_seen where game = ?", [f"{new}/", new, template])


def make_judge(template_db: Path, path: Path, total: int, in_play: int) -> list[str]:
    """A judge with ``total`` games, ``in_play`` of them copies of the game in play; returns
    the names of the games in play."""
    shutil.copy(template_db, path)
    store = Store(path)
    conn = store.conn
    conn.execute("pragma synchronous = off")
    playing = []
    for first in range(0, total, 500):  # commits of 500 games: the write-ahead log stays small
        with store.transaction():
            for k in range(first, min(total, first + 500)):
                if k < in_play:
                    name = f"p{k:05d}"
                    clone(conn, "Tplay", name)
                    playing.append(name)
                else:
                    clone(conn, TEMPLATES[k % 3], f"f{k:05d}")
        conn.execute("pragma wal_checkpoint(truncate)")
    with store.transaction():
        for table in ("events", "snapshots", "outbox", "mail_seen", *GAME_TABLES):
            conn.execute(f"delete from {table} where game in ({', '.join('?' * len(TEMPLATES))})", TEMPLATES)
        if conn.execute("select 1 from sqlite_master where name = 'game_heads'").fetchone():
            conn.execute(f"delete from game_heads where game in ({', '.join('?' * len(TEMPLATES))})", TEMPLATES)
    conn.execute("analyze")
    conn.execute("pragma wal_checkpoint(truncate)")
    store.close()
    return playing


def message(game: str, player: str, body: str, number: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = address(player, game)
    msg["To"] = "judge@example.org"
    msg["Subject"] = f"Re: [{game}] your move"
    msg["Message-ID"] = f"<scale{number}.{RUN}.{game}@example.org>"  # new in every run (see --reuse)
    msg.set_content(body)
    return msg.as_bytes()


def next_message(store, game: str, passwords: dict, number: int) -> bytes:
    session = loading.load(store, game)
    entry = reports.waiting(session)[0]
    player = entry["player"]
    kind = session.sealed.kind if entry["sealed"] else entry["kind"]
    choice = session.rules.default(session.state, player, kind)
    line = f"seal {choice}" if entry["sealed"] else choice
    return message(game, player, f"password {passwords[player]}\n{line}\n", number)


class Judge:
    """One judge database and the work measured in it."""

    def __init__(self, path: Path, playing: list[str], passwords: dict):
        from typer.testing import CliRunner
        from pbem.cli.program import app
        self.path, self.playing, self.passwords = path, playing, passwords
        self.store = Store(path)
        judge.attach(self.store, "judge@example.org")
        self.runner, self.app = CliRunner(), app
        self.moves = 0

    def move(self) -> None:
        game = self.playing[self.moves % len(self.playing)]
        raw = next_message(self.store, game, self.passwords, self.moves)
        self.moves += 1
        # Each move starts as a new `pbem mail fetch` would: with nothing kept about any game
        # (the store keeps a game's session and checked chain across its own transactions).
        # Else the small judge, whose one game in play moves every time, would be measured
        # warm, and the big one, which moves a different game each time, cold.
        self.store._forget()
        started = time.process_time()
        result = pipeline.ingest(self.store, raw, "2030-01-01T11:00:00Z", ("judge@example.org",))
        self.spent = time.process_time() - started
        if result.outcome != "applied":
            raise SystemExit(f"move {self.moves} in {game} was {result.outcome}: {result.lines}")

    def cli(self, *argv: str) -> None:
        started = time.process_time()
        result = self.runner.invoke(self.app, [*argv, "--db", str(self.path)])
        self.spent = time.process_time() - started
        if result.exit_code != 0:
            raise SystemExit(f"pbem {' '.join(argv)}: {result.output}")

    def status(self) -> None:
        self.cli("status", self.playing[0])

    def games(self) -> None:
        self.cli("games")

    def tick(self) -> None:
        started = time.process_time()
        actions = deadlines.tick(self.store, "2030-01-01T11:00:00Z")
        self.spent = time.process_time() - started
        if any(a.action == "failed" for a in actions):
            raise SystemExit(f"tick failed: {actions}")


def measure(small: Judge, big: Judge, what: str, repeat: int) -> tuple[float, float]:
    """Median CPU seconds of ``what`` in each judge, run pair by pair."""
    a, b = [], []
    for _ in range(repeat):
        for judge_, out in ((small, a), (big, b)):
            getattr(judge_, what)()
            out.append(judge_.spent)
    return statistics.median(a), statistics.median(b)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10000, help="games in the big judge (default 10000)")
    parser.add_argument("--in-play", type=int, default=200, help="of them in play (default 200)")
    parser.add_argument("--small", type=int, default=10, help="games in the small judge (default 10)")
    parser.add_argument("--repeat", type=int, default=9, help="pairs measured per command (default 9)")
    parser.add_argument("--keep", metavar="DIR", help="build the judges in DIR and keep them")
    parser.add_argument("--reuse", metavar="DIR", help="measure the judges kept in DIR by --keep (built with the "
                        "same --games, --in-play and --small); they are migrated first if the code is newer")
    parser.add_argument("--only", metavar="WHAT", default="move,status,games,tick",
                        help="the commands to measure, comma-separated (default move,status,games,tick)")
    args = parser.parse_args(argv)
    folder = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix="pbem-bench-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        small_in_play = max(1, args.small * args.in_play // args.games)
        if args.reuse:
            passwords = template_passwords(folder / "templates.db")
            small = Judge(folder / "small.db", [f"p{k:05d}" for k in range(small_in_play)], passwords)
            big = Judge(folder / "big.db", [f"p{k:05d}" for k in range(args.in_play)], passwords)
        else:
            passwords = build_templates(folder / "templates.db")
            small = Judge(folder / "small.db", make_judge(folder / "templates.db", folder / "small.db",
                                                         args.small, small_in_play), passwords)
            big = Judge(folder / "big.db", make_judge(folder / "templates.db", folder / "big.db",
                                                     args.games, args.in_play), passwords)
        print(f"judges built in {time.perf_counter() - started:.0f} s: {args.small} games ({small_in_play} in play) "
              f"and {args.games} games ({args.in_play} in play), "
              f"{big.store.conn.execute('select count(*) from events').fetchone()[0]:,} events in the big one")
        print("CPU seconds per command (medians of pairs run alternately), big judge / small judge:")
        worst = 0.0
        for what in args.only.split(","):
            a, b = measure(small, big, what, args.repeat)
            worst = max(worst, b / a)
            print(f"  {what:7s} small {a * 1000:8.1f} ms   big {b * 1000:8.1f} ms   ratio {b / a:6.2f}x  (target <= 1.3x)")
        print(f"worst ratio: {worst:.2f}x")
    finally:
        if not (args.keep or args.reuse):
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
