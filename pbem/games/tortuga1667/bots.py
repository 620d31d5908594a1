"""Seedable bots for Tortuga 1667: a uniformly random player and an informed one.

Both decide from what their player may know: their own open request (the one the caller
hands them, else ``pending``'s), the legal choices (what ``check`` accepts: the rules' own
list of them, read once per decision), and ``view(state, player)``. The informed bot
decides from its player's view alone (its loyalty, its hand, its peeks, the public board),
never from the hidden state, so it can stand in for a real player.

Each bot draws from its own ``random.Random(seed)``: a bot is deterministic from its seed
and the calls it was asked, and never touches the ``random`` module's global state.
Any decision kind a bot has no plan for gets a uniformly random legal choice.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import product

from .legal import row_option

SHIPS = ("dutchman", "jolly")
HOLDS = ("british", "french")
# how much revealing a known event card is worth to the revealer (the Armada: see _worth)
CARD_WORTH = {"pistol": 1, "marque": 1, "bells": 0, "powder": 0, "fever": 0, "storm": 0,
              "blackspot": -2, "albatross": -1}
UNKNOWN_WORTH = -0.5  # a blind reveal: often a Black Spot or an Albatross
LONG_GAME = 200  # turns: past this an informed bot plays at random, so no game can stall


def _request(state, player: str, kind: str, request=None):
    """The request the caller handed over (it must be the player's, of that kind), else
    the one ``pending`` lists."""
    if request is not None:
        if request.player != player or request.kind != kind:
            raise ValueError(f"the request handed over is {request.player}'s {request.kind}, "
                             f"not {player}'s {kind}")
        return request
    from . import pending  # noqa: PLC0415 (the package imports this module lazily)
    for r in pending(state):
        if r.player == player and r.kind == kind:
            return r
    raise ValueError(f"{player} owes no {kind} choice now")


class Legal:
    """``choice in Legal(state, player, kind)``: whether ``check`` accepts ``choice`` as it
    is (canonical and legal). The rules' list of legal choices is read once, on the first
    question (tests/games/test_bots_1667.py checks this equals asking ``check``)."""

    __slots__ = ("state", "player", "kind", "options")

    def __init__(self, state, player: str, kind: str):
        self.state, self.player, self.kind, self.options = state, player, kind, None

    def __contains__(self, choice: str) -> bool:
        if self.kind == "action" and row_option(self.state, self.player, choice):
            return True  # a peek, reveal or force open now: no need to list the rest
        if self.options is None:
            self.options = frozenset(legal_options(self.state, self.player, self.kind))
        return choice in self.options


def legal_options(state, player: str, kind: str) -> list[str]:
    """Every legal choice of ``player``'s open ``kind`` decision, listed or not (the rules'
    own list, in its order)."""
    from .engine import owed  # noqa: PLC0415
    from .legal import options  # noqa: PLC0415
    entry = next(e for p, k, e in owed(state) if p == player and k == kind)
    return options(state, player, kind, entry)


def _is_legal(state, player: str, choice: str) -> bool:
    """Whether ``check`` accepts ``choice`` as it is (one question; see ``Legal``)."""
    from ..base import ChoiceError  # noqa: PLC0415
    from .engine import check  # noqa: PLC0415
    try:
        return check(state, player, choice) == choice
    except ChoiceError:
        return False


def shuffle(rnd: random.Random, x: list) -> None:
    """``rnd.shuffle(x)``: the same draws, the same order (CPython's Fisher-Yates over
    ``_randbelow_with_getrandbits``, unchanged from 3.2 to 3.13), without two Python calls
    per element. Bots shuffle a hundred candidate actions a turn; seeded games and the
    examples built from them depend on the order (tests/games/test_bots_1667.py pins it)."""
    getrandbits = rnd.getrandbits
    for i, n, k in _steps(len(x)):
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


@lru_cache(maxsize=256)
def _steps(size: int) -> tuple:
    """(i, i + 1, bits of i + 1) for i from size - 1 down to 1: the shuffle's draws."""
    return tuple((i, i + 1, (i + 1).bit_length()) for i in range(size - 1, 0, -1))


def action_candidates(v: dict) -> list[str]:
    """Every action the syntax allows that could be legal, in canonical form, from a view:
    a superset of the legal ones (``check`` decides)."""
    me = v["viewer"]
    down = tuple(r["slot"] for r in v["row"] if r["card"] is not None)
    return list(_candidates(me, down, tuple(v["players"])))


