"""Refused choices raise typed errors with one-line messages and leave the state alone.

``InvalidChoice``: not understood. ``IllegalChoice``: understood, not allowed now; the
message names what is legal. ``NotYourTurn``: the sender owes no such choice. The states
are real ones, reached by bot games (see ``conftest.collect_states``).
"""

from __future__ import annotations

from itertools import combinations

import pytest

from pbem.games import tortuga
from pbem.games.base import ChoiceError, IllegalChoice, InvalidChoice, NotYourTurn
from pbem.protocol.rng import RandomSource

RNG = RandomSource.for_testing("errors")
KEYS = ("select/sealed", "select/open", "skull", "bonus", "fleet", "crew", "hunt", "board",
        "raid", "order")
LETTERS = "ABCDE"
ACTIONS = ("fleet", "crew", "hunt", "board", "raid")

INVALID = {
    "select": ["Z", "A,A", "hello", "A;B", "1,2", "A,B,C,D,E,F"],
    "skull": ["skull:dance", "skull:", "skull:raid:fleet", "skull:skull"],
    "bonus": ["bonus:maybe:fleet", "bonus:new", "bonus:new:dance", "bonus:flip:fleet:crew"],
    "fleet": ["fleet:jump", "fleet:", "fleet:go:now"],
    "crew": ["crew:jump", "crew:go:go"],
    "hunt": ["hunt:maybe", "hunt:"],
    "board": ["board:nobody", "board:", "board:ani:orange", "board:ani:red:blue"],
    "raid": ["raid:nobody", "raid:ani:green"],
    "order": ["order:red", "order:orange/-", "order:a/b/c", "order:red,,blue/-"],
}


def refuse(state, player, text, error_type) -> ChoiceError:
    """Assert ``check`` and ``apply`` both refuse with ``error_type``, a one-line message,
    and no change to the state; return the error."""
    before = tortuga.to_json(state)
    with pytest.raises(error_type) as checked:
        tortuga.check(state, player, text)
    with pytest.raises(error_type) as applied:
        tortuga.apply(state, player, text, RNG)
    assert tortuga.to_json(state) == before, f"refused {text!r} changed the state"
    for error in (checked.value, applied.value):
        message = str(error)
        assert message and "\n" not in message and "\r" not in message, message
        assert type(error) is error_type, f"{text!r}: {type(error).__name__}: {message}"
    assert str(checked.value) == str(applied.value)
    return checked.value


def illegal_candidates(state, request) -> list[str]:
    """Well-formed choices of the request's kind that are not among its legal options."""
    kind, legal = request.kind, set(request.options or ())
    seat = state.players.index(request.player)
    if kind == "select":
        texts = ["none"] + [",".join(LETTERS[d] for d in dice)
                            for size in range(1, 6) for dice in combinations(range(5), size)]
    elif kind == "skull":
        texts = [f"skull:{a}" for a in ACTIONS]
    elif kind == "bonus":
        texts = [f"bonus:{how}:{a}" for how in ("new", "flip") for a in ACTIONS]
    elif kind in ("fleet", "crew", "hunt"):
        texts = [f"{kind}:go", f"{kind}:forfeit"]
    elif kind in ("board", "raid"):
        texts = [f"{kind}:{state.players[seat]}"] + [
            f"{kind}:{p}" + suffix for p in state.players
            for suffix in ("", ":red", ":blue", ":yellow", ":white", ":purple")]
    else:  # order: the wrong number of chests is always well-formed and illegal
        texts = ["order:-/-", "order:red,red,red,red,red/-", "order:-/purple,purple,purple,purple,purple"]
    return [t for t in texts if t not in legal]


def key_of(request) -> str:
    if request.kind == "select":
        return "select/sealed" if request.sealed else "select/open"
    return request.kind


@pytest.mark.parametrize("key", KEYS)
def test_every_request_kind_was_reached(sample_states, key):
    assert sample_states.get(key), f"no bot game reached a {key} request"


@pytest.mark.parametrize("key", KEYS)
def test_invalid_choices_are_not_understood(sample_states, key):
    for state, request in sample_states[key]:
        for text in INVALID[request.kind]:
            refuse(state, request.player, text, InvalidChoice)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("text", ["", "   "])
def test_empty_choice_is_not_understood(sample_states, key, text):
    state, request = sample_states[key][0]
    error = refuse(state, request.player, text, InvalidChoice)
    assert "empty" in str(error)


@pytest.mark.parametrize("key", KEYS)
def test_illegal_choices_name_what_is_legal(sample_states, key):
    tested = 0
    for state, request in sample_states[key]:
        assert request.options is not None
        for text in illegal_candidates(state, request):
            error = refuse(state, request.player, text, IllegalChoice)
            message = str(error)
            assert message.startswith("illegal:"), message
            assert "legal: " in message, message
            listed = message.rsplit("legal: ", 1)[1]
            assert listed.split(", ") == list(request.options), message
            assert error.legal == request.options
            tested += 1
    if key in ("fleet", "crew", "hunt"):
        # go and forfeit are always both allowed: nothing well-formed is illegal here.
        assert tested == 0
        assert all(r.options == (f"{key}:go", f"{key}:forfeit") for _s, r in sample_states[key])
    else:
        assert tested, f"no illegal {key} choice was found to test"


def test_illegal_skull_turn_when_board_or_raid_is_full(games):
    """Skulls that do not fit on BOARD or RAID may not be turned there (searched for in
    bot games: held skulls outnumber the room left by the boat or pirate)."""
    for seed in range(200):
        state, bots, rng = games.new_game(2 + seed % 3, "standard", f"skull/{seed}", (True,) * 4)
        for _b, _p, _c, s in games.steps(state, bots, rng):
            for request in tortuga.pending(s):
                if request.kind == "skull" and len(request.options) < 5:
                    for text in illegal_candidates(s, request):
                        message = str(refuse(s, request.player, text, IllegalChoice))
                        assert "legal: " + ", ".join(request.options) in message
                    return
    pytest.fail("no skull turn with an illegal action in 200 games")


