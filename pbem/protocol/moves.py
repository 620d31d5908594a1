"""The events of play: commit, nmr, reveal, default and decide, and the sealed step they fill.

``Moves`` is one of the parts of ``Session`` (session.py): its ``_on_<kind>`` methods are
the rules of these events, the same when a command is about to write one and when
``audit`` replays the log. Without the seed the state is unknown and they hand the event
to the seedless checks (seedless.py). A move ``by: stand-in`` is checked against the
stand-in's policy (standin.py), which is given the seat's private report (reports.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..games.base import ChoiceError
from ..text import quote, shorten
from .commit import commitment_matches, parse_commitment, parse_salt
from .errors import Refused

SIGNED_KINDS = ("commit", "reveal", "decide")


@dataclass
class SealedStep:
    """The sealed step being collected: who it waits for and what has come in."""

    round: int
    step: int
    waiting: tuple[str, ...]
    commits: dict = field(default_factory=dict)  # player -> {"commitment", "by"}
    defaulted: set = field(default_factory=set)  # players marked NMR in the commit phase
    revealed: set = field(default_factory=set)
    kind: str = "select"  # the request kind the game seals (its name is the game's)
    anonymous: bool = False  # reveals are held by the judge until the batch (anonymous.py)
    held: dict = field(default_factory=dict)  # anonymous: player -> what was revealed (private)

    @property
    def all_committed(self) -> bool:
        return all(p in self.commits or p in self.defaulted for p in self.waiting)

    def owes_commit(self) -> list[str]:
        return [p for p in self.waiting if p not in self.commits and p not in self.defaulted]

    def owes_reveal(self) -> list[str]:
        return [p for p in self.waiting if p not in self.revealed]


def signed_body(game_id: str, kind: str, data: dict) -> dict:
    """The object a player signs for a commit, reveal or decide (see docs/protocol.md)."""
    fields = {"commit": ("commitment",), "reveal": ("choice", "salt"), "decide": ("choice",)}[kind]
    body = {"v": 1, "game": game_id, "kind": kind, "player": data["player"],
            "round": data["round"], "step": data["step"], "nonce": data["nonce"]}
    for name in fields:
        body[name] = data[name]
    return body


class Moves:
    """The rules of the events of play (a part of ``Session``)."""

    def _open_sealed(self) -> None:
        sealed = [r for r in self.pending() if r.sealed]
        if not sealed:
            self.sealed = None
            return
        key = (sealed[0].round, sealed[0].step)
        if self.sealed is None or (self.sealed.round, self.sealed.step) != key:
            self.sealed = SealedStep(key[0], key[1], tuple(r.player for r in sealed), kind=sealed[0].kind,
                                     anonymous=sealed[0].anonymous)

    def _check_signature(self, kind: str, data: dict, by: str = "player", record: bool = True) -> None:
        """The signature rule, the same live and on audit. ``by`` is who made the sealed
        choice (the commitment's maker, for a reveal): the player, or the moderator who
        sealed a choice sent privately (never allowed in a signed game)."""
        signed_game = bool(self.meta.get("require_signatures"))
        if by == "stand-in" and data.get("by") == by:
            if data.get("signature") is not None:
                raise Refused(f"a {kind} made by the stand-in carries no signature")
            return  # its policy binds it instead (standin.py)
        if data.get("by", "player") != by:
            raise Refused(f"this {kind} says it was made by the {quote(data.get('by'))}, but the commitment was made by the {by}")
        if signed_game and by == "moderator":
            raise Refused(f"this game requires signed submissions, so the moderator cannot seal for "
                          f"{data['player']}; {data['player']} seals and signs: pbem seal --context TOKEN CHOICE --key FILE")
        signature = data.get("signature")
        if signature is None:
            if signed_game and by == "player":
                how = ("pbem decide --context TOKEN CHOICE --key FILE" if kind == "decide"
                       else "pbem seal --context TOKEN CHOICE --key FILE")
                raise Refused(f"this game requires signed submissions: the player makes a signed block with {how}")
            return
        from .signing import verify
        player = data["player"]
        if player not in self.keys:
            raise Refused(f"{player} has no registered key in this game, so a signed block cannot be checked; "
                          f"send the choice unsigned (keys can only be registered before play starts)")
        nonce = data.get("nonce")
        if not isinstance(nonce, str) or not 1 <= len(nonce) <= 64:
            raise Refused("a signed submission needs a nonce of 1 to 64 characters")
        if nonce in self.nonces:
            raise Refused(f"this signed {kind} was already used (replayed submission); sign a fresh one")
        if not verify(self.keys[player], signed_body(self.game_id, kind, data), signature):
            raise Refused(f"the signature on {player}'s {kind} is not valid for their registered key")
        if record:  # (not for a reveal sent early: its nonce is spent when it is recorded)
            self.nonces.add(nonce)

    def _need_state(self) -> None:
        if self.seed_revealed or self.disclosed:  # anyone could now predict every later roll and draw
            raise Refused(f"the server seed of game {self.game_id} is published, so it takes no more moves")
        if not self.started:
            raise Refused(f"game {self.game_id} has not started yet (pbem start)")
        if self.state is not None and self.finished:
            raise Refused(f"game {self.game_id} is over")

    def _sealed_for(self, data: dict, what: str) -> SealedStep:
        step = self.sealed
        if step is None:
            raise Refused(f"no sealed step is open now, so no {what} is expected")
        player = self.player(data["player"])
        if (data["round"], data["step"]) != (step.round, step.step):
            raise Refused(f"this {what} is for round {shorten(data['round'])} step {shorten(data['step'])}, "
                          f"but the open sealed step is round {step.round} step {step.step}")
        if player not in step.waiting:
            raise Refused(f"{player} takes no part in sealed step {step.round}.{step.step} "
                          f"(waiting for: {', '.join(step.waiting)})")
        return step

    def _on_commit(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            return self._public("commit", data)
        step = self._sealed_for(data, "commitment")
        player = data["player"]
        if step.all_committed:
            raise Refused(f"all commitments of step {step.round}.{step.step} are in; "
                          f"commitments can no longer be made or replaced, send the reveal")
        if player in step.defaulted:
            raise Refused(f"{player} was already defaulted (NMR) in this step")
        try:
            commitment = parse_commitment(data["commitment"])
        except ValueError as exc:
            raise Refused(str(exc)) from None
        if commitment in {c["commitment"] for p, c in step.commits.items() if p != player}:
            raise Refused("this commitment was already made by another player; seal your own choice")
        by = data.get("by", "player")
        if by == "stand-in":
            from .reports import private
            from .standin import check
            check(self, player, data, "commit", private)
        elif by not in ("player", "moderator"):
            raise Refused(f"a commitment is made by the player, the moderator or the stand-in, not {quote(by)}")
        self._check_signature("commit", data, by)
        step.commits[player] = {"commitment": commitment, "by": by}
        self.orphaned.discard((player, step.round, step.step))  # a new commitment replaces the former player's
        if by != "stand-in":
            self._came_back(player)

    def _on_nmr(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            self._check_recorded_deadline((data.get("player"), None, None, None), at, data)
            return self._public("nmr", data)
        step = self._sealed_for(data, "default")
        player = data["player"]
        # a commitment its former person sealed at home and left with (the seat was replaced):
        # the moderator may default it before every commitment is in (docs/protocol.md §16)
        orphan = (player, step.round, step.step) in self.orphaned and not step.all_committed
        if (player in step.commits and not orphan) or player in step.defaulted or step.all_committed:
            raise Refused(f"{player} owes no commitment in step {step.round}.{step.step}")
        if orphan and data.get("forced") is not True:
            raise Refused(f"{player}'s commitment was sealed by the seat's former player: only a forced default "
                          f"(pbem nmr {self.game_id} {player} --force) settles it before every commitment is in")
        self._check_deadline((player, step.round, step.step, step.kind), at, data)
        step.commits.pop(player, None)
        step.defaulted.add(player)
        self._missed(player)

    def _on_reveal(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            return self._public("reveal", data)
        step = self._sealed_for(data, "reveal")
        player = data["player"]
        if step.anonymous:
            raise Refused(f"step {step.round}.{step.step} is anonymous: its reveals are held by the judge "
                          f"(a reveal_held event), not published")
        if not step.all_committed:
            raise Refused(f"reveals open once every commitment is in; still waiting for: "
                          f"{', '.join(step.owes_commit())}")
        if player in step.revealed:
            raise Refused(f"{player}'s choice for step {step.round}.{step.step} is already settled (revealed, or "
                          f"the default applied) and cannot be changed; this reveal is not the recorded one")
        if player not in step.commits:
            raise Refused(f"{player} owes no reveal in step {step.round}.{step.step}")
        self._matching(step, player, data)
        choice = data["choice"]
        self._check_signature("reveal", data, step.commits[player]["by"])
        if step.commits[player]["by"] == "player":
            self._came_back(player)
        applied, illegal, code = self._legal_or_default(player, choice)
        self._expect(data, "applied", applied)
        self._expect(data, "illegal", illegal)
        if code is not None:  # an illegal choice: its fixed code, for verifiers to compare
            self._expect(data, "illegal_code", code)
        elif "illegal_code" in data:
            raise Refused(f"recorded illegal_code {quote(data['illegal_code'])}, but the revealed choice is legal")
        step.revealed.add(player)
        self._play(player, applied)

    def _matching(self, step: SealedStep, player: str, data: dict) -> None:
        """The reveal in ``data`` opens ``player``'s commitment for ``step``, or Refused."""
        try:
            salt = parse_salt(data["salt"])
        except ValueError as exc:
            raise Refused(str(exc)) from None
        choice = data["choice"]
        if not isinstance(choice, str) or not commitment_matches(
                step.commits[player]["commitment"], self.game_id, step.round, step.step,
                player, choice, salt):
            raise Refused(f"this reveal does not match {player}'s commitment for step "
                          f"{step.round}.{step.step} (wrong choice or salt, or made for another step)")

    def check_early_reveal(self, data: dict) -> None:
        """A reveal sent before every commitment is in, checked now as it will be checked
        once they are (docs/protocol.md, "A reveal sent early"): it opens the player's own
        commitment in the open step, is signed where the game requires it, and reveals a
        choice the rules allow. Refused otherwise; nothing is recorded either way."""
        step = self._sealed_for(data, "reveal")
        player = data["player"]
        if player in step.defaulted or player not in step.commits:
            raise Refused(f"{player} has no commitment in step {step.round}.{step.step} yet; send commit HASH "
                          f"first (the reveal may follow it in the same mail, on a later line)")
        if (player, step.round, step.step) in self.orphaned:
            raise Refused(f"{player}'s commitment for step {step.round}.{step.step} was sealed by the seat's former "
                          f"player, whose reveal it is; seal a new choice (it replaces theirs)")
        by = step.commits[player]["by"]
        if by != "player":
            raise Refused(f"{player}'s choice for step {step.round}.{step.step} was sealed by the "
                          f"{'judge (seal CHOICE)' if by == 'moderator' else by}, which reveals it itself once "
                          f"every commitment is in; there is nothing for {player} to reveal")
        self._matching(step, player, data)
        self._check_signature("reveal", data, by, record=False)
        _, illegal, _ = self._legal_or_default(player, data["choice"])
        if illegal is not None:
            raise Refused(f"the choice this reveal opens is not allowed ({illegal}); the default would be played "
                          f"for it: commit a legal choice instead (until every commitment is in, a new "
                          f"commitment replaces this one)")

    def early_reveal_stands(self, data: dict | None) -> bool:
        """A reveal kept as sent early (``data``) would still be accepted as it was then."""
        if data is None:
            return False
        try:
            self.check_early_reveal(data)
        except Refused:
            return False
        return True

    def early_reveal_kept(self, player: str) -> bool:
        """``player`` sent the reveal of their commitment in the open sealed step early, and
        the judge keeps it, to record it once every commitment is in (live sessions only: the
        kept reveal is among the store's private entries)."""
        step, early = self.sealed, getattr(self.held, "early", None)
        if step is None or early is None or step.all_committed or player not in step.commits:
            return False
        return self.early_reveal_stands(early(step.round, step.step, player))

    def _on_default(self, data: dict, at: str) -> None:
        """The documented default for a player who owes a choice and is late."""
        self._need_state()
        if self.state is None:
            if not self._after_nmr(data):
                self._check_recorded_deadline((data.get("player"), None, None, None), at, data)
            return self._public("default", data)
        player = self.player(data["player"])
        step = self.sealed
        if step is not None and player in step.waiting and player not in step.revealed:
            if (data.get("round"), data.get("step")) != (step.round, step.step):
                raise Refused(f"this default is for round {shorten(data.get('round'))} step {shorten(data.get('step'))}, "
                              f"but the open sealed step is round {step.round} step {step.step}")
            if not step.all_committed:
                raise Refused(f"reveals open once every commitment is in; still waiting for: {', '.join(step.owes_commit())}")
            if step.anonymous and "choice" in data:
                raise Refused("a default in an anonymous step does not show its choice publicly "
                              "(the disclosure at the end does)")
            if player not in step.defaulted:
                self._check_deadline((player, step.round, step.step, "reveal"), at, data)
                self._missed(player)
            step.revealed.add(player)
            kind = step.kind
            self._expect(data, "sealed", True)
            if step.anonymous:
                return self._held_default(step, player, data)
        else:
            self._expect(data, "sealed", False)
            kind = data["kind"]
            request = next((r for r in self.requests_of(player) if r.kind == kind), None)
            if request is None:
                raise Refused(f"{player} owes no {kind} choice now")
            if (data.get("round"), data.get("step")) != (self.state.round, self.state.step):
                raise Refused(f"this default is for round {shorten(data.get('round'))} step {shorten(data.get('step'))}, "
                              f"the game is at round {self.state.round} step {self.state.step}")
            self._check_deadline((player, request.round, request.step, kind), at, data)
            self._missed(player)
        applied = self.rules.default(self.state, player, kind)
        self._expect(data, "choice", applied)
        self._play(player, applied)

    def _on_decide(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            return self._public("decide", data)
        player = self.player(data["player"])
        for request in self.requests_of(player):
            if request.sealed:
                raise Refused(f"{player} owes a sealed choice: commit to it and reveal it, not decide")
        try:
            canonical = self.check(player, data["choice"])
        except ChoiceError as exc:
            raise Refused(str(exc)) from None
        if (data.get("round"), data.get("step")) != (self.state.round, self.state.step):
            raise Refused(f"this decision is for round {shorten(data.get('round'))} step {shorten(data.get('step'))}, "
                          f"the game is at round {self.state.round} step {self.state.step}")
        if data.get("by") == "stand-in":
            from .reports import private
            from .standin import check
            check(self, player, data, "decide", private)
            self._check_signature("decide", data, "stand-in")
        else:
            self._check_signature("decide", data)
            self._came_back(player)
        self._expect(data, "applied", canonical)
        self._play(player, canonical)

    # --- helpers

    def _legal_or_default(self, player: str, choice: str) -> tuple[str, str | None, str | None]:
        """(applied choice, why it is illegal, the refusal's code): the canonical choice, or
        the default with the reason and code when the committed choice is not allowed."""
        try:
            return self.check(player, choice), None, None
        except ChoiceError as exc:
            return self.rules.default(self.state, player, self.sealed.kind), str(exc), exc.code

    @staticmethod
    def _expect(data: dict, key: str, value) -> None:
        if key in data and data[key] != value:
            raise Refused(f"recorded {key} {quote(data[key])} differs from the rules' {quote(value)}")
        data.setdefault(key, value)

    def _check_deadline(self, key: tuple, at: str, data: dict) -> None:
        """A default before the deadline needs ``forced``; the deadline counts from the
        opening of this very request (``key``, as in ``owed``), as moved by pauses and
        extensions (``seats.py``); while the game is paused no deadline runs. A version 3
        log records the deadline judged against (``discretion.py``)."""
        if self.version3:
            return self._check_recorded_deadline(key, at, data)
        deadline = self.meta.get("deadline_seconds")
        if data.get("forced") or not deadline:
            return
        player = key[0]
        if self.paused:
            raise Refused(f"game {self.game_id} is paused (since {self.paused['since']}), so no deadline runs; "
                          f"resume it (pbem resume {self.game_id}) or use --force to apply the default anyway")
        opened, due = self.opened_at.get(key), self.base_due(key)
        if due and at < due:
            moved = "" if key not in self.due_over else ", moved by the moderator's discretion"
            raise Refused(f"{player}'s deadline has not passed (opened {opened}, deadline {_duration(deadline)}"
                          f"{moved}: due {due}); use --force to apply the default anyway")

    def _play(self, player: str, choice: str) -> None:
        self._apply_rules(player, choice)
        self._open_sealed()

    def _apply_rules(self, player: str, choice: str) -> None:
        try:
            self.state = self.rules.apply(self.state, player, choice, self.rng)
        except ChoiceError as exc:
            raise Refused(str(exc)) from None
        self.applied.append(self.state)

def _duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"

