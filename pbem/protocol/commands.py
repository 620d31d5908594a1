"""Every command that reads or writes a game: the library behind the command line.

Each writing command runs in one ``BEGIN IMMEDIATE`` transaction: it replays the game,
validates the new events with the same rules the audit uses, appends them, and adds the
follow-ups the protocol requires (moderator-held reveals and defaults once a sealed step
has all its commitments, the seed once the game is over). Any refusal leaves the log as it
was. Errors are typed (``pbem.protocol.errors``); nothing here prints.
"""

from __future__ import annotations

import json
import re
import secrets

from .. import games
from ..games.base import ChoiceError
from ..text import quote
from .anonymous import StoreHeld
from .canonical import sha256_hex
from .commit import make_commitment, new_salt, parse_salt
from .discretion import default_marks
from .errors import AuditFailure, Damaged, Refused, UnknownGame
from .repeats import Log, decision_fits_now, find as find_repeat, same_choice
from .reports import status as status_report
from .rng import RandomSource
from .session import Session, client_seed_body, signed_body
from .snapshot import SNAPSHOT_VERSION, head_columns, read_snapshot
from .times import now_utc  # noqa: F401 - callers take the clock from here
from .token import make_token, read_token

GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SEED = "server_seed"




def _held_name(round_: int, step: int, player: str) -> str:
    return f"held/{round_}/{step}/{player}"


def held_source(store, game_id: str) -> StoreHeld:
    """The reveals of anonymous steps that the judge holds (private, never exported)."""
    return StoreHeld(store, game_id)


# ---------------------------------------------------------------------- reading

def load(store, game_id: str, for_write: bool = False) -> Session:
    """The game's protocol state: from the snapshot at the head (a cache that ``audit``
    checks), else by replaying the log with the moderator's private seed.

    A stored game that fails a check raises ``Damaged``: a snapshot changed after it was
    written or cut off from its events, a seed that does not match its ``seed_hash``, a
    log that does not replay. ``for_write`` adds what every write checks first: every
    link and hash of the chain, and that the seed is there at all."""
    if for_write:
        damage = store.damage(game_id)
        if damage is not None:
            raise Damaged(game_id, *damage)
    # Inside a transaction (which holds the write lock) the session the last write left
    # behind is the game's state at the head: the judge reads and writes one game many times
    # in a batch of mail, and from one batch to the next. The store keeps these across its
    # own transactions and forgets them when a savepoint or a transaction ends badly, when
    # another connection commits, or when a row they rest on is changed by hand
    # (Store._watch); the head's seq is compared here as well.
    sessions = getattr(store, "sessions", None) if getattr(store, "in_transaction", False) else None
    cached = sessions.get(game_id) if sessions is not None else None
    if cached is not None:
        # right after damage() passed, the head is the last event it checked
        head = store.checked_head(game_id) if for_write else None
        if cached.seq == (head or store.head(game_id))[0]:
            _keep(sessions, game_id, cached)
            return cached
    session = _load(store, game_id, for_write)
    if sessions is not None:
        _keep(sessions, game_id, session)
    return session


KEPT_SESSIONS = 256  # a judge that runs for months keeps the games it wrote to last, not all


def _keep(sessions: dict, game_id: str, session: Session) -> None:
    sessions.pop(game_id, None)
    sessions[game_id] = session
    while len(sessions) > KEPT_SESSIONS:
        del sessions[next(iter(sessions))]  # the one read longest ago


def _load(store, game_id: str, for_write: bool) -> Session:
    seed = _server_seed(store, game_id)
    if seed is None and for_write and store.has_game(game_id):
        raise Damaged(game_id, 1, "the server seed of this game is missing from the database")
    if seed is not None:
        session = _from_snapshot(store, game_id, seed)
        if session is not None:
            return session
    events = store.events(game_id)
    if not events:
        known = store.games()
        hint = f"; games here: {', '.join(known[:10])}" if known else "; this database has no games yet (pbem new)"
        raise UnknownGame(f"no game {quote(game_id)}{hint}")
    try:
        return Session.replay(game_id, events, seed, audit=True, held=held_source(store, game_id))
    except AuditFailure as exc:
        raise Damaged(game_id, exc.seq, exc.reason) from None


def _server_seed(store, game_id: str) -> bytes | None:
    text = store.get_secret(game_id, SEED)
    try:
        return bytes.fromhex(text) if text is not None else None
    except ValueError:
        raise Damaged(game_id, 1, "the stored server seed is not hexadecimal") from None


