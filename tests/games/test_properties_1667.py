"""Properties of whole Tortuga 1667 games played by seeded bots (hypothesis draws the
player count, the seeds, and whether the even seats are informed bots, as in ``pbem demo``);
every invariant is checked after every ``apply``."""

from __future__ import annotations

import json
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.games import tortuga1667 as game
from pbem.games.tortuga1667.bots import InformedBot, RandomBot
from pbem.games.tortuga1667.model import _FIELD_NAMES as _FIELDS
from pbem.games.tortuga1667.model import HAND_SIZE, TREASURES, VOTE_CARDS, _plain
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy")
EXAMPLES = settings(max_examples=25, deadline=None)
params = st.fixed_dictionaries({"players": st.integers(4, 9), "seed": st.integers(0, 2**32),
                                 "bias": st.sampled_from([0.0, 0.2]), "informed": st.booleans()})
MAX_TURNS = 400  # random games take about 40 choices; all-informed ones under 160 turns


def play(players: int, seed: int, bias: float, informed: bool = False, max_moves: int = 3000):
    """Yield (before, player, choice, after) for every choice of a whole bot game."""
    rng = RandomSource.for_testing(f"1667/{seed}", game_id=f"g{seed}")
    state = game.setup(NAMES[:players], None, rng)
    bots = {p: InformedBot(f"{seed}/{p}") if informed and k % 2 == 0 else RandomBot(f"{seed}/{p}", reveal_bias=bias)
            for k, p in enumerate(NAMES[:players])}
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
    """Three cards, but for the two exceptions docs/rules-1667.md gives: a pawn marooned
    while on Tortuga gives up a card for good (Marooning and Tortuga), and a Letter of
    Marque's draw holds one card more until its ``top`` choice puts one back. A card sealed
    in a vote stays in its hand until the vote is shown."""
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


def scramble(s, seed: int, keep: str | None = None):
    """The same state with every secret ``keep`` (None: the public) cannot know changed:
    the other players' loyalties, hands, peeks, sealed votes and private effects, the vote
    deck's order, and every face-down event card ``keep`` has not seen where it lies."""
    s = s.copy()
    shuffle = random.Random(seed).shuffle
    others = [p for p in s.players if p != keep]
    loyalties = [s.loyalty[p] for p in others]
    shuffle(loyalties)
    s.loyalty.update(zip(others, loyalties))
    pool = [c for p in others for c in s.hands[p]] + s.vote_deck
    shuffle(pool)
    for name in others:
        size = len(s.hands[name])
        s.hands[name], pool = sorted(pool[:size]), pool[size:]
    s.vote_deck = pool
    # a peek stays true only while its card lies where it was seen, in the same deal
    known = {e["slot"] - 1 for e in s.seen.get(keep, ()) if e["shuffle"] == s.shuffles
             and s.row[e["slot"] - 1] == e["card"]}
    movable = [k for k, c in enumerate(s.row) if c is not None and k not in known]
    down = s.event_deck + [s.row[k] for k in movable]
    shuffle(down)
    for k in movable:
        s.row[k] = down.pop()
    s.event_deck = down
    s.seen = {name: (cards if name == keep else []) for name, cards in s.seen.items()}
    if s.vote is not None:
        s.vote["cards"] = {name: card if name == keep else s.hands[name][0]
                           for name, card in s.vote["cards"].items()}
    for e in s.queue:
        if e["kind"] == "top" and e["player"] != keep:
            e["drawn"] = s.hands[e["player"]][0]
    for effect in s.effects:
        if "private" in effect:
            effect["private"] = {name: mine if name == keep else {"scrambled": seed}
                                 for name, mine in effect["private"].items()}
    return s


@given(p=params)
@EXAMPLES
def test_views_never_depend_on_a_secret_of_someone_else(p):
    """The public view and each player's view stay the same when everything their viewer
    may not know is changed: no loyalty, hand card, peek, sealed vote, face-down card or
    deck order of anyone else is in them (until the end, which discloses the loyalties)."""
    for k, (_before, player, choice, after) in enumerate(play(**p)):
        if after.phase == "over":
            continue
        for viewer in [None] + after.players:
            shown = game.view(after, viewer)
            assert shown == game.view(scramble(after, k, viewer), viewer), (
                f"the view of {viewer or 'the public'} shows another's secret; game {p}, after {player}: {choice!r}")
            if viewer is None:
                assert not {"my_loyalty", "hand", "seen", "loyalty"} & set(shown)
                assert all(set(slot) == {"slot", "card"} and slot["card"] in ("down", None) for slot in shown["row"])
            else:
                assert "loyalty" not in shown and shown["my_loyalty"] == after.loyalty[viewer]


