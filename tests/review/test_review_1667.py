"""Review of Tortuga 1667's hidden information (issue 10): each test pins one finding."""

import re
from pathlib import Path

from pbem.games.tortuga1667.model import VOTE_CARDS
from pbem.games.tortuga1667.setup import setup
from pbem.protocol.rng import RandomSource

PLAYERS = ["ani", "bo", "cy", "dee", "eve"]
DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_a_card_number_in_a_public_top_or_discard_choice_does_not_tell_its_face():
    """`top N` and `discard N` are open decisions, public in the log and the export, and N
    is a place in a hand kept sorted by card number, where numbers run cannon < water <
    torch: `discard 1` throws away the player's most cannon-like card. Over many deals the
    first card of a hand must be a cannon about as often as any card is (30%), else the
    public N tells the public something of a secret hand card."""
    firsts = [setup(PLAYERS, {}, RandomSource.for_testing(f"deal {k}")).hands[p][0]
              for k in range(200) for p in PLAYERS]
    cannon = sum(VOTE_CARDS[c][0] == "cannon" for c in firsts) / len(firsts)
    assert abs(cannon - 0.3) < 0.08, f"the first card of a hand is a cannon {cannon:.0%} of the time, not ~30%"


def test_protocol_md_says_which_card_vote_top_and_discard_n_name():
    """An independent verifier replays the disclosed `vote N` (and public `top N`,
    `discard N`) only if it knows the order of a hand: the code keeps it sorted by card
    number (engine.py, votes.py, maps.py), protocol.md §4 says only how the hands are
    dealt. Following §4 alone, the tortuga1667-setup vector's ani gets [23, 2, 30], while
    the vector says [2, 23, 30]."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Tortuga 1667's draws"):text.index("## 5.")]
    assert re.search(r"hand[^.|]{0,120}(sorted|in (the )?order of (their )?card number|by card number, lowest)",
                     section.replace("\n", " ").replace("the vote cards left, by card number", "")), (
        "§4 does not say in which order a hand is numbered for `vote N`/`top N`/`discard N`")


def test_the_cards_of_a_vote_go_under_the_vote_deck_in_an_order_nobody_has_seen():
    """The seed has the played cards shuffled again, face down, before they go under the
    vote deck. Here they go under in the order the public summary just showed them, so once
    the deck's first 25 secret cards are used up (a handful of votes), everyone can tell
    which card each voter draws, in rank order, from the public summaries alone."""
    from pbem.games.tortuga1667.votes import resolve
    same = 0
    for k in range(20):
        s = setup(PLAYERS, {}, RandomSource.for_testing(f"deal {k}"))
        voters = s.ships["dutchman"][:]
        s.vote_no += 1
        s.vote = {"kind": "attack", "caller": voters[0], "ship": "dutchman", "voters": voters,
                  "cards": {p: [s.hands[p][0]] for p in voters}}
        resolve(s, RandomSource.for_testing(f"vote {k}"))
        shown = len(s.last_vote["cards"])
        from pbem.games.tortuga1667.model import vote_face
        same += [vote_face(c) for c in s.vote_deck[-shown:]] == s.last_vote["cards"]
    assert same < 5, f"in {same} of 20 votes the deck's bottom is exactly the public shown order"
