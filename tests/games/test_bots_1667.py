"""The Tortuga 1667 bots: styles, determinism, what the informed bot does with what it
knows, the random bot's uniform choice when a request does not list its options, and a
measured margin of informed play over random play for one team."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pbem.games import tortuga1667 as game
from pbem.games.tortuga1667 import legal
from pbem.games.tortuga1667.bots import InformedBot, Legal, RandomBot, _candidates, _is_legal, attack_odds, shuffle
from pbem.games.tortuga1667.engine import owed
from pbem.games.tortuga1667.model import VOTE_CARDS
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy")


def started(players: int, seed: int = 0):
    """A game past the two stows, waiting for the first action; and its random source."""
    rng = RandomSource.for_testing(f"bots/{seed}", game_id=f"b{seed}")
    s = game.setup(NAMES[:players], None, rng)
    for _ in range(2):
        r = game.pending(s)[0]
        s = game.apply(s, r.player, r.default, rng)
    return s, rng


def play(state, rng, bots, max_moves: int = 5000):
    moves = []
    for _ in range(max_moves):
        requests = game.pending(state)
        if not requests:
            return state, moves
        r = requests[0]
        choice = bots[r.player].choose(state, r.player, r.kind)
        moves.append((r.player, choice))
        state = game.apply(state, r.player, choice, rng)
    raise AssertionError("game did not end")


def other_team(team: str) -> str:
    return "french" if team == "british" else "british"


def test_bot_styles():
    assert type(game.bot("s", "greedy")) is InformedBot
    assert type(game.bot("s", "informed")) is InformedBot
    assert type(game.bot("s", "random")) is RandomBot
    assert type(game.bot("s")) is RandomBot
    with pytest.raises(ValueError, match="styles: random, greedy, informed"):
        game.bot("s", "clever")


@pytest.mark.parametrize("style", ["random", "informed"])
def test_a_bot_is_deterministic_from_its_seed_and_leaves_the_global_random_alone(style):
    random.seed(1667)
    before = random.getstate()
    games = []
    for _ in range(2):
        s, rng = started(6, seed=3)
        games.append(play(s, rng, {p: game.bot(f"seed/{p}", style) for p in s.players})[1])
    assert games[0] == games[1]
    assert random.getstate() == before


def test_the_informed_side_wins_far_more_often_than_the_random_side():
    """One team is played by informed bots, everyone else (the other team, the Dutch
    player) by random bots; 200 fixed games of 4 to 9 players, each team informed in half.
    Measured: the informed side wins 184 of 200, the random side 9 (the Dutch player 7)."""
    wins = Counter()
    for seed in range(200):
        s, rng = started(4 + seed % 6, seed)
        team = ("british", "french")[seed % 2]
        bots = {p: (InformedBot if s.loyalty[p] == team else RandomBot)(f"{seed}/{p}") for p in s.players}
        final, _ = play(s, rng, bots)
        winner = game.result(final)["winner"]
        wins["informed" if winner == team else "random" if winner == other_team(team) else winner] += 1
    assert wins["informed"] >= 150 and wins["random"] <= 30, wins
    assert wins["informed"] - wins["random"] >= 120, wins


def with_armada_seen(s, player: str, slot: int, shuffle_delta: int = 0):
    """``s`` with the Armada face down in ``slot`` and ``player`` having peeked at it there
    (``shuffle_delta`` -1: before the row was last rebuilt, so the peek is stale)."""
    s = s.copy()
    armada = s.events.index("armada")
    k = s.event_deck.index(armada)
    s.event_deck[k], s.row[slot - 1] = s.row[slot - 1], armada
    s.seen[player].append({"card": armada, "slot": slot, "turn": 1, "shuffle": s.shuffles + shuffle_delta})
    return s


def with_holds(s, team: str, mine: int, theirs: int):
    s = s.copy()
    for place in s.holds:
        s.holds[place] = {"british": 0, "french": 0}
    s.holds["tortuga"][team] = mine
    s.holds["tortuga"][other_team(team)] = theirs
    return s


def test_the_informed_bot_reveals_the_armada_it_saw_only_while_its_side_is_ahead():
    s, _ = started(4)
    player = game.pending(s)[0].player
    team = s.loyalty[player]
    seen = with_armada_seen(s, player, 3)
    for seed in range(20):
        ahead = InformedBot(seed).choose(with_holds(seen, team, 2, 0), player, "action")
        assert ahead == "reveal 3"
        behind = InformedBot(seed).choose(with_holds(seen, team, 0, 2), player, "action")
        assert behind != "reveal 3" and not (behind.startswith("force") and "3" in behind.split()[-1])
        stale = InformedBot(seed).choose(with_holds(with_armada_seen(s, player, 3, -1), team, 2, 0), player, "action")
        assert stale != "reveal 3", "a peek from before the row was rebuilt tells nothing"


def test_knowing_the_whole_row_the_informed_bot_never_turns_the_armada_over_while_behind():
    s, _ = started(4)
    player = game.pending(s)[0].player
    s = with_holds(with_armada_seen(s, player, 1), s.loyalty[player], 0, 1)
    s.galleon = 0  # nothing to loot: no attack to fall back on
    # the rest of the row: bad or useless cards only (a Black Spot first), so nothing helps
    down = s.row[1:] + s.event_deck
    rest = sorted((c for c in down if s.events[c] not in ("pistol", "marque")),
                  key=lambda c: s.events[c] != "blackspot")[:4]
    s.row[1:] = rest
    s.event_deck = [c for c in down if c not in rest]
    s.seen[player] += [{"card": s.row[k], "slot": k + 1, "turn": 1, "shuffle": s.shuffles} for k in range(1, 5)]
    for seed in range(30):
        choice = InformedBot(seed).choose(s, player, "action")
        assert choice != "reveal 1" and not (choice.startswith("force") and "1" in choice.split()[-1].split(",")), choice


def test_the_informed_bot_peeks_at_cards_it_has_not_seen():
    s, _ = started(4)
    player = game.pending(s)[0].player
    s = with_armada_seen(s, player, 1)  # level, even count: nothing to gain from the Armada
    s = with_holds(s, s.loyalty[player], 0, 0)
    if "captain" in s.ranks(player):
        s.galleon = 0  # nothing to loot
    for seed in range(20):
        choice = InformedBot(seed).choose(s, player, "action")
        assert choice.startswith("peek ") and "1" not in choice.split()[1].split(","), choice


def test_the_dutch_player_reveals_the_armada_while_the_teams_are_level():
    s, _ = started(5)
    dutch = next(p for p in s.players if s.loyalty[p] == "dutch")
    s.queue = [{"kind": "action", "player": dutch}]
    s.turn = s.players.index(dutch)
    s = with_armada_seen(s, dutch, 2)
    assert InformedBot(0).choose(with_holds(s, "british", 1, 1), dutch, "action") == "reveal 2"
    assert InformedBot(0).choose(with_holds(s, "british", 2, 1), dutch, "action") != "reveal 2"


def test_a_cabin_boy_moves_the_other_sides_treasure_into_their_own_hold():
    s, _ = started(4)
    boy = next(p for p in s.players if "boy" in s.ranks(p))
    ship = s.place_of(boy)[1]
    team = s.loyalty[boy]
    s.queue = [{"kind": "action", "player": boy}]
    s.turn = s.players.index(boy)
    s.holds[ship] = {team: 0, other_team(team): 1}
    assert InformedBot(0).choose(s, boy, "action") == f"shift {other_team(team)} to {team}"


def test_a_governor_brawls_and_votes_their_own_flag():
    s, rng = started(4)
    gov = s.ships["jolly"][-1]
    team = s.loyalty[gov]
    s.ships["jolly"].remove(gov)
    s.tortuga = [gov]
    s.queue = [{"kind": "action", "player": gov}]
    s.turn = s.players.index(gov)
    # a hand of two cards of the other flag and one of their own, in the middle
    theirs = [c for c in s.vote_deck if VOTE_CARDS[c][1] != team][:2]
    own = [c for c in s.vote_deck if VOTE_CARDS[c][1] == team][:1]
    hand = sorted(theirs + own)
    s.vote_deck = [c for c in s.vote_deck if c not in hand] + s.hands[gov]
    s.hands[gov] = hand
    assert InformedBot(0).choose(s, gov, "action") == "brawl"
    s = game.apply(s, gov, "brawl", rng)
    assert [(r.player, r.kind) for r in game.pending(s)] == [(gov, "vote")]
    assert InformedBot(0).choose(s, gov, "vote") == f"vote {hand.index(own[0]) + 1}"


def test_attack_odds_favour_the_scarcer_card():
    # alone with the deck's card: a cannon needs a torch (40%), a torch needs a cannon (30%)
    assert attack_odds("cannon", 1) == pytest.approx(0.4)
    assert attack_odds("torch", 1) == pytest.approx(0.3)
    assert attack_odds("water", 1) == 0
    assert attack_odds("water", 4) < attack_odds("torch", 4)


def test_a_kind_without_a_plan_gets_a_random_legal_choice():
    """Cabin Fever has no plan in the informed bot (as any decision added later): it still
    answers with a legal choice, and not always the same one."""
    s, rng = started(6)
    player = game.pending(s)[0].player
    s.queue.insert(0, {"kind": "fever", "player": player})
    choices = {InformedBot(seed).choose(s, player, "fever") for seed in range(30)}
    assert choices <= set(game.pending(s)[0].options) and len(choices) > 1


def test_the_random_bot_is_uniform_when_the_options_are_not_listed():
    s, _ = started(9)
    request = game.pending(s)[0]
    assert request.kind == "action" and request.options is None  # 9 players: too many forces
    _, kind, entry = owed(s)[0]
    every = legal.options(s, request.player, kind, entry)
    bot = RandomBot("uniform")
    drawn = Counter(bot.choose(s, request.player, "action") for _ in range(1200))
    assert set(drawn) <= set(every)
    words = Counter(o.split()[0] for o in every)
    for word, count in words.items():
        share = sum(n for o, n in drawn.items() if o.split()[0] == word) / 1200
        assert share == pytest.approx(count / len(every), abs=0.05), word


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 31, 32, 33, 100, 257])
def test_the_bots_shuffle_is_the_random_modules_draw_for_draw(size):
    """The bots' own shuffle (no Python call per element) orders a list as
    ``random.Random.shuffle`` does and leaves the generator in the same state: seeded games,
    and the examples made from them, stay as they were."""
    for seed in range(40):
        mine, theirs = random.Random(seed), random.Random(seed)
        a, b = list(range(size)), list(range(size))
        shuffle(mine, a)
        theirs.shuffle(b)
        assert a == b and mine.getstate() == theirs.getstate()


@pytest.mark.parametrize("players,seed", [(4, 1), (5, 2), (7, 3), (9, 4)])
def test_legal_says_what_check_says_of_every_option_and_candidate(players, seed):
    """``choice in Legal(state, player, kind)`` (the rules' list, read once) answers what
    ``check(state, player, choice) == choice`` answers, for every listed option and every
    candidate action the bots build, at every decision of whole games; every option is
    its own canonical form; and a request handed to a bot must be the one it is asked about."""
    rng = RandomSource.for_testing(f"legal/{seed}", game_id=f"l{seed}")
    s = game.setup(NAMES[:players], {"variant": "advanced" if seed % 2 else "standard"}, rng)
    bots = {p: InformedBot(f"{seed}/{p}") if k % 2 else RandomBot(f"{seed}/{p}") for k, p in enumerate(s.players)}
    asked = 0
    while (requests := game.pending(s)):
        for r, (_, kind, entry) in zip(requests, owed(s)):
            allowed = Legal(s, r.player, r.kind)
            texts = set(legal.options(s, r.player, kind, entry)) | {"vote 99", "stow nowhere", "peek 1,1"}
            if r.kind == "action":
                down = tuple(k + 1 for k, card in enumerate(s.row) if card is not None)
                texts |= set(_candidates(r.player, down, tuple(s.players)))
            for text in texts:
                assert (text in allowed) == _is_legal(s, r.player, text), (r.player, r.kind, text)
                asked += 1
            for option in legal.options(s, r.player, kind, entry):
                # each option is its own canonical form, read the long way (check takes an
                # exact option as it is, without parsing it)
                assert game.check(s, r.player, f" {option.upper()} ") == option
        r = requests[-1]
        other = next(q for q in requests if q is not r) if len(requests) > 1 else None
        if other is not None:
            with pytest.raises(ValueError, match="request handed over"):
                bots[r.player].choose(s, r.player, r.kind, request=other)
        s = game.apply(s, r.player, bots[r.player].choose(s, r.player, r.kind, request=r), rng)
    assert asked > 1000
