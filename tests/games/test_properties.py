"""Properties of complete Tortuga games played by seeded bots (hypothesis draws the games).

Each test plays whole games with 2-4 players, both variants, random and greedy bots mixed,
and checks an invariant after every ``apply``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.games import tortuga

COLOURS = ("red", "blue", "yellow", "white", "purple")
CHESTS = {"red": 10, "blue": 10, "yellow": 10, "white": 5, "purple": 5}
TILES = {1: 17, 2: 9, 3: 4}
BONUS_TILES = 20
AREAS = ("tortuga", "fleet", "crew", "island")
END_CHESTS = {"standard": 6, "long": 8}

game_params = st.fixed_dictionaries({
    "players": st.sampled_from([2, 3, 4]),
    "variant": st.sampled_from(["standard", "long"]),
    "seed": st.integers(min_value=0, max_value=2**32),
    "greedy": st.tuples(*[st.booleans()] * 4),
})

EXAMPLES = settings(max_examples=40, deadline=None)


def capacity(box: int) -> int:
    return 1 if box <= 1 else 2 if box <= 3 else 3 if box <= 5 else 4


def play(games, params):
    state, bots, rng = games.new_game(**params)
    return state, games.steps(state, bots, rng)


def where(params, player=None, choice=None, data=None) -> str:
    """A reproduction note for assertion messages."""
    text = f"game {params}"
    if player is not None:
        text += f", after {player}: {choice!r}"
    if data is not None:
        text += f" (round {data['round']}, phase {data['phase']}, step {data['step']}, stage {data['stage']!r})"
    return text


# ----------------------------------------------------------------------------- invariants

def check_components(data: dict) -> None:
    boards = data["boards"]
    chests = Counter()
    for colour, count in zip(COLOURS, data["bag"]):
        chests[colour] += count
    for board in boards:
        for area in AREAS:
            chests.update(board[area])
    chests.update(data["centre"])
    assert dict(chests) == CHESTS, "chests not conserved"

    tiles = Counter(dict(zip((1, 2, 3), data["pool"])))
    for board in boards:
        tiles.update(board["tiles"])
    assert dict(tiles) == TILES, "treasure tiles not conserved"

    on_boards = sum(1 for board in boards for side in board["bonus"] if side)
    assert all(side in (0, 1, 2) for board in boards for side in board["bonus"])
    assert data["bonus_supply"] + on_boards == BONUS_TILES, "bonus tiles not conserved"
    assert data["bonus_supply"] >= 0 and min(data["bag"]) >= 0 and min(data["pool"]) >= 0

    for board in boards:
        assert 1 <= board["boat"] <= 8, f"boat on box {board['boat']}"
        assert 1 <= board["pirate"] <= 8, f"pirate on box {board['pirate']}"

    centre = data["centre"]
    assert len(set(centre)) == len(centre), f"centre island holds a colour twice: {centre}"
    if len(data["players"]) == 2:
        assert centre == [], f"2-player centre island not empty: {centre}"


def check_capacity(data: dict) -> None:
    for name, board in zip(data["players"], data["boards"]):
        assert len(board["fleet"]) <= capacity(board["boat"]), (
            f"{name}: fleet {board['fleet']} over capacity of box {board['boat']}")
        assert len(board["crew"]) <= capacity(board["pirate"]), (
            f"{name}: crew {board['crew']} over capacity of box {board['pirate']}")


@given(params=game_params)
@EXAMPLES
def test_components_conserved_and_tokens_on_their_tracks(games, params):
    state, game = play(games, params)
    check_components(tortuga.to_json(state))
    for _before, player, choice, after in game:
        data = tortuga.to_json(after)
        try:
            check_components(data)
        except AssertionError as error:
            raise AssertionError(f"{error}; {where(params, player, choice, data)}") from None


@given(params=game_params)
@EXAMPLES
def test_areas_within_capacity_after_every_move_phase(games, params):
    state, game = play(games, params)
    moves = 0
    for _before, player, choice, after in game:
        data = tortuga.to_json(after)
        try:
            if any(effect["type"] == "move" for effect in data["effects"]):
                moves += 1
                check_capacity(data)
            # Surplus leaves after BOARD and RAID, so outside the action phase every area
            # always fits its token's box.
            if data["phase"] != "actions":
                check_capacity(data)
        except AssertionError as error:
            raise AssertionError(f"{error}; {where(params, player, choice, data)}") from None
    assert moves >= 1


@given(params=game_params)
@EXAMPLES
def test_every_game_ends_and_scores_add_up(games, params):
    state, game = play(games, params)
    assert tortuga.result(state) is None
    for _before, _player, _choice, state in game:
        if state.phase != "over":
            assert tortuga.result(state) is None
    assert state.phase == "over"
    assert tortuga.pending(state) == []
    data = tortuga.to_json(state)
    assert max(len(board["tortuga"]) for board in data["boards"]) >= END_CHESTS[params["variant"]]

    result = tortuga.result(state)
    assert set(result["scores"]) == set(state.players)
    for name, breakdown in result["scores"].items():
        parts = {k: v for k, v in breakdown.items() if k != "total"}
        assert set(parts) == {"chests", "sets", "tracks", "coins"}
        assert all(isinstance(v, int) and v >= 0 for v in parts.values())
        assert sum(parts.values()) == breakdown["total"], (name, breakdown)
        board = data["boards"][state.players.index(name)]
        assert parts["coins"] == sum(board["tiles"])
        assert parts["tracks"] == board["boat"] + board["pirate"]
    top = max(breakdown["total"] for breakdown in result["scores"].values())
    assert result["winners"], "nobody won"
    assert result["winners"] == [p for p in state.players if result["scores"][p]["total"] == top]
    json.dumps(result)


@given(params=game_params)
@settings(max_examples=30, deadline=None)
def test_same_seed_and_bots_give_the_same_game(games, params):
    def transcript():
        state, game = play(games, params)
        out = [tortuga.to_json(state)]
        for _before, player, choice, after in game:
            out.append((player, choice, tortuga.to_json(after)))
        return out

    def replay(choices):
        """The recorded choices applied to a fresh game of the same seed, without bots."""
        state, _bots, rng = games.new_game(**params)
        out = [tortuga.to_json(state)]
        for player, choice, _data in choices:
            state = tortuga.apply(state, player, choice, rng)
            out.append((player, choice, tortuga.to_json(state)))
        return out

    first = transcript()
    for name, other in (("bots again", transcript()), ("replayed choices", replay(first[1:]))):
        assert len(first) == len(other), name
        for index, (a, b) in enumerate(zip(first, other)):
            assert a == b, f"{name}: games diverge at apply {index}; {where(params)}"


@given(params=game_params)
@EXAMPLES
def test_json_round_trip_at_every_step(games, params):
    state, bots, rng = games.new_game(**params)
    states = [state] + [after for _b, _p, _c, after in games.steps(state, bots, rng)]
    for index, s in enumerate(states):
        data = tortuga.to_json(s)
        assert tortuga.to_json(tortuga.from_json(data)) == data, f"step {index}; {where(params)}"
        text = json.dumps(data, sort_keys=True)
        assert json.loads(text) == data, f"to_json is not plain JSON at step {index}; {where(params)}"
        restored = tortuga.from_json(json.loads(text))
        assert tortuga.to_json(restored) == data
        assert restored == s, f"from_json(to_json(state)) != state at step {index}; {where(params)}"


@given(params=game_params)
@settings(max_examples=30, deadline=None)
def test_a_restored_state_plays_on_identically(games, params):
    state, bots, rng = games.new_game(**params)
    for before, player, choice, after in games.steps(state, bots, rng):
        restored = tortuga.from_json(json.loads(json.dumps(tortuga.to_json(before))))
        again = tortuga.apply(restored, player, choice, rng)
        assert tortuga.to_json(again) == tortuga.to_json(after), where(params, player, choice)


@given(params=game_params)
@EXAMPLES
def test_apply_never_changes_a_state_it_was_given(games, params):
    state, bots, rng = games.new_game(**params)
    history = [(state, tortuga.to_json(state))]
    for before, player, choice, after in games.steps(state, bots, rng):
        snapshot = tortuga.to_json(after)
        assert tortuga.to_json(before) == history[-1][1], (
            f"apply changed its input; {where(params, player, choice)}")
        # Branch: another legal choice applied to the same input must not disturb the
        # input, nor the state the first choice produced (no shared, mutated parts).
        options = [r for r in tortuga.pending(before) if r.player == player][0].options or ()
        for other in options[:2]:
            if other != choice:
                tortuga.apply(before, player, other, rng)
        assert tortuga.to_json(before) == history[-1][1], (
            f"a branch changed the input; {where(params, player, choice)}")
        assert tortuga.to_json(after) == snapshot, (
            f"a branch changed a sibling state; {where(params, player, choice)}")
        history.append((after, snapshot))
    for index, (s, snapshot) in enumerate(history):
        assert tortuga.to_json(s) == snapshot, (
            f"state {index} changed later in the game; {where(params)}")


# ----------------------------------------------------------------------------- secrecy

def check_view_secrecy(state, viewer: str | None) -> None:
    """The view of ``viewer`` (None: the public) holds none of the others' secrets."""
    data = tortuga.to_json(state)
    seen = tortuga.view(state, viewer)
    text = json.dumps(seen)
    players = data["players"]
    rolling = {players[seat] for seat in data["rolling"]}

    for name in players:
        board = seen["boards"][name]
        board_text = json.dumps(board)
        seat = players.index(name)
        if name == viewer:
            assert board.get("tile_values") == sorted(data["boards"][seat]["tiles"], reverse=True)
            continue
        assert isinstance(board["tiles"], int) and board["tiles"] == len(data["boards"][seat]["tiles"])
        assert '"tile_values"' not in board_text, f"{viewer} sees {name}'s tile values"
        assert '"revealed"' not in board_text, f"{viewer} sees {name}'s sealed choice"
        if name in rolling:
            assert '"roll"' not in board_text, f"{viewer} sees {name}'s roll in an open sealed step"

    own_tiles = 1 if viewer is not None else 0
    assert text.count('"tile_values"') == own_tiles
    own_sealed = viewer is not None and str(players.index(viewer)) in data["sealed"]
    assert text.count('"revealed"') == (1 if own_sealed else 0)
    own_secrets = [e for e in data["effects"] if "secret" in e and e["secret"]["player"] == viewer]
    assert text.count('"secret"') == len(own_secrets), f"{viewer} sees another player's secret effect"
    assert '"pool"' not in text and isinstance(seen["tile_pool"], int)


