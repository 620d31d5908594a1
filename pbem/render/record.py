"""A game's public record, round by round, from a replay of its log.

The replay is a loop of ``Session.apply_event``; whenever a round ends (or the game does)
the public view ``rules.view(state, None)`` is captured. Effects pass through
``rules.public_effects(effects, None)`` as they are collected. Nothing else of a state is
kept, so everything a summary can show has passed the game's public view.

Replaying needs the server seed (the moderator's own, or the one revealed in an export):
without it no roll can be recomputed, and there is no state to summarise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol.errors import AuditFailure, Refused
from ..protocol.anonymous import held_in
from ..protocol.session import Session
from ..text import quote


@dataclass
class RoundRecord:
    number: int
    start_player: str | None
    effects: list = field(default_factory=list)  # public effects, in the order they happened
    end_view: dict | None = None  # public view when the round ended (now, while it runs)
    dice_view: dict | None = None  # public view just before it ended: dice still placed
    head: tuple[int, str] | None = None  # chain head at the end of the round (now, while it runs)
    complete: bool = False


@dataclass
class GameRecord:
    game_id: str
    session: Session  # the protocol state after the last event
    meta: dict
    rounds: list[RoundRecord]
    head: tuple[int, str]
    setup: list  # public effects of the set-up (before round 1)
    revealed_seed: str | None  # the server seed, once the log reveals it
    # who played which card in each anonymous vote (Tortuga 1667), from each voter's own
    # view: for the final result only, which discloses them once the game is over
    votes_played: list = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.session.finished

    @property
    def players(self) -> list[str]:
        return list(self.session.players)

    def round(self, number: int | None) -> RoundRecord:
        if not self.rounds:
            raise Refused(f"game {self.game_id} has not started yet: no round to show")
        if number is None:
            return self.rounds[-1]
        for r in self.rounds:
            if r.number == number:
                return r
        raise Refused(f"game {self.game_id} has no round {number}; rounds so far: 1 to {self.rounds[-1].number}")


def _fields(event):
    if isinstance(event, dict):
        return event["kind"], event["data"], event["at"], event["seq"], event["hash"]
    return event.kind, event.data, event.at, event.seq, event.hash


def build(game_id: str, events, seed: bytes | None, held=None, start: Session | None = None,
          start_head: tuple[int, str] = (0, ""), draws: bool = False,
          resume: GameRecord | None = None) -> GameRecord:
    """Replay ``events`` (store Events or export dicts) with ``seed`` into a GameRecord;
    ``held``: the held reveals of anonymous steps (default: those the log discloses);
    ``draws``: keep every random draw, in order, in ``session.rng.draws``.
    ``start``: a session to go on from (a snapshot's, at ``start_head``) instead of the
    first event; the record then holds the rounds that began after it (what came before
    them lands in ``setup``, which only round 1 shows). ``resume``: a record this function
    returned, to go on from with the events after its head (the same record as replaying
    all of them at once); it is changed in place and must not be used afterwards."""
    if resume is not None:
        session, rounds, setup = resume.session, resume.rounds, resume.setup
        revealed, head, votes_played = resume.revealed_seed, resume.head, resume.votes_played
    else:
        if not events and start is None:
            raise Refused(f"no events for game {quote(game_id)}")
        session = start or Session(game_id, seed, held if held is not None else held_in(events))
        rounds, setup, revealed, head, votes_played = [], [], None, start_head, []
    session.record_draws = draws
    for event in events:
        kind, data, at, seq, digest = _fields(event)
        before = session.state
        try:
            session.apply_event(kind, dict(data), at, seq)
        except Refused as exc:
            raise AuditFailure(getattr(exc, "seq", None) or seq, str(exc)) from None
        head = (seq, digest)
        if kind == "seed_revealed":
            revealed = data["seed"]
        if kind == "started" and session.state is None:
            raise Refused(f"the server seed of {game_id} is not at hand (not revealed in this log), "
                          f"so its rolls cannot be replayed to summarise it")
        state = session.state
        if state is None or state is before:
            if state is not None and rounds and kind == "default":  # held until its step's batch
                rounds[-1].effects += _default_notes(kind, data)
            continue
        rules = session.rules
        marked = []
        for made in session.applied[:-1]:  # a batch: what each choice before the last did
            marked += [e for e in _public_effects(rules, made, rounds[-1].number if rounds else None)
                       if e["type"] not in ("round", "game_over")]
        marked += _public_effects(rules, state, rounds[-1].number if rounds else None)
        votes_played += _votes_played(rules, state, marked, len(votes_played))
        for effect in _default_notes(kind, data) + marked:
            if effect["type"] == "round":
                if rounds and not rounds[-1].complete:
                    _close(rounds[-1], rules.view(before, None), rules.view(state, None), head)
                rounds.append(RoundRecord(effect["round"], effect.get("start_player"), [effect]))
            elif not rounds:
                setup.append(effect)
            else:
                rounds[-1].effects.append(effect)
                if effect["type"] == "game_over":
                    _close(rounds[-1], rules.view(before, None), rules.view(state, None), head)
    if rounds and not rounds[-1].complete:
        now = session.rules.view(session.state, None)
        rounds[-1].end_view, rounds[-1].dice_view, rounds[-1].head = now, now, head
    return GameRecord(game_id, session, dict(session.meta), rounds, head, setup, revealed, votes_played)


def _public_effects(rules, state, current: int | None) -> list[dict]:
    """The public effects of the state's last change. A game whose effects carry no round
    marks (Tortuga 1667: turns, not rounds) gets them from its public view: a turn is a
    "round" of the record, marked after the effects of the turn that ended."""
    if hasattr(rules, "public_effects"):
        return rules.public_effects(state.effects, None)
    view = rules.view(state, None)
    effects = list(view["effects"])
    if view["phase"] == "over":
        return effects + [{"type": "game_over", "round": current}]
    if view["turn_no"] != current:
        effects.append({"type": "round", "round": view["turn_no"], "start_player": view["turn"]})
    return effects


def _votes_played(rules, state, effects: list[dict], before: int) -> list[dict]:
    """Each vote among ``effects`` with the card each voter played, read from that voter's
    own view (the public one never says)."""
    out = []
    for effect in effects:
        if effect["type"] != "vote" or "voters" not in effect:
            continue
        played = {}
        for player in effect["voters"]:
            mine = next((e.get("private") or {} for e in rules.view(state, player)["effects"]
                         if e["type"] == "vote"), {})
            if "played" in mine:
                played[player] = mine["played"]
        out.append({"vote": before + len(out) + 1, "kind": effect.get("kind"), "caller": effect.get("caller"),
                    "played": played})
    return out


def _default_notes(kind: str, data: dict) -> list[dict]:
    """A public note where a default was applied instead of a player's own choice: a late
    player (NMR), or a reveal of a choice the rules do not allow. (By then every commitment of
    the step is in, so the applied choice is as public as a reveal.)"""
    if kind == "default":  # an anonymous step's default shows no choice: the note says it stays secret
        reason = {"no commitment (NMR)": "no commitment in time", "no reveal (NMR)": "no reveal in time",
                  "NMR": "no decision in time"}.get(data.get("reason"), data.get("reason") or "late")
        note = {"type": "default", "player": data["player"], "kind": data.get("kind"), "reason": reason}
        return [{**note, "choice": data["choice"]} if "choice" in data else note]
    if kind == "reveal" and data.get("illegal"):
        return [{"type": "default", "player": data["player"], "kind": "sealed choice",
                 "choice": data["applied"], "reason": f"revealed {data['choice']}, which is not allowed"}]
    return []


def _close(record: RoundRecord, before: dict, after: dict, head) -> None:
    record.dice_view, record.end_view, record.head, record.complete = before, after, head, True


def from_store(store, game_id: str) -> GameRecord:
    """The record of a game in the moderator's database (replayed with its private seed)."""
    from ..protocol.loading import SEED, held_source, load
    events = store.events(game_id)
    if not events:
        load(store, game_id)  # raises the helpful unknown-game error
    secret = store.get_secret(game_id, SEED)
    return build(game_id, events, bytes.fromhex(secret) if secret else None, held_source(store, game_id))


def for_round(store, game_id: str, round_: int, upto: int, head: str, kept: dict | None = None) -> GameRecord:
    """The record of round ``round_`` as of event ``upto`` (whose hash must be ``head``),
    replayed from the last snapshot taken before that round began: the cost of one round,
    however long the game. Snapshots are a cache that ``audit`` checks against the replay;
    without one the whole log up to ``upto`` is replayed, to the same record.

    ``kept``: a dict the caller keeps between calls (``pbem mail send`` renders summary
    after summary of the same round at later heads): the record replayed last for this
    game, round and start goes on from its head with the newer events alone, to the same
    record as a replay from the start. The record returned is the caller's until its next
    call with ``kept``."""
    from ..protocol.loading import SEED, held_source
    from ..protocol.snapshot import read_snapshot
    secret = store.get_secret(game_id, SEED)
    seed = bytes.fromhex(secret) if secret else None
    held = held_source(store, game_id)
    start, after = None, 0
    snapshot = store.snapshot_before_round(game_id, round_, upto) if seed is not None else None
    if snapshot is not None and snapshot.problem is None:
        data = read_snapshot(snapshot.text)
        # a light text in a row marked full (the kind is not under the digest): not a start
        session = Session.from_json(data, seed, held) if data is not None and "light" not in data else None
        if session is not None and session.state is not None and session.state.round < round_:
            start, after = session, snapshot.seq  # else (its round column is wrong) from the start
    found = kept.pop(game_id, None) if kept is not None else None  # one record a game at most
    last = found[1] if found is not None and found[0] == (round_, after) else None
    if last is not None and not after <= last.head[0] <= upto:
        last = None
    first = last.head[0] if last is not None else after
    events = store.events(game_id, after=first, upto=upto)
    start_head = last.head if last is not None else (after, store.hash_at(game_id, after))
    if ((events[-1].seq, events[-1].hash) if events else start_head) != (upto, head):
        raise Refused(f"game {game_id}: the log no longer reaches event {upto} {head[:8]}…; "
                      f"run pbem audit {game_id}")
    if last is not None:
        rec = build(game_id, events, seed, held, resume=last)
    elif start is None:
        rec = build(game_id, events, seed, held)
    else:
        rec = build(game_id, events, seed, held, start=start, start_head=start_head)
    if kept is not None:
        kept[game_id] = ((round_, after), rec)
    return rec


def from_export(text: str, draws: bool = False) -> GameRecord:
    """The record of an exported game (JSON Lines with the seed revealed)."""
    from ..store import read_export, verify_chain
    rows = read_export(text)
    if not rows:
        raise Refused("the file holds no events")
    verify_chain(rows)
    seed = next((bytes.fromhex(r["data"]["seed"]) for r in rows if r["kind"] == "seed_revealed"), None)
    if seed is None:
        raise Refused("this export has no revealed seed, so rolls cannot be replayed; ask the moderator "
                      "for an export after 'pbem reveal-seed' (or audit it with 'pbem audit --file')")
    return build(rows[0]["game"], rows, seed, draws=draws)
