"""Reading a typed choice (lenient: any case, commas or spaces) into its canonical text.

Parsing only checks the shape; whether the choice is allowed now is decided by comparing
the canonical text with the legal options (``legal.options``).
"""

from __future__ import annotations

import unicodedata

from ...text import quote
from ..base import InvalidChoice
from .model import HOLDS, SHIPS, State
from .setup import fold

ACTION_WORDS = {"peek", "reveal", "force", "move", "attack", "maroon", "mutiny", "shift", "brawl"}
KIND_OF_WORD = {w: "action" for w in ACTION_WORDS}
KIND_OF_WORD.update({"pick": "pick", "vote": "vote", "stow": "stow", "steal": "loot",
                     "shoot": "shoot", "marque": "marque", "top": "top", "fever": "fever",
                     "discard": "discard", "give": "give", "fountain": "fountain",
                     "atlantis": "atlantis", "place": "place"})
SHIP_ALIASES = {"dutchman": "dutchman", "flyingdutchman": "dutchman", "fd": "dutchman",
                "jolly": "jolly", "jollyroger": "jolly", "roger": "jolly", "jr": "jolly"}


def words(text: str) -> list[str]:
    return unicodedata.normalize("NFKC", text).replace(",", " ").split()


def first_word(text: str) -> str:
    w = words(text)
    return w[0].casefold() if w else ""


class _Reader:
    def __init__(self, s: State, text: str):
        self.s, self.text = s, text.strip()
        self.rest = words(text)[1:]

    def bad(self, what: str, code: str = "syntax") -> InvalidChoice:
        return InvalidChoice(f"not understood: {quote(self.text)}: {what}", code=code)

    def count(self, n: int, what: str) -> None:
        if len(self.rest) != n:
            raise self.bad(f"expected {what}")

    def number(self, token: str) -> int:
        if not token.isdecimal() or len(token) > 3:
            raise self.bad(f"{quote(token)} is not a number")
        return int(token)

    def player(self, token: str) -> str:
        for p in self.s.players:
            if fold(p) == fold(token):
                return p
        raise self.bad(f"no player {quote(token)}; players: {', '.join(self.s.players)}", "unknown-player")

    def hold(self, token: str) -> str:
        t = token.casefold()
        if t not in HOLDS:
            raise self.bad(f"{quote(token)} is not a hold; holds: british, french")
        return t

    def ship(self, token: str) -> str:
        t = token.casefold().replace("-", "").replace("_", "")
        if t not in SHIP_ALIASES:
            raise self.bad(f"{quote(token)} is not a ship; ships: dutchman, jolly")
        return SHIP_ALIASES[t]


def canonical(s: State, word: str, text: str, rowboats: list[str]) -> str:
    """The canonical text of a choice starting with ``word``; InvalidChoice if malformed.
    ``rowboats`` are the legal rowboat moves, which make a bare ``move rowboat`` precise."""
    r = _Reader(s, text)
    rest = r.rest
    if word in ("attack", "mutiny", "brawl"):
        r.count(0, f"{word} alone")
        return word
    if word == "peek":
        r.count(2, "two slots, e.g. peek 2,4")
        a, b = sorted(r.number(x) for x in rest)
        return f"peek {a},{b}"
    if word == "vote" and len(rest) == 2:  # two cards: only with El Dorado
        a, b = sorted(r.number(x) for x in rest)
        return f"vote {a},{b}"
    if word in ("reveal", "pick", "vote", "top", "discard"):
        r.count(1, f"one number, e.g. {word} 2")
        return f"{word} {r.number(rest[0])}"
    if word == "force":
        r.count(3, "a player and two slots, e.g. force bob 1,5")
        return f"force {r.player(rest[0])} {r.number(rest[1])},{r.number(rest[2])}"
    if word in ("fountain", "atlantis"):
        answers = {"fountain": ("use", "keep"), "atlantis": ("go", "stay")}[word]
        if len(rest) != 1 or rest[0].casefold() not in answers:
            raise r.bad(f"expected {word} {answers[0]} or {word} {answers[1]}")
        return f"{word} {rest[0].casefold()}"
    if word == "place":
        if len(rest) == 1 and rest[0].casefold() == "tortuga":
            return "place tortuga"
        r.count(2, "place SHIP N (N: a place 1-5) or place tortuga")
        return f"place {r.ship(rest[0])} {r.number(rest[1])}"
    if word in ("maroon", "shoot", "fever", "give"):
        r.count(1, f"one player, e.g. {word} {s.players[0]}")
        return f"{word} {r.player(rest[0])}"
    if word == "move":
        if not rest:
            raise r.bad("expected where to: move rowboat, move SHIP or move tortuga")
        to = rest[0].casefold()
        if to == "rowboat":
            if len(rest) == 2:
                return f"move rowboat {r.ship(rest[1])}"
            r.count(1, "move rowboat, or move rowboat SHIP from Tortuga")
            return rowboats[0] if len(rowboats) == 1 else "move rowboat"
        r.count(1, "one place: move SHIP or move tortuga")
        return "move tortuga" if to == "tortuga" else f"move {r.ship(rest[0])}"
    if word == "shift":
        if len(rest) == 1 or (len(rest) == 3 and rest[1].casefold() == "to"):
            src = r.hold(rest[0])
            dst = r.hold(rest[2]) if len(rest) == 3 else next(h for h in HOLDS if h != src)
            return f"shift {src} to {dst}"
        raise r.bad("expected shift HOLD (to HOLD), e.g. shift british")
    if word == "stow":
        r.count(1, "one hold: stow british or stow french")
        return f"stow {r.hold(rest[0])}"
    if word == "steal":
        if len(rest) == 4 and rest[2].casefold() == "to":
            return f"steal {r.ship(rest[0])} {r.hold(rest[1])} to {r.hold(rest[3])}"
        raise r.bad("expected steal SHIP HOLD to HOLD, e.g. steal dutchman french to british")
    if word == "marque":
        if rest and rest[0].casefold() == "draw" and len(rest) == 1:
            return "marque draw"
        if len(rest) == 3 and rest[0].casefold() == "send":
            return f"marque send {r.player(rest[1])} {r.ship(rest[2])}"
        raise r.bad("expected marque draw, or marque send PLAYER SHIP")
    raise AssertionError(word)