@lru_cache(maxsize=4096)
def _candidates(me: str, down: tuple, players: tuple) -> tuple:
    k = players.index(me)
    others = players[k + 1:] + players[:k]
    out = [f"peek {a},{b}" for a in down for b in down if a < b]
    out += [f"reveal {a}" for a in down]
    out += [f"force {p} {a},{b}" for p in others for a in down for b in down if a != b]
    out += [f"move rowboat {s}" for s in SHIPS] + [f"move {s}" for s in SHIPS] + ["move tortuga"]
    out += ["attack", "mutiny", "brawl"] + [f"maroon {p}" for p in others]
    out += [f"shift {a} to {b}" for a in HOLDS for b in HOLDS if a != b]
    return tuple(out)


class RandomBot:
    """Picks uniformly among the legal choices of its own open request. When the request
    does not list them (too many), it builds every candidate from the syntax and takes
    them in a random order until one is legal (uniform over the legal ones)."""

    def __init__(self, seed: int | str = 0, reveal_bias: float = 0.0):
        self.random = random.Random(seed)
        self.reveal_bias = reveal_bias  # chance to reveal outright: shortens simulated games

    def choose(self, state, player: str, kind: str, request=None) -> str:
        """A choice for ``player``'s open ``kind`` request; ``request``, when the caller
        already holds it (from ``pending``), saves working it out again."""
        return self.uniform(state, player, kind, _request(state, player, kind, request))

    def uniform(self, state, player: str, kind: str, request, legal=None) -> str:
        options = request.options
        if options is not None:
            if self.reveal_bias:
                reveals = [o for o in options if o.startswith("reveal ")]
                if reveals and self.random.random() < self.reveal_bias:
                    return self.random.choice(reveals)
            return self.random.choice(options)
        return self.any_legal(state, player, kind, request.default, legal)

    def any_legal(self, state, player: str, kind: str, default: str, legal=None) -> str:
        if kind != "action":
            return default  # a kind this bot cannot spell out: the documented default
        # the candidates from the public row and seats (what action_candidates reads of a view)
        down = tuple(k + 1 for k, card in enumerate(state.row) if card is not None)
        candidates = list(_candidates(player, down, tuple(state.players)))
        if self.reveal_bias:
            reveals = [c for c in candidates if c.startswith("reveal ")]
            if reveals and self.random.random() < self.reveal_bias:
                candidates = reveals
        shuffle(self.random, candidates)
        legal = legal if legal is not None else Legal(state, player, kind)
        for choice in candidates:
            if choice in legal:
                return choice
        return default


