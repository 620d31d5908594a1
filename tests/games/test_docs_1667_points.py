"""Points of docs/rules-1667.md that an independent checker needs, pinned (issue 20 item 4):
Unicode in choices and reserved player names. Each test names the doc's paragraph."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.games import tortuga1667
from pbem.games.tortuga1667.setup import RESERVED, check_players

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rules-1667.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("typed", ["vote 2", "VOTE 2", "ｖｏｔｅ　２", "vote ２", "vote ٢", "vote\t2"])
def test_choice_unicode_the_whole_choice_is_nfkc_and_any_decimal_digit_reads(typed):
    assert "**Unicode in choices** (`choice-unicode`)" in DOC
    assert tortuga1667.normalize("vote", typed) == "vote 2"


def test_choice_unicode_circled_digits_read_as_their_plain_digit():
    assert tortuga1667.normalize("vote", "vote ①") == "vote 1"


def test_reserved_names_are_the_documented_words():
    assert "**Reserved names** (`reserved-names`)" in DOC
    listed = DOC.split("**Reserved names**", 1)[1].split("\n\n", 1)[0]
    for word in RESERVED:
        assert f"`{word}`" in listed, f"rules-1667.md does not list the reserved name {word}"
    for name in ("Tortuga", "ＪＯＬＬＹ", "To", "british"):
        with pytest.raises(ValueError, match="word of the choice syntax"):
            check_players([name, "bo", "cy", "dee"])
    for name in ("a b", "a,b", "x" * 41):
        with pytest.raises(ValueError):
            check_players([name, "bo", "cy", "dee"])
    assert check_players(["Tortugan", "bo", "cy", "dee"])  # a longer word is a name like any other


def test_request_kinds_are_the_documented_ones():
    from pbem.games.tortuga1667.legal import SYNTAX
    assert "**Request kinds** (`request-kinds`)" in DOC
    listed = DOC.split("**Request kinds**", 1)[1].split("\n\n", 1)[0]
    for kind in SYNTAX:  # every kind the rules can ask for has its syntax
        assert f"`{kind}`" in listed, f"rules-1667.md does not list the request kind {kind}"


def test_loot_options_are_listed_in_the_documented_order():
    import copy

    from pbem.games.tortuga1667.votes import loot_options
    from pbem.protocol.rng import RandomSource
    assert "**The loot options, in order** (`loot-order`)" in DOC
    state = tortuga1667.setup(["ani", "bo", "cy", "dee", "eve"], {}, RandomSource.for_testing("loot"))
    captain = state.ships["dutchman"][0]
    assert loot_options(state, captain) == ["stow british", "stow french"]
    empty = copy.deepcopy(state)
    empty.galleon = 0
    empty.holds = {"dutchman": {"british": 1, "french": 1}, "jolly": {"british": 0, "french": 2},
                   "tortuga": {"british": 0, "french": 0}}
    listed = ["steal dutchman british to french", "steal dutchman french to british",
              "steal jolly french to british", "steal jolly french to french"]
    assert loot_options(empty, captain) == listed
    assert ", ".join(f"`{o}`" for o in listed) in " ".join(DOC.split())


@pytest.mark.parametrize("winner,totals", [("french", {"british": 1, "french": 3}),
                                           ("british", {"british": 4, "french": 2}),
                                           ("dutch", {"british": 2, "french": 2})])
def test_the_dutch_players_total_is_the_british_total(winner, totals):
    import copy

    from pbem.protocol.rng import RandomSource
    assert "**The Dutch player's total** (`dutch-total`)" in DOC
    state = copy.deepcopy(tortuga1667.setup(["ani", "bo", "cy", "dee", "eve"], {}, RandomSource.for_testing("dutch")))
    state.phase, state.outcome = "over", {"winner": winner, "totals": totals}
    result = tortuga1667.result(state)
    dutch = next(p for p, team in result["loyalty"].items() if team == "dutch")
    assert result["scores"][dutch]["total"] == totals["british"]
    assert (dutch in result["winners"]) == (winner == "dutch")


@pytest.mark.parametrize("typed,canonical", [("shift british", "shift british to french"),
                                             ("shift french", "shift french to british"),
                                             ("SHIFT British to French", "shift british to french"),
                                             ("peek 4,2", "peek 2,4"), ("peek 4 2", "peek 2,4"),
                                             ("force bo 5,1", "force bo 5,1"), ("move roger", "move jolly")])
def test_canonical_forms_are_the_documented_ones(typed, canonical):
    from pbem.games.tortuga1667.parse import canonical as read
    from pbem.protocol.rng import RandomSource
    assert "**Canonical forms** (`canonical-forms`)" in DOC
    state = tortuga1667.setup(["ani", "bo", "cy", "dee", "eve"], {}, RandomSource.for_testing("forms"))
    assert read(state, typed.split()[0].casefold(), typed, []) == canonical


def test_readme_late_action_default_matches_the_rules():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "the first two face-down cards the player has not seen" in readme
    assert "peeks at the first two slots whose card the player has not seen" in " ".join(DOC.split())