@given(p=params)
@EXAMPLES
def test_the_informed_bot_decides_from_its_players_view_alone(p):
    """Two states that differ only in what a player cannot know get the same choice from
    the informed bot (and from the random one), at every decision of a whole game."""
    for k, (before, player, choice, after) in enumerate(play(**p)):
        for r in game.pending(after):
            other = scramble(after, k, r.player)
            assert game.view(after, r.player) == game.view(other, r.player)
            for style in ("informed", "random"):
                seed = f"{p['seed']}/{k}/{r.player}"
                mine = game.bot(seed, style).choose(after, r.player, r.kind)
                assert mine == game.bot(seed, style).choose(other, r.player, r.kind), (
                    f"the {style} bot read a secret; game {p}, {r.player} owing {r.kind}")
                assert game.check(after, r.player, mine) == mine


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
def test_every_game_ends_with_a_consistent_result(p):
    """Random bots end every game (the rules allow peeking forever, so the bound is what a
    game of random play takes); the winners are the side with more treasure, the Dutch
    player on a tie with an odd count, and nobody wins a tie-break that ran out of cards."""
    final = None
    for _before, _player, _choice, final in play(**p):
        assert game.result(final) is None or final.phase == "over"
    assert final.phase == "over" and final.turn_no <= MAX_TURNS
    result = game.result(final)
    totals = final.team_totals()
    assert result["totals"] == totals
    british, french = totals["british"], totals["french"]
    if british != french:
        want = "british" if british > french else "french"
    else:
        want = "dutch" if final.n % 2 else "draw"
    assert result["winner"] == want, f"{result['winner']} won with totals {totals}; game {p}"
    assert result["loyalty"] == final.loyalty
    sides = {"draw": {"british", "french"}}.get(want, {want})
    assert result["winners"] == [name for name in final.players if final.loyalty[name] in sides]
    for name in final.players:
        team = final.loyalty[name]
        assert result["scores"][name] == {"team": team, "total": totals.get(team, british)}


@given(p=params)
@EXAMPLES
def test_every_request_lists_its_default_among_the_legal_choices(p):
    for _before, _player, _choice, after in play(**p):
        for r in game.pending(after):
            assert game.check(after, r.player, r.default) == r.default
            assert r.sealed == (r.kind == "vote")
            if r.options is not None:
                assert r.default in r.options


def _containers(value, out: dict) -> dict:
    """id -> object of every list and dict inside ``value`` (the objects kept alive)."""
    if isinstance(value, (list, dict)):
        out[id(value)] = value
        for v in value.values() if isinstance(value, dict) else value:
            _containers(v, out)
    return out


def _plain_fields(s) -> dict:
    return {name: _plain(getattr(s, name)) for name in _FIELDS}


def _typed(value):
    """The value with every type spelled out (a list and a tuple, or 1 and True, differ)."""
    if isinstance(value, dict):
        return ("dict", [(type(k).__name__, k, _typed(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, value)


@given(p=params, variant=st.sampled_from(["standard", "advanced"]))
@settings(max_examples=15, deadline=None)
def test_a_copy_is_a_plain_deep_copy_sharing_nothing(p, variant):
    """``State.copy`` (written out per field for speed) gives, field by field, exactly what
    the generic plain copy gives (types, key order included) and shares no list or dict
    with the original, at every state of whole games of both set-ups."""
    rng = RandomSource.for_testing(f"1667/{p['seed']}", game_id=f"g{p['seed']}")
    state = game.setup(NAMES[:p["players"]], {"variant": variant}, rng)
    bots = {q: game.bot(f"{p['seed']}/{q}", "informed" if p["informed"] and k % 2 == 0 else "random")
            for k, q in enumerate(state.players)}
    states = [state]
    while (requests := game.pending(state)):
        r = requests[0]
        state = game.apply(state, r.player, bots[r.player].choose(state, r.player, r.kind), rng)
        states.append(state)
    assert len(states) > 5
    for s in states:
        twin = s.copy()
        assert _typed({n: getattr(twin, n) for n in _FIELDS}) == _typed(_plain_fields(s))
        assert twin == s
        mine = _containers([getattr(s, n) for n in _FIELDS], {})
        theirs = _containers([getattr(twin, n) for n in _FIELDS], {})
        assert not set(mine) & set(theirs), "a copy shares a list or dict with its original"


@given(p=params)
@EXAMPLES
def test_apply_never_changes_any_earlier_state_nor_a_sibling(p):
    """No state of a game changes later in it, and applying another legal choice to the
    same input (a branch) changes neither the input nor the state the game went on with
    (no part is shared and then changed)."""
    history = []
    other_rng = RandomSource.for_testing("branch")
    for before, player, choice, after in play(**p):
        if not history:
            history.append((before, json.dumps(game.to_json(before))))
        assert json.dumps(game.to_json(before)) == history[-1][1], "apply changed its input"
        snapshot = json.dumps(game.to_json(after))
        request = next(r for r in game.pending(before) if r.player == player)
        for other in (request.options or (request.default,))[:3]:
            if other != choice:
                game.apply(before, player, other, other_rng)
        assert json.dumps(game.to_json(before)) == history[-1][1], "a branch changed the input"
        assert json.dumps(game.to_json(after)) == snapshot, "a branch changed a sibling state"
        history.append((after, snapshot))
    for k, (s, snapshot) in enumerate(history):
        assert json.dumps(game.to_json(s)) == snapshot, f"state {k} changed later in the game {p}"


@given(p=params)
@EXAMPLES
def test_apply_shares_only_what_it_left_unchanged_and_copies_what_it_reads(p):
    """Copy on write: a state from ``apply`` shares with its input the lists and dicts the
    apply never read (the event names, the discard pile, ...), as the same objects, and
    these hold what the input holds; whatever it changed is its own. The sharing does
    happen (the speed of the engine rests on it)."""
    shared = changed = 0
    for before, _player, _choice, after in play(**p):
        assert "_from" not in vars(after), "a state left apply still copying on write"
        for name in _FIELDS:
            mine, theirs = getattr(after, name), getattr(before, name)
            if not isinstance(mine, (list, dict)):
                continue
            if mine is theirs:
                shared += 1
            elif _plain(mine) != _plain(theirs):
                changed += 1
    assert shared > changed > 0, (shared, changed)