class InformedBot(RandomBot):
    """Plays for its loyalty from what its player knows: peeks and remembers (its view's
    peeks that still lie where they were seen), reveals cards it knows help it, keeps the
    Armada hidden while its team is not ahead and reveals it when ahead, moves treasure to
    its team's hold as cabin boy, captain and looter, and votes with its loyalty."""

    def choose(self, state, player: str, kind: str, request=None) -> str:
        from . import view  # noqa: PLC0415
        request = _request(state, player, kind, request)
        v = view(state, player)
        plan = getattr(self, f"_{kind}", None)
        choice = None
        allowed = request.options if request.options is not None else Legal(state, player, kind)

        def legal(c: str) -> bool:
            return c in allowed

        if plan is not None and v["turn_no"] <= LONG_GAME:
            choice = plan(Mind(v, self.random), request, legal)
        # a plan's choice is checked again, so a rule added later can only make it fall back
        if choice is not None and legal(choice):
            return choice
        return self.uniform(state, player, kind, request, None if request.options is not None else allowed)

    # ------------------------------------------------------------------- decisions

    def _stow(self, m, request, legal):
        return max(request.options, key=lambda o: m.gain(m.place_ship(), None, o.split()[1]))

    def _action(self, m, request, legal):
        known = m.known()
        armada = [s for s, name in known.items() if name == "armada"]
        if armada and m.winning():
            return f"reveal {armada[0]}"
        moves = []
        if "boy" in m.ranks:
            ship = m.place_ship()
            moves += [(m.gain(ship, a, b), f"shift {a} to {b}") for a in HOLDS for b in HOLDS
                      if a != b and m.v["holds"][ship][a]]
        if "captain" in m.ranks and m.best_loot() > 0:
            moves.append((1, "attack"))
        if "governor" in m.ranks and m.brawl_gain() > 0:
            moves.append((1, "brawl"))
        moves.sort(key=lambda g: -g[0])
        for gain, choice in moves:
            if gain > 0 and legal(choice):
                return choice
        worth = {s: m.worth(name) for s, name in known.items()}
        best = max(worth, key=lambda s: (worth[s], -s), default=None)
        if best is not None and worth[best] > 0:
            return f"reveal {best}"
        down = m.down()
        unknown = [s for s in down if s not in known]
        if len(down) >= 2 and unknown:
            pair = m.random.sample(unknown, 2) if len(unknown) >= 2 else \
                [unknown[0], m.random.choice([s for s in down if s != unknown[0]])]
            return f"peek {min(pair)},{max(pair)}"
        # everything in the row is known and nothing helps: pass the worst on, or reveal the least bad
        # never the Armada while behind: whoever is forced might turn it over
        bad = sorted((s for s in down if -5 < worth.get(s, 0) < 0), key=lambda s: worth[s])
        if len(bad) >= 2:
            target = m.random.choice([p for p in m.v["players"] if p != m.me])
            return f"force {target} {bad[0]},{bad[1]}"
        if best is not None and worth[best] > -1:
            return f"reveal {best}"
        return self._harmless(m, legal)

    def _harmless(self, m, legal):
        """A random legal action that turns over no card I fear (a known bad one, or an
        unknown one while the Armada may lie in the row and my side is not ahead)."""
        known = m.known()
        feared = {s for s in m.down() if (m.worth(known[s]) if s in known else m.unknown_worth()) <= -1}
        candidates = [c for c in action_candidates(m.v) if not c.startswith(("reveal", "force"))
                      or not feared & {int(x) for x in c.split()[-1].split(",")}]
        shuffle(m.random, candidates)
        return next((c for c in candidates if legal(c)), None)

    def _pick(self, m, request, legal):
        known = m.known()
        slots = [int(o.split()[1]) for o in request.options]
        worth = {s: m.worth(known[s]) if s in known else m.unknown_worth() for s in slots}
        top = max(worth.values())
        return f"pick {m.random.choice([s for s in slots if worth[s] == top])}"

    def _vote(self, m, request, legal):
        vote = m.v.get("vote") or {}
        kind, caller = vote.get("kind"), vote.get("caller")
        hand = m.hand()
        if kind == "brawl":
            want = m.favoured_hold()
            if want is None:
                return None
            value = lambda cards: sum(1 if hand[k][1] == want else -1 for k in cards)  # noqa: E731
        elif kind == "mutiny" and caller == m.me:
            value = lambda cards: sum(1 if hand[k][2] == "skull" else -1 for k in cards)  # noqa: E731
        elif kind == "attack" and caller == m.me:
            others = len(vote.get("voters", [])) - 1 + (m.v["vote_deck"] > 0)
            value = lambda cards: attack_odds(tuple(sorted(hand[k][0] for k in cards)), others)  # noqa: E731
        else:  # an unknown caller's vote: keep the useful cards
            return f"vote {m.spare_card() + 1}"
        # a map may allow two cards at once (vote A,B): only when that is better than one
        options = list(request.options or [f"vote {k + 1}" for k in range(len(hand))])
        cards = {o: [int(x) - 1 for x in o.split()[1].split(",")] for o in options}
        return max(options, key=lambda o: (value(cards[o]), -len(cards[o]), -options.index(o)))

    def _loot(self, m, request, legal):
        return max(request.options, key=m.loot_gain)

    def _discard(self, m, request, legal):
        return f"discard {m.spare_card() + 1}"

    def _top(self, m, request, legal):
        return f"top {m.spare_card() + 1}"

    def _marque(self, m, request, legal):
        return "marque draw" if "marque draw" in (request.options or ()) else None

    def _fountain(self, m, request, legal):
        return "fountain use" if "fountain use" in (request.options or ()) else None  # stay put

    def _shoot(self, m, request, legal):
        others = [o for o in request.options if o.split()[1] != m.me]
        return m.random.choice(others) if others else None


@lru_cache(maxsize=None)
def attack_odds(mine: str | tuple, others: int) -> float:
    """The chance an attack succeeds when I play the card(s) with top(s) ``mine`` and
    ``others`` cards of the deck's mix (30% cannons, 30% water, 40% torches) join them."""
    mine = (mine,) if isinstance(mine, str) else mine
    weights = {"cannon": 0.3, "water": 0.3, "torch": 0.4}
    total = 0.0
    for tops in product(weights, repeat=min(others, 6)):
        p = 1.0
        for t in tops:
            p *= weights[t]
        tops = tops + mine
        if tops.count("cannon") and tops.count("torch") > tops.count("water"):
            total += p
    return total