TILE_SWAP = {1: 3, 2: 1, 3: 2}


def hide_others(data: dict, viewer: str | None) -> dict:
    """The same state with every secret of the others changed: tile values, the pool's
    make-up, rolls and choices of the open sealed step, and secret parts of effects."""
    d = copy.deepcopy(data)
    players = d["players"]
    for seat, board in enumerate(d["boards"]):
        if players[seat] == viewer:
            continue
        board["tiles"] = [TILE_SWAP[t] for t in board["tiles"]]
        if seat in d["rolling"]:
            board["roll"] = [None if f is None else (f + 1) % 6 for f in board["roll"]]
            if str(seat) in d["sealed"]:
                d["sealed"][str(seat)] = "A" if d["sealed"][str(seat)] != "A" else "B"
    d["pool"] = d["pool"][1:] + d["pool"][:1]
    for effect in d["effects"]:
        if "secret" in effect and effect["secret"]["player"] != viewer:
            effect["secret"] = {"player": effect["secret"]["player"], "kept": 99, "returned": [99]}
    return d


@given(params=game_params)
@EXAMPLES
def test_views_hold_no_secret_of_another_player(games, params):
    state, bots, rng = games.new_game(**params)
    states = [state] + [after for _b, _p, _c, after in games.steps(state, bots, rng)]
    viewers = list(state.players) + [None]
    sealed_steps = 0
    for index, s in enumerate(states):
        data = tortuga.to_json(s)
        sealed_steps += bool(data["rolling"])
        for viewer in viewers:
            try:
                check_view_secrecy(s, viewer)
                # Non-interference: changing only what the viewer may not know leaves
                # the view exactly as it was.
                other = tortuga.from_json(hide_others(data, viewer))
                assert tortuga.view(other, viewer) == tortuga.view(s, viewer), (
                    f"{viewer}'s view depends on another player's secret")
            except AssertionError as error:
                raise AssertionError(f"{error}; state {index}; {where(params, data=data)}") from None
    assert sealed_steps


