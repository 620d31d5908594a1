"""Altered copies of exports, each changing one thing and re-chained, for comparing the
verifier page with ``pbem audit --file`` (tests/pages/test_altered_page.py).

The games altered are the examples (Tortuga, and Tortuga 1667 with five and nine players)
and bot games played through pbem's own commands (tests/pages/botgames.py) that hold what
the judge may do at its discretion: pauses and resumes, extensions, replacements, NMR and
defaults, stand-in moves, anonymous votes with held reveals. Each copy changes one thing:
a field of an event of each kind (its value changed, emptied, given another type, removed,
or an unknown field added), an event's time or kind, an event dropped, swapped with the next
or repeated, the seed together with its hash (so only the draws can tell), the seed or its
hash alone, a pause or resume or both dropped, an extension's, replacement's or stand-in
move's fields. Every copy is re-chained (every ``prev_hash`` and ``hash`` recomputed), so
only the alteration can give it away.

Run alone: ``python tests/pages/altered.py DIR [--count N]`` writes N copies (default: all
it makes, over 300) as DIR/NNN-what.jsonl.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "examples" / "games"
GENESIS = "0" * 64
# bot games (tests/pages/botgames.py numbers) that hold pauses, extensions, replacements,
# NMR, defaults and stand-in moves between them
BOT_GAMES = (("tortuga", 0), ("tortuga", 5), ("tortuga", 7), ("tortuga1667", 0), ("tortuga1667", 2),
             ("tortuga1667", 5), ("tortuga1667", 7))
OTHER = [None, 7, -1, "x", "", [], {}, True, "2030-01-01T10:00:00Z", "0" * 64]


def rechain(rows: list[dict]) -> str:
    """The export of ``rows`` numbered 1.. and with every prev_hash and hash recomputed."""
    prev, out = GENESIS, []
    for number, row in enumerate(rows, 1):
        event = {"game": row["game"], "seq": number, "kind": row["kind"], "at": row["at"], "data": row["data"]}
        body = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256((prev + body).encode("utf-8")).hexdigest()
        out.append(json.dumps({**event, "prev_hash": prev, "hash": digest}, sort_keys=True,
                              separators=(",", ":"), ensure_ascii=False) + "\n")
        prev = digest
    return "".join(out)


def bases() -> list[tuple[str, list[dict]]]:
    """The games to alter: (name, rows)."""
    found = []
    for name in ("three-players", "tortuga1667-five-players", "tortuga1667-nine-players"):
        text = (EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8")
        found.append((name, [json.loads(line) for line in text.splitlines()]))
    sys.path.insert(0, str(HERE))
    import botgames
    for game_type, number in BOT_GAMES:
        game = botgames.play(number, game_type)
        found.append((f"bot-{game_type}-{number}", [json.loads(line) for line in game["export"].splitlines()]))
    for game_type in ("tortuga", "tortuga1667"):
        found.append((f"signed-{game_type}", [json.loads(line) for line in signed(game_type).splitlines()]))
    return found


def signed(game_type: str, moves: int = 120) -> str:
    """A game that requires signatures, played by bots for ``moves`` submissions and then
    ended by the judge (the seed revealed): keys registered by ``key`` events (one in
    created), signed client seeds, every commit, reveal and decision signed with a nonce."""
    import tempfile

    from pbem.protocol import commands, loading, offline, submissions
    from pbem.protocol.signing import generate_keypair
    from pbem.store import Store, export_lines
    at = "2030-01-01T10:00:00Z"
    names = ["ani", "alex", "frank"] if game_type == "tortuga" else ["ani", "bo", "cy", "dee", "eve"]
    keys = {p: generate_keypair() for p in names}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "signed.db", create=True)
        commands.create_game(store, "signed", game_type, names, {}, require_signatures=True,
                             keys={names[0]: keys[names[0]][1]}, at=at)
        for p in names[1:]:
            commands.register_key(store, "signed", p, keys[p][1], at=at)
        for p in names[:2]:
            submissions.submit(store, "signed", offline.client_seed_block("signed", p, f"{p}'s words", keys[p][0]), at=at)
        commands.start_game(store, "signed", at=at)
        session = loading.load(store, "signed")
        bots = {p: session.rules.bot(f"signed/{p}", "random") for p in names}
        for _ in range(moves):
            if session.finished:
                break
            step = session.sealed
            if step is not None and step.owes_commit():
                held = {}
                for player in step.owes_commit():
                    sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
                    held[player] = offline.signed_blocks(sealed, keys[player][0])
                    session = loading.load(store, "signed")
                    submissions.submit(store, "signed", held[player]["commit"], at=at)
                for blocks in held.values():
                    submissions.submit(store, "signed", blocks["reveal"], at=at)
            else:
                request = session.pending()[0]
                choice = bots[request.player].choose(session.state, request.player, request.kind)
                submissions.submit(store, "signed", offline.signed_decision(session, request.player, choice,
                                                                           keys[request.player][0]), at=at)
            session = loading.load(store, "signed")
        if not session.seed_revealed:
            commands.reveal_seed(store, "signed", force=True, at=at)
        return "".join(export_lines(store.events("signed")))


def _changed(value, r: random.Random, players: list):
    """Another value for a field: of the same type mostly, sometimes of another."""
    if r.random() < 0.25:
        return r.choice([v for v in OTHER if v != value] or [None])
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + r.choice((1, -1, 2))
    if isinstance(value, str):
        others = [p for p in players if p != value]
        if value in players and others:
            return r.choice(others)
        if len(value) == 64 and all(c in "0123456789abcdef" for c in value):
            return value[:-1] + ("0" if value[-1] != "0" else "1")
        return r.choice((value + "x", value[:-1], "", value.upper() if value.upper() != value else value + " "))
    if value is None:
        return r.choice(("x", 1, players[0] if players else "x"))
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        if value:
            smaller = dict(value)
            del smaller[r.choice(sorted(smaller))]
            return smaller
        return {"x": 1}
    return None


def _field_alterations(rows, r, players):
    """One event of each kind (a few of the common ones), one field of it changed."""
    by_kind: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        key = row["kind"] + ("/stand-in" if row["data"].get("by") == "stand-in" else "")
        by_kind.setdefault(key, []).append(i)
    for key, places in sorted(by_kind.items()):
        picks = r.sample(places, min(len(places), 3 if key in ("commit", "reveal", "decide", "reveal_held") else 2))
        for i in picks:
            data = rows[i]["data"]
            fields = sorted(data)
            many = len(fields) if key == "created" else 4 if "signature" in data else 3  # every option of the game
            for field in r.sample(fields, min(len(fields), many)):
                altered = copy.deepcopy(rows)
                how = r.random()
                if how < 0.15:
                    del altered[i]["data"][field]
                    yield f"{key}-{field}-removed", altered
                elif field == "steps" and isinstance(data[field], list) and data[field]:
                    # the disclosure: one held reveal's field changed
                    step = r.choice(altered[i]["data"]["steps"])
                    reveals = step.get("reveals") or {}
                    if reveals:
                        player = r.choice(sorted(reveals))
                        inner = r.choice(sorted(reveals[player]))
                        reveals[player][inner] = _changed(reveals[player][inner], r, players)
                        yield f"{key}-held-{inner}", altered
                else:
                    altered[i]["data"][field] = _changed(data[field], r, players)
                    yield f"{key}-{field}", altered
            if r.random() < 0.3:
                altered = copy.deepcopy(rows)
                altered[i]["data"][r.choice(("note", "forced", "by", "signature", "until"))] = r.choice(("x", True, 1))
                yield f"{key}-field-added", altered
            if r.random() < 0.3 and i > 0:
                altered = copy.deepcopy(rows)
                altered[i]["at"] = "2000-01-01T00:00:00Z" if r.random() < 0.5 else "2099-01-01T00:00:00Z"
                yield f"{key}-time", altered
            if r.random() < 0.2:
                altered = copy.deepcopy(rows)
                altered[i]["kind"] = r.choice([k for k in ("decide", "commit", "reveal", "nmr", "default", "paused")
                                               if k != rows[i]["kind"]])
                yield f"{key}-kind", altered


def _order_alterations(rows, r):
    for _ in range(4):
        altered = copy.deepcopy(rows)
        del altered[r.randrange(1, len(altered))]
        yield "dropped", altered
    for _ in range(3):
        altered = copy.deepcopy(rows)
        j = r.randrange(1, len(altered) - 1)
        altered[j], altered[j + 1] = altered[j + 1], altered[j]
        yield "swapped", altered
    for _ in range(2):
        altered = copy.deepcopy(rows)
        j = r.randrange(1, len(altered))
        altered.insert(j, copy.deepcopy(altered[j]))
        yield "repeated", altered


def _seed_alterations(rows, r):
    seeds = [i for i, row in enumerate(rows) if row["kind"] == "seed_revealed"]
    if not seeds:
        return
    seed = bytes(r.randrange(256) for _ in range(32))
    altered = copy.deepcopy(rows)
    altered[0]["data"]["seed_hash"] = hashlib.sha256(seed).hexdigest()
    altered[seeds[0]]["data"]["seed"] = seed.hex()
    yield "seed-with-its-hash", altered
    altered = copy.deepcopy(rows)
    altered[seeds[0]]["data"]["seed"] = seed.hex()
    yield "seed-alone", altered
    altered = copy.deepcopy(rows)
    altered[0]["data"]["seed_hash"] = hashlib.sha256(seed).hexdigest()
    yield "seed-hash-alone", altered
    altered = copy.deepcopy(rows)
    entropy = [i for i, row in enumerate(rows) if row["kind"] == "started"]
    if entropy:
        altered[entropy[0]]["data"]["client_entropy"] = hashlib.sha256(seed).hexdigest()
        yield "client-entropy", altered


def _discretion_alterations(rows, r):
    """Pauses, resumes, extensions, replacements and stand-in moves: dropped or changed."""
    for i, row in enumerate(rows):
        kind = row["kind"]
        if kind == "paused":
            following = next((j for j in range(i + 1, len(rows)) if rows[j]["kind"] == "resumed"), None)
            altered = copy.deepcopy(rows)
            del altered[i]
            yield "pause-dropped", altered
            if following is not None:
                altered = copy.deepcopy(rows)
                del altered[following]
                del altered[i]
                yield "pause-and-resume-dropped", altered
                altered = copy.deepcopy(rows)
                del altered[following]
                yield "resume-dropped", altered
                altered = copy.deepcopy(rows)
                altered[following]["data"]["until"] = "2000-01-01T00:00:00Z"
                yield "resume-until-past", altered
        elif kind in ("extended", "replaced"):
            altered = copy.deepcopy(rows)
            del altered[i]
            yield f"{kind}-dropped", altered
            for field in sorted(row["data"]):
                altered = copy.deepcopy(rows)
                value = row["data"][field]
                altered[i]["data"][field] = (value * 100 if isinstance(value, int) and not isinstance(value, bool)
                                             else "player" if value == "moderator" else "moderator" if value == "player"
                                             else value + "x" if isinstance(value, str) else "x")
                yield f"{kind}-{field}", altered
    stand_in = [i for i, row in enumerate(rows) if row["data"].get("by") == "stand-in"]
    for i in r.sample(stand_in, min(len(stand_in), 4)):
        altered = copy.deepcopy(rows)
        altered[i]["data"]["by"] = r.choice(("player", "moderator"))
        yield f"{rows[i]['kind']}-stand-in-by", altered
        if "choice" in rows[i]["data"]:
            altered = copy.deepcopy(rows)
            altered[i]["data"]["choice"] = altered[i]["data"]["choice"] + "x"
            altered[i]["data"]["applied"] = altered[i]["data"].get("applied")
            yield f"{rows[i]['kind']}-stand-in-choice", altered


def _omitted_alterations(rows, r):
    """Fields the replay may fill in from the rules (a default's ``sealed``, a move's
    ``applied``) left out: one of each kind, in an anonymous step too."""
    wanted = {("default", "sealed"), ("reveal", "applied"), ("decide", "applied")}
    for i, row in enumerate(rows):
        key = (row["kind"], next((f for k, f in wanted if k == row["kind"] and f in row["data"]), None))
        if key in wanted:
            anonymous = row["kind"] == "default" and "choice" not in row["data"]
            wanted.discard(key)
            altered = copy.deepcopy(rows)
            del altered[i]["data"][key[1]]
            yield f"{key[0]}-{key[1]}-omitted{'-anonymous' if anonymous else ''}", altered
    for i, row in enumerate(rows):  # a held default (no choice shown) without its 'sealed'
        if row["kind"] == "default" and "choice" not in row["data"] and "sealed" in row["data"]:
            altered = copy.deepcopy(rows)
            del altered[i]["data"]["sealed"]
            yield "default-sealed-omitted-anonymous", altered
            break


def make(seed: int = 28) -> list[dict]:
    """Every altered copy: {"name", "what", "export"} (the export re-chained)."""
    r = random.Random(seed)
    out = []
    for name, rows in bases():
        players = rows[0]["data"].get("players") or []
        for maker in (_field_alterations(rows, r, players), _order_alterations(rows, r),
                      _seed_alterations(rows, r), _discretion_alterations(rows, r), _omitted_alterations(rows, r)):
            for what, altered in maker:
                out.append({"name": name, "what": what, "export": rechain(altered)})
    return out


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="altered, re-chained copies of exports")
    parser.add_argument("dir", type=Path)
    parser.add_argument("--count", type=int, default=None)
    args = parser.parse_args(argv)
    copies = make()
    if args.count is not None:
        copies = random.Random(1).sample(copies, min(args.count, len(copies)))
    args.dir.mkdir(parents=True, exist_ok=True)
    for k, c in enumerate(copies, 1):
        (args.dir / f"{k:03}-{c['name']}-{c['what']}.jsonl").write_text(c["export"], encoding="utf-8")
    print(f"{len(copies)} altered copies in {args.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
