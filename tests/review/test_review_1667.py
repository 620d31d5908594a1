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
    dealt."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Tortuga 1667's draws"):text.index("## 5.")]
    assert re.search(r"hand[^.|]{0,120}(sorted|in (the )?order of (their )?card number|by card number, lowest)",
                     section.replace("\n", " ").replace("the vote cards left, by card number", "")), (
        "§4 does not say in which order a hand is numbered for `vote N`/`top N`/`discard N`")
