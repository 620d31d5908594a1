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
    for name in ("bob\u00b4", "a\uff0cb"):  # one word as typed, two once a choice reads them (NFKC)
        with pytest.raises(ValueError, match="reads as 2 words once its letters are normalised"):
            check_players([name, "bo", "cy", "dee"])
    assert check_players(["Tortugan", "bo", "cy", "dee"])  # a longer word is a name like any other
    assert check_players(["ｃａｔ", "bo", "cy", "dee"])  # NFKC changes it, but it stays one word


def test_request_kinds_are_the_documented_ones():
    from pbem.games.tortuga1667.legal import SYNTAX
    assert "**Request kinds** (`request-kinds`)" in DOC
    listed = DOC.split("**Request kinds**", 1)[1].split("\n\n", 1)[0]
    for kind in SYNTAX:  # every kind the rules can ask for has its syntax
        assert f"`{kind}`" in listed, f"rules-1667.md does not list the request kind {kind}"
    import re
    assert set(re.findall(r"`([a-z]+)`", listed)) - {"kind", "default"} == set(SYNTAX)  # and no other



def test_a_defaults_kind_in_the_log_is_the_request_kind(tmp_path):
    """`request-kinds`: a late player's `default` event carries the kind of the request it settles."""
    from pbem.protocol import commands, loading
    from pbem.games.tortuga1667.legal import SYNTAX
    from pbem.store import Store
    store = Store(tmp_path / "g.db", create=True)
    at = "2030-01-01T00:00:00Z"
    commands.create_game(store, "g1", "tortuga1667", ["ani", "bo", "cy", "dee", "eve"], {}, start=True, at=at)
    owed = []
    for _ in range(12):  # every request settled by its default, late players all along
        request = loading.load(store, "g1").pending()[0]
        owed.append(request.kind)
        commands.nmr(store, "g1", request.player, force=True, at=at)
    kinds = [e.data["kind"] for e in store.events("g1") if e.kind == "default"]
    assert kinds and set(kinds) <= set(SYNTAX) and set(kinds) <= set(owed)


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
    readme = " ".join(readme.split())
    assert ("the first two face-down cards the player has not seen, made up from the first ones they have seen "
            "when fewer than two are unseen (the first two if they have seen all)") in readme
    doc = " ".join(DOC.split())
    assert "peeks at the first two slots whose card the player has not seen" in doc
    assert "the first slots they have seen make up the pair" in doc


@pytest.mark.parametrize("unseen,expected", [([1, 2, 3, 4, 5], "peek 1,2"), ([4], "peek 1,4"), ([2, 5], "peek 2,5"),
                                             ([], "peek 1,2")])
def test_the_late_action_default_is_the_documented_peek(unseen, expected):
    """Slots 1-5 hold cards; the player has peeked at every slot not in ``unseen``."""
    from pbem.games.tortuga1667 import legal
    from pbem.protocol.rng import RandomSource
    state = tortuga1667.setup(["ani", "bo", "cy", "dee"], {}, RandomSource.for_testing("late"))
    state.queue = [{"kind": "action", "player": "ani"}]
    state.seen["ani"] = [{"card": state.row[x - 1], "slot": x, "turn": 0, "shuffle": state.shuffles}
                         for x in range(1, 6) if x not in unseen]
    assert legal.default(state, "ani", "action", state.queue[0]) == expected


def test_a_vote_nobody_can_vote_in_writes_no_sealed_step(tmp_path, monkeypatch):
    """rules-1667.md `empty-vote`, protocol.md §11.4: a governor alone on Tortuga with no vote
    card calls a brawl; the log holds the `decide` and nothing of a sealed step, the vote's
    draws are taken all the same, and later decisions carry its number as their step."""
    from pbem.protocol import commands
    from pbem.protocol.loading import SEED
    from pbem.render import record
    from pbem.store import Store
    from pbem.store.audit import audit_store
    assert "**RULING** (`empty-vote`)" in DOC
    protocol = " ".join((Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "A step that waits for nobody is never opened" in protocol
    assert "no `sealed_batch` (not even one over an empty `reveals`)" in protocol
    real_setup = tortuga1667.setup

    def governor_alone_with_no_card(players, options, rng):
        s = real_setup(players, options, rng)
        for crew in s.ships.values():
            if "dee" in crew:
                crew.remove("dee")
        s.tortuga, s.vote_deck, s.hands["dee"] = ["dee"], s.vote_deck + s.hands["dee"], []
        s.queue, s.turn = [{"kind": "action", "player": "dee"}], players.index("dee")
        return s
    monkeypatch.setattr(tortuga1667, "setup", governor_alone_with_no_card)
    store = Store(tmp_path / "g.db", create=True)
    at = "2030-01-01T00:00:00Z"
    commands.create_game(store, "g1", "tortuga1667", ["ani", "bo", "cy", "dee", "eve"], {}, start=True, at=at)
    before = len(store.events("g1"))
    session = commands.decide(store, "g1", "dee", "brawl", at=at)
    written = store.events("g1")[before:]
    assert [e.kind for e in written] == ["decide"]  # no commit, reveal_held or sealed_batch
    assert session.sealed is None and session.state.vote_no == 1
    assert session.state.last_vote["voters"] == [] and len(session.state.last_vote["cards"]) == 1
    nxt = session.pending()[0]
    assert nxt.kind == "action" and not nxt.sealed and (nxt.round, nxt.step) == (2, 1)
    commands.decide(store, "g1", nxt.player, nxt.default, at=at)
    assert (store.events("g1")[-1].data["round"], store.events("g1")[-1].data["step"]) == (2, 1)
    seed = bytes.fromhex(store.get_secret("g1", SEED))
    rec = record.build("g1", store.events("g1"), seed, draws=True)
    labels = [label for label, n, _ in rec.session.rng.draws if label.startswith("vote1/")]
    assert labels == ["vote1/shuffle/0", "vote1/under/0"]
    assert audit_store(store, "g1")["ok"]


def test_a_digit_that_is_not_decimal_is_refused_as_syntax_not_a_crash():
    """`choice-unicode`: any script's *decimal* digits are read; a character Python calls a
    digit but not a decimal one (Ethiopic ፩, superscript ² before NFKC) is no number."""
    from pbem.games.base import InvalidChoice
    from pbem.mail.apply import duration
    from pbem.protocol.rng import RandomSource
    state = tortuga1667.setup(["ani", "bo", "cy", "dee", "eve"], {}, RandomSource.for_testing("digits"))
    while tortuga1667.pending(state)[0].kind != "action":
        request = tortuga1667.pending(state)[0]
        state = tortuga1667.apply(state, request.player, request.default, RandomSource.for_testing("digits"))
    player = tortuga1667.pending(state)[0].player
    with pytest.raises(InvalidChoice) as refused:
        tortuga1667.check(state, player, "reveal ፩")
    assert refused.value.code == "syntax"
    assert tortuga1667.check(state, player, "reveal ٣") == "reveal 3"
    with pytest.raises(InvalidChoice):
        tortuga1667.normalize("vote", "vote ፩")
    assert duration("፩h") is None and duration("٢h") is None  # durations take the digits 0 to 9 only (docs/email.md)