class Mind:
    """What one player knows, read from their view alone, and how they value things."""

    def __init__(self, v: dict, rng: random.Random):
        self.v, self.random = v, rng
        self.me, self.team = v["viewer"], v["my_loyalty"]
        self.ranks = self._ranks()

    def _ranks(self) -> list[str]:
        v, me = self.v, self.me
        if v["tortuga"][:1] == [me]:
            return ["governor"]
        for crew in v["ships"].values():
            if me in crew:
                return [r for r, on in (("captain", crew[0] == me), ("mate", len(crew) > 1 and crew[1] == me),
                                        ("boy", crew[-1] == me)) if on]
        return []

    def place_ship(self) -> str | None:
        return next((s for s, crew in self.v["ships"].items() if self.me in crew), None)

    def totals(self) -> dict:
        return {h: sum(place[h] for place in self.v["holds"].values()) for h in HOLDS}

    def score(self, totals: dict) -> float:
        """Higher is better for my side (the Dutch player wants the teams level)."""
        if self.team == "dutch":
            return -abs(totals["british"] - totals["french"])
        other = "french" if self.team == "british" else "british"
        return totals[self.team] - totals[other]

    def gain(self, ship, src: str | None, dst: str) -> float:
        """How much moving one treasure from hold ``src`` (None: from off the board) to
        hold ``dst`` helps my side."""
        before = self.totals()
        after = dict(before)
        if src is not None:
            after[src] -= 1
        after[dst] += 1
        return self.score(after) - self.score(before)

    def winning(self) -> bool:
        t = self.totals()
        if self.team == "dutch":
            return t["british"] == t["french"] and len(self.v["players"]) % 2 == 1
        return self.score(t) > 0

    def favoured_hold(self) -> str | None:
        if self.team != "dutch":
            return self.team
        t = self.totals()
        return None if t["british"] == t["french"] else min(HOLDS, key=t.get)

    def best_loot(self) -> float:
        """The most a successful attack of my ship could bring my side."""
        if self.v["galleon"]:
            return max(self.gain(None, None, h) for h in HOLDS)
        ship = self.place_ship()
        return max([self.gain(None, src, dst) for s in SHIPS for src in HOLDS for dst in HOLDS
                    if self.v["holds"][s][src] and not (s == ship and src == dst)], default=0)

    def loot_gain(self, option: str) -> float:
        w = option.split()
        return self.gain(None, None, w[1]) if w[0] == "stow" else self.gain(None, w[2], w[4])

    def brawl_gain(self) -> float:
        want = self.favoured_hold()
        if want is None or not any(face[1] == want for face in self.hand()):
            return 0
        v = self.v
        return v["tortuga_loose"] + sum(v["holds"]["tortuga"].values()) - v["holds"]["tortuga"][want]

    def hand(self) -> list[tuple[str, str, str]]:
        """My vote cards as (attack top, brawl flag, mutiny mark), numbered from 0."""
        return [tuple(card["card"].split()) for card in self.v["hand"]]

    def spare_card(self) -> int:
        """The card of my hand I miss least: one without my flag, else the first."""
        want = self.favoured_hold()
        hand = self.hand()
        return min(range(len(hand)), key=lambda k: (hand[k][1] == want, hand[k][0] == "torch", k))

    def down(self) -> list[int]:
        return [r["slot"] for r in self.v["row"] if r["card"] is not None]

    def known(self) -> dict[int, str]:
        """slot -> event card I peeked at there and which still lies there."""
        return {r["slot"]: r["known"] for r in self.v["row"] if r.get("known")}

    def armada_may_lie_in_row(self) -> bool:
        # the Armada starts among the last five cards of the deck and leaves in a tie-break
        return self.v["phase"] == "play" and self.v["event_deck"] < 5

    def worth(self, name: str) -> float:
        if name == "armada":
            if self.winning():
                return 10
            t = self.totals()
            even_tie = t["british"] == t["french"] and len(self.v["players"]) % 2 == 0
            return 0 if even_tie else -10
        if name == "albatross":
            ship = self.place_ship()
            birds = sum(self.v["albatross"].get(p, 0) for p in self.v["ships"].get(ship, []))
            return -2 if ship and birds else -1
        if name == "storm":
            return self._storm_worth()
        return CARD_WORTH.get(name, 0)

    def _storm_worth(self) -> float:
        ship = self.place_ship()
        place = ship or ("tortuga" if self.me in self.v["tortuga"] else None)
        if place is None:
            return 0
        hold = self.v["holds"][place]
        after = {h: self.totals()[h] - hold[h] for h in HOLDS}
        return self.score(after) - self.score(self.totals())

    def unknown_worth(self) -> float:
        if self.armada_may_lie_in_row() and not self.winning():
            return UNKNOWN_WORTH - 2
        return UNKNOWN_WORTH