def why_illegal(s: State, player: str, kind: str, choice: str) -> tuple[str, str]:
    """(code, reason) for a well-formed choice that is not among the legal options."""
    w = choice.split()
    needs = {"attack": "captain", "maroon": "captain", "mutiny": "mate", "shift": "boy",
             "brawl": "governor"}
    titles = {"captain": "a captain", "mate": "a first mate", "boy": "a cabin boy",
              "governor": "the governor of Tortuga"}
    if kind == "action" and w[0] in needs and needs[w[0]] not in s.ranks(player):
        return "no-rank", f"only {titles[needs[w[0]]]} may {w[0]}"
    if w[0] in ("peek", "force") and len([c for c in s.row if c is not None]) < 2:
        return "row-short", "only one card is left in the row: reveal it"
    if w[0] in ("peek", "reveal", "force", "pick"):
        nums = [int(x) for x in w[-1].replace(",", " ").split()] if w[0] != "force" else \
            [int(x) for x in w[2].split(",")]
        if w[0] == "force" and w[1] == player:
            return "force-self", "you cannot force yourself"
        if len(set(nums)) < len(nums):
            return "same-slot", "name two different slots"
        empty = [x for x in nums if not 1 <= x <= len(s.row) or s.row[x - 1] is None]
        if empty:
            return "empty-slot", f"slot {empty[0]} holds no card"
    if w[0] == "vote" and "," in w[1]:
        a, b = (int(x) for x in w[1].split(","))
        if s.holds_map(player, "eldorado") is None:
            return "no-map", "two cards need El Dorado, which you do not own"
        if a == b:
            return "same-slot", "name two different cards"
    if w[0] in ("vote", "top", "discard"):
        return "no-such-card", f"your hand has {len(s.hands[player])} card(s)"
    if w[0] == "atlantis" and s.holds_map(player, "atlantis") is None:
        return "no-map", "you do not own Atlantis"
    if w[0] == "atlantis":
        return "no-way", "Atlantis carries a pawn only from a ship to the other ship, if it has room"
    if w[0] == "place" and w[1] != "tortuga":
        if not 1 <= int(w[2]) <= 5:
            return "no-way", "a ship has places 1 to 5"
        return "no-way", f"place {w[2]} on that ship is taken"
    if w[0] == "move":
        return "no-way", "you cannot move there now"
    if w[0] in ("give", "fever") and len(w) > 1 and w[1] == player:
        return "not-allowed", "choose another player, not yourself"
    if w[0] == "maroon" and len(w) > 1:
        if w[1] == player:
            return "not-allowed", "a captain maroons a member of their crew, never themself"
        return "not-allowed", f"{w[1]} is not in your crew"
    return "not-allowed", "not allowed now"
