"""The stand-in: who plays a seat whose player stopped answering, and how (policy v1).

A game made with ``stand_in_after`` N (``pbem new --stand-in-after 3``) hands a seat to the
stand-in after N defaults in a row for it (an ``nmr`` or a late ``default``; the default
pbem appends after an ``nmr`` does not count twice). From then on, whenever the seat owes
something, pbem answers for it at once, by the policy below, until a person takes the seat
over (``replaced``) or the player makes a valid move of their own again (a commitment that
replaces the stand-in's in a sealed step still open, or any later move).

Policy ``stand-in-v1`` (also in docs/rules.md and docs/rules-1667.md). Its only input is
the seat's own private report (``reports.private``: what the seat's player would read in
their private message; the caller hands it over as ``view``) and labelled draws from the
game's seed:
- the stand-in answers the first request the seat owes, in the order ``status`` lists;
- when that request lists its options, it takes the option numbered
  ``below("stand-in/E", len(options))`` in the listed order, E being the index of the event
  that records the move; else it plays the request's documented default;
- a sealed choice is committed with the salt ``block("stand-in-salt/E", 0)`` (32 bytes, hex)
  and revealed by pbem once every commitment is in, like a choice the judge sealed.
The replay recomputes every stand-in move once the seed is known (``check``): a move the
policy would not make fails the audit. Nothing here knows a game's rules.
"""

from __future__ import annotations

from .errors import Refused

POLICY = "stand-in-v1"
MAX_MOVES = 1000  # in one command: the game moves on with every one, so this only guards a loop


def policy(private: dict, rng, index: int) -> tuple[dict, str]:
    """(request, choice): the stand-in's answer, from the seat's private report alone."""
    request = first_owed(private)
    options = request.get("options")
    if options:
        return request, options[rng.below(f"stand-in/{index}", len(options))]
    return request, request["default"]


def salt(rng, index: int) -> str:
    return rng.block(f"stand-in-salt/{index}", 0).hex()


def first_owed(private: dict) -> dict:
    for request in private["requests"]:
        if request["sealed"] and (request.get("committed") or request.get("defaulted")):
            continue
        return request
    raise Refused(f"{private['player']} owes nothing the stand-in could answer")


def check(session, seat: str, data: dict, kind: str, view) -> None:
    """A ``commit`` or ``decide`` made ``by: stand-in``: the seat must be stood in for, and,
    when the seed is known, the move must be the policy's (``kind``: commit or decide).
    ``view(session, seat)`` is the stand-in's whole input: the seat's private report, as its
    player would read it (``reports.private``); it is asked for only when the move is checked."""
    if seat not in session.standing_in:
        after = session.meta.get("stand_in_after")
        raise Refused(f"{seat} is not played by the stand-in" + (
            f" (it takes a seat after {after} defaults in a row)" if after else
            " (this game has no stand-in: pbem new --stand-in-after N)"))
    if session.rng is None or session.state is None:
        return  # a seedless audit: checked once the seed is revealed
    index = session.seq + 1
    request, choice = policy(view(session, seat), session.rng, index)
    if kind == "decide":
        if data.get("choice") != choice or request["sealed"]:
            raise Refused(f"the stand-in's move for {seat} is {data.get('choice')!r}, but its policy "
                          f"({POLICY}) plays {choice!r} here")
        return
    from .commit import make_commitment
    expected = make_commitment(session.game_id, data["round"], data["step"], seat, choice, salt(session.rng, index))
    if not request["sealed"] or data.get("commitment") != expected:
        raise Refused(f"the stand-in's commitment for {seat} is not the one its policy ({POLICY}) makes here")


def next_move(session, view) -> tuple[str, dict, dict | None] | None:
    """The stand-in's next event for any seat it plays that owes something: (kind, data,
    held) with ``held`` the choice and salt of a sealed choice (kept by the store until the
    reveal), or None. ``view(session, seat)``: the seat's private report (as in ``check``)."""
    if not session.standing_in or session.rng is None or session.state is None or session.finished:
        return None
    for player, what, _sealed, _clock in session.owed():
        if player not in session.standing_in or what == "reveal":
            continue
        index = session.seq + 1
        request, choice = policy(view(session, player), session.rng, index)
        if request["sealed"]:
            from .commit import make_commitment
            step = session.sealed
            secret = salt(session.rng, index)
            data = {"player": player, "round": step.round, "step": step.step, "by": "stand-in",
                    "commitment": make_commitment(session.game_id, step.round, step.step, player, choice, secret)}
            return "commit", data, {"choice": choice, "salt": secret}
        return "decide", {"player": player, "round": session.state.round, "step": session.state.step,
                          "choice": choice, "by": "stand-in"}, None
    return None