def crafted_big_order_state(sample_states):
    """A real move-phase state, with one player's crew and island areas filled so far that
    the orderings are too many to list (the options are then None)."""
    state, request = sample_states["order"][0]
    data = tortuga.to_json(state)
    seat = data["players"].index(request.player)
    board = data["boards"][seat]
    board.update(boat=6, pirate=6, crew=["red", "blue", "yellow", "white"],
                 island=["purple", "red", "blue", "yellow", "white"])
    data["orders"].pop(str(seat), None)
    return tortuga.from_json(data), request.player


def test_unlisted_order_options_still_explain(sample_states):
    state, player = crafted_big_order_state(sample_states)
    request = [r for r in tortuga.pending(state) if r.player == player and r.kind == "order"][0]
    assert request.options is None
    assert tortuga.check(state, player, request.default) == request.default
    assert tortuga.check(state, player, "order:r,b,y,w/p,r,b,y") == (
        "order:red,blue,yellow,white/purple,red,blue,yellow")
    for text in ("order:-/-", "order:red,blue,yellow/purple,red,blue,yellow",
                 "order:red,red,yellow,white/purple,red,blue,yellow"):
        message = str(refuse(state, player, text, IllegalChoice))
        # The orderings are too many to list, so the message shows a legal example.
        assert message.startswith("illegal:") and ("legal:" in message or "e.g. order:" in message)
        assert request.default in message
    for text in INVALID["order"]:
        refuse(state, player, text, InvalidChoice)


@pytest.mark.parametrize("key", KEYS)
def test_non_players_are_refused(sample_states, key):
    state, request = sample_states[key][0]
    option = (request.options or (request.default,))[0]
    for outsider in ("zed", "", "ANI ", "forfeit"):
        error = refuse(state, outsider, option, NotYourTurn)
        assert "not a player" in str(error)


@pytest.mark.parametrize("key", KEYS)
def test_players_who_owe_nothing_are_refused(sample_states, key):
    tested = 0
    for state, request in sample_states[key]:
        owing = {r.player for r in tortuga.pending(state)}
        option = (request.options or (request.default,))[0]
        for player in state.players:
            if player not in owing:
                refuse(state, player, option, NotYourTurn)
                tested += 1
    if key != "select/sealed":  # in a sealed step usually everybody owes a selection
        assert tested, f"every player owed something in every {key} sample"


@pytest.mark.parametrize("key", KEYS)
def test_a_choice_of_another_kind_is_refused(sample_states, key):
    other = {"select": "order:-/-", "order": "fleet:go"}
    for state, request in sample_states[key]:
        owed = {r.kind for r in tortuga.pending(state) if r.player == request.player}
        text = other.get(request.kind, "order:-/-")
        kind = text.split(":")[0]
        if kind in owed:
            continue
        message = str(refuse(state, request.player, text, NotYourTurn))
        assert request.kind in message, message


# ----------------------------------------------------------------------------- canonical forms

def messy(option: str) -> str:
    """An equivalent spelling a player might send: other case, abbreviations, spaces."""
    abbrev = {"red": "R", "blue": "b", "yellow": "Y", "white": "w", "purple": "P"}
    if ":" not in option:  # dice letters, or none
        return "NONE" if option == "none" else " , ".join(reversed(option.lower().split(",")))
    kind, rest = option.split(":", 1)
    if kind == "order":
        fleet, crew = rest.split("/")
        spell = lambda part: part if part == "-" else ", ".join(abbrev[c] for c in part.split(","))  # noqa: E731
        return f" Order : {spell(fleet)} / {spell(crew)} "
    parts = rest.split(":")
    if kind in ("board", "raid") and parts[0] != "forfeit":
        parts[0] = parts[0].upper()
        if len(parts) == 2:
            parts[1] = abbrev[parts[1]]
        return ":".join([kind.title()] + parts)
    return ":".join([kind.upper()] + [p.title() for p in parts])


@pytest.mark.parametrize("key", KEYS)
def test_check_returns_the_canonical_form(sample_states, key):
    for state, request in sample_states[key]:
        for option in request.options:
            assert tortuga.check(state, request.player, option) == option
            assert tortuga.check(state, request.player, messy(option)) == option, messy(option)


def find_state(games, wanted, seeds=range(200)):
    """The first state of a bot game with a request for which ``wanted(request)`` holds."""
    for seed in seeds:
        state, bots, rng = games.new_game(2 + seed % 3, "standard", f"find/{seed}", (seed % 2,) * 4)
        for _b, _p, _c, s in games.steps(state, bots, rng):
            for request in tortuga.pending(s):
                if wanted(request):
                    return s, request
    pytest.fail("no such state in 200 bot games")


@pytest.mark.parametrize("text", ["c, b", "C,B", "cb", " b c ", "b+c", "B ,C"])
def test_dice_letters_canonical(games, text):
    state, request = find_state(games, lambda r: r.kind == "select" and "B,C" in r.options)
    assert tortuga.check(state, request.player, text) == "B,C"


@pytest.mark.parametrize("text", ["Board:ANI:R", "board:Ani:red", "BOARD:ani:r", " board : ani : Red "])
def test_board_target_canonical(games, text):
    state, request = find_state(
        games, lambda r: r.kind == "board" and "board:ani:red" in r.options)
    assert tortuga.check(state, request.player, text) == "board:ani:red"
