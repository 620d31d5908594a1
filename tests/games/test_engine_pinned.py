"""Tortuga's engine is tuned for speed; what it computes is pinned here.

``game_digest`` plays seeded bot games (2 to 4 players, both variants, the first or another
open request answered) and hashes everything a caller can see: every state's JSON, every
pending list (options, defaults, syntax), views for every player and the public, the
canonical form or the refusal (class, message, legal list, code) of about eighty choice
texts at every request, the draws (label, range, value) and the result. The expected
digest was computed on main before the engine was tuned (82688b5); a faster engine must
give the same one. The helpers the tuning added are also checked against the plain
definitions they replace."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import asdict

import pytest

from pbem.games import tortuga
from pbem.games.base import ChoiceError
from pbem.games.tortuga import legal
from pbem.games.tortuga.bots import GreedyBot, RandomBot
from pbem.games.tortuga.choices import format_dice
from pbem.games.tortuga.faces import DEFAULT_FACES
from pbem.games.tortuga.model import Board, State
from pbem.games.tortuga.roll import free
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee")
ACTIONS = ("fleet", "crew", "hunt", "board", "raid")
COLOURS = ("red", "blue", "yellow", "white", "purple")


def candidates(players) -> list[str]:
    texts = [f"skull:{a}" for a in ACTIONS] + [f"bonus:{w}:{a}" for w in ("new", "flip") for a in ACTIONS]
    texts += [f"{k}:{p}" + c for k in ("board", "raid") for p in (*players, "forfeit")
              for c in ("", *(f":{c}" for c in COLOURS))]
    texts += ["fleet:go", "crew:forfeit", "hunt:go", "hunt:stop", "Z", "order:red/-", "board:zed",
              "A,B,C,D,E", "none", "A", "B,C", "c , a", "", "  "]
    return texts


def _outcome(state, player, text) -> str:
    try:
        return tortuga.check(state, player, text)
    except ChoiceError as refusal:
        return f"{type(refusal).__name__}:{refusal}:{refusal.legal}:{refusal.code}"


def game_digest(games: int) -> str:
    digest = hashlib.sha256()
    for seed in range(games):
        players = NAMES[:2 + seed % 3]
        rng = RandomSource.for_testing(f"pin/{seed}", game_id=f"pin-{seed}")
        rng.draws = []
        state = tortuga.setup(players, {"variant": "long"} if seed % 5 == 0 else {}, rng)
        bots = [(GreedyBot if (seat + seed) % 2 else RandomBot)(f"{seed}/{seat}") for seat in range(len(players))]
        texts = candidates(players)
        for step in itertools.count():
            requests = tortuga.pending(state)
            # all_options (added later, for the stand-in) is checked below against options_for
            digest.update(repr([{k: v for k, v in asdict(r).items() if k != "all_options"}
                                for r in requests]).encode())
            for r in requests:
                every = tortuga.options_for(state, state.players.index(r.player), r.kind)
                assert r.all_options == (tuple(every) if r.options is None and every is not None else None)
            if not requests:
                break
            request = requests[seed % len(requests)] if seed % 3 == 0 else requests[0]
            if step % 7 == 0:
                for viewer in (*players, None):
                    digest.update(json.dumps(tortuga.view(state, viewer), sort_keys=True).encode())
            for open_request in requests:
                for text in texts:
                    digest.update(_outcome(state, open_request.player, text).encode())
            seat = players.index(request.player)
            choice = bots[seat].choose(state, seat, request.kind)
            digest.update(choice.encode())
            before = json.dumps(state.to_json(), sort_keys=True)
            after = tortuga.apply(state, request.player, choice, rng)
            assert json.dumps(state.to_json(), sort_keys=True) == before, "apply changed the state it was given"
            state = after
            digest.update(json.dumps(state.to_json(), sort_keys=True).encode())
        digest.update(json.dumps(tortuga.result(state), sort_keys=True).encode())
        digest.update(repr(rng.draws).encode())
    return digest.hexdigest()


def test_bot_games_are_what_they_were_before_the_engine_was_tuned():
    assert game_digest(12) == "9bc23c4c2c3fc3dcd5d13841b0c53e0d43a459d980dd290696c90eb88a68f1fa"


# ----------------------------------------------------------------------------- helpers

def random_board(pick: random.Random) -> Board:
    board = Board(boat=pick.randint(1, 8), pirate=pick.randint(1, 8))
    for d in range(5):
        state = pick.random()
        if state < 0.3:
            board.dice[d] = pick.randrange(5)
        elif state < 0.9:
            board.roll[d] = pick.randrange(6)
    if pick.random() < 0.2:
        board.held = [d for d in range(5) if board.dice[d] is None and pick.random() < 0.5]
    return board


def old_default_select(state, seat) -> str:
    """default_select as it was written before it took its fits from a table."""
    board = state.boards[seat]
    faces = state.faces
    by_face = [[], [], [], [], [], []]
    for d in range(5):
        face = board.roll[d]
        if face is not None and board.dice[d] is None:
            by_face[face].append(d)
    best, best_total = None, 0
    for action in range(5):
        dice = by_face[action]
        if not dice:
            continue
        room = board.room(action)
        if not room:
            continue
        dice.sort(key=lambda d: (-faces[d][action], d))
        chosen = dice[:room]
        total = sum(faces[d][action] for d in chosen)
        if total > best_total:
            best, best_total = chosen, total
    if best is None:
        best = by_face[5][:1]
    return format_dice(best)


def all_selections(board) -> list[tuple[int, ...]]:
    """Every legal selection by brute force, in the listed order (size, then letters)."""
    found = []
    for size in range(1, 6):
        for dice in itertools.combinations(range(5), size):
            if any(board.dice[d] is not None or board.roll[d] is None for d in dice):
                continue
            if legal.selection_error(board, dice) is None:
                found.append(dice)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_selections_defaults_and_free_dice_match_their_plain_definitions(seed):
    pick = random.Random(seed)
    faces = [DEFAULT_FACES, tuple(tuple(pick.sample(range(1, 6), 5)) for _ in range(5))]
    for _ in range(500):
        board = random_board(pick)
        state = State(("a", "b"), "standard", pick.choice(faces), 0, boards=[board, Board()])
        assert legal.legal_selections(board) == all_selections(board)
        assert legal.default_select(state, 0) == old_default_select(state, 0)
        assert free(board) == [d for d in range(5) if board.dice[d] is None and d not in board.held]


def test_the_table_of_canonical_choices_reads_as_the_parsers_do():
    from pbem.games.tortuga.choices import kind_of
    from pbem.games.tortuga.engine import _EXACT
    from pbem.games.tortuga.parse import CANON, PARSERS
    assert len(_EXACT) == 6 + 5 + 10
    for text, (kind, parsed) in _EXACT.items():
        assert kind_of(text) == kind
        assert PARSERS[kind](None, 0, text) == parsed  # these parsers read the text alone
        assert CANON[kind](None, 0, parsed) == text


def test_the_bench_uniform_bot_picks_every_legal_choice_alike():
    import importlib.util
    import sys
    from collections import Counter
    from pathlib import Path

    from pbem.games.tortuga.engine import open_requests, options_for
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_engine.py"
    spec = importlib.util.spec_from_file_location("bench_engine_under_test", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    # a whole game with it is legal: apply checks every choice in full
    applies, _ = bench.play_game(3, uniform=True)
    assert applies > 50
    # and it draws every listed choice alike: at the first request of a game (a selection)
    # and at a later one with several listed options
    rng = RandomSource.for_testing("uniform")
    state = tortuga.setup(NAMES, {}, rng)
    seat, kind, _sealed = open_requests(state)[0]
    listed = options_for(state, seat, kind)
    bot = bench.UniformBot("u")
    counts = Counter(bot.choose(state, seat, kind) for _ in range(300 * len(listed)))
    assert set(counts) == set(listed)
    assert max(counts.values()) < 1.4 * min(counts.values())