def _from_snapshot(store, game_id: str, seed: bytes) -> Session | None:
    """The state from the newest full snapshot, brought forward to the head (at most
    ``FULL_SNAPSHOT_EVERY`` events); None when there is none of this version (the caller
    replays the log). The newest snapshot, when it is a light one after it, is checked as
    well: nothing is built on a game whose cache was changed."""
    snapshot = store.snapshot(game_id)
    if snapshot is None:
        return None
    if snapshot.problem is not None:
        raise Damaged(game_id, *snapshot.problem)
    if not snapshot.full:
        _light_status(game_id, snapshot)
        snapshot = store.snapshot(game_id, full=True)
        if snapshot is None:
            return None
        if snapshot.problem is not None:
            raise Damaged(game_id, *snapshot.problem)
    try:
        data = read_snapshot(snapshot.text)
        if data is None:
            return None
        if "light" in data:
            raise ValueError("it is marked as a full snapshot but holds only a status report")
        session = Session.from_json(data, seed, held_source(store, game_id))
    except Exception as exc:  # any shape the cache should not have: it cannot be used
        reason = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise Damaged(game_id, snapshot.seq, f"the cached snapshot cannot be read: {reason}") from None
    if sha256_hex(seed) != session.meta.get("seed_hash"):
        raise Damaged(game_id, 1, "the server seed at hand does not match the published seed hash")
    for ev in store.events(game_id, after=snapshot.seq):
        try:
            session.apply_event(ev.kind, ev.data, ev.at, ev.seq)
        except Refused as exc:
            raise Damaged(game_id, ev.seq, str(exc)) from None
    return session


def _light_status(game_id: str, snapshot) -> dict | None:
    """The status report of a light snapshot (None: another layout version); ``Damaged``
    when its text is not one."""
    from .snapshot import UnreadableSnapshot, light_status
    try:
        return light_status(snapshot.text)
    except UnreadableSnapshot as exc:
        raise Damaged(game_id, snapshot.seq, f"the cached snapshot cannot be read: {exc}") from None


# ---------------------------------------------------------------------- writing

def _write(store, game_id: str, build, at: str | None = None) -> Session:
    """Run ``build(session)`` (which yields (kind, data) events) in one transaction (a
    savepoint when the caller holds one open, as the email judge does per message).

    Each of ``store.write_hooks`` (set by whoever opened the store) sees the session
    before and after, inside the same transaction: the email judge queues the messages
    the new events call for there, so a message exists exactly when its events do."""
    batch = getattr(store, "in_transaction", False)  # the caller's transaction holds more writes
    with store.atomic():
        session = load(store, game_id, for_write=True)  # never write on top of a damaged game
        watchers = [hook(store, session) for hook in getattr(store, "write_hooks", ())]
        _emit(store, session, build(session), at)
        _emit(store, session, _follow_ups(store, session), at)
        if batch:
            _snapshot_at_commit(store, session)
        else:
            _snapshot(store, session)
        for after in watchers:
            if after is not None:
                after(session, at or now_utc())
    return session


FULL_SNAPSHOT_EVERY = 8  # the whole state is cached at least every 8 events, the status at each


def _snapshot(store, session: Session) -> None:
    """Cache the public status report at the head, so that ``status`` can answer without
    loading the rules, and, every ``FULL_SNAPSHOT_EVERY`` events, the whole replayed state
    with it, so that a game is loaded from it and at most that many events (``audit``
    checks both kinds)."""
    if session.seed is not None:
        game_id, seq = session.game_id, session.seq
        head = store.checked_head(game_id) or store.head(game_id)
        last_full = store.full_snapshot_seq(game_id)
        full = last_full is None or last_full == seq or seq - last_full >= FULL_SNAPSHOT_EVERY
        data = snapshot_data(session, head, full)
        store.put_snapshot(game_id, seq, json.dumps(data, separators=(",", ":")),
                           round=session.state.round if session.state is not None else None,
                           head=head_columns(data["status"]), at_head=head, full=full)


def _snapshot_at_commit(store, session: Session) -> None:
    """Inside a longer transaction (the email judge's batch of mail), the snapshot is
    written once, of the game's last state, just before the transaction commits, not
    after every command: within the transaction the next command takes the session the
    store keeps (``load``). A session that took in events rolled back since (its savepoint
    undone) no longer matches the head: the game is read again (from its last snapshot,
    the few events since replayed) and that state is written."""
    due = store.snapshots_due
    if not due:
        store.before_commit.append(lambda: _write_due_snapshots(store))
    due[session.game_id] = session


def _write_due_snapshots(store) -> None:
    due, store.snapshots_due = dict(store.snapshots_due), {}
    for game_id, session in due.items():
        if session.seq != store.head(game_id)[0]:
            try:
                session = _load(store, game_id, for_write=False)
            except (Damaged, UnknownGame):  # a cache never stops a commit: audit reports the damage
                continue
        _snapshot(store, session)