def test_public_view_of_a_fresh_game_has_no_rolls():
    from pbem.protocol.rng import RandomSource

    state = tortuga.setup(["ani", "bo", "cy"], {}, RandomSource.for_testing("fresh"))
    assert state.phase == "roll" and state.rolling
    public = tortuga.view(state, None)
    assert all("roll" not in board for board in public["boards"].values())
    own = tortuga.view(state, "ani")
    assert "roll" in own["boards"]["ani"] and "roll" not in own["boards"]["bo"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_both_bots_finish_games(games, players):
    for greedy in ((False,) * 4, (True,) * 4):
        final = games.play_out(players, "standard", f"finish/{players}", greedy)
        assert final.phase == "over"


# ----------------------------------------------------------------------------- aliasing

def scribble(value) -> None:
    """Change every mutable part of a JSON value in place."""
    if isinstance(value, dict):
        for key in list(value):
            if isinstance(value[key], (dict, list)):
                scribble(value[key])
            else:
                value[key] = "scribbled"
        value["scribbled"] = True
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                scribble(item)
            else:
                value[index] = "scribbled"
        value.append("scribbled")


def changed_keys(state, snapshot: dict) -> list[str]:
    now = tortuga.to_json(state)
    return sorted(k for k in snapshot if now.get(k) != snapshot[k])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_outputs_share_nothing_mutable_with_the_state(games, players):
    """What ``to_json`` and ``view`` hand out, and what ``from_json`` was given, may be
    changed by the caller (a store adding keys, a renderer) without changing the state."""
    state, bots, rng = games.new_game(players, "standard", f"alias/{players}")
    for index, (_b, player, choice, s) in enumerate(games.steps(state, bots, rng)):
        if index % 7 and s.phase != "over":
            continue
        at = f"after {player}: {choice!r} (apply {index}, game alias/{players})"
        snapshot = tortuga.to_json(tortuga.from_json(json.loads(json.dumps(tortuga.to_json(s)))))
        snapshot = json.loads(json.dumps(snapshot))
        scribble(tortuga.to_json(s))
        assert not changed_keys(s, snapshot), (
            f"changing to_json's output changed the state's {changed_keys(s, snapshot)}, {at}")
        for viewer in list(s.players) + [None]:
            scribble(tortuga.view(s, viewer))
            assert not changed_keys(s, snapshot), (
                f"changing view({viewer!r}) changed the state's {changed_keys(s, snapshot)}, {at}")
        data = json.loads(json.dumps(snapshot))
        restored = tortuga.from_json(data)
        scribble(data)
        assert not changed_keys(restored, snapshot), (
            f"changing from_json's input changed the state's {changed_keys(restored, snapshot)}, {at}")
