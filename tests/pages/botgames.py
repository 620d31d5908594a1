"""Bot games played through pbem's own commands, for the differential test of the page's
rules replay (pbem/pages/js/replay.js) against pbem's (Session.replay, as ``pbem audit``).

Each game is played in a fresh store by seedable bots, with what the protocol allows a
judge to do at its discretion mixed in at random: deadlines, pauses and resumes (with and
without ``until``), extensions by the moderator and by players (also for overdue
requests), replacements, NMR (forced, or once the deadline has passed), moderator-sealed
and home-sealed choices, committed choices that are illegal, a stand-in after N defaults,
and an abandoned game (``reveal-seed --force``). The export is returned with the state
pbem's replay has after each event (the game's ``to_json``, or None before the start) and
the audit's own verdict on the file.

Run alone for a count: ``python tests/pages/botgames.py 500`` plays 500 games and compares
them in node (tests/pages/node.py), printing the agreement; ``--game tortuga1667`` (with
``--players``, ``--variant``, ``--start``) plays Tortuga 1667 instead.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

from pbem.protocol import away as absence
from pbem.protocol import commands, loading
from pbem.protocol.commit import make_commitment, new_salt
from pbem.protocol.errors import Refused
from pbem.protocol.session import Session
from pbem.protocol.times import shift
from pbem.store import Store
from pbem.store.audit import audit_file
from pbem.store.export import export_lines

NAMES = ("ani", "Bo/b", "cy%z", "Ｄee")
START = "2030-01-01T10:00:00Z"
JUNK = ("Q", "A,A", "skull:raid", "fleet:go", "none", "A,B,C,D,E", "", "b c", "order:r/-")


class Clock:
    def __init__(self):
        self.at = START

    def tick(self, r: random.Random, deadline) -> str:
        step = r.choice((60, 600, 3600)) if not deadline or r.random() < 0.9 else deadline + r.choice((0, 60, 3600))
        self.at = shift(self.at, step)
        return self.at


def play(number: int, game_type: str = "tortuga", players: int | None = None, max_events: int = 4000,
         variant: str | None = None) -> dict:
    """One bot game: {"game", "export", "states", "audit"}. ``number`` seeds the players'
    count, the options, the bots and the judge's discretion; the server seed and the salts
    are fresh, as pbem makes them, so each run plays other games."""
    r = random.Random(number)
    from pbem import games
    rules = games.get(game_type)
    low, high = getattr(rules, "MIN_PLAYERS", 2), getattr(rules, "MAX_PLAYERS", 4)
    names = list((NAMES + tuple(f"p{k}" for k in range(10)))[: players or r.randint(low, high)])
    gid = f"diff-{number}"
    deadline = r.choice((None, 86400, 86400, 3600 * 48))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "g.db")
        clock = Clock()
        options = _options(game_type, names, r)
        if variant is not None:
            options["variant"] = variant
        commands.create_game(store, gid, game_type, names, options, deadline_seconds=deadline,
                             at=clock.at, stand_in_after=r.choice((None, None, 1, 2, 3)),
                             extensions={"count": 2, "max_seconds": 86400} if deadline and r.random() < 0.3 else None)
        for name in names:
            if r.random() < 0.7:
                commands.add_client_seed(store, gid, name, f"{name} {r.random()}", at=clock.tick(r, None))
        commands.start_game(store, gid, at=clock.tick(r, None))
        bots = {p: None for p in names}
        absent = r.choice(names) if r.random() < 0.5 else None
        home_sealed: dict = {}
        for _ in range(max_events):
            session = loading.load(store, gid)
            if session.finished or session.seed_revealed:
                break
            at = clock.tick(r, deadline)
            try:
                if _discretion(store, gid, session, r, at, deadline):
                    continue
                if r.random() < 0.0005:
                    commands.reveal_seed(store, gid, force=True, at=at)
                    break
                _move(store, gid, session, r, at, bots, absent, home_sealed)
            except Refused:
                continue
        rows = [e.export_dict() for e in store.events(gid)]
        text = "".join(export_lines(store.events(gid)))
    states = []
    Session.replay(gid, rows, _seed_of(rows), audit=True,
                   after_each=lambda s, seq: states.append(s.rules.to_json(s.state) if s.state is not None else None))
    report = audit_file(text)
    return {"game": gid, "export": text, "states": states,
            "audit": {"ok": report["ok"], "bad_seq": report.get("bad_seq"), "problem": report.get("problem")}}


def _options(game_type: str, names: list, r: random.Random) -> dict:
    """Random options the game offers (Tortuga: its variant and start player)."""
    if game_type == "tortuga":
        return {"variant": r.choice(("standard", "standard", "long")), "start": r.choice(names)}
    from pbem import games
    offered = getattr(games.get(game_type), "OPTIONS", {})
    return {name: r.choice(values) for name, values in offered.items()}


def _seed_of(rows):
    for row in rows:
        if row["kind"] == "seed_revealed":
            return bytes.fromhex(row["data"]["seed"])
    return None


def _discretion(store, gid, session, r, at, deadline) -> bool:
    """Now and then a pause, resume, extension, replacement or the stand-in's end; True when
    one was written."""
    x = r.random()
    if session.paused:
        if x < 0.3:
            until = shift(at, r.choice((3600, 86400))) if r.random() < 0.3 else None
            absence.resume(store, gid, until=until, reason="back", at=at)
            return True
        return False
    if x < 0.004:
        absence.pause(store, gid, reason="holidays", at=at)
        return True
    if deadline and x < 0.012:
        owed = [p for p, *_ in session.owed()]
        if owed:
            player = r.choice(owed)
            by = "player" if r.random() < 0.4 else "moderator"
            absence.extend(store, gid, player=player, seconds=r.choice((3600, 43200, 86400)), by=by, at=at)
            return True
    if x > 0.997:
        absence.replace(store, gid, r.choice(session.players), reason="a new player", at=at)
        return True
    if session.standing_in and x > 0.95:  # the player is back ('back' by mail), or the moderator ends it
        absence.end_stand_in(store, gid, r.choice(sorted(session.standing_in)),
                             by=r.choice(("player", "moderator")), at=at)
        return True
    return False


def _move(store, gid, session, r, at, bots, absent, home_sealed) -> None:
    owed = session.owed()
    if not owed:
        return
    player, what, sealed, _clock = owed[0] if r.random() < 0.7 else r.choice(owed)
    if player in session.standing_in and what != "reveal":
        player, what, sealed, _clock = owed[0]
    late = (player == absent and r.random() < 0.8) or r.random() < 0.03
    if late and player not in session.standing_in:
        commands.nmr(store, gid, player, force=r.random() < 0.5, at=at)
        return
    if what == "reveal":
        held = home_sealed.get((player, session.sealed.round, session.sealed.step))
        if held is not None:
            commands.reveal(store, gid, player, held["choice"], held["salt"], at=at)
        return
    request = next(req for req in session.requests_of(player) if req.sealed == sealed)
    if bots.get(player) is None:
        bots[player] = session.rules.bot(f"bot/{player}/{r.random()}", r.choice(("random", "greedy")))
    choice = bots[player].choose(session.state, player, request.kind, request=request)
    if not sealed:
        commands.decide(store, gid, player, choice, at=at)
        return
    if r.random() < 0.5:
        commands.commit_for_player(store, gid, player, choice, at=at)
        return
    # sealed at home: sometimes a text that is no legal choice, revealed later all the same
    step = session.sealed
    text = r.choice(JUNK) if r.random() < 0.1 else choice
    salt = new_salt()
    home_sealed[(player, step.round, step.step)] = {"choice": text, "salt": salt}
    commands.commit(store, gid, player, make_commitment(gid, step.round, step.step, player, text, salt),
                    (step.round, step.step), at=at)


COMPARE = r"""
const B = PBEM.base, out = [];
for (const g of INPUT) {
  const rows = g.export.split("\n").filter((l) => l).map((l) => JSON.parse(l));
  let k = 0, bad = null;
  const report = PBEM.replay.run(rows, { afterEach: (s) => {
    const want = g.states[k++];
    if (bad === null && B.canonical(s.state) !== B.canonical(want)) bad = { seq: k, kind: rows[k - 1].kind, js: s.state, py: want };
  } });
  const audit = g.audit;
  let verdict = null;
  if (report.ok !== audit.ok) verdict = { js: report.ok ? "ok" : report.line, py: audit.problem };
  else if (!report.ok && report.seq !== audit.bad_seq) verdict = { js: report.line, py: audit.problem };
  if (bad || verdict) out.push({ game: g.game, state: bad, verdict, export: out.length < 3 ? g.export : undefined });
}
OUTPUT = { games: INPUT.length, events: INPUT.reduce((n, g) => n + g.states.length, 0), differ: out };
"""


def compare(games: list[dict]) -> dict:
    """Run the page's replay in node on each export; every difference in a state or verdict."""
    sys.path.insert(0, str(Path(__file__).parent))
    import node
    return node.run(COMPARE, games)


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="bot games replayed by the page's JavaScript and by pbem")
    parser.add_argument("count", type=int, nargs="?", default=60)
    parser.add_argument("--game", default="tortuga", help="tortuga or tortuga1667")
    parser.add_argument("--players", type=int, default=None, help="every game with this many (else at random)")
    parser.add_argument("--variant", default=None, help="every game with this variant (else at random)")
    parser.add_argument("--start", type=int, default=0, help="the first game's number (its seed)")
    args = parser.parse_args(argv)
    batch, total, events, differ = [], 0, 0, []
    last = args.start + args.count - 1
    for number in range(args.start, last + 1):
        batch.append(play(number, args.game, args.players, variant=args.variant))
        if len(batch) == 25 or number == last:
            result = compare(batch)
            total += result["games"]
            events += result["events"]
            differ += result["differ"]
            print(f"{total} games, {events} events compared, {len(differ)} differ", flush=True)
            batch = []
    for d in differ[:5]:
        print(json.dumps(d, ensure_ascii=False)[:3000])
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