def snapshot_data(session: Session, head: tuple[int, str], full: bool = True) -> dict:
    """What a snapshot at ``head`` holds: the session's state (``full``) and the status."""
    data = session.to_json() if full else {"v": SNAPSHOT_VERSION, "light": True}
    data["status"] = status_report(session, head)
    return data



def _emit(store, session: Session, events, at: str | None) -> None:
    for kind, data in events:
        stamp = max(at or now_utc(), session.last_at)  # a clock set back never reorders the log
        session.apply_event(kind, data, stamp)
        store.append(session.game_id, kind, data, at=stamp, read_back=False)


def _follow_ups(store, session: Session):
    """Events the protocol adds by itself after a command (the stand-in's moves too)."""
    from . import standin
    progress, moves = True, 0
    while progress:
        progress = False
        step = session.sealed
        if step is not None and step.all_committed:
            for player in step.waiting:
                if player in step.revealed:
                    continue
                if player in step.defaulted:
                    yield "default", {"player": player, "kind": step.kind, "sealed": True, "round": step.round,
                                      "step": step.step, "reason": "no commitment (NMR)"}
                    progress = True
                    break
                if step.commits[player]["by"] in ("moderator", "stand-in"):
                    held = _held(store, session.game_id, step.round, step.step, player)
                    reveal = {"player": player, "round": step.round, "step": step.step,
                              "choice": held["choice"], "salt": held["salt"], "by": step.commits[player]["by"]}
                    yield _reveal_event(store, session, reveal)
                    progress = True
                    break
            if step.anonymous and not step.owes_reveal():
                yield "sealed_batch", {"round": step.round, "step": step.step}
                progress = True
        if session.standing_in and not progress and moves < standin.MAX_MOVES:
            move = standin.next_move(session)
            if move is not None:  # a seat the stand-in plays owes something: it answers at once
                kind, data, held = move
                if held is not None:
                    store.put_secret(session.game_id, _held_name(data["round"], data["step"], data["player"]),
                                     json.dumps(held))
                moves += 1
                yield kind, data
                progress = True
                continue
        if session.finished and not session.seed_revealed:
            yield from _end_of_play(store, session)
            progress = True


def _end_of_play(store, session: Session):
    """The disclosure of every held reveal (if any), then the server seed."""
    if session.owes_disclosure:
        yield "disclosed", {"steps": session.disclosure()}
    yield "seed_revealed", {"seed": store.get_secret(session.game_id, SEED)}


def _reveal_event(store, session: Session, data: dict) -> tuple[str, dict]:
    """A reveal as the open step takes it: in the clear, or, in an anonymous step, kept in
    the store's private entries with only ``reveal_held`` in the log (same transaction)."""
    step = session.sealed
    if step is None or not step.anonymous or (data["round"], data["step"]) != (step.round, step.step):
        return "reveal", data
    held_source(store, session.game_id).put(step.round, step.step, data["player"], data)
    return "reveal_held", {k: data[k] for k in ("player", "round", "step", "by")}


def _held(store, game_id: str, round_: int, step: int, player: str) -> dict:
    """The choice and salt the moderator sealed for ``player`` (kept until the reveal)."""
    name = _held_name(round_, step, player)
    text = store.get_secret(game_id, name)
    try:
        held = json.loads(text) if text is not None else None
        if isinstance(held, dict) and isinstance(held.get("choice"), str) and isinstance(held.get("salt"), str):
            return held
    except ValueError:
        pass
    what = "missing from" if text is None else "unreadable in"
    raise Refused(f"the choice sealed for {player} in step {round_}.{step} cannot be revealed: its salt "
                  f"(secret {name}) is {what} the database; restore the database from a backup")


