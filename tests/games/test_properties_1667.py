"""Properties of whole Tortuga 1667 games played by seeded random bots (hypothesis draws
the player count and the seeds); every invariant is checked after every ``apply``."""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.games import tortuga1667 as game
from pbem.games.tortuga1667.bots import RandomBot
from pbem.games.tortuga1667.model import HAND_SIZE, TREASURES, VOTE_CARDS
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy")
EXAMPLES = settings(max_examples=25, deadline=None)
params = st.fixed_dictionaries({"players": st.integers(4, 9), "seed": st.integers(0, 2**32),
                                 "bias": st.sampled_from([0.0, 0.2])})


def play(players: int, seed: int, bias: float, max_moves: int = 3000):
    """Yield (before, player, choice, after) for every choice of a whole bot game."""
    rng = RandomSource.for_testing(f"1667/{seed}", game_id=f"g{seed}")
    state = game.setup(NAMES[:players], None, rng)
    bots = {p: RandomBot(f"{seed}/{p}", reveal_bias=bias) for p in NAMES[:players]}
    for _ in range(max_moves):
        requests = game.pending(state)
        if not requests:
            return
        r = requests[0]
        choice = bots[r.player].choose(state, r.player, r.kind)
        after = game.apply(state, r.player, choice, rng)
        yield state, r.player, choice, after
        state = after
    raise AssertionError(f"game did not end within {max_moves} moves")


def check_conserved(s) -> None:
    cards = sorted(c for h in s.hands.values() for c in h) + sorted(s.vote_deck)
    assert sorted(cards) == list(range(len(VOTE_CARDS))), "vote cards created or lost"
    events = s.event_deck + [c for c in s.row if c is not None] + s.discard + s.removed
    events += [c for cards in s.albatross.values() for c in cards]
    events += [c for cards in s.maps.values() for c in cards]  # treasure maps in front of players
    assert sorted(events) == list(range(len(s.events))), "event cards created or lost"
    stowing = sum(1 for e in s.queue if e["kind"] == "stow")
    held = sum(n for hold in s.holds.values() for n in hold.values())
    assert s.galleon + s.loose + held + stowing == TREASURES, "treasure created or lost"
    assert min([s.galleon, s.loose] + [n for hold in s.holds.values() for n in hold.values()]) >= 0
    assert s.loose + sum(s.holds["tortuga"].values()) == 2, "Tortuga's two treasures left the island"
    places = [p for crew in s.ships.values() for p in crew] + s.tortuga
    places += [p for p in s.rowboats.values() if p]
    assert Counter(places) == Counter(s.players), "a pawn is missing or twice on the board"
    assert all(len(crew) <= 5 for crew in s.ships.values())


@given(p=params)
@EXAMPLES
def test_cards_treasures_and_pawns_are_conserved(p):
    for _before, player, choice, after in play(**p):
        try:
            check_conserved(after)
        except AssertionError as error:
            raise AssertionError(f"{error}; game {p}, after {player}: {choice!r}") from None


@given(p=params)
@EXAMPLES
def test_a_hand_is_always_the_right_size(p):
    lost = Counter()
    for _before, player, choice, after in play(**p):
        lost.update(e["player"] for e in after.effects if e["type"] == "discard")
        drawing = {e["player"] for e in after.queue if e["kind"] == "top"}
        for name, hand in after.hands.items():
            # El Dorado's owner holds one card more until they spend it in a vote (its revealer
            # holds it only until they give it away)
            gold = after.holds_map(name, "eldorado")
            owns = gold is not None and not any(e.get("card") == gold for e in after.queue)
            want = HAND_SIZE - lost[name] + (name in drawing) + owns
            assert len(hand) == want, f"{name} holds {len(hand)}, not {want}; game {p}, after {player}: {choice!r}"


def scramble(s, seed: int):
    """The same state with every secret changed: loyalties, hands, deck orders, peeks."""
    s = s.copy()
    shuffle = random.Random(seed).shuffle
    loyalties = list(s.loyalty.values())
    shuffle(loyalties)
    s.loyalty = dict(zip(s.loyalty, loyalties))
    pool = [c for h in s.hands.values() for c in h] + s.vote_deck
    shuffle(pool)
    for name, hand in s.hands.items():
        s.hands[name], pool = sorted(pool[:len(hand)]), pool[len(hand):]
    s.vote_deck = pool
    down = s.event_deck + [c for c in s.row if c is not None]
    shuffle(down)
    s.row = [down.pop() if c is not None else None for c in s.row]
    s.event_deck = down
    s.seen = {name: [] for name in s.players}
    if s.vote is not None:
        s.vote["cards"] = {name: s.hands[name][0] for name in s.vote["cards"]}
    for e in s.queue:
        if e["kind"] == "top":
            e["drawn"] = s.hands[e["player"]][0]
    return s


@given(p=params)
@EXAMPLES
def test_public_views_never_depend_on_a_secret(p):
    for k, (_before, player, choice, after) in enumerate(play(**p)):
        if after.phase == "over":
            continue  # the end discloses every loyalty
        public = json.dumps(game.view(after, None), sort_keys=True)
        assert public == json.dumps(game.view(scramble(after, k), None), sort_keys=True), (
            f"the public view shows a secret; game {p}, after {player}: {choice!r}")
        for key in ("my_loyalty", "hand", "seen", "loyalty"):
            assert key not in game.view(after, None)


@given(p=params)
@EXAMPLES
def test_apply_never_mutates_and_states_round_trip_through_json(p):
    for before, player, choice, after in play(**p):
        data = json.dumps(game.to_json(after), sort_keys=True)
        assert json.dumps(game.to_json(game.from_json(json.loads(data))), sort_keys=True) == data
        assert game.from_json(game.to_json(after)) == after
        snapshot = json.dumps(game.to_json(before), sort_keys=True)
        game.apply(before, player, choice, RandomSource.for_testing("other"))
        assert json.dumps(game.to_json(before), sort_keys=True) == snapshot, "apply changed its input"


@given(p=params)
@EXAMPLES
def test_every_game_ends_with_a_result(p):
    final = None
    for _before, _player, _choice, final in play(**p):
        pass
    result = game.result(final)
    assert result is not None and result["winner"] in ("british", "french", "dutch", "draw")
    assert set(result["loyalty"]) == set(final.players)


@given(p=params)
@EXAMPLES
def test_every_request_lists_its_default_among_the_legal_choices(p):
    for _before, _player, _choice, after in play(**p):
        for r in game.pending(after):
            assert game.check(after, r.player, r.default) == r.default
            assert r.sealed == (r.kind == "vote")
            if r.options is not None:
                assert r.default in r.options
