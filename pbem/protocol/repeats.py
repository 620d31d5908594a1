"""Telling a repeat from a new submission: the same thing sent twice is recorded once.

A mail may be processed twice, and a reply may quote the player's earlier block next to a
new one. A submission that is exactly what the log already holds changes nothing and is
reported as already recorded; anything else takes the normal path (and may be refused).
The same, for each kind (docs/protocol.md §10):

- a signed block: its nonce was used by a recorded event of the same kind, player, round,
  step, fields and signature (a used nonce on anything else stays a refused replay);
- a commitment: the player's last commitment for its round and step (with no step given,
  for whichever step the player made it);
- a reveal: a recorded reveal of the player with the same salt and choice (in an anonymous
  step, a reveal the judge holds: ``reveal_held`` in the log, the reveal in the store);
- a decision: a recorded decision of the player with the same choice in that round and
  step (with no step given: any of the player's decisions in the current round), unless
  the game would take it as a new decision now.

Choices are compared without regard to spaces and case, as the games read them. The log
is read only when the current state cannot settle the question, and then once per command.
"""

from __future__ import annotations

from collections import defaultdict

from ..games.base import ChoiceError
from .commit import commitment_matches, parse_salt

FIELDS = {"commit": ("commitment",), "reveal": ("choice", "salt"), "decide": ("choice",)}


def same_choice(a, b) -> bool:
    return isinstance(a, str) and isinstance(b, str) and "".join(a.split()).casefold() == "".join(b.split()).casefold()


class Log:
    """The game's recorded submissions, read from the store on first use and kept up to
    date with the events a command appends (a text may hold the same block twice)."""

    def __init__(self, store, game_id: str):
        self.store, self.game_id = store, game_id
        self.seen = None  # seq of the last event read
        self.by_key = defaultdict(list)  # (kind, player, round, step) -> [(seq, data)], in order
        self.by_nonce = {}  # nonce -> (kind, seq, data)

    def _read(self) -> None:
        if self.seen is not None and self.store.head(self.game_id)[0] == self.seen:
            return
        for ev in self.store.events(self.game_id, after=self.seen or 0):
            self.seen = ev.seq
            data = ev.data
            if ev.kind == "reveal_held":
                self.by_key[("reveal_held", data.get("player"), data.get("round"), data.get("step"))].append((ev.seq, data))
            if ev.kind not in FIELDS:
                continue
            self.by_key[(ev.kind, data.get("player"), data.get("round"), data.get("step"))].append((ev.seq, data))
            if data.get("signature") is not None and isinstance(data.get("nonce"), str):
                self.by_nonce[data["nonce"]] = (ev.kind, ev.seq, data)

    def of(self, kind: str, player: str, round_step=None) -> list[tuple[int, dict]]:
        """The player's recorded submissions of ``kind`` (in that round and step), oldest first."""
        self._read()
        if round_step is not None:
            return list(self.by_key.get((kind, player, *round_step), ()))
        found = [item for key, items in self.by_key.items() if key[:2] == (kind, player) for item in items]
        return sorted(found, key=lambda item: item[0])

    def signed(self, kind: str, data: dict):
        self._read()
        return self.by_nonce.get(data.get("nonce"))


def recorded(kind: str, data: dict) -> dict:
    """What a repeat reports: the recorded submission it repeats."""
    out = {"kind": kind, "player": data["player"], "round": data["round"], "step": data["step"],
           "already_recorded": True}
    if kind != "commit":
        out["applied"] = data.get("applied")
    if kind == "reveal":
        out["illegal"] = data.get("illegal")
    return out


def find(session, log: Log, kind: str, data: dict, round_step=None) -> dict | None:
    """The recorded submission that ``data`` (a commit, reveal or decide of one player)
    repeats exactly, or None. ``round_step`` is the step the sender named, if any."""
    if data.get("signature") is not None:
        if data.get("nonce") not in session.nonces:
            return None  # a fresh signed block is new, even with the same contents
        hit = log.signed(kind, data) or (_held_reveals(session, log, data["player"], data.get("round"),
                                                        data.get("step")) if kind == "reveal" else None)
        if hit is None:
            return None
        was_kind, seq, was = hit
        same = was_kind == kind and all(was.get(k) == data.get(k) for k in ("player", "nonce", "signature", *FIELDS[kind])) \
            and all(was.get(k) == data[k] for k in ("round", "step") if data.get(k) is not None)
        if same and was.get("held"):
            return _recorded_held(was)
        return recorded(kind, was) if same else None
    player = data["player"]
    if kind == "commit":
        return _commit(session, log, player, data["commitment"], round_step)
    if kind == "reveal":
        return _reveal(session, log, player, data["choice"], data["salt"], round_step)
    return _decision(session, log, player, data["choice"], round_step)