def create_game(store, game_id: str, game_type: str, players: list[str], options: dict,
                require_signatures: bool = False, deadline_seconds: int | None = None,
                keys: dict | None = None, start: bool = False, at: str | None = None,
                extensions: dict | None = None, stand_in_after: int | None = None) -> Session:
    if not GAME_ID.match(game_id or ""):
        raise Refused(f"game name {quote(game_id)} is not allowed: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    rules = games.get(game_type)
    try:
        rules.setup(players, options, RandomSource.for_testing("options check"))  # dry run
    except ValueError as exc:
        raise Refused(str(exc)) from None
    seed = secrets.token_bytes(32)
    with store.atomic():
        if store.has_game(game_id):
            raise Refused(f"a game named {game_id!r} already exists; choose another name")
        alike = [g for g in store.games() if g.casefold() == game_id.casefold()]
        if alike:  # names that differ only by case would be mixed up in mails and commands
            raise Refused(f"a game named {alike[0]!r} already exists and {game_id!r} differs from it only "
                          f"by case; choose another name")
        store.put_secret(game_id, SEED, seed.hex())
        from .receipts import SECRET_NAME
        from .signing import generate_keypair
        judge_secret, judge_public = generate_keypair()
        store.put_secret(game_id, SECRET_NAME, judge_secret)
        session = Session(game_id, seed, held_source(store, game_id))
        data = {"game_type": game_type, "players": list(players), "options": options,
                "seed_hash": sha256_hex(seed),
                "require_signatures": require_signatures, "deadline_seconds": deadline_seconds,
                "keys": dict(keys or {}), "judge_key": judge_public}
        if extensions:  # players' own extensions, when not the default (seats.ALLOWANCE)
            data["extensions"] = _allowance(extensions, deadline_seconds)
        if stand_in_after is not None:  # the stand-in takes a seat after N defaults in a row
            if type(stand_in_after) is not int or stand_in_after < 1:
                raise Refused("--stand-in-after is a number of defaults in a row, 1 or more, e.g. 3")
            data["stand_in_after"] = stand_in_after
        events = [("created", data)]
        if start:
            events.append(("started", {"client_entropy": _entropy({})}))
        _emit(store, session, events, at)
        _snapshot(store, session)
        sessions = getattr(store, "sessions", None)
        if sessions is not None and session.seed is not None:
            _keep(sessions, game_id, session)  # the next write starts from it (see load)
    return session


def _allowance(extensions: dict, deadline_seconds: int | None) -> dict:
    from .seats import ALLOWANCE
    out = {**ALLOWANCE, **extensions}
    if set(out) != set(ALLOWANCE) or type(out["count"]) is not int or out["count"] < 0 \
            or type(out["max_seconds"]) is not int or out["max_seconds"] <= 0:
        raise Refused("--extensions is a number of extensions per player (0 for none) and --extension-max a "
                      "duration like 24h")
    if not deadline_seconds:
        raise Refused("extensions move deadlines: give the game a deadline too (--deadline 48h)")
    return out


def _entropy(seeds: dict) -> str:
    from .rng import combine_client_seeds
    return combine_client_seeds(seeds)


def _note(outcome: dict | None, **facts) -> None:
    """Tell the caller what a command did (``outcome`` is the caller's dict, if given)."""
    if outcome is not None:
        outcome.update(facts)


def add_client_seed(store, game_id: str, player: str, text: str, at=None, outcome: dict | None = None,
                    signature: str | None = None, nonce: str | None = None) -> Session:
    """Record (or replace) a player's client seed; ``outcome`` gets ``replaced`` and
    ``already_recorded`` (the same text again records nothing). In a signed game of
    version 3 it must carry the player's ``signature`` and ``nonce``."""
    def build(session):
        earlier = session.client_seeds.get(session.player(player))
        _note(outcome, replaced=earlier is not None and earlier != text, already_recorded=earlier == text)
        data = {"player": player, "seed": text}
        if signature is not None:
            data.update(signature=signature, nonce=nonce)
        return [] if earlier == text else [("client_seed", data)]
    return _write(store, game_id, build, at)


def client_seed_block(game_id: str, player: str, text: str, secret_key: str) -> str:
    """A signed client-seed block, made by the player (docs/protocol.md §14)."""
    from .armour import armour
    from .signing import sign
    body = client_seed_body(game_id, {"player": player, "seed": text, "nonce": secrets.token_hex(8)})
    return armour({"body": body, "sig": sign(secret_key, body)})


def register_key(store, game_id: str, player: str, public_key: str, at=None, outcome: dict | None = None) -> Session:
    """Register (or replace) a player's public key; the same key again records nothing."""
    def build(session):
        earlier = session.keys.get(session.player(player))
        same = earlier == public_key.strip()
        _note(outcome, replaced=earlier is not None and not same, already_recorded=same)
        return [] if same else [("key", {"player": player, "public_key": public_key.strip()})]
    return _write(store, game_id, build, at)


def start_game(store, game_id: str, at=None) -> Session:
    return _write(store, game_id, lambda s: [("started", {"client_entropy": _entropy(s.client_seeds)})], at)


def _current_step(session: Session, player: str) -> tuple[int, int]:
    if not session.started:
        raise Refused(f"game {session.game_id} has not started yet (pbem start)")
    if session.sealed is None:
        raise Refused(f"no sealed step is open now; {_owes(session, player)}")
    return session.sealed.round, session.sealed.step


def _owes(session: Session, player: str) -> str:
    kinds = [r.kind + (" (sealed)" if r.sealed else "") for r in session.requests_of(player)]
    return f"{player} owes: {', '.join(kinds)}" if kinds else f"{player} owes nothing now"


def _submission(player: str, round_step, session: Session, signature, nonce, **fields) -> dict:
    """A commit, reveal or decide as the protocol records it; round and step are the named
    ones, else the open sealed step's (None when there is none)."""
    open_step = (session.sealed.round, session.sealed.step) if session.sealed is not None else (None, None)
    r, s = round_step or open_step
    data = {"player": player, "round": r, "step": s, **fields}
    if signature is not None:
        data.update(signature=signature, nonce=nonce)
    return data


def _repeat(store, session: Session, kind: str, data: dict, round_step, outcome: dict | None) -> bool:
    """True (and ``outcome`` told so) when ``data`` is exactly what the log already holds."""
    earlier = find_repeat(session, Log(store, session.game_id), kind, data, round_step)
    if earlier is not None:
        _note(outcome, **earlier)
    return earlier is not None


def commit(store, game_id: str, player: str, commitment: str, round_step: tuple | None = None,
           signature: str | None = None, nonce: str | None = None, at=None, outcome: dict | None = None) -> Session:
    """Record a commitment. The same one again records nothing (``outcome`` gets
    ``already_recorded``), also after its step has closed."""
    def build(session):
        session.player(player)
        data = _submission(player, round_step, session, signature, nonce,
                           commitment=commitment.strip().lower(), by="player")
        if _repeat(store, session, "commit", data, round_step, outcome):
            return []
        data["round"], data["step"] = round_step or _current_step(session, player)
        _note(outcome, kind="commit", player=player, round=data["round"], step=data["step"], already_recorded=False,
              replaced=_replaces(session, player, data["round"], data["step"]))
        return [("commit", data)]
    return _write(store, game_id, build, at)


def _replaces(session: Session, player: str, round_: int, step_: int) -> bool:
    """Whether a new commitment of ``player`` replaces their own in the open step."""
    step = session.sealed
    return step is not None and (step.round, step.step) == (round_, step_) and player in step.commits


def commit_for_player(store, game_id: str, player: str, choice: str, at=None, outcome: dict | None = None) -> Session:
    """The moderator seals a choice sent privately by email; the salt stays in the store.
    The choice the moderator already sealed for the player in the open step, again, records
    nothing: the mail was processed twice."""
    def build(session):
        session.player(player)
        step = session.sealed
        mine = step.commits.get(player) if step is not None else None
        if mine is not None and mine["by"] == "moderator":
            held = store.get_secret(game_id, _held_name(step.round, step.step, player))
            if held is not None and _same_sealed(session, step.kind,
                                                 _held(store, game_id, step.round, step.step, player)["choice"], choice):
                _note(outcome, kind="commit", player=player, round=step.round, step=step.step, already_recorded=True)
                return []
        if step is not None and step.all_committed and player in step.waiting:
            raise Refused(f"all commitments of step {step.round}.{step.step} are in; {player}'s choice can no "
                          f"longer be made or replaced")
        sealed = seal(session, player, choice)
        store.put_secret(game_id, _held_name(sealed["round"], sealed["step"], player),
                         json.dumps({"choice": sealed["choice"], "salt": sealed["salt"]}))
        _note(outcome, kind="commit", player=player, round=sealed["round"], step=sealed["step"], already_recorded=False,
              replaced=_replaces(session, player, sealed["round"], sealed["step"]))
        return [("commit", {"player": player, "round": sealed["round"], "step": sealed["step"],
                            "commitment": sealed["commitment"], "by": "moderator"})]
    return _write(store, game_id, build, at)


def _same_sealed(session: Session, kind: str, held: str, choice: str) -> bool:
    try:
        return session.rules.normalize(kind, choice) == held
    except ChoiceError:
        return same_choice(held, choice)


def reveal(store, game_id: str, player: str, choice: str, salt: str, round_step=None,
           signature=None, nonce=None, at=None, outcome: dict | None = None) -> Session:
    """Check and record a reveal. ``outcome`` gets ``applied`` (the choice played) and
    ``illegal`` (why the committed choice was not allowed, so the default was played, else
    None); the same reveal again records nothing (``already_recorded``)."""
    def build(session):
        session.player(player)
        data = _submission(player, round_step, session, signature, nonce,
                           choice=choice, salt=salt.strip().lower(), by="player")
        if _repeat(store, session, "reveal", data, round_step, outcome):
            return
        r, s = round_step or _current_step(session, player)
        data.update(round=r, step=s, choice=_committed_spelling(session, player, (r, s), choice, salt))
        kind, event = _reveal_event(store, session, data)
        yield kind, event
        if kind == "reveal_held":  # what was played stays with the judge until the end
            _note(outcome, kind="reveal", player=player, round=r, step=s, already_recorded=False, held=True)
        else:
            _note(outcome, kind="reveal", player=player, round=r, step=s, already_recorded=False,
                  applied=data["applied"], illegal=data.get("illegal"))
    return _write(store, game_id, build, at)


def _committed_spelling(session: Session, player: str, round_step, choice: str, salt: str) -> str:
    """The choice as committed: a player may type a reveal as 'c, d' where the seal
    committed its canonical form 'C,D'. Returns the spelling that matches, if one does."""
    from .commit import commitment_matches
    step = session.sealed
    committed = step.commits.get(player) if step is not None else None
    if committed is None or round_step != (step.round, step.step):
        return choice
    try:
        salt_hex = parse_salt(salt)
        canonical = session.rules.normalize(step.kind, choice)
    except (ValueError, ChoiceError):
        return choice
    for spelling in (choice, canonical):
        if commitment_matches(committed["commitment"], session.game_id, step.round, step.step,
                              player, spelling, salt_hex):
            return spelling
    return choice


def decide(store, game_id: str, player: str, choice: str, round_step=None, signature=None,
           nonce=None, at=None, outcome: dict | None = None) -> Session:
    """Record an open decision. The same decision again, once the game has moved past it,
    records nothing (``outcome`` gets ``already_recorded``); a different one is refused."""
    def build(session):
        session.player(player)
        if not session.started or session.state is None:
            raise Refused(f"game {game_id} has not started yet (pbem start)")
        r, s = round_step or (session.state.round, session.state.step)
        data = {"player": player, "round": r, "step": s, "choice": choice}
        if signature is not None:
            data.update(signature=signature, nonce=nonce)
        if _repeat(store, session, "decide", data, round_step, outcome):
            return
        _refuse_changed_decision(store, session, player, choice, round_step)
        yield "decide", data
        _note(outcome, kind="decide", player=player, round=r, step=s, already_recorded=False, applied=data["applied"])
    return _write(store, game_id, build, at)


def _refuse_changed_decision(store, session: Session, player: str, choice: str, round_step) -> None:
    """A player who owes no decision now but made one in this round (or the named step):
    say that the recorded decision stands, rather than only that nothing is owed."""
    if any(not r.sealed for r in session.requests_of(player)) or decision_fits_now(session, player, choice, round_step):
        return
    earlier = Log(store, session.game_id).of("decide", player, round_step)
    if earlier and (round_step is not None or earlier[-1][1]["round"] == session.state.round):
        was = earlier[-1][1]
        raise Refused(f"{player} already decided {was['choice']} in round {was['round']} step {was['step']}, "
                      f"and a recorded decision is final; {_owes(session, player)}")


def nmr(store, game_id: str, player: str, force: bool = False, at=None, grace: int = 0) -> Session:
    """Apply the documented default for what ``player`` owes now (one request). In a game
    of version 3 the event records the deadline it was judged against (the request's, plus
    ``grace`` seconds); before it, or in a game without a deadline, only with ``force``."""
    def build(session):
        session.player(player)
        if session.state is None:
            raise Refused(f"game {game_id} has not started yet (pbem start)")
        step = session.sealed
        if step is not None and player in step.owes_commit():
            key = (player, step.round, step.step, step.kind)
            return [("nmr", {"player": player, "round": step.round, "step": step.step,
                             **default_marks(session, key, force, at or now_utc(), grace)})]
        if step is not None and step.all_committed and player in step.owes_reveal():
            key = (player, step.round, step.step, "reveal")
            reason = ("no reveal: the seat's former player sealed this choice on their own machine and left "
                      "with its salt (replaced)" if (player, step.round, step.step) in session.orphaned
                      else "no reveal (NMR)")
            return [("default", {"player": player, "kind": step.kind, "sealed": True, "round": step.round,
                                 "step": step.step, "reason": reason,
                                 **default_marks(session, key, force, at or now_utc(), grace)})]
        requests = [r for r in session.requests_of(player) if not r.sealed]
        if not requests:
            raise Refused(f"{player} owes nothing that a default could settle now")
        key = (player, requests[0].round, requests[0].step, requests[0].kind)
        return [("default", {"player": player, "kind": requests[0].kind, "round": session.state.round,
                             "step": session.state.step, "reason": "NMR", **default_marks(session, key, force, at or now_utc(), grace)})]
    return _write(store, game_id, build, at)


def reveal_seed(store, game_id: str, force: bool = False, at=None) -> Session:
    """Publish the server seed (automatic at the end). Before the end it would let anyone
    predict every later roll, so it then needs ``force`` and ends play for good."""
    def build(session):
        if session.seed_revealed:
            raise Refused(f"the seed of {game_id} is already revealed")
        if not session.finished and not force:
            raise Refused(f"game {game_id} is not over: publishing its seed now would let anyone predict "
                          f"every later roll; use --force to end play and publish it")
        return list(_end_of_play(store, session))
    return _write(store, game_id, build, at)


# ---------------------------------------------------------------------- sealing

def seal(session: Session, player: str, choice: str) -> dict:
    """Check a sealed choice is legal now, and make its commitment with a fresh salt."""
    session.player(player)
    r, s = _current_step(session, player)
    if player not in session.sealed.waiting:
        raise Refused(f"{player} takes no part in sealed step {r}.{s}")
    try:
        canonical = session.check(player, choice)
    except ChoiceError as exc:
        raise Refused(str(exc)) from None
    salt = new_salt()
    return {"game": session.game_id, "player": player, "round": r, "step": s, "choice": canonical,
            "salt": salt, "anonymous": bool(session.sealed.anonymous),
            "commitment": make_commitment(session.game_id, r, s, player, canonical, salt)}


def context_token(session: Session, player: str) -> str | None:
    """The token of ``player``'s private message: for their open sealed request (to seal
    offline), else for their open decisions (to sign a decision offline); None if neither."""
    requests = session.requests_of(player)
    if not requests:
        return None
    sealed = [r for r in requests if r.sealed]
    chosen = sealed[:1] or requests
    options = None
    if all(r.options is not None for r in chosen):
        options = [o for r in chosen for o in r.options]
    return make_token({
        "game": session.game_id, "type": session.meta["game_type"], "player": player,
        "round": chosen[0].round, "step": chosen[0].step, "kind": chosen[0].kind,
        "kinds": [r.kind for r in chosen], "sealed": bool(sealed), "options": options,
        "signatures": bool(session.meta.get("require_signatures")),
        **({"anonymous": True} if sealed and getattr(sealed[0], "anonymous", False) else {}),
    })


def decide_offline(token: str, choice: str, secret_key: str | None) -> dict:
    """A (signed) decision block made with only a private message's token."""
    ctx = read_token(token)
    if ctx.get("signatures") and not secret_key:
        raise Refused("this game requires signed submissions: add --key YOUR.key (from pbem keygen)")
    if ctx.get("sealed", True):
        raise Refused("this token is for a sealed choice: seal it with pbem seal --context TOKEN CHOICE")
    options = ctx.get("options")
    text = choice.strip()
    if not text:
        raise Refused("empty choice; send one of the options in your private message")
    if options is not None and _folded(text) not in {_folded(o) for o in options}:
        raise Refused(f"not among your options now; send one of: {', '.join(options)}")
    if options is not None:
        text = next(o for o in options if _folded(o) == _folded(text))
    block = submission_block(ctx["game"], "decide", {"player": ctx["player"], "round": ctx["round"],
                                                      "step": ctx["step"], "choice": text}, secret_key)
    return {"game": ctx["game"], "player": ctx["player"], "choice": text, "block": block}


def _folded(text: str) -> str:
    """Options are matched without regard to case or letter width, as names are."""
    import unicodedata
    return unicodedata.normalize("NFKC", text).casefold()


def seal_offline(token: str, choice: str) -> dict:
    """Seal with only a private message's token: check the choice against its options."""
    ctx = read_token(token)
    if not ctx.get("sealed", True):
        raise Refused("this token is for an open decision, not a sealed one: use pbem decide --context TOKEN CHOICE")
    if not choice.strip():
        raise Refused("empty choice; send one of the options in your private message")
    rules = games.get(ctx["type"])
    try:
        canonical = rules.normalize(ctx["kind"], choice)
    except ChoiceError as exc:
        raise Refused(str(exc)) from None
    options = ctx.get("options")
    if options is not None and canonical not in options:
        raise Refused(f"illegal: {canonical} is not allowed now; legal: {', '.join(options)}")
    salt = new_salt()
    return {"game": ctx["game"], "player": ctx["player"], "round": ctx["round"], "step": ctx["step"],
            "choice": canonical, "salt": salt, "anonymous": bool(ctx.get("anonymous")),
            "commitment": make_commitment(ctx["game"], ctx["round"], ctx["step"], ctx["player"], canonical, salt)}


def submission_block(game_id: str, kind: str, data: dict, secret_key: str | None) -> str:
    """An armoured submission block (commit, reveal or decide) with a fresh nonce, signed
    when a secret key is given."""
    from .armour import armour
    from .signing import sign
    body = signed_body(game_id, kind, {**data, "nonce": secrets.token_hex(8)})
    payload = {"body": body}
    if secret_key:
        payload["sig"] = sign(secret_key, body)
    return armour(payload)


def signed_blocks(sealed: dict, secret_key: str | None) -> dict:
    """Armoured submission blocks for a sealed choice: one to send now, one to keep."""
    return {kind: submission_block(sealed["game"], kind, sealed, secret_key) for kind in ("commit", "reveal")}


def signed_decision(session: Session, player: str, choice: str, secret_key: str) -> str:
    """A signed block for an open decision, checked first against what ``player`` owes now."""
    session.player(player)
    if session.state is None or session.finished:
        raise Refused(f"game {session.game_id} is not in play, so no decision is expected")
    if any(r.sealed for r in session.requests_of(player)):
        raise Refused(f"{player} owes a sealed choice: pbem seal --key, not a decision")
    try:
        canonical = session.check(player, choice)
    except ChoiceError as exc:
        raise Refused(str(exc)) from None
    return decision_block(session, player, canonical, secret_key)


def decision_block(session: Session, player: str, choice: str, secret_key: str | None) -> str:
    return submission_block(session.game_id, "decide", {"player": player, "round": session.state.round,
                                                         "step": session.state.step, "choice": choice}, secret_key)


# ---------------------------------------------------------------------- submissions

def _seed_block(session: Session, number: int, body: dict, payload: dict, done: list):
    """A signed client seed from a submission block (docs/protocol.md §14)."""
    if set(body) != {"v", "game", "kind", "player", "seed", "nonce"} or body["v"] != 1 or not all(
            isinstance(body[k], str) for k in ("player", "seed", "nonce")):
        raise Refused(f"submission block {number} is not a version 1 client_seed (fields v, game, kind, player, "
                      f"seed, nonce)")
    player = session.player(body["player"])
    item = {"kind": "client_seed", "player": player, "round": None, "step": None,
            "already_recorded": session.client_seeds.get(player) == body["seed"]}
    done.append(item)
    if not item["already_recorded"]:
        data = {"player": player, "seed": body["seed"], "nonce": body["nonce"]}
        if "sig" in payload:
            data["signature"] = payload["sig"]
        yield "client_seed", data


def submit(store, game_id: str, text: str, at=None) -> list[dict]:
    """Apply every armoured block in ``text`` (all or nothing, in one transaction)."""
    from .armour import ArmourError, extract_blocks
    try:
        blocks = extract_blocks(text)
    except ArmourError as exc:
        raise Refused(str(exc)) from None
    if not blocks:
        raise Refused("no submission block found: paste the whole block from -----BEGIN PBEM SUBMISSION----- to -----END PBEM SUBMISSION-----")
    done = []
    log = Log(store, game_id)

    def build(session):
        for number, payload in enumerate(blocks, start=1):
            body = payload.get("body")
            if not isinstance(body, dict) or body.get("kind") not in ("commit", "reveal", "decide", "client_seed"):
                raise Refused(f"submission block {number} holds no commit, reveal, decide or client_seed")
            if body.get("game") != game_id:
                raise Refused(f"submission block {number} is for game {quote(body.get('game'))}, not {quote(game_id)}")
            if body["kind"] == "client_seed":
                current.update(number=number, what=f"client_seed of {body.get('player')}")
                yield from _seed_block(session, number, body, payload, done)
                continue
            wanted = {"commit": ("commitment",), "reveal": ("choice", "salt"), "decide": ("choice",)}[body["kind"]]
            missing = [k for k in ("player", "round", "step", "nonce", *wanted) if k not in body]
            if missing:
                raise Refused(f"submission block {number} lacks {', '.join(missing)}")
            if any(type(body[k]) is not int for k in ("round", "step")) or not all(
                    isinstance(body[k], str) for k in ("player", "nonce", *wanted)):
                raise Refused(f"submission block {number} is malformed: round and step must be whole "
                              f"numbers, the other fields text")
            if body.get("v") != 1 or set(body) - {"v", "game", "kind", "player", "round", "step", "nonce", *wanted}:
                raise Refused(f"submission block {number} is not a version 1 {body['kind']} (unknown fields or version)")
            data = {k: body[k] for k in ("player", "round", "step", *wanted)}
            if body["kind"] != "decide":
                data["by"] = "player"
            if "sig" in payload:
                data.update(signature=payload["sig"], nonce=body["nonce"])
            current.update(number=number, what=f"{body['kind']} of {body['player']}")
            earlier = find_repeat(session, log, body["kind"], data, (body["round"], body["step"]))
            if earlier is not None:  # e.g. the player's earlier block, quoted in a reply
                done.append(earlier)
                continue
            item = {"kind": body["kind"], "player": body["player"], "round": body["round"],
                    "step": body["step"], "already_recorded": False}
            done.append(item)
            kind, event = _reveal_event(store, session, data) if body["kind"] == "reveal" else (body["kind"], data)
            yield kind, event
            if kind == "reveal_held":
                item["held"] = True
                continue
            if body["kind"] != "commit":
                item["applied"] = data["applied"]
            if body["kind"] == "reveal":
                item["illegal"] = data.get("illegal")

    current = {"number": 0, "what": ""}
    try:
        _write(store, game_id, build, at)
    except Refused as exc:
        if len(blocks) == 1:
            raise
        raise Refused(f"block {current['number']} ({current['what']}): {exc}; nothing from this "
                      f"submission was recorded (send the blocks that belong together, in order)") from None
    return done
