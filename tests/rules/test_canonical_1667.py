"""docs/rules-1667.md, `canonical-forms`: every kind of Tortuga 1667 choice, typed loosely,
is applied in the canonical form the page's table gives. ``applied`` (protocol §2) is what
the rules' ``check`` returns; the last test sees it in the log of a real game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from casefile1667 import build
from pbem.games import tortuga1667 as game
from pbem.games.base import IllegalChoice
from pbem.games.tortuga1667.parse import KIND_OF_WORD

DOC = (Path(__file__).parents[2] / "docs" / "rules-1667.md").read_text(encoding="utf-8")
TABLE = DOC.split("**Canonical forms** (`canonical-forms`)", 1)[1].split("**Request kinds**", 1)[0]
PLAYERS = ["ani", "bo", "cy", "dee"]  # default seats: Dutchman ani (captain), cy; Jolly Roger bo (captain), dee
WON_VOTE = {"hands": {"ani": ["cannon british skull"], "cy": ["torch british skull"]},
            "vote_deck": ["torch french blank"]}
WIN = ["ani: attack", "ani: vote 1", "cy: vote 1"]  # a cannon and two torches: the attack succeeds

# (who types, typed, applied, the state, the choices made before), one or more per first word
FORMS = [
    ("ani", "ATTACK", "attack", {}, []),
    ("cy", "mutiny", "mutiny", {"turn": "cy"}, []),
    ("dee", "Brawl", "brawl", {"tortuga": ["dee"], "turn": "dee"}, []),
    ("ani", "peek 4,2", "peek 2,4", {}, []),
    ("ani", "peek 4 2", "peek 2,4", {}, []),
    ("ani", "reveal ０３", "reveal 3", {}, []),
    ("bo", "pick 5", "pick 5", {}, ["ani: force bo 5,1"]),
    ("ani", "vote 2", "vote 2", {}, ["ani: attack"]),
    ("ani", "vote 3,1", "vote 1,3", {"maps": {"ani": ["eldorado"]}}, ["ani: attack"]),
    ("ani", "top 1", "top 1", {"row": ["marque", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1", "ani: marque draw"]),
    ("dee", "discard 3", "discard 3", {"tortuga": ["dee"], "turn": "dee",
                                       "row": ["blackspot", "storm", "storm", "storm", "storm"]}, ["dee: reveal 1"]),
    ("ani", "force BO 5,1", "force bo 5,1", {}, []),
    ("ani", "maroon CY", "maroon cy", {}, []),
    ("ani", "shoot dee", "shoot dee", {"row": ["pistol", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "fever Bo", "fever bo", {"row": ["fever", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "give bo", "give bo", {"row": ["fountain", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "move rowboat", "move rowboat dutchman", {}, []),
    ("dee", "move rowboat roger", "move rowboat jolly", {"tortuga": ["dee"], "turn": "dee"}, []),
    ("dee", "move roger", "move jolly", {"rowboats": {"jolly": "dee"}, "turn": "dee"}, []),
    ("dee", "move tortuga", "move tortuga", {"rowboats": {"jolly": "dee"}, "turn": "dee"}, []),
    ("ani", "move Jolly-Roger", None, {}, []),  # read as `move jolly`, which a captain on the Dutchman may not do
    ("cy", "shift british", "shift british to french", {"turn": "cy", "holds": {"dutchman": {"british": 1}}}, []),
    ("cy", "shift british to french", "shift british to french", {"turn": "cy", "holds": {"dutchman": {"british": 1}}}, []),
    ("cy", "shift french", "shift french to british", {"turn": "cy", "holds": {"dutchman": {"french": 1}}}, []),
    ("ani", "stow French", "stow french", WON_VOTE, WIN),
    ("ani", "steal fd french to british", "steal dutchman french to british",
     {**WON_VOTE, "galleon": 0, "holds": {"dutchman": {"french": 1}}}, WIN),
    ("ani", "marque draw", "marque draw", {"row": ["marque", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "marque send DEE roger", "marque send dee jolly",
     {"tortuga": ["dee"], "row": ["marque", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "fountain Use", "fountain use", {"maps": {"ani": ["fountain"]},
                                              "row": ["blackspot", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "fountain KEEP", "fountain keep", {"maps": {"ani": ["fountain"]},
                                                "row": ["blackspot", "storm", "storm", "storm", "storm"]}, ["ani: reveal 1"]),
    ("ani", "atlantis GO", "atlantis go", {"maps": {"ani": ["atlantis"]}}, []),
    ("cy", "atlantis Stay", "atlantis stay", {"maps": {"cy": ["atlantis"]}}, ["ani: maroon cy"]),
]


def _state(who_state: dict, before: list[str]):
    state, rng = build({"players": PLAYERS, "state": who_state})
    for line in before:
        player, _, choice = line.partition(":")
        state = game.apply(state, player.strip(), choice.strip(), rng)
    return state


@pytest.mark.parametrize("who,typed,applied,situation,before", FORMS, ids=[f"{f[0]}: {f[1]}" for f in FORMS])
def test_every_choice_is_applied_in_its_documented_form(who, typed, applied, situation, before):
    state = _state(situation, before)
    if applied is None:
        with pytest.raises(IllegalChoice, match="illegal: move jolly"):
            game.check(state, who, typed)
        return
    assert game.check(state, who, typed) == applied
    assert game.check(state, who, applied) == applied  # the canonical form is its own
    assert f"`{applied}`" in TABLE, f"rules-1667.md's table does not give {applied}"


def test_the_advanced_set_up_places_and_the_set_up_stows_in_their_documented_forms():
    state, _ = build({"players": PLAYERS, "enter": "setup", "options": {"variant": "advanced"},
                      "rng": {"setup/pawns/0": 0}})
    assert game.check(state, "ani", "place fd 3") == "place dutchman 3"
    assert game.check(state, "ani", "place Tortuga") == "place tortuga"
    for typed, applied in (("place fd 3", "place dutchman 3"), ("place Tortuga", "place tortuga")):
        assert f"`{typed}`" in TABLE and f"`{applied}`" in TABLE
    state, _ = build({"players": PLAYERS, "enter": "setup"})
    stower = game.pending(state)[0].player
    assert game.check(state, stower, "STOW British") == "stow british"


def test_the_table_covers_every_first_word_of_a_choice():
    words = {typed.split()[0].casefold() for _, typed, *_ in FORMS} | {"place", "stow"}
    assert words == set(KIND_OF_WORD), f"missing: {sorted(set(KIND_OF_WORD) - words)}"
    documented = {m.split()[0] for m in re.findall(r"`([a-z][^`]*)`", TABLE)}
    assert set(KIND_OF_WORD) <= documented


def test_a_bare_move_rowboat_with_both_rowboats_open_is_refused():
    state = _state({"tortuga": ["dee"], "turn": "dee"}, [])
    with pytest.raises(IllegalChoice) as refused:
        game.check(state, "dee", "move rowboat")
    assert refused.value.code == "no-way"
    assert "with both open, a bare `move rowboat` is refused, `no-way`" in " ".join(TABLE.split())


def test_the_log_records_the_canonical_form_as_applied(tmp_path):
    """Through the protocol: a decision typed loosely is logged with ``applied`` canonical."""
    from pbem.protocol import commands, loading
    from pbem.store import Store
    store = Store(tmp_path / "g.db", create=True)
    commands.create_game(store, "g1", "tortuga1667", ["ani", "bo", "cy", "dee", "eve"], {}, start=True,
                         at="2030-01-01T00:00:00Z")
    while (session := loading.load(store, "g1")).pending()[0].kind != "action":
        request = session.pending()[0]
        commands.decide(store, "g1", request.player, request.default, at="2030-01-01T00:00:00Z")
    player = loading.load(store, "g1").pending()[0].player
    commands.decide(store, "g1", player, "PEEK 5 , 3", at="2030-01-01T00:00:00Z")
    last = store.events("g1")[-1]
    assert last.kind == "decide" and last.data["choice"] == "PEEK 5 , 3" and last.data["applied"] == "peek 3,5"
