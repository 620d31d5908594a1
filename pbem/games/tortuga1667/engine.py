"""Tortuga 1667 rules: the open decisions, checking and applying choices.

The state holds a queue of open decisions; the first one is asked now (a vote asks every
voter at once, sealed). Applying a choice pops it and may queue new ones in front (a
forced pick, an event card's question, a discard); when the queue is empty the turn passes
clockwise.
"""

from __future__ import annotations

from ...text import quote
from ..base import IllegalChoice, InvalidChoice, NotYourTurn
from . import legal
from .board import board_ship, do_move, rowboat_moves
from .events import finish, reveal, swap_loyalties
from .maps import answer_atlantis_maroon, answer_fountain, give, sail, threaten
from .model import State, vote_face
from .parse import KIND_OF_WORD, canonical, first_word, why_illegal
from .setup import place
from .votes import after_atlantis, call_vote, cast, do_loot


def owed(s: State) -> list[tuple[str, str, dict]]:
    """(player, kind, queue entry) for every decision open now."""
    if s.phase == "over" or not s.queue:
        return []
    entry = s.queue[0]
    if entry["kind"] == "vote":
        return [(p, "vote", entry) for p in s.vote["voters"] if p not in s.vote["cards"]]
    return [(entry["player"], entry["kind"], entry)]


def _owed_by(s: State, player: str):
    for p, kind, entry in owed(s):
        if p == player:
            return kind, entry
    return None, None


def validate(s: State, player: str, text: str) -> tuple[str, dict, str]:
    """(kind, queue entry, canonical choice) of a legal choice, or a ChoiceError."""
    if player not in s.players:
        raise NotYourTurn(f"{quote(player)} is not a player in this game ({', '.join(s.players)})",
                          code="not-a-player")
    if not isinstance(text, str) or not text.strip():
        raise InvalidChoice("empty choice; send the choice text, e.g. peek 1,2")
    kind, entry = _owed_by(s, player)
    if kind is None:
        waiting = ", ".join(f"{p} ({k})" for p, k, _ in owed(s))
        raise NotYourTurn(f"it is not {player}'s turn: {player} owes no choice now; waiting for "
                          f"{waiting or 'nobody: the game is over'}")
    if legal.is_option(s, player, kind, entry, text):
        return kind, entry, text  # already canonical: every option is its own canonical form (tested)
    opts = legal.options(s, player, kind, entry)
    word = first_word(text)
    wanted = KIND_OF_WORD.get(word)
    if kind == "loot" and word == "stow":
        wanted = "loot"
    if kind == "action" and word == "atlantis":
        wanted = "action"  # Atlantis on one's own turn: an option of the action
    if wanted != kind:
        if wanted is not None:
            raise NotYourTurn(f"{player} owes a {kind} choice now, not {word}; legal: {legal.describe(opts)}")
        raise InvalidChoice(f"not understood: {quote(text.strip())}; {legal.SYNTAX[kind]}; "
                            f"legal: {legal.describe(opts)}", tuple(opts))
    rowboats = rowboat_moves(s, player) if kind == "action" else []
    try:
        choice = canonical(s, word, text, rowboats)
    except InvalidChoice as exc:
        raise InvalidChoice(f"{exc}; legal: {legal.describe(opts)}", tuple(opts), exc.code) from None
    if choice not in opts:
        code, why = why_illegal(s, player, kind, choice)
        raise IllegalChoice(f"illegal: {choice}: {why}; legal: {legal.describe(opts)}", tuple(opts), code)
    return kind, entry, choice


def check(s: State, player: str, text: str) -> str:
    """The canonical form of a legal choice, or a ChoiceError saying what is allowed."""
    return validate(s, player, text)[2]


def apply(state: State, player: str, text: str, rng) -> State:
    """A new state with the choice applied; ``state`` itself is left unchanged."""
    kind, entry, choice = validate(state, player, text)
    s = state._next()  # a copy on write with no effects yet
    w = choice.split()
    if kind == "vote":
        s.effects.append({"type": "voted", "player": player})
        cast(s, player, [int(x) - 1 for x in w[1].split(",")], rng)
    else:
        s.queue.pop(0)
        HANDLERS[kind](s, player, w, entry, rng)
    _advance(s)
    return s._close()


# ----------------------------------------------------------------------------- handlers

def _stow(s, player, w, entry, rng):
    s.holds[entry["ship"]][w[1]] += 1
    s.effects.append({"type": "stow", "player": player, "ship": entry["ship"], "hold": w[1]})


