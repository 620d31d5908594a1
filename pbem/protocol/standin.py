"""The stand-in: who plays a seat whose player stopped answering, and how (policies v1, v2).

A game made with ``stand_in_after`` N (``pbem new --stand-in-after 3``) hands a seat to the
stand-in after N defaults in a row for it (an ``nmr`` or a late ``default``; the default
pbem appends after an ``nmr`` does not count twice). From then on, whenever the seat owes
something, pbem answers for it at once, by the game's policy, until a person takes the seat
over (``replaced``), the player makes a valid move of their own again (a commitment that
replaces the stand-in's in a sealed step still open, or any later move), or a
``stand_in_ended`` event hands it back (the player's ``back`` by mail, the moderator's
``pbem back``; seats.py).

The policy is named in ``created`` (``stand_in_policy``; a log without it uses
``stand-in-v1``, the only policy before v2). Both are in docs/rules.md and
docs/rules-1667.md. Their only input is the seat's own private report
(``reports.private``: what the seat's player would read in their private message; the
caller hands it over as ``view``) and labelled draws from the game's seed:
- the stand-in answers the first request the seat owes, in the order ``status`` lists;
- v1: when that request lists its options, it takes the option numbered
  ``below("stand-in/E", len(options))``, E being the index of the event that records the
  move; else it plays the request's documented default. The judge can move E (any harmless
  event before the move shifts it), so v1 is kept only to replay the logs that use it;
- v2: the label names what the move answers, never where it lands in the log: the request
  ``R/S/P/K/H`` (round, step, seat with ``%`` and ``/`` percent-encoded, kind, ``sealed`` or
  ``open``: a Tortuga seat may owe both a sealed and an open ``select`` in one step), drawn as
  ``below("stand-in-v2/R/S/P/K/H", n)`` among the listed options or, when a request has too
  many to list, among all of them (``all_options``); the default only when neither exists;
- a sealed choice is committed with the salt ``block("stand-in-salt/E", 0)`` (v1) or
  ``block("stand-in-v2-salt/R/S/P/K/H", 0)`` (v2), 32 bytes, hex, and revealed by pbem once
  every commitment is in, like a choice the judge sealed.
The replay recomputes every stand-in move once the seed is known (``check``): a move the
policy would not make fails the audit. Nothing here knows a game's rules.
"""

from __future__ import annotations

from .errors import Refused

V1, V2 = "stand-in-v1", "stand-in-v2"
POLICIES = (V1, V2)
POLICY = V2  # the policy of new games
MAX_MOVES = 1000  # in one command: the game moves on with every one, so this only guards a loop


def policy_of(meta: dict) -> str:
    """The stand-in policy a game's ``created`` names (v1 when it names none)."""
    return meta.get("stand_in_policy", V1)


def check_policy(meta: dict) -> None:
    if "stand_in_policy" in meta and meta["stand_in_policy"] not in POLICIES:
        raise Refused(f"unknown stand-in policy {meta['stand_in_policy']!r}; this pbem knows {', '.join(POLICIES)}")


def _escape(name: str) -> str:
    return name.replace("%", "%25").replace("/", "%2F")


def labels(version: str, private: dict, request: dict, index: int) -> tuple[str, str]:
    """(the choice's label, the salt's label) for the stand-in's answer to ``request``."""
    if version == V1:
        return f"stand-in/{index}", f"stand-in-salt/{index}"
    what = (f"{request['round']}/{request['step']}/{_escape(private['player'])}/{request['kind']}/"
            f"{'sealed' if request['sealed'] else 'open'}")
    return f"stand-in-v2/{what}", f"stand-in-v2-salt/{what}"


def policy(private: dict, rng, index: int, version: str = V1) -> tuple[dict, str, str]:
    """(request, choice, salt label): the stand-in's answer, from the seat's private report
    alone (``index``: the event's, read by v1 only)."""
    request = first_owed(private)
    choice_label, salt_label = labels(version, private, request, index)
    options = request.get("options") or (request.get("all_options") if version != V1 else None)
    if options:
        return request, options[rng.below(choice_label, len(options))], salt_label
    return request, request["default"], salt_label


def salt(rng, label: str) -> str:
    return rng.block(label, 0).hex()


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
    version = policy_of(session.meta)
    request, choice, salt_label = policy(view(session, seat), session.rng, session.seq + 1, version)
    if kind == "decide":
        if data.get("choice") != choice or request["sealed"]:
            raise Refused(f"the stand-in's move for {seat} is {data.get('choice')!r}, but its policy "
                          f"({version}) plays {choice!r} here")
        return
    from .commit import make_commitment
    expected = make_commitment(session.game_id, data["round"], data["step"], seat, choice, salt(session.rng, salt_label))
    if not request["sealed"] or data.get("commitment") != expected:
        raise Refused(f"the stand-in's commitment for {seat} is not the one its policy ({version}) makes here")


def next_move(session, view) -> tuple[str, dict, dict | None] | None:
    """The stand-in's next event for any seat it plays that owes something: (kind, data,
    held) with ``held`` the choice and salt of a sealed choice (kept by the store until the
    reveal), or None. ``view(session, seat)``: the seat's private report (as in ``check``)."""
    if not session.standing_in or session.rng is None or session.state is None or session.finished:
        return None
    for player, what, _sealed, _clock in session.owed():
        if player not in session.standing_in or what == "reveal":
            continue
        request, choice, salt_label = policy(view(session, player), session.rng, session.seq + 1,
                                             policy_of(session.meta))
        if request["sealed"]:
            from .commit import make_commitment
            step = session.sealed
            secret = salt(session.rng, salt_label)
            data = {"player": player, "round": step.round, "step": step.step, "by": "stand-in",
                    "commitment": make_commitment(session.game_id, step.round, step.step, player, choice, secret)}
            return "commit", data, {"choice": choice, "salt": secret}
        return "decide", {"player": player, "round": session.state.round, "step": session.state.step,
                          "choice": choice, "by": "stand-in"}, None
    return None
