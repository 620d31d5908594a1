"""The game interface as Tortuga 1667 offers it: set-up checks, requests, views, registry."""

from __future__ import annotations

import pytest

import pbem.games
from pbem.games import tortuga1667 as game
from pbem.games.base import ChoiceError, InvalidChoice, Request
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


@pytest.mark.parametrize("options", [None, {}, {"variant": "standard"}, {"variant": "advanced"}])
def test_the_variant_option(options):
    """`pbem new` always passes a variant (standard unless --variant says otherwise)."""
    state = game.setup(["ani", "bo", "cy", "dee"], options, RNG)
    assert state.variant == ((options or {}).get("variant") or "standard")
    assert game.OPTIONS == {"variant": ("standard", "advanced")}
    [request] = game.pending(state)
    assert request.kind == ("place" if state.variant == "advanced" else "stow")


@pytest.mark.parametrize("options, message", [({"variant": "long"}, "unknown variant 'long'; use standard or advanced"),
                                              ({"start": "ani"}, "takes only the option variant"),
                                              ({"faces": {}}, "not faces")])
def test_other_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        game.setup(["ani", "bo", "cy", "dee"], options, RNG)


def test_an_advanced_game_places_every_pawn_and_then_plays():
    """Defaults alone carry the advanced set-up through: nobody can stall it."""
    state = game.setup(["ani", "bo", "cy", "dee", "eve"], {"variant": "advanced"}, RNG)
    for _ in range(5):
        [request] = game.pending(state)
        assert request.kind == "place" and not request.sealed and request.options[-1] == "place tortuga"
        state = game.apply(state, request.player, request.default, RNG)
    assert sorted(state.ships["dutchman"] + state.ships["jolly"]) == ["ani", "bo", "cy", "dee", "eve"]
    assert len(state.ships["dutchman"]) == 3 and state.slots is None
    [request] = game.pending(state)
    assert request.kind == "action" and request.player == state.ships["jolly"][0]


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



@pytest.mark.parametrize("variant", ["standard", "advanced"])
@pytest.mark.parametrize("seed", range(12))
def test_whole_games_with_the_maps_end_and_every_default_is_legal(variant, seed):
    """Random games in both set-ups: each open request's default is legal, a player's hand
    is the right size, and every game ends (the maps and the placing never stall it)."""
    from pbem.games.tortuga1667.bots import RandomBot
    names = ["ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy"][:4 + seed % 6]
    rng = RandomSource.for_testing(f"maps/{variant}/{seed}")
    state = game.setup(names, {"variant": variant}, rng)
    bots = {p: RandomBot(f"{seed}/{p}", reveal_bias=0.3) for p in names}
    kinds = set()
    for _ in range(3000):
        requests = game.pending(state)
        if not requests:
            break
        for r in requests:
            assert game.check(state, r.player, r.default) == r.default
        r = requests[seed % len(requests)]
        kinds.add(r.kind)
        late = seed % 3 == 0 and r.kind != "action"  # late on everything but the turn itself
        choice = r.default if late else bots[r.player].choose(state, r.player, r.kind)
        state = game.apply(state, r.player, choice, rng)
    assert game.result(state) is not None, f"no end; kinds seen {sorted(kinds)}"


@pytest.mark.parametrize("text, canonical", [("vote 2", "vote 2"), ("VOTE 02", "vote 2"), ("vote 3,1", "vote 1,3"),
                                             ("vote 1, 3", "vote 1,3"), ("attack", "attack")])
def test_normalize_without_a_state(text, canonical):
    """What `pbem seal --context` commits offline: El Dorado's two-card vote included."""
    assert game.normalize("vote" if text.lower().startswith("vote") else "action", text) == canonical


@pytest.mark.parametrize("text", ["vote", "vote 1,1", "vote 1 2 3", "vote x", "peek 1,2"])
def test_normalize_refuses_what_is_no_vote(text):
    with pytest.raises(InvalidChoice, match="vote N"):
        game.normalize("vote", text)


def test_a_request_prompt_is_built_when_it_is_read():
    """``pending`` runs at every move; the prompt (the legal choices in words) is needed
    only for a private message, so it is made on first reading, the same text as made at once."""
    rng = RandomSource.for_testing("lazy-prompt", game_id="g")
    state = game.setup(["a", "b", "c", "d", "e"], None, rng)
    (request,) = [r for r in game.pending(state) if not r.sealed][:1]
    assert "_lazy_prompt" in vars(request) and callable(vars(request)["_lazy_prompt"])
    assert request.prompt == game.legal.describe(list(request.options)) == "stow british, stow french"
    assert not callable(vars(request)["_lazy_prompt"])  # made once, then kept
    plain = Request(**{f: getattr(request, f) for f in Request.__dataclass_fields__})
    assert plain == request and plain.prompt == request.prompt
    assert Request("a", "k", False, 1, 1, "d", "s").prompt == ""
