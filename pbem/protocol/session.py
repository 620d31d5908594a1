"""A game's protocol state, rebuilt by replaying its events; the rules of every event.

The same ``Session.apply_event`` validates an event when a command is about to write it
and when ``audit`` replays the log, so a log that replays cleanly was built by the rules.
An event that a game cannot accept raises ``Refused`` live, ``AuditFailure`` on replay.

Event kinds (``data`` fields in docs/protocol.md):
    created      game type, players, options, seed hash, signature and deadline settings
    key          a player's public key (before the start)
    client_seed  a player's client seed (before the start)
    started      the combined client entropy; the game is set up
    commit       a sealed choice's commitment (by the player, or by the moderator on receipt)
    nmr          a player is defaulted in the commit phase of a sealed step
    reveal       a choice and salt matching the player's commitment
    default      the documented default applied for a late player (or an illegal reveal)
    decide       an open decision
    reveal_held  a reveal of an anonymous step, checked and kept by the judge (anonymous.py)
    sealed_batch the digest of an anonymous step's reveals; the step is then applied
    disclosed    every held reveal, published at the end before the seed
    seed_revealed  the server seed, published
    paused, resumed, extended, replaced   the moderator's discretion over time and seats (seats.py)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .. import games
from ..games.base import ChoiceError
from ..text import quote, shorten
from .anonymous import AnonymousSteps, held_in
from .discretion import Discretion, client_seed_body  # noqa: F401 - client_seed_body is part of this API
from .commit import commitment_matches, parse_commitment, parse_salt
from .errors import AuditFailure, Refused, UnknownPlayer
from .rng import RandomSource, combine_client_seeds
from .seats import SeatsAndTime
from .snapshot import SNAPSHOT_VERSION

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


class Session(AnonymousSteps, Discretion, SeatsAndTime):
    """Protocol state of one game. Build it with ``Session.replay``.

    ``held`` is where the held reveals of anonymous steps come from (``anonymous.py``):
    the store's private entries during play, the log's disclosure on a replay of an export."""

    def __init__(self, game_id: str, seed: bytes | None = None, held=None):
        self.game_id = game_id
        self.seed = seed
        self.held = held
        self.anon_steps: list[dict] = []  # applied anonymous steps with their held reveals (private)
        self.disclosed = False
        self.meta: dict = {}
        self.rules = None  # the game's rules module
        self.players: tuple[str, ...] = ()
        self.keys: dict[str, str] = {}
        self.client_seeds: dict[str, str] = {}
        self.started = False
        self.rng: RandomSource | None = None
        self.state = None
        self.sealed: SealedStep | None = None
        self.nonces: set[str] = set()
        # when each owed request opened, by (player, round, step, kind); kind is "reveal" for
        # a sealed step's reveals (see ``owed``)
        self.opened_at: dict[tuple[str, int, int, str], str] = {}
        self.record_draws = False  # keep every draw in rng.draws (pbem replay --json)
        self.seq = 0
        self.last_at = ""
        self.seed_revealed = False
        self.public_steps: dict[tuple, dict] = {}  # seedless audit: (round, step) -> progress
        # the states the latest event made, one per choice it applied: an anonymous step's
        # batch applies several in one event, and a summary wants what each of them did
        self.applied: list = []
        self._init_seats()

    # ------------------------------------------------------------------ building

    @classmethod
    def replay(cls, game_id: str, events, seed: bytes | None = None, audit: bool = False,
               held=None, after_each=None) -> "Session":
        """Replay events (Event objects or export dicts). With ``audit`` every failure is an
        AuditFailure naming the event (the disclosure, when it disagrees with the log).
        Without ``held``, the held reveals are those the log discloses, if any.
        ``after_each(session, seq)`` runs after every event (the audit checks snapshots)."""
        events = list(events)
        session = cls(game_id, seed, held if held is not None else held_in(events))
        for ev in events:
            get = ev.get if isinstance(ev, dict) else lambda k, e=ev: getattr(e, k)
            try:
                session.apply_event(get("kind"), get("data"), get("at"), get("seq"))
            except Refused as exc:
                if audit:
                    raise AuditFailure(getattr(exc, "seq", None) or get("seq"), str(exc)) from None
                raise
            if after_each is not None:
                after_each(session, get("seq"))
        return session

    # ------------------------------------------------------------------ snapshots

    def to_json(self) -> dict:
        """Everything replay builds, for a snapshot."""
        step = self.sealed
        return {
            "v": SNAPSHOT_VERSION, "game_id": self.game_id, "meta": self.meta, "keys": self.keys,
            "client_seeds": self.client_seeds, "started": self.started,
            "state": self.rules.to_json(self.state) if self.state is not None else None,
            "sealed": None if step is None else {
                "round": step.round, "step": step.step, "waiting": list(step.waiting),
                "commits": step.commits, "defaulted": sorted(step.defaulted),
                "revealed": sorted(step.revealed), "kind": step.kind,
                # only in anonymous steps, so other games' snapshots stay as they were
                **({"anonymous": True, "held": step.held} if step.anonymous else {})},
            "nonces": sorted(self.nonces),
            "opened_at": [[*key, at] for key, at in sorted(self.opened_at.items())],
            "seq": self.seq, "last_at": self.last_at, "seed_revealed": self.seed_revealed,
            **({"anon_steps": self.anon_steps} if self.anon_steps else {}),
            **({"disclosed": True} if self.disclosed else {}),
            **self.seats_json(),
        }

    @classmethod
    def from_json(cls, data: dict, seed: bytes | None, held=None) -> "Session":
        if data.get("v") != SNAPSHOT_VERSION:  # an older layout is never read: replay instead
            raise ValueError(f"snapshot version {data.get('v')!r} is not {SNAPSHOT_VERSION}")
        session = cls(data["game_id"], seed, held)
        session.meta = data["meta"]
        session.rules = games.get(session.meta["game_type"])
        session.players = tuple(session.meta["players"])
        session.keys, session.client_seeds = dict(data["keys"]), dict(data["client_seeds"])
        session.started = data["started"]
        if data["state"] is not None:
            session.state = session.rules.from_json(data["state"])
            session.rng = RandomSource(seed, session.game_id, combine_client_seeds(session.client_seeds))
        if data["sealed"] is not None:
            st = data["sealed"]
            session.sealed = SealedStep(st["round"], st["step"], tuple(st["waiting"]), dict(st["commits"]),
                                        set(st["defaulted"]), set(st["revealed"]), st["kind"],
                                        bool(st.get("anonymous")), dict(st.get("held", {})))
        session.nonces = set(data["nonces"])
        session.opened_at = {(p, r, s, k): at for p, r, s, k, at in data["opened_at"]}
        session.seq, session.last_at = data["seq"], data["last_at"]
        session.seed_revealed = data["seed_revealed"]
        session.anon_steps = list(data.get("anon_steps", []))
        session.disclosed = bool(data.get("disclosed"))
        session.seats_from_json(data)
        return session

    @property
    def finished(self) -> bool:
        return self.state is not None and self.rules.result(self.state) is not None

    def player(self, name: str) -> str:
        if name not in self.players:
            raise UnknownPlayer(f"no player {quote(name)} in game {self.game_id}; players: {', '.join(self.players)}")
        return name

    def pending(self):
        """The open requests of the current state. States are never changed in place (a
        move returns a new one), so the list is kept until the state is replaced."""
        state = self.state
        if state is None:
            return []
        cached = self.__dict__.get("_pending")
        if cached is None or cached[0] is not state:
            cached = self._pending = (state, self.rules.pending(state))
        return cached[1]

    def check(self, player: str, choice) -> str:
        """The rules' check of ``choice`` by ``player`` now: its canonical form, or the
        rules' ``ChoiceError``. The last answer is kept for the current state, which is
        never changed in place: a command that asks whether a decision is a repeat, then
        records it, has the rules check it once, not at each of those steps."""
        state = self.state
        last = self.__dict__.get("_last_check")
        if last is not None and last[0] is state and last[1] == player and last[2] == choice \
                and type(choice) is str:
            return last[3]
        canonical = self.rules.check(state, player, choice)
        self._last_check = (state, player, choice, canonical)
        return canonical

    def requests_of(self, player: str):
        return [r for r in self.pending() if r.player == player]

    def owed(self) -> list[tuple[str, str, bool, tuple]]:
        """What each player owes now, as (player, what, sealed, clock key): "commit" or
        "reveal" in the open sealed step, then open decisions by kind. The clock key
        (player, round, step, kind) names one request: kind is the sealed request's kind
        while commitments are owed, "reveal" once reveals are."""
        out = []
        step = self.sealed
        if step is not None:
            if not step.all_committed:
                out += [(p, "commit", True, (p, step.round, step.step, step.kind)) for p in step.owes_commit()]
            else:
                out += [(p, "reveal", True, (p, step.round, step.step, "reveal")) for p in step.owes_reveal()]
        out += [(r.player, r.kind, False, (r.player, r.round, r.step, r.kind))
                for r in self.pending() if not r.sealed]
        return out

    # ------------------------------------------------------------------ events

    def apply_event(self, kind: str, data: dict, at: str, seq: int | None = None) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise Refused(f"unknown event kind {quote(kind)}")
        if kind != "created" and not self.meta:
            raise Refused("the log must begin with a 'created' event")
        if not isinstance(data, dict) or not isinstance(at, str):
            raise Refused(f"malformed {kind} event: data must be an object and 'at' a time")
        if at < self.last_at:
            raise Refused(f"event time {at} is earlier than the event before it ({self.last_at})")
        self.applied = []
        try:
            handler(data, at)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            field = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc)
            raise Refused(f"malformed {kind} event: {field}") from None
        self.seq = seq if seq is not None else self.seq + 1
        self.last_at = at
        if self.state is not None:
            self._track_open(at)

    def _on_created(self, data: dict, at: str) -> None:
        if self.meta:
            raise Refused("the game was already created")
        self.rules = games.get(data["game_type"])
        try:
            self.players = self.rules.check_players(data["players"])
        except ValueError as exc:
            raise Refused(str(exc)) from None
        self.meta = dict(data)
        self.keys = {}
        for player, public_key in dict(data.get("keys") or {}).items():
            self._on_key({"player": player, "public_key": public_key}, at)
        if "judge_key" in data:  # version 3: receipts are signed with it (docs/protocol.md §12)
            from .signing import KeyFormatError, parse_public_key
            try:
                parse_public_key(data["judge_key"])
            except KeyFormatError as exc:
                raise Refused(f"the judge key: {exc}") from None
        if self.seed is not None and hashlib.sha256(self.seed).hexdigest() != data["seed_hash"]:
            raise Refused("the server seed at hand does not match the published seed hash")

    def _before_start(self, what: str) -> None:
        if self.started:
            raise Refused(f"game {self.game_id} has already started: {what} only before that")

    def _on_key(self, data: dict, at: str) -> None:
        self._before_start("keys can be registered")
        from .signing import parse_public_key
        player = self.player(data["player"])
        try:
            raw = parse_public_key(data["public_key"])
        except ValueError as exc:
            raise Refused(f"the key of {player}: {exc}") from None
        # one key, one player: else one person's signature would speak for two seats
        holder = next((p for p, k in self.keys.items() if p != player and parse_public_key(k) == raw), None)
        if holder is not None:
            raise Refused(f"this public key is already registered for {holder}; each player needs their own "
                          f"key pair (pbem keygen)")
        self.keys[player] = data["public_key"]

    def _on_client_seed(self, data: dict, at: str) -> None:
        self._before_start("client seeds can be added")
        text = data["seed"]
        if not isinstance(text, str) or not text or len(text) > 200:
            raise Refused("a client seed is any text of 1 to 200 characters")
        player = self.player(data["player"])
        if self.version3 and (self.meta.get("require_signatures") or "signature" in data):
            self._check_seed_signature(player, data)
        self.client_seeds[player] = text

    def _on_started(self, data: dict, at: str) -> None:
        self._before_start("play can start")
        if self.meta.get("require_signatures"):
            missing = [p for p in self.players if p not in self.keys]
            if missing:
                raise Refused(f"this game requires signatures but has no key for {', '.join(missing)}; "
                              f"register each with: pbem key {self.game_id} PLAYER PUBLIC-KEY")
        if self.seed_revealed:
            raise Refused(f"the server seed of game {self.game_id} is published, so play cannot start")
        entropy = combine_client_seeds(self.client_seeds)
        if data["client_entropy"] != entropy:
            raise Refused(f"client entropy {quote(data['client_entropy'])} is not the hash of the client seeds ({entropy})")
        self.started = True
        if self.seed is not None:
            self.rng = RandomSource(self.seed, self.game_id, entropy)
            if self.record_draws:
                self.rng.draws = []
            self.state = self.rules.setup(self.players, self.meta.get("options", {}), self.rng)
            self._open_sealed()

    def _on_seed_revealed(self, data: dict, at: str) -> None:
        if self.seed_revealed:
            raise Refused(f"the seed of {self.game_id} is already revealed")
        if hashlib.sha256(bytes.fromhex(data["seed"])).hexdigest() != self.meta["seed_hash"]:
            raise Refused("the revealed seed does not match the seed hash published at creation")
        if self.owes_disclosure:
            raise Refused("the held reveals of anonymous steps are disclosed (a 'disclosed' event) "
                          "before the seed is revealed")
        self.seed_revealed = True

    # --- sealed steps

    def _open_sealed(self) -> None:
        sealed = [r for r in self.pending() if r.sealed]
        if not sealed:
            self.sealed = None
            return
        key = (sealed[0].round, sealed[0].step)
        if self.sealed is None or (self.sealed.round, self.sealed.step) != key:
            self.sealed = SealedStep(key[0], key[1], tuple(r.player for r in sealed), kind=sealed[0].kind,
                                     anonymous=sealed[0].anonymous)

    def _check_signature(self, kind: str, data: dict, by: str = "player") -> None:
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

    def _public(self, kind: str, data: dict) -> None:
        """Without the seed (an outsider before reveal-seed) the game state is unknown, so
        check what can be checked: players, commitment forms, the order of commitments and
        reveals within each step, reveals against commitments, and signatures. In an
        anonymous step: that each held reveal follows a commitment of the player and comes
        after the step's last commitment, and that the batch comes once every committed
        player has revealed or been defaulted, before the next step begins."""
        if kind == "sealed_batch":
            return self._public_batch(data)
        player = self.player(data["player"])
        round_, step_ = data["round"], data["step"]
        if type(round_) is not int or type(step_) is not int:
            raise Refused(f"round and step must be integers in a {kind} event")
        key = (round_, step_)
        latest = max(self.public_steps, default=None)
        if kind in ("commit", "nmr") and latest is not None and key < latest:
            raise Refused(f"a {kind} for step {round_}.{step_} after step {latest[0]}.{latest[1]} had begun")
        if kind in ("commit", "nmr") and key not in self.public_steps:
            open_ = [k for k, st in self.public_steps.items() if st["anonymous"] and not st["batched"]]
            if open_:
                raise Refused(f"a {kind} for step {round_}.{step_} before the batch of anonymous step "
                              f"{open_[0][0]}.{open_[0][1]}")
        step = self.public_steps.setdefault(key, {"commits": {}, "done": set(), "closed": False, "how": {},
                                                  "anonymous": None, "digest": None, "batched": False})
        if step["batched"] and (kind in ("commit", "nmr", "reveal", "reveal_held") or data.get("sealed")):
            raise Refused(f"a {kind} for step {round_}.{step_} after its batch")
        anonymous = kind == "reveal_held" or (kind == "default" and data.get("sealed") and "choice" not in data)
        if kind in ("reveal", "reveal_held") or (kind == "default" and data.get("sealed")):
            if step["anonymous"] is not None and step["anonymous"] != anonymous:
                raise Refused(f"step {round_}.{step_} mixes public and held reveals (and defaults that show "
                              f"their choice)")
            step["anonymous"] = anonymous
        try:
            if kind in ("commit", "nmr"):
                if step["closed"]:
                    raise Refused(f"a {kind} for step {round_}.{step_} after its reveals had begun")
                if kind == "commit":
                    by = data.get("by", "player")
                    self._check_signature("commit", data, by)
                    step["commits"][player] = (parse_commitment(data["commitment"]), by)
                else:
                    step["commits"][player] = (None, "nmr")
                return
            if kind == "reveal_held":
                committed, by = step["commits"].get(player, (None, None))
                if player in step["done"] or committed is None:
                    raise Refused(f"the held reveal does not follow an open commitment of {player} for step "
                                  f"{round_}.{step_}")
                if data.get("by", "player") != by:
                    raise Refused(f"this reveal says it was made by the {quote(data.get('by'))}, "
                                  f"but the commitment was made by the {by}")
            elif kind == "reveal":
                committed, by = step["commits"].get(player, (None, None))
                if player in step["done"] or committed is None or not commitment_matches(
                        committed, self.game_id, round_, step_, player, data["choice"],
                        parse_salt(data["salt"])):
                    raise Refused(f"the reveal does not match an open commitment of {player} for step {round_}.{step_}")
                self._check_signature("reveal", data, by)
            elif kind == "default" and data.get("sealed"):
                if player in step["done"]:
                    raise Refused(f"{player} already revealed in step {round_}.{step_}")
            elif kind == "decide":
                self._check_signature("decide", data, "stand-in" if data.get("by") == "stand-in" else "player")
                return
            else:
                return
        except ValueError as exc:
            raise Refused(str(exc)) from None
        step["done"].add(player)
        step["how"][player] = "default" if kind == "default" else "reveal"
        step["closed"] = True

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
            from .standin import check
            check(self, player, data, "commit")
        elif by not in ("player", "moderator"):
            raise Refused(f"a commitment is made by the player, the moderator or the stand-in, not {quote(by)}")
        self._check_signature("commit", data, by)
        step.commits[player] = {"commitment": commitment, "by": by}
        if by != "stand-in":
            self._came_back(player)

    def _on_nmr(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            self._check_recorded_deadline((data.get("player"), None, None, None), at, data)
            return self._public("nmr", data)
        step = self._sealed_for(data, "default")
        player = data["player"]
        if player in step.commits or player in step.defaulted or step.all_committed:
            raise Refused(f"{player} owes no commitment in step {step.round}.{step.step}")
        self._check_deadline((player, step.round, step.step, step.kind), at, data)
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
            from .standin import check
            check(self, player, data, "decide")
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

    def _track_open(self, at: str) -> None:
        """A request owed now that was not owed before this event opened at this event. The
        key names the round and step, so a request of the same kind re-opened in the next
        step (by the very reveal that completed the last one) starts its own clock."""
        self.opened_at = {key: self.opened_at.get(key, at) for *_, key in self.owed()}
        self._keep_dues()


def _duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"

