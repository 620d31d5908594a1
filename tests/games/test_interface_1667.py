"""The game interface as Tortuga 1667 offers it: set-up checks, requests, views, registry."""

from __future__ import annotations

import pytest

import pbem.games
from pbem.games import tortuga1667 as game
from pbem.games.base import ChoiceError, Request
from pbem.protocol.rng import RandomSource

RNG = RandomSource.for_testing("interface-1667")


@pytest.mark.parametrize("count", [3, 10])
def test_player_count_is_checked(count):
    with pytest.raises(ValueError, match="4 to 9 players"):
        game.setup([f"p{k}" for k in range(count)], None, RNG)


@pytest.mark.parametrize("name", ["two words", "a,b", "Rowboat", ""])
def test_names_that_the_choice_syntax_could_not_tell_apart_are_refused(name):
    with pytest.raises(ValueError):
        game.setup(["ani", "bo", "cy", name], None, RNG)


def test_names_differing_only_by_case_or_width_are_refused():
    with pytest.raises(ValueError, match="given twice"):
        game.setup(["ani", "bo", "cy", "ＡＮＩ"], None, RNG)


def test_playable_through_the_registry():
    assert pbem.games.get("tortuga1667") is game


@pytest.mark.parametrize("count", range(4, 10))
def test_setup_requests_and_views(count):
    names = [f"p{k}" for k in range(count)]
    state = game.setup(names, None, RNG)
    [request] = game.pending(state)
    assert isinstance(request, Request) and request.kind == "stow" and not request.sealed
    assert request.options == ("stow british", "stow french") and request.default == "stow british"
    public = game.view(state, None)
    assert "loyalty" not in public and "hand" not in public
    assert all(slot["card"] == "down" for slot in public["row"])
    mine = game.view(state, names[0])
    assert mine["my_loyalty"] in ("british", "french", "dutch") and len(mine["hand"]) == 3
    assert game.result(state) is None


@pytest.mark.parametrize("text, error", [("shift british", ChoiceError), ("stow middle", ChoiceError),
                                         ("stow", ChoiceError)])
def test_a_refused_choice_lists_what_is_legal_and_changes_nothing(text, error):
    state = game.setup(["ani", "bo", "cy", "dee"], None, RNG)
    [request] = game.pending(state)
    before = game.to_json(state)
    with pytest.raises(error) as raised:
        game.apply(state, request.player, text, RNG)
    assert str(raised.value).endswith("legal: stow british, stow french")
    assert "\n" not in str(raised.value)
    assert game.to_json(state) == before