def _action(s, player, w, entry, rng):
    verb = w[0]
    s.effects.append({"type": "action", "player": player, "choice": " ".join(w)})
    if verb == "peek":
        picked = [int(x) for x in w[1].split(",")]
        cards = [s.row[x - 1] for x in picked]
        for x, card in zip(picked, cards):
            s.seen[player].append({"card": card, "slot": x, "turn": s.turn_no, "shuffle": s.shuffles})
        s.effects.append({"type": "peek", "player": player, "slots": picked,
                          "private": {player: {"cards": [s.events[c] for c in cards]}}})
    elif verb == "reveal":
        reveal(s, player, int(w[1]) - 1, rng)
    elif verb == "force":
        pair = [int(x) for x in w[2].split(",")]
        s.queue.insert(0, {"kind": "pick", "player": w[1], "slots": pair, "by": player})
    elif verb == "move":
        do_move(s, player, w[1:] if w[1] != "rowboat" else ["rowboat", w[2]])
    elif verb in ("attack", "mutiny", "brawl"):
        call_vote(s, verb, player, rng)
    elif verb == "maroon":
        threaten(s, w[1], "captain", by=player)
    elif verb == "atlantis":
        # RULING atlantis-own-turn: not an action; the owner is asked for their action again
        sail(s, player)
        s.queue.insert(0, {"kind": "action", "player": player})
    elif verb == "shift":
        _, ship = s.place_of(player)
        s.holds[ship][w[1]] -= 1
        s.holds[ship][w[3]] += 1


def _pick(s, player, w, entry, rng):
    reveal(s, player, int(w[1]) - 1, rng)


def _loot(s, player, w, entry, rng):
    do_loot(s, player, w)


def _shoot(s, player, w, entry, rng):
    s.effects.append({"type": "shot", "player": player, "target": w[1]})
    threaten(s, w[1], "pistol", by=player)


def _marque(s, player, w, entry, rng):
    if w[1] == "draw":
        card = s.vote_deck.pop(0)
        s.hands[player] = s.hands[player] + [card]
        s.queue.insert(0, {"kind": "top", "player": player, "drawn": card})
        s.effects.append({"type": "marque-draw", "player": player,
                          "private": {player: {"drew": vote_face(card)}}})
    else:
        board_ship(s, w[2], w[3], "marque")


def _top(s, player, w, entry, rng):
    card = s.hands[player].pop(int(w[1]) - 1)
    s.vote_deck.insert(0, card)
    s.effects.append({"type": "marque-top", "player": player,
                      "private": {player: {"card": vote_face(card)}}})


def _fever(s, player, w, entry, rng):
    swap_loyalties(s, player, w[1], rng)


def _discard(s, player, w, entry, rng):
    card = s.hands[player].pop(int(w[1]) - 1)
    s.vote_deck.append(card)
    s.effects.append({"type": "discard", "player": player, "private": {player: {"card": vote_face(card)}}})


def _give(s, player, w, entry, rng):
    give(s, player, w[1], entry["card"])


def _fountain(s, player, w, entry, rng):
    answer_fountain(s, player, " ".join(w), entry)


def _atlantis(s, player, w, entry, rng):
    if entry["why"] == "vote":
        after_atlantis(s, player, w[1] == "go", rng)
    else:
        answer_atlantis_maroon(s, player, " ".join(w), entry)


def _place(s, player, w, entry, rng):
    place(s, player, w[1:], rng)


HANDLERS = {"stow": _stow, "action": _action, "pick": _pick, "loot": _loot, "shoot": _shoot,
            "marque": _marque, "top": _top, "fever": _fever, "discard": _discard, "give": _give,
            "fountain": _fountain, "atlantis": _atlantis, "place": _place}


def _advance(s: State) -> None:
    """After a choice: end a tie-break once a team leads; pass the turn when nothing is open."""
    if s.phase == "sudden":
        totals = s.team_totals()
        if totals["british"] != totals["french"]:
            finish(s, "british" if totals["british"] > totals["french"] else "french")
        elif not s.queue and not legal.slots(s):
            finish(s, "draw")  # RULING tie-break-draw
    if s.phase == "over" or s.queue:
        return
    s.turn = (s.turn + 1) % s.n
    s.turn_no += 1
    s.queue.append({"kind": "action", "player": s.players[s.turn]})
