"""A draw tape of Tortuga 1667 games, played by bots on the Python engine, for the page's
JavaScript rules (pbem/pages/js/tortuga1667.js) to replay (tests/pages/test_js_1667.py).

Each game is one JSON line: the players and options; the draws of the set-up and of every
apply, in order, as ``[label, n, value]`` (a recording wrapper around RandomSource); the
choices applied, as typed (often not in canonical form) with their canonical form; the
Python ``to_json`` state, the pending requests and each request's default after the
set-up and after every apply; and, for a sample of
states the public view and every player's
view, ``result``, and probes: typed choices (legal ones misspelt, illegal ones, malformed
ones, ones from the wrong player) with what ``check`` answers (the canonical choice or the
refusal code).

``python tests/pages/js1667_corpus.py OUT.jsonl --games N [--start K] [--sample P]``, or
``--cases`` for the rule cases of tests/rules/cases/1667-*.toml (see ``case_games``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from pbem.games import tortuga1667 as game
from pbem.games.base import ChoiceError
from pbem.games.tortuga1667.bots import InformedBot, RandomBot, _candidates, legal_options
from pbem.protocol.rng import RandomSource

NAME_SETS = [
    ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy"),
    ("Ani", "BO", "Çelik", "Straße", "Σίσυφος", "ǅemal", "Ünal", "Ｚｏｅ", "李"),
    ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "x", "y%2F", "a/b", "ıi"),
    ("Alice", "bob", "Carol-Ann", "d_d", "Eve.", "f1", "0", "99", "ẞig"),
]
FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,"}
ARABIC = {str(d): chr(0x0660 + d) for d in range(10)}
DEVANAGARI = {str(d): chr(0x0966 + d) for d in range(10)}
SHIP_SPELLINGS = {"dutchman": ["FD", "Flying-Dutchman", "flying_dutchman", "DUTCHMAN"],
                  "jolly": ["JR", "Jolly-Roger", "roger", "JOLLY"]}
JUNK = ["", " ", ",", "\u3000", "\x1c", "peek", "peek 1", "peek 1 2 3", "force zed 1", "force zed 1,x",
        "vote ①", "vote ٢", "ｖｏｔｅ　２", "reveal 1234", "reveal 0003", "reveal -1", "reveal 1.0", "move",
        "move nowhere", "move rowboat", "move rowboat fd", "move rowboat tortuga", "steal fd french to british",
        "steal fd french british", "marque send", "marque draw now", "attack now", "shift", "shift gold",
        "shift british to british", "shift british from french", "stow", "stow gold", "place", "place fd",
        "place fd 0", "place jr 6", "place tortuga 1", "fountain", "fountain yes", "atlantis go",
        "atlantis GO", "atlantis stay", "vote 1,1", "vote 3,1", "vote 1 2 3", "vote 99", "top 0", "discard 9",
        "give", "hello", "Dear judge,", "peek 7,7", "peek 2,2", "reveal ٣", "pick 9", "maroon", "shoot",
        "fever", "𝟏", "peek 𝟏,𝟐", "peek \u0661\u0662", "brawl!", "mutiny", "ATTACK", "ｂｒａｗｌ",
        "peek 1,\u00a02", "reveal\u20031", "VOTE 1", "vote 0", "vote ０１", "top 1", "discard 1",
        "give zed", "shoot zed", "fever ZED", "marque send zed fd", "stow british", "stow FRENCH",
        "steal jr british to french", "pick 1", "reveal \U000104a1", "reveal \U0001e4f1", "\u00b4"]


class Tape:
    """A RandomSource that records every draw, in order, as [label, n, value]."""

    def __init__(self, source):
        self.source, self.draws = source, []

    def below(self, label: str, n: int) -> int:
        value = self.source.below(label, n)
        self.draws.append([label, n, value])
        return value

    def take(self) -> list:
        out, self.draws = self.draws, []
        return out


def request_json(r) -> dict:
    return {"player": r.player, "kind": r.kind, "sealed": r.sealed, "round": r.round, "step": r.step,
            "default": r.default, "syntax": r.syntax, "options": None if r.options is None else list(r.options),
            "anonymous": r.anonymous, "allOptions": None if r.all_options is None else list(r.all_options)}


def answer(state, player: str, text: str) -> dict:
    try:
        return {"ok": game.check(state, player, text)}
    except ChoiceError as exc:
        return {"code": exc.code}


DIGIT_ZEROS = [0x30, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10, 0x1D7CE, 0x1D7D8, 0x104A0, 0x1E950, 0x11066]
ODD_CHARS = ["\u0301", "\u0308", "\u00b9", "\u2460", "\u216b", "\ufb01", "\u1e9e", "\u00df", "\u0130", "\u0131",
             "\u03c2", "\u200b", "\ufeff", "\u00a0", "\u2003", "\u3000", "\x1f", "\x85", "\uff0c", "\u2024",
             "\U0001e4f1", "\U00011f51", "\u00b4", "\u212a", "\u017f", "\u0345", "-", "_", ",", " "]


def garble(text: str, rnd: random.Random) -> str:
    """``text`` with a few characters replaced by look-alikes, other scripts' digits,
    compatibility forms, odd white space and combining marks (some the rules read as the
    original, some not)."""
    out = []
    for c in text:
        r = rnd.random()
        if r < 0.08 and c.isdigit() and c.isascii():
            out.append(chr(rnd.choice(DIGIT_ZEROS) + int(c)))
        elif r < 0.12 and c.isascii() and c.isalnum():
            out.append(chr(ord(c) + 0xFEE0))
        elif r < 0.16:
            out.append(c.upper() if rnd.random() < 0.5 else c + rnd.choice(ODD_CHARS))
        elif r < 0.18:
            out.append(rnd.choice(ODD_CHARS))
        else:
            out.append(c)
    return "".join(out)


def respell(choice: str, rnd: random.Random, players) -> str:
    """The same choice typed another way the rules accept (case, widths, digits, commas,
    ship aliases, a player name in another case, the order of a peek's slots)."""
    w = choice.split()
    how = rnd.randrange(9)
    if how == 0:
        return choice.upper()
    if how == 1:
        return "".join(FULLWIDTH.get(c, c) for c in choice).replace(" ", "\u3000")
    if how == 2:
        return "".join(ARABIC.get(c, c) for c in choice)
    if how == 3:
        return "".join(DEVANAGARI.get(c, c) for c in choice).replace(",", " ")
    if how == 4 and w[0] == "peek":
        a, b = w[1].split(",")
        return f"  Peek {b} , {a} "
    if how == 5:
        out = []
        for x in w:
            if x in SHIP_SPELLINGS:
                x = rnd.choice(SHIP_SPELLINGS[x])
            elif x in players:
                x = x.upper() if rnd.random() < 0.5 else x.swapcase()
            out.append(x)
        return " ".join(out)
    if how == 6 and w[0] == "shift":
        return f"shift {w[1]}"
    if how == 7:
        return ", ".join(w)
    if how == 8 and len(w) == 2 and w[1].isdigit():
        return f"{w[0]} 0{w[1]}"
    return choice


def probes(state, rnd: random.Random, requests, per_state: int) -> list:
    """Typed choices to check, with Python's answer: [player, text, answer]."""
    players = state.players
    texts = []
    for r in requests:
        opts = list(r.options) if r.options is not None else []
        if r.kind == "action":
            down = tuple(k + 1 for k, card in enumerate(state.row) if card is not None)
            opts = list(_candidates(r.player, down, tuple(players))) + opts
            opts += [f"peek {a},{b}" for a in range(0, 7) for b in range(0, 7)][:: 5]
            opts += [f"force {r.player} 1,2", f"force {players[0]} 1,1", "atlantis go", "atlantis stay"]
        if r.kind == "vote":
            opts += ["vote 1,2", "vote 2,1", "vote 1,1", "vote 4", "vote 9"]
        for o in rnd.sample(opts, min(len(opts), 6)):
            texts.append((r.player, o))
            texts.append((r.player, respell(o, rnd, players)))
            if rnd.random() < 0.3:
                texts.append((rnd.choice(players), o))  # the wrong player, most often
        texts.append((r.player, r.default))
        for _ in range(3):
            texts.append((r.player, rnd.choice(JUNK)))
        name = rnd.choice(players + ["zed", "ZED", players[0].upper()])
        for form in (f"force {name} 1,2", f"maroon {name}", f"give {name}", f"shoot {name}", f"fever {name}",
                     f"marque send {name} fd", f"force {name} 1,x", f"force {name} 1"):
            if rnd.random() < 0.3:
                texts.append((r.player, form))
    for _ in range(2):
        texts.append((rnd.choice(players), rnd.choice(JUNK)))
    vocabulary = ["peek", "reveal", "force", "move", "rowboat", "tortuga", "fd", "jolly", "british", "french",
                  "to", "vote", "top", "give", "place", "steal", "stow", "marque", "send", "draw", "1", "2", "3",
                  "٣", "0", "1000", ",", "shift", "maroon", "shoot", "fever", "atlantis", "go", "fountain", "use"]
    for _ in range(3):
        words = [rnd.choice(vocabulary + list(players)) for _ in range(rnd.randrange(1, 5))]
        texts.append((rnd.choice(players), " ".join(words)))
    texts.append(("zed", requests[0].default if requests else "peek 1,2"))
    for r in requests[:2]:
        for _ in range(3):
            texts.append((r.player, garble(rnd.choice(list(r.options or ()) + [r.default]), rnd)))
    rnd.shuffle(texts)
    return [[p, t, answer(state, p, t)] for p, t in texts[:per_state]]


def sample(state, rnd: random.Random, per_state: int) -> dict:
    requests = game.pending(state)
    return {
        "views": {"": game.view(state, None), **{p: game.view(state, p) for p in state.players},
                  "zed": game.view(state, "zed")},
        "headline": game.headline(state),
        "result": game.result(state),
        "probes": probes(state, rnd, requests, per_state),
    }


def play(index: int, sample_rate: float = 0.1, per_state: int = 24, max_moves: int = 4000) -> dict:
    """Game number ``index``: its player count, set-up, names, bots and sampling follow from it."""
    rnd = random.Random(f"js1667/{index}")
    count = 4 + index % 6
    variant = "advanced" if (index // 6) % 2 else "standard"
    names = list(NAME_SETS[(index // 12) % len(NAME_SETS)])
    rnd.shuffle(names)
    players = names[:count]
    options = {"variant": variant} if variant == "advanced" or rnd.random() < 0.5 else None
    tape = Tape(RandomSource.for_testing(f"js1667/{index}", game_id=f"g{index}"))
    state = game.setup(players, options, tape)
    bias = rnd.choice([0.0, 0.0, 0.2, 0.5])
    bots = {p: (InformedBot(f"{index}/{p}") if rnd.random() < 0.5 else RandomBot(f"{index}/{p}", reveal_bias=bias))
            for p in players}
    lateness = rnd.choice([0.0, 0.05, 0.3])
    out = {"index": index, "players": players, "options": options, "setup_tape": tape.take(),
           "states": [state.to_json()], "moves": [], "samples": {},
           "pending": [], "defaults": []}

    def maybe_sample(at: int) -> None:
        if rnd.random() < sample_rate or at == 0 or not game.pending(state):
            out["samples"][str(at)] = sample(state, rnd, per_state)

    def requests_now() -> None:
        requests = game.pending(state)
        out["pending"].append([request_json(r) for r in requests])
        out["defaults"].append([game.default(state, r.player, r.kind) for r in requests])

    requests_now()
    maybe_sample(0)
    for _ in range(max_moves):
        requests = game.pending(state)
        if not requests:
            break
        r = rnd.choice(requests)
        rare = []
        if r.kind == "action" and rnd.random() < 0.2:  # moves, Atlantis and rank actions, more often than bots do
            rare = [o for o in legal_options(state, r.player, r.kind) if o.split()[0] not in ("peek", "reveal", "force")]
        if rare:
            choice = rnd.choice(rare)
        elif rnd.random() < lateness:
            choice = game.default(state, r.player, r.kind)
        else:
            choice = bots[r.player].choose(state, r.player, r.kind, request=r)
        typed = respell(choice, rnd, players) if rnd.random() < 0.25 else choice
        if answer(state, r.player, typed).get("ok") != choice:
            typed = choice  # a respelling the rules read otherwise (a name whose case folds apart)
        applied = game.check(state, r.player, typed)
        state = game.apply(state, r.player, typed, tape)
        out["moves"].append({"player": r.player, "choice": typed, "applied": applied, "tape": tape.take()})
        out["states"].append(state.to_json())
        requests_now()
        maybe_sample(len(out["moves"]))
    else:
        raise AssertionError(f"game {index} did not end in {max_moves} moves")
    return out


def case_games(per_state: int = 24) -> list[dict]:
    """The rule cases of tests/rules/cases/1667-*.toml as games starting from each case's
    prestate (or from ``setup`` with its scripted draws): every state sampled, and a case's
    refused last choice as a probe of the last state."""
    from pathlib import Path  # noqa: PLC0415

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
    from casefile1667 import ScriptedSource, build, load_cases  # noqa: PLC0415

    out = []
    for k, (name, case) in enumerate(load_cases()):
        rnd = random.Random(f"js1667/case/{k}")
        players = list(case["players"])
        if case.get("enter") == "setup":
            tape = Tape(ScriptedSource(case.get("rng", {})))
            state = game.setup(players, case.get("options"), tape)
            g = {"index": f"case {k}", "name": name, "players": players, "options": case.get("options"),
                 "setup_tape": tape.take()}
        else:
            state, source = build(case)
            tape = Tape(source)
            g = {"index": f"case {k}", "name": name, "players": players, "options": None,
                 "start": state.to_json()}
        g.update(states=[state.to_json()], moves=[], samples={}, pending=[], defaults=[])

        def record(at: int, extra=()) -> None:
            requests = game.pending(state)
            g["pending"].append([request_json(r) for r in requests])
            g["defaults"].append([game.default(state, r.player, r.kind) for r in requests])
            one = sample(state, rnd, per_state)
            one["probes"] += [[p, t, answer(state, p, t)] for p, t in extra]
            g["samples"][str(at)] = one

        lines = [line.partition(":") for line in case.get("choices", [])]
        lines = [(p.strip(), c.strip()) for p, _, c in lines]
        refused = lines[-1:] if "error" in case else []
        if refused:
            lines = lines[:-1]
        record(0, refused if not lines else ())
        for i, (player, choice) in enumerate(lines):
            applied = game.check(state, player, choice)
            state = game.apply(state, player, choice, tape)
            g["moves"].append({"player": player, "choice": choice, "applied": applied, "tape": tape.take()})
            g["states"].append(state.to_json())
            record(i + 1, refused if i == len(lines) - 1 else ())
        g["ended"] = not game.pending(state)
        out.append(g)
    return out


def example_games(paths, per_state: int = 24, texts=None) -> list[dict]:
    """Exported games (examples/games/tortuga1667-*.jsonl) as the protocol replays them
    (``Session.replay``, as ``pbem audit`` does): every set-up and apply the session makes,
    with its draws, every state sampled."""
    from pathlib import Path  # noqa: PLC0415

    from pbem.protocol.session import Session  # noqa: PLC0415
    from pbem.store.export import read_export  # noqa: PLC0415

    out = []
    for path, text in zip(paths, texts or [None] * len(paths)):
        rows = read_export(text if text is not None else Path(path).read_text(encoding="utf-8"))
        seed = next(bytes.fromhex(r["data"]["seed"]) for r in rows if r["kind"] == "seed_revealed")
        rnd = random.Random(f"js1667/example/{path}")
        g = {"index": Path(path).name, "moves": [], "states": [], "samples": {}, "pending": [], "defaults": []}
        real_setup, real_apply = game.setup, game.apply

        def record(state) -> None:
            g["states"].append(state.to_json())
            requests = game.pending(state)
            g["pending"].append([request_json(r) for r in requests])
            g["defaults"].append([game.default(state, r.player, r.kind) for r in requests])
            g["samples"][str(len(g["states"]) - 1)] = sample(state, rnd, per_state)

        def setup(players, options, rng):
            tape = Tape(rng)
            state = real_setup(players, options, tape)
            g.update(players=list(players), options=options, setup_tape=tape.take())
            record(state)
            return state

        def apply(state, player, choice, rng):
            tape = Tape(rng)
            new = real_apply(state, player, choice, tape)
            g["moves"].append({"player": player, "choice": choice, "applied": game.check(state, player, choice),
                               "tape": tape.take()})
            record(new)
            return new

        game.setup, game.apply = setup, apply
        try:
            Session.replay(rows[0]["game"], rows, seed, audit=True)
        finally:
            game.setup, game.apply = real_setup, real_apply
        out.append(g)
    return out


def protocol_export(folder, index: int) -> str:
    """A game played through the protocol (``pbem.protocol.commands``), the way the judge
    runs one: bots for most seats, one or two seats that stop answering (forced defaults,
    then the stand-in, ``stand_in_after``), to its end and the seed revealed; its export."""
    from pathlib import Path  # noqa: PLC0415

    from pbem.protocol import commands  # noqa: PLC0415
    from pbem.store import Store, export_lines  # noqa: PLC0415

    rnd = random.Random(f"js1667/protocol/{index}")
    count = 4 + index % 6
    names = list(NAME_SETS[0])[:count]
    options = {"variant": "advanced" if (index // 6) % 2 else "standard"}
    at = "2024-05-01T12:00:00Z"
    store = Store(Path(folder) / f"p{index}.db", create=True)
    gid = f"p{index}"
    commands.create_game(store, gid, "tortuga1667", names, options, at=at, stand_in_after=rnd.choice([1, 2, 3]))
    for name in names:
        if rnd.random() < 0.5:
            commands.add_client_seed(store, gid, name, f"{name} {index}", at=at)
    session = commands.start_game(store, gid, at=at)
    absent = set(rnd.sample(names, rnd.choice([1, 2])))
    back = rnd.randrange(20, 200)  # after this many moves one absent seat answers again
    bots = {p: session.rules.bot(f"{index}/{p}", rnd.choice(["greedy", "random"])) for p in names}
    moves = 0
    while not session.finished:
        moves += 1
        if moves == back and absent:
            absent.pop()
        step = session.sealed
        if step is not None and step.owes_commit():
            asked = {r.player: r for r in session.pending() if r.kind == step.kind}
            held = {}
            for player in step.owes_commit():
                if player in absent:
                    session = commands.nmr(store, gid, player, force=True, at=at)
                    continue
                choice = bots[player].choose(session.state, player, step.kind, request=asked.get(player))
                sealed = commands.seal(session, player, choice)
                held[player] = sealed
                session = commands.commit(store, gid, player, sealed["commitment"], (sealed["round"], sealed["step"]),
                                          at=at)
            for player, sealed in held.items():
                session = commands.reveal(store, gid, player, sealed["choice"], sealed["salt"], at=at)
        elif step is not None:
            for player in list(step.owes_reveal()):
                session = commands.nmr(store, gid, player, force=True, at=at)
        else:
            request = session.pending()[0]
            if request.player in absent:
                session = commands.nmr(store, gid, request.player, force=True, at=at)
            else:
                choice = bots[request.player].choose(session.state, request.player, request.kind, request=request)
                session = commands.decide(store, gid, request.player, choice, at=at)
        if moves > 5000:
            raise AssertionError(f"protocol game {index} did not end")
    if not session.seed_revealed:
        commands.reveal_seed(store, gid, force=True, at=at)
    return "".join(export_lines(store.events(gid)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--sample", type=float, default=0.1)
    ap.add_argument("--cases", action="store_true", help="the rule cases instead of bot games")
    ap.add_argument("--examples", nargs="*", help="exported games instead of bot games")
    ap.add_argument("--protocol", metavar="FOLDER", help="--games games played through the protocol, with the "
                    "stand-in, their stores in FOLDER")
    args = ap.parse_args(argv)
    with open(args.out, "w", encoding="utf-8") as f:
        if args.protocol:
            indices = range(args.start, args.start + args.games)
            texts = [protocol_export(args.protocol, k) for k in indices]
            for g in example_games([f"protocol {k}" for k in indices], texts=texts):
                f.write(json.dumps(g, ensure_ascii=False) + "\n")
            return
        if args.cases or args.examples:
            for g in case_games() if args.cases else example_games(args.examples):
                f.write(json.dumps(g, ensure_ascii=False) + "\n")
            return
        for index in range(args.start, args.start + args.games):
            f.write(json.dumps(play(index, args.sample), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
