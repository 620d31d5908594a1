"""The commands that write a game: create it, register keys and client seeds, start it,
and take its moves (commit, reveal, decide, a default, the seed); the library behind the
command line and the email judge.

Each runs in one transaction (writing.py); errors are typed (``pbem.protocol.errors``);
nothing here prints. A player seals a choice with ``seal`` when the game is at hand, or
with offline.py from a private message's token.
"""

from __future__ import annotations

import json
import re
import secrets

from .. import games
from ..games.base import ChoiceError
from ..text import quote
from .cache import write_snapshot
from .canonical import sha256_hex
from .commit import make_commitment, new_salt, parse_salt
from .discretion import default_marks
from .errors import Refused
from .loading import SEED, held_source, keep_session
from .repeats import Log, decision_fits_now, find as find_repeat, same_choice
from .rng import RandomSource
from .session import Session
from .times import now_utc  # noqa: F401 - callers take the clock from here
from .writing import emit, end_of_play, held_choice, held_name, hold_early, note, reveal_event, write

GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


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
            from .standin import POLICY
            data["stand_in_policy"] = POLICY  # how it plays (docs/protocol.md §16); old logs: stand-in-v1
        events = [("created", data)]
        if start:
            events.append(("started", {"client_entropy": _entropy({})}))
        emit(store, session, events, at)
        write_snapshot(store, session)
        sessions = getattr(store, "sessions", None)
        if sessions is not None and session.seed is not None:
            keep_session(sessions, game_id, session)  # the next write starts from it (see load)
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


def add_client_seed(store, game_id: str, player: str, text: str, at=None, outcome: dict | None = None,
                    signature: str | None = None, nonce: str | None = None) -> Session:
    """Record (or replace) a player's client seed; ``outcome`` gets ``replaced`` and
    ``already_recorded`` (the same text again records nothing). In a signed game of
    version 3 it must carry the player's ``signature`` and ``nonce``."""
    def build(session):
        earlier = session.client_seeds.get(session.player(player))
        note(outcome, replaced=earlier is not None and earlier != text, already_recorded=earlier == text)
        data = {"player": player, "seed": text}
        if signature is not None:
            data.update(signature=signature, nonce=nonce)
        return [] if earlier == text else [("client_seed", data)]
    return write(store, game_id, build, at)


def register_key(store, game_id: str, player: str, public_key: str, at=None, outcome: dict | None = None) -> Session:
    """Register (or replace) a player's public key; the same key again records nothing."""
    def build(session):
        earlier = session.keys.get(session.player(player))
        same = earlier == public_key.strip()
        note(outcome, replaced=earlier is not None and not same, already_recorded=same)
        return [] if same else [("key", {"player": player, "public_key": public_key.strip()})]
    return write(store, game_id, build, at)


def start_game(store, game_id: str, at=None) -> Session:
    return write(store, game_id, lambda s: [("started", {"client_entropy": _entropy(s.client_seeds)})], at)


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
        note(outcome, **earlier)
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
        note(outcome, kind="commit", player=player, round=data["round"], step=data["step"], already_recorded=False,
              replaced=_replaces(session, player, data["round"], data["step"]))
        return [("commit", data)]
    return write(store, game_id, build, at)


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
            held = store.get_secret(game_id, held_name(step.round, step.step, player))
            if held is not None and _same_sealed(session, step.kind,
                                                 held_choice(store, game_id, step.round, step.step, player)["choice"], choice):
                note(outcome, kind="commit", player=player, round=step.round, step=step.step, already_recorded=True)
                return []
        if step is not None and step.all_committed and player in step.waiting:
            raise Refused(f"all commitments of step {step.round}.{step.step} are in; {player}'s choice can no "
                          f"longer be made or replaced")
        sealed = seal(session, player, choice)
        store.put_secret(game_id, held_name(sealed["round"], sealed["step"], player),
                         json.dumps({"choice": sealed["choice"], "salt": sealed["salt"]}))
        note(outcome, kind="commit", player=player, round=sealed["round"], step=sealed["step"], already_recorded=False,
              replaced=_replaces(session, player, sealed["round"], sealed["step"]))
        return [("commit", {"player": player, "round": sealed["round"], "step": sealed["step"],
                            "commitment": sealed["commitment"], "by": "moderator"})]
    return write(store, game_id, build, at)


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
        if hold_early(store, session, data):  # sent early: held, unseen, until every commitment is in
            note(outcome, kind="reveal", player=player, round=r, step=s, already_recorded=False, early=True)
            return
        kind, event = reveal_event(store, session, data)
        yield kind, event
        if kind == "reveal_held":  # what was played stays with the judge until the end
            note(outcome, kind="reveal", player=player, round=r, step=s, already_recorded=False, held=True)
        else:
            note(outcome, kind="reveal", player=player, round=r, step=s, already_recorded=False,
                  applied=data["applied"], illegal=data.get("illegal"))
    return write(store, game_id, build, at)


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
        note(outcome, kind="decide", player=player, round=r, step=s, already_recorded=False, applied=data["applied"])
    return write(store, game_id, build, at)


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
        orphan = step is not None and (player, step.round, step.step) in session.orphaned and not step.all_committed
        if orphan and not force:
            raise Refused(f"{player}'s commitment was sealed by the seat's former player, who left with its salt: "
                          f"the default applies at the deadline once every commitment is in, or now with: "
                          f"pbem nmr {game_id} {player} --force")
        if step is not None and (player in step.owes_commit() or orphan):
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
    return write(store, game_id, build, at)


def reveal_seed(store, game_id: str, force: bool = False, at=None) -> Session:
    """Publish the server seed (automatic at the end). Before the end it would let anyone
    predict every later roll, so it then needs ``force`` and ends play for good."""
    def build(session):
        if session.seed_revealed:
            raise Refused(f"the seed of {game_id} is already revealed")
        if not session.finished and not force:
            raise Refused(f"game {game_id} is not over: publishing its seed now would let anyone predict "
                          f"every later roll; use --force to end play and publish it")
        return list(end_of_play(store, session))
    return write(store, game_id, build, at)


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
