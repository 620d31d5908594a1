"""Writing a command: one transaction that validates and appends its events, then the
follow-ups the protocol adds by itself.

Each writing command runs in one ``BEGIN IMMEDIATE`` transaction (``write``): it loads the
game, validates the new events with the same rules the audit uses, appends them, and adds
the follow-ups the protocol requires (moderator-held reveals and defaults once a sealed
step has all its commitments, the stand-in's moves, the seed once the game is over). Any
refusal leaves the log as it was.
"""

from __future__ import annotations

import json

from .anonymous import batch_digest, early_name
from .cache import snapshot_at_commit, write_snapshot
from .errors import Refused
from .loading import SEED, held_source, load
from .reports import private
from .session import Session
from .times import now_utc


ORPHANED = ("no reveal: the seat's former player sealed this choice on their own machine and left with its salt "
            "(replaced)")


def held_name(round_: int, step: int, player: str) -> str:
    """The name of the secret that keeps the choice and salt sealed for ``player``."""
    return f"held/{round_}/{step}/{player}"


def note(outcome: dict | None, **facts) -> None:
    """Tell the caller what a command did (``outcome`` is the caller's dict, if given)."""
    if outcome is not None:
        outcome.update(facts)


def write(store, game_id: str, build, at: str | None = None) -> Session:
    """Run ``build(session)`` (which yields (kind, data) events) in one transaction (a
    savepoint when the caller holds one open, as the email judge does per message).

    Each of ``store.write_hooks`` (set by whoever opened the store) sees the session
    before and after, inside the same transaction: the email judge queues the messages
    the new events call for there, so a message exists exactly when its events do."""
    batch = getattr(store, "in_transaction", False)  # the caller's transaction holds more writes
    with store.atomic():
        session = load(store, game_id, for_write=True)  # never write on top of a damaged game
        watchers = [hook(store, session) for hook in getattr(store, "write_hooks", ())]
        emit(store, session, build(session), at)
        emit(store, session, _follow_ups(store, session), at)
        if batch:
            snapshot_at_commit(store, session)
        else:
            write_snapshot(store, session)
        for after in watchers:
            if after is not None:
                after(session, at or now_utc())
    return session


def emit(store, session: Session, events, at: str | None) -> None:
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
                    orphan = (player, step.round, step.step) in session.orphaned
                    yield "default", {"player": player, "kind": step.kind, "sealed": True, "round": step.round,
                                      "step": step.step, "reason": ORPHANED if orphan else "no commitment (NMR)"}
                    progress = True
                    break
                if step.commits[player]["by"] in ("moderator", "stand-in"):
                    held = held_choice(store, session.game_id, step.round, step.step, player)
                    reveal = {"player": player, "round": step.round, "step": step.step,
                              "choice": held["choice"], "salt": held["salt"], "by": step.commits[player]["by"]}
                    yield reveal_event(store, session, reveal)
                    progress = True
                    break
                early = _early_reveal(store, session, step, player)
                if early is not None:
                    yield reveal_event(store, session, early)
                    progress = True
                    break
            if step.anonymous and not step.owes_reveal():
                reveals = {p: step.held[p] for p in step.waiting}
                yield "sealed_batch", {"round": step.round, "step": step.step,
                                       "digest": batch_digest(session.game_id, step.round, step.step, reveals)}
                progress = True
        if session.standing_in and not progress and moves < standin.MAX_MOVES:
            move = standin.next_move(session, private)
            if move is not None:  # a seat the stand-in plays owes something: it answers at once
                kind, data, held = move
                if held is not None:
                    store.put_secret(session.game_id, held_name(data["round"], data["step"], data["player"]),
                                     json.dumps(held))
                moves += 1
                yield kind, data
                progress = True
                continue
        if session.finished and not session.seed_revealed:
            yield from end_of_play(store, session)
            progress = True


def hold_early(store, session: Session, data: dict) -> bool:
    """A reveal for the open sealed step sent before every commitment of it is in: checked
    now as it will be then (``Session.check_early_reveal``), and kept among the store's
    private entries, unseen by the others, until the last commitment arrives; then the
    follow-ups record it as the player's (docs/protocol.md, "A reveal sent early").
    False, keeping nothing, when the reveal is not early."""
    step = session.sealed
    if step is None or step.all_committed or (data.get("round"), data.get("step")) != (step.round, step.step):
        return False
    session.check_early_reveal(data)
    store.put_secret(session.game_id, early_name(step.round, step.step, data["player"]),
                     json.dumps(data, sort_keys=True))
    return True


def _early_reveal(store, session: Session, step, player: str) -> dict | None:
    """The reveal ``player`` sent before every commitment was in, if they did and it would
    still be accepted as it was then (``Session.check_early_reveal``): not when a later
    commitment of theirs replaced the one it opened, the seat was replaced since (the
    commitment is its former player's, orphaned), or its signature is of a key the player
    has changed since. Such a reveal is not recorded, and the player owes the reveal as usual."""
    data = held_source(store, session.game_id).early(step.round, step.step, player)
    return data if session.early_reveal_stands(data) else None


def end_of_play(store, session: Session):
    """The disclosure of every held reveal (if any), then the server seed."""
    if session.owes_disclosure:
        yield "disclosed", {"steps": session.disclosure()}
    yield "seed_revealed", {"seed": store.get_secret(session.game_id, SEED)}


def reveal_event(store, session: Session, data: dict) -> tuple[str, dict]:
    """A reveal as the open step takes it: in the clear, or, in an anonymous step, kept in
    the store's private entries with only ``reveal_held`` in the log (same transaction)."""
    step = session.sealed
    if step is None or not step.anonymous or (data["round"], data["step"]) != (step.round, step.step):
        return "reveal", data
    held_source(store, session.game_id).put(step.round, step.step, data["player"], data)
    return "reveal_held", {k: data[k] for k in ("player", "round", "step", "by")}


def held_choice(store, game_id: str, round_: int, step: int, player: str) -> dict:
    """The choice and salt the moderator sealed for ``player`` (kept until the reveal)."""
    name = held_name(round_, step, player)
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
