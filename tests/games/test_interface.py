"""The game interface (``pbem.games.base``) as Tortuga offers it: lookup, setup, requests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbem.games
from pbem.games import UnknownGame, tortuga
from pbem.games.base import MAX_OPTIONS, Request
from pbem.protocol.rng import RandomSource

RNG = RandomSource.for_testing("interface")
KINDS = {"select", "skull", "bonus", "fleet", "crew", "hunt", "board", "raid", "order"}


# ----------------------------------------------------------------------------- lookup

def test_get_tortuga():
    game = pbem.games.get("tortuga")
    assert game is tortuga
    for name in ("setup", "pending", "check", "apply", "default", "view", "result",
                 "to_json", "from_json"):
        assert callable(getattr(game, name)), name
    assert game.NAME == "tortuga"


@pytest.mark.parametrize("name", ["chess", "Tortuga", "", "tortuga "])
def test_unknown_game(name):
    with pytest.raises(UnknownGame) as raised:
        pbem.games.get(name)
    assert isinstance(raised.value, LookupError)
    message = str(raised.value)
    assert repr(name) in message and "tortuga" in message and "\n" not in message


# ----------------------------------------------------------------------------- setup

@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("variant", ["standard", "long"])
def test_setup(players, variant):
    names = ["ani", "bo", "cy", "dee"][:players]
    state = tortuga.setup(names, {"variant": variant}, RNG)
    data = tortuga.to_json(state)
    assert data["players"] == names and data["variant"] == variant
    assert data["round"] == 1 and data["phase"] == "roll"
    for board in data["boards"]:
        assert len(board["island"]) == 1 and len(board["crew"]) == 1
        assert board["boat"] == board["pirate"] == 3
    assert sum(data["bag"]) == 40 - 2 * players
    assert {r.player for r in tortuga.pending(state)} == set(names)


def test_setup_start_player_and_default_variant():
    state = tortuga.setup(["ani", "bo", "cy"], {"start": "bo"}, RNG)
    assert tortuga.view(state)["start_player"] == "bo"
    assert state.variant == "standard"
    assert tortuga.to_json(tortuga.setup(["ani", "bo"], None, RNG))["start"] == 0


@pytest.mark.parametrize(
    ("players", "options", "mentions"),
    [
        (["ani"], {}, "got 1"),
        ([], {}, "got 0"),
        (["ani", "bo", "cy", "dee", "eve"], {}, "got 5"),
        (["ani", "ani"], {}, "'ani'"),
        (["ani", "Ani"], {}, "'Ani'"),
        (["ani", "b,o"], {}, "'b,o'"),
        (["ani", "b:o"], {}, "'b:o'"),
        (["ani", ""], {}, "''"),
        (["ani", " bo"], {}, "' bo'"),
        (["ani", "bo"], {"start": "cy"}, "'cy'"),
        (["ani", "bo"], {"variant": "short"}, "'short'"),
        (["ani", "bo"], {"variant": "Long"}, "'Long'"),
    ],
)
def test_setup_refuses(players, options, mentions):
    with pytest.raises(ValueError) as raised:
        tortuga.setup(players, options, RNG)
    message = str(raised.value)
    assert mentions in message, message
    assert "\n" not in message


def test_slash_and_markup_in_names_are_allowed_and_labels_stay_unambiguous():
    """Names may hold '/' (e.g. '<script>x</script>'); inside draw labels a name's '%' and
    '/' are percent-encoded, so 'a/reroll1' can never collide with player 'a's reroll."""
    from pbem.games.tortuga.engine import label_name

    state = tortuga.setup(["<script>x</script>", "a", "a/reroll1"], {}, RNG)
    assert state.players[0] == "<script>x</script>"
    assert label_name("a/reroll1") == "a%2Freroll1" and label_name("50%") == "50%25"

    class Recorder:
        def __init__(self):
            self.labels = []

        def below(self, label, n):
            self.labels.append(label)
            return 0

    recorder = Recorder()
    tortuga.setup(["a", "a/reroll1"], {}, recorder)
    assert len(recorder.labels) == len(set(recorder.labels))
    assert all(label.count("/") in (2, 3) for label in recorder.labels)


def test_setup_refusal_messages_say_why():
    cases = {
        ("ani",): "2 to 4 players",
        ("ani", "b,o"): "may not contain ,",
        ("ani", "ani"): "given twice",
    }
    for players, why in cases.items():
        with pytest.raises(ValueError, match=why):
            tortuga.setup(players, {}, RNG)
    with pytest.raises(ValueError, match="start player 'cy' is not one of ani, bo"):
        tortuga.setup(["ani", "bo"], {"start": "cy"}, RNG)
    with pytest.raises(ValueError, match="unknown variant 'short'; use standard or long"):
        tortuga.setup(["ani", "bo"], {"variant": "short"}, RNG)


# ----------------------------------------------------------------------------- requests

def check_requests(state) -> int:
    requests = tortuga.pending(state)
    data = tortuga.to_json(state)
    for request in requests:
        assert isinstance(request, Request)
        assert request.player in state.players
        assert request.kind in KINDS
        assert isinstance(request.sealed, bool)
        assert request.round == data["round"] and request.step == data["step"]
        assert isinstance(request.syntax, str) and request.syntax
        if request.sealed:
            assert request.kind == "select" and data["phase"] == "roll", request
            assert state.players.index(request.player) in data["rolling"]
        if request.options is not None:
            assert isinstance(request.options, tuple)
            assert 1 <= len(request.options) <= MAX_OPTIONS
            assert len(set(request.options)) == len(request.options)
            for option in request.options:
                assert tortuga.check(state, request.player, option) == option, (request, option)
            assert request.default in request.options, request
        assert tortuga.check(state, request.player, request.default) == request.default, request
        assert tortuga.default(state, request.player, request.kind) == request.default
    assert len({(r.player, r.kind) for r in requests}) == len(requests)
    if data["phase"] == "over":
        assert requests == []
    else:
        assert requests, f"nobody owes anything in phase {data['phase']}"
    return len(requests)


@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**32),
       greedy=st.tuples(*[st.booleans()] * 4))
@settings(max_examples=30, deadline=None)
def test_pending_requests_are_well_formed(games, players, seed, greedy):
    state, bots, rng = games.new_game(players, "standard", seed, greedy)
    check_requests(state)
    for _before, _player, _choice, after in games.steps(state, bots, rng):
        check_requests(after)


def test_defaults_play_a_whole_game():
    """Applying every default (what NMR does) finishes the game."""
    for players in (2, 3, 4):
        state = tortuga.setup(["ani", "bo", "cy", "dee"][:players], {}, RNG)
        for _ in range(5_000):
            requests = tortuga.pending(state)
            if not requests:
                break
            for request in requests:
                if request in tortuga.pending(state):
                    state = tortuga.apply(state, request.player, request.default, RNG)
        assert state.phase == "over"
        assert tortuga.result(state)["winners"]


def test_sealed_selection_is_answered_before_anything_opens(games):
    state, _bots, _rng = games.new_game(3, "standard", "sealed")
    requests = tortuga.pending(state)
    assert all(r.sealed and r.kind == "select" for r in requests)
    assert [r.player for r in requests] == list(state.players)
    first = requests[0]
    after = tortuga.apply(state, first.player, first.default, RNG)
    assert first.player not in {r.player for r in tortuga.pending(after)}
    # the sealed choice is visible to its maker only
    assert tortuga.view(after, first.player)["boards"][first.player]["revealed"] == first.default
    assert "revealed" not in tortuga.view(after, None)["boards"][first.player]


def test_choices_name_players_without_regard_to_case_or_width():
    """'board:ben' names a player registered as 'Ｂｅｎ' (fullwidth letters); the canonical
    choice uses the registered spelling. Names that fold to a reserved word are refused."""
    from pbem.games.tortuga.model import BOARD
    state = tortuga.setup(["ani", "Ｂｅｎ", "cy"], {}, RNG)
    state.phase, state.stage = "actions", "board1"
    state.positions = [[None, None] for _ in range(5)]
    state.positions[BOARD] = [0, None]
    state.boards[1].fleet = ["red"]
    for spelling in ("board:ben:red", "board:BEN:r", "board:ｂｅｎ:red", " Board : Ben : Red "):
        assert tortuga.check(state, "ani", spelling) == "board:Ｂｅｎ:red"
    assert tortuga.check(state, "ani", "board:ＦＯＲＦＥＩＴ") == "board:forfeit"
    for reserved in ("ＦＯＲＦＥＩＴ", "Ｎｏｎｅ", "GO"):
        with pytest.raises(ValueError, match="reserved by the choice syntax"):
            tortuga.setup(["ani", reserved], {}, RNG)
