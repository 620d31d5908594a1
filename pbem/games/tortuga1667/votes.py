"""Votes: attack (captain), mutiny (first mate), brawl (governor of Tortuga).

Each voter seals one card from their hand; one card from the top of the vote deck joins
them; the cards are shuffled (a labelled draw) and shown without their players. Afterwards
the shown cards are shuffled again, face down (another labelled draw), and go under the vote
deck, and every voter draws one card: were they put back in the shown order, anyone could
tell which card each voter draws once the deck comes round to them.
"""

from __future__ import annotations

from .board import maroon
from .maps import sail, use, vote_question
from .model import HOLDS, SHIPS, VOTE_CARDS, State, vote_face
from .setup import deal_order


def voters_for(s: State, kind: str, caller: str) -> tuple[str | None, list[str]]:
    where, ship = s.place_of(caller)
    if kind == "attack":
        crew = s.ships[ship][:]
    elif kind == "mutiny":
        crew = s.ships[ship][1:]
    else:
        crew, ship = s.tortuga[:], None
    # RULING empty-hand: a player who has lost every vote card has nothing to play
    return ship, [p for p in crew if s.hands[p]]


def call_vote(s: State, kind: str, caller: str, rng) -> None:
    ship, voters = voters_for(s, kind, caller)
    s.vote_no += 1
    s.vote = {"kind": kind, "caller": caller, "ship": ship, "voters": voters, "cards": {}}
    s.effects.append({"type": "vote-called", "kind": kind, "caller": caller, "ship": ship,
                      "voters": voters[:]})
    owner = vote_question(s, ship)
    if owner is not None:  # Atlantis: asked before the sealed step opens
        s.queue.insert(0, {"kind": "atlantis", "player": owner, "why": "vote"})
    else:
        open_vote(s, rng)


def open_vote(s: State, rng) -> None:
    """Collect the sealed cards, or resolve at once when nobody can vote."""
    if s.vote["voters"]:
        s.queue.insert(0, {"kind": "vote"})
    else:
        resolve(s, rng)


def after_atlantis(s: State, player: str, went: bool, rng) -> None:
    """The Atlantis owner answered: count them in if they sailed (RULING atlantis-vote: the
    vote is called off if the Albatross marooned its caller on boarding)."""
    vote = s.vote
    if went:
        sail(s, player)
        where, ship = s.place_of(vote["caller"])
        rank = {"attack": "captain", "mutiny": "mate"}[vote["kind"]]
        if ship != vote["ship"] or rank not in s.ranks(vote["caller"]):
            s.vote = None
            s.effects.append({"type": "vote-off", "kind": vote["kind"], "caller": vote["caller"]})
            return
        vote["voters"] = voters_for(s, vote["kind"], vote["caller"])[1]
        s.effects.append({"type": "voters", "voters": vote["voters"][:]})
    open_vote(s, rng)


def cast(s: State, player: str, indices: list[int], rng) -> None:
    """``indices``: one card of the hand, or two for the owner of El Dorado."""
    s.vote["cards"][player] = [s.hands[player][k] for k in indices]
    if len(s.vote["cards"]) == len(s.vote["voters"]):
        s.queue.pop(0)
        resolve(s, rng)


def tally(kind: str, cards: list[int]) -> str:
    """The outcome of a vote from its cards: "success" | "failure" | a brawl's side."""
    faces = [VOTE_CARDS[c] for c in cards]
    if kind == "attack":
        tops = [f[0] for f in faces]
        # each water puts out one torch; an attack needs a cannon and a torch still burning
        ok = tops.count("cannon") >= 1 and tops.count("torch") > tops.count("water")
        return "success" if ok else "failure"
    if kind == "mutiny":
        marks = [f[2] for f in faces]
        return "success" if marks.count("skull") > marks.count("blank") else "failure"
    flags = [f[1] for f in faces]
    british, french = flags.count("british"), flags.count("french")
    return "british" if british > french else "french" if french > british else "tie"


def resolve(s: State, rng) -> None:
    vote, s.vote = s.vote, None
    played = []
    for p in vote["voters"]:
        for card in vote["cards"][p]:
            s.hands[p].remove(card)
            played.append(card)
        if len(vote["cards"][p]) == 2:  # El Dorado spent; its owner draws one card like all
            use(s, p, "eldorado")
    pool = played + ([s.vote_deck.pop(0)] if s.vote_deck else [])
    shown = deal_order(pool, rng, f"vote{s.vote_no}/shuffle")
    outcome = tally(vote["kind"], shown)
    s.vote_deck.extend(deal_order(shown, rng, f"vote{s.vote_no}/under"))
    private = {}
    for p in vote["voters"]:
        new = s.vote_deck.pop(0)
        s.hands[p] = s.hands[p] + [new]  # in the order drawn: see setup.deal_hands
        private[p] = {"played": " + ".join(vote_face(c) for c in vote["cards"][p]), "drew": vote_face(new)}
    s.last_vote = {"kind": vote["kind"], "caller": vote["caller"], "ship": vote["ship"],
                   "voters": vote["voters"], "cards": [vote_face(c) for c in shown], "outcome": outcome}
    s.effects.append({"type": "vote", **s.last_vote, "private": private})
    kind, caller = vote["kind"], vote["caller"]
    if kind == "attack" and outcome == "success":
        if loot_options(s, caller):
            s.queue.insert(0, {"kind": "loot", "player": caller})
        else:
            s.effects.append({"type": "loot", "player": caller, "took": None})
    elif kind == "mutiny" and outcome == "success" and s.ships[vote["ship"]]:
        maroon(s, s.ships[vote["ship"]][0], "mutiny")
    elif kind == "brawl":
        total = s.loose + sum(s.holds["tortuga"].values())
        split = {"british": (total, 0), "french": (0, total), "tie": (total - total // 2, total // 2)}
        s.holds["tortuga"] = dict(zip(HOLDS, split[outcome]))
        s.loose = 0


def loot_options(s: State, captain: str) -> list[str]:
    """Where a successful attack's treasure may come from and go: the galleon while it has
    any, else any pirate ship's hold (into the attacker's own ship)."""
    where, own = s.place_of(captain)
    if where != "ship":
        return []
    if s.galleon:
        return [f"stow {h}" for h in HOLDS]
    return [f"steal {ship} {src} to {dst}" for ship in SHIPS for src in HOLDS for dst in HOLDS
            if s.holds[ship][src] and not (ship == own and src == dst)]


def do_loot(s: State, captain: str, words: list[str]) -> None:
    _, own = s.place_of(captain)
    if words[0] == "stow":
        s.galleon -= 1
        took = "galleon"
        s.holds[own][words[1]] += 1
    else:
        _, ship, src, _, dst = words
        s.holds[ship][src] -= 1
        s.holds[own][dst] += 1
        took = f"{ship} {src}"
    s.effects.append({"type": "loot", "player": captain, "took": took, "into": f"{own} {words[-1]}"})
