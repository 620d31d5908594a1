"""Loading a game: its protocol state at the head, for a command to read or write on.

The state comes from the newest full snapshot (a cache that ``audit`` checks) and the few
events since, else from a replay of the whole log with the moderator's private seed; a
transaction keeps the sessions it loaded or wrote (``load``). A stored game that fails a
check raises ``Damaged``.
"""

from __future__ import annotations

from ..text import quote
from .anonymous import StoreHeld
from .canonical import sha256_hex
from .errors import AuditFailure, Damaged, Refused, UnknownGame
from .session import Session
from .snapshot import read_snapshot

SEED = "server_seed"  # the name of the moderator's private seed among the store's secrets


def held_source(store, game_id: str) -> StoreHeld:
    """The reveals of anonymous steps that the judge holds (private, never exported)."""
    return StoreHeld(store, game_id)


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
            keep_session(sessions, game_id, cached)
            return cached
    session = load_fresh(store, game_id, for_write)
    if sessions is not None:
        keep_session(sessions, game_id, session)
    return session


KEPT_SESSIONS = 256  # a judge that runs for months keeps the games it wrote to last, not all


def keep_session(sessions: dict, game_id: str, session: Session) -> None:
    sessions.pop(game_id, None)
    sessions[game_id] = session
    while len(sessions) > KEPT_SESSIONS:
        del sessions[next(iter(sessions))]  # the one read longest ago


def load_fresh(store, game_id: str, for_write: bool) -> Session:
    """The game's state read from the store, not from the sessions a transaction keeps."""
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
