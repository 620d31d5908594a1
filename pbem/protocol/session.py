"""A game's protocol state, rebuilt by replaying its events; the rules of every event.

The same ``Session.apply_event`` validates an event when a command is about to write it
and when ``audit`` replays the log, so a log that replays cleanly was built by the rules.
An event that a game cannot accept raises ``Refused`` live, ``AuditFailure`` on replay.
The rules of the setup events are here; those of the other events are in the parts
``Session`` is made of: the moves of play (moves.py, and seedless.py without the seed),
anonymous steps (anonymous.py), the judge's discretion (discretion.py), seats and time
(seats.py).

Event kinds (``data`` fields in docs/protocol.md):
    created      game type, players, options, seed hash, signature and deadline settings
    key          a player's public key (the moderator's before the start, or signed with the seat's key)
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

from .. import games
from ..text import quote
from .anonymous import AnonymousSteps, held_in
from .discretion import Discretion, key_change_body
from .errors import AuditFailure, Refused, UnknownPlayer
from .moves import Moves, SealedStep
from .rng import RandomSource, combine_client_seeds
from .seats import SeatsAndTime
from .times import is_at
from .seedless import SeedlessChecks
from .snapshot import SNAPSHOT_VERSION


class Session(Moves, SeedlessChecks, AnonymousSteps, Discretion, SeatsAndTime):
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
        self.seed_signed: dict[str, dict] = {}  # version 3, before the start: each signed seed's signature and nonce
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
            **({"seed_signed": self.seed_signed} if self.seed_signed else {}),
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
        session.seed_signed = dict(data.get("seed_signed", {}))
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
        if not is_at(at):
            raise Refused(f"event time {quote(at)} is not a time as the log writes them (UTC, to the second, like "
                          f"2026-01-31T18:00:00Z)")
        if at < self.last_at:
            raise Refused(f"event time {at} is earlier than the event before it ({self.last_at})")
        self.applied = []
        stood_in = set(self.standing_in)
        try:
            handler(data, at)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            field = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc)
            raise Refused(f"malformed {kind} event: {field}") from None
        self.seq = seq if seq is not None else self.seq + 1
        self.last_at = at
        if self.standing_in != stood_in:
            self.seat_changes(stood_in, at)
        if self.state is not None:
            self._track_open(at)

    def _on_created(self, data: dict, at: str) -> None:
        if self.meta:
            raise Refused("the game was already created")
        try:
            self.rules = games.get(data["game_type"])
        except games.UnknownGame as exc:  # a log of a game this pbem does not have: its first event is wrong
            raise Refused(str(exc)) from None
        try:
            self.players = self.rules.check_players(data["players"])
        except ValueError as exc:
            raise Refused(str(exc)) from None
        self.meta = dict(data)
        from .standin import check_policy
        check_policy(self.meta)
        self.keys = {}
        for player, public_key in dict(data.get("keys") or {}).items():
            self._on_key({"player": player, "public_key": public_key}, at)
        if "judge_key" in data:  # version 3: receipts are signed with it (docs/protocol.md §12)
            from .signing import KeyFormatError, parse_public_key
            try:
                parse_public_key(data["judge_key"])
            except KeyFormatError as exc:
                raise Refused(f"the judge key: {exc}") from None
        after = data.get("stand_in_after")
        if after is not None and (type(after) is not int or after < 1):  # as pbem new --stand-in-after takes it
            raise Refused(f"stand_in_after is a number of defaults in a row, 1 or more, not {quote(after)}")
        if self.seed is not None and hashlib.sha256(self.seed).hexdigest() != data["seed_hash"]:
            raise Refused("the server seed at hand does not match the published seed hash")

    def _before_start(self, what: str) -> None:
        if self.started:
            raise Refused(f"game {self.game_id} has already started: {what} only before that")

    def _on_key(self, data: dict, at: str) -> None:
        """A seat's public key: the moderator's before the start; a change signed with the
        key the seat holds (its player's own) at any time (docs/protocol.md §14)."""
        from .signing import parse_public_key
        player = self.player(data["player"])
        signed = data.get("signature") is not None
        if self.started and not signed:
            if player in self.keys:
                raise Refused(f"game {self.game_id} has started, so {player}'s key changes only by a block signed "
                              f"with the key the seat holds: {player} makes one with pbem key {self.game_id} "
                              f"{player} NEW-PUBLIC-KEY --sign-with OLD.key, and the judge records it (pbem submit)")
            self._before_start("keys can be registered")
        try:
            raw = parse_public_key(data["public_key"])
        except ValueError as exc:
            raise Refused(f"the key of {player}: {exc}") from None
        if signed:
            self._signed_fields(player, data, "key change")
        # one key, one player: else one person's signature would speak for two seats
        holder = next((p for p, k in self.keys.items() if p != player and parse_public_key(k) == raw), None)
        if holder is not None:
            raise Refused(f"this public key is already registered for {holder}; each player needs their own "
                          f"key pair (pbem keygen)")
        if signed:
            self._verify_signed(player, key_change_body(self.game_id, data), data, "key change")
        self.keys[player] = data["public_key"]

    def _on_client_seed(self, data: dict, at: str) -> None:
        self._before_start("client seeds can be added")
        text = data["seed"]
        if not isinstance(text, str) or not text or len(text) > 200:
            raise Refused("a client seed is any text of 1 to 200 characters")
        player = self.player(data["player"])
        if self.version3 and (self.meta.get("require_signatures") or "signature" in data):
            self._check_seed_signature(player, data)
        else:
            self.seed_signed.pop(player, None)
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
        if self.version3:
            self._check_seed_keys()
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

    def _track_open(self, at: str) -> None:
        """A request owed now that was not owed before this event opened at this event. The
        key names the round and step, so a request of the same kind re-opened in the next
        step (by the very reveal that completed the last one) starts its own clock."""
        self.opened_at = {key: self.opened_at.get(key, at) for *_, key in self.owed()}
        self._keep_dues()