def _commit(session, log: Log, player: str, commitment: str, round_step):
    commitment = commitment.strip().lower()
    step = session.sealed
    open_key = (step.round, step.step) if step is not None else None
    if open_key is not None and (round_step or open_key) == open_key:
        mine = step.commits.get(player)
        if mine is not None and mine["commitment"] == commitment:
            return recorded("commit", {"player": player, "round": step.round, "step": step.step})
        if round_step is not None:
            return None  # a new commitment for the open step, or one replacing the player's own
    # A commitment binds its step: one made for an earlier step is that one again.
    for seq, was in reversed(log.of("commit", player, round_step)):
        if str(was.get("commitment")).strip().lower() == commitment:
            last = log.of("commit", player, (was["round"], was["step"]))[-1]
            return recorded("commit", was) if last[0] == seq else None
    return None


def _reveal(session, log: Log, player: str, choice: str, salt: str, round_step):
    step = session.sealed
    if (step is not None and (round_step or (step.round, step.step)) == (step.round, step.step)
            and step.all_committed and player in step.owes_reveal() and player in step.commits
            and _matches(session, step, player, choice, salt)):
        return None  # the reveal the open step waits for
    salt = salt.strip().lower()
    for seq, was in reversed(log.of("reveal", player, round_step)):
        if str(was.get("salt")).strip().lower() == salt and same_choice(was.get("choice"), choice):
            return recorded("reveal", was)
    for seq, was in reversed(log.of("reveal_held", player, round_step)):
        held = session.held.get(was["round"], was["step"], player) if session.held is not None else None
        if held and str(held.get("salt")).strip().lower() == salt and same_choice(held.get("choice"), choice):
            return _recorded_held(was)
    return None


def _recorded_held(was: dict) -> dict:
    """A repeat of a held reveal: what was played stays with the judge."""
    return {"kind": "reveal", "player": was["player"], "round": was["round"], "step": was["step"],
            "already_recorded": True, "held": True}


def _held_reveals(session, log: Log, player: str, round_, step):
    """A signed reveal the judge holds, with the nonce of ``data``: as ``Log.signed`` finds
    public ones, (kind, seq, the held submission with the log's round and step)."""
    if session.held is None:
        return None
    round_step = (round_, step) if round_ is not None and step is not None else None
    for seq, was in reversed(log.of("reveal_held", player, round_step)):
        held = session.held.get(was["round"], was["step"], player)
        if held and held.get("signature") is not None:
            return "reveal", seq, {**held, "player": player, "round": was["round"], "step": was["step"], "held": True}
    return None


def _matches(session, step, player: str, choice: str, salt: str) -> bool:
    try:
        salt_hex = parse_salt(salt)
        spellings = {choice, session.rules.normalize(step.kind, choice)}
    except (ValueError, ChoiceError):
        return False
    return any(commitment_matches(step.commits[player]["commitment"], session.game_id, step.round, step.step,
                                  player, spelling, salt_hex) for spelling in spellings)


def _decision(session, log: Log, player: str, choice: str, round_step):
    if decision_fits_now(session, player, choice, round_step):
        return None  # a new decision, even if the player once made the same one
    found = log.of("decide", player, round_step)
    if round_step is None and session.state is not None:
        # without a round named, only this round's decisions: one made in an earlier round
        # (a turn, in some games), sent again now, is no repeat but a decision out of turn
        found = [(seq, was) for seq, was in found if was.get("round") == session.state.round]
    for seq, was in reversed(found):
        if same_choice(was.get("choice"), choice) or same_choice(was.get("applied"), choice):
            return recorded("decide", was)
    return None


def decision_fits_now(session, player: str, choice: str, round_step=None) -> bool:
    """Would the game take this decision now (state, step and rules; not the signature)?"""
    state = session.state
    if state is None or session.seed_revealed or session.finished:
        return False
    if (round_step or (state.round, state.step)) != (state.round, state.step):
        return False
    if any(r.sealed for r in session.requests_of(player)):
        return False
    try:
        session.check(player, choice)
    except ChoiceError:
        return False
    return True
