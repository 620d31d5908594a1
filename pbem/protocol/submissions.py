"""Submissions: the armoured blocks a player pastes or mails (``pbem submit``, the email
judge), each checked and applied, all of them or none.
"""

from __future__ import annotations

from ..text import quote
from .errors import Refused
from .repeats import Log, find as find_repeat
from .session import Session
from .writing import hold_early, reveal_event, write


def _fields(number: int, body: dict, what: str, names: tuple, ints: tuple = ()) -> None:
    """Refuse a block whose body is not exactly version 1 with ``names`` (strings, but for
    ``ints``), in one line naming the fields."""
    if set(body) != {"v", "game", "kind", *names} or body["v"] != 1 or not all(
            type(body[k]) is int if k in ints else isinstance(body[k], str) for k in names):
        raise Refused(f"submission block {number} is not a version 1 {what} (fields v, game, kind, "
                      f"{', '.join(names)})")


def _seed_block(session: Session, number: int, body: dict, payload: dict, done: list):
    """A signed client seed from a submission block (docs/protocol.md §14)."""
    _fields(number, body, "client_seed", ("player", "seed", "nonce"))
    player = session.player(body["player"])
    item = {"kind": "client_seed", "player": player, "round": None, "step": None,
            "already_recorded": session.client_seeds.get(player) == body["seed"]}
    done.append(item)
    if not item["already_recorded"]:
        data = {"player": player, "seed": body["seed"], "nonce": body["nonce"]}
        if "sig" in payload:
            data["signature"] = payload["sig"]
        yield "client_seed", data


def _key_block(session: Session, number: int, body: dict, payload: dict, done: list):
    """A player's key change, signed with the key the seat holds (docs/protocol.md §14)."""
    _fields(number, body, "key change", ("player", "public_key", "nonce"))
    if "sig" not in payload:
        raise Refused(f"submission block {number} changes {body['player']}'s key but is not signed: a key change "
                      f"is signed with the key the seat holds (pbem key GAME PLAYER NEW-KEY --sign-with OLD.key)")
    player = session.player(body["player"])
    item = {"kind": "key", "player": player, "round": None, "step": None,
            "already_recorded": session.keys.get(player) == body["public_key"]}
    done.append(item)
    if not item["already_recorded"]:
        yield "key", {"player": player, "public_key": body["public_key"], "signature": payload["sig"],
                      "nonce": body["nonce"]}


def _extend_block(session: Session, number: int, body: dict, payload: dict, done: list):
    """A player's own extension, signed (docs/protocol.md §16)."""
    _fields(number, body, "extension", ("player", "round", "step", "seconds", "nonce"), ints=("round", "step", "seconds"))
    if "sig" not in payload:
        raise Refused(f"submission block {number} is an extension but is not signed (pbem extend GAME --context "
                      f"TOKEN 24h --sign-with YOUR.key)")
    player = session.player(body["player"])
    item = {"kind": "extend", "player": player, "round": body["round"], "step": body["step"],
            "already_recorded": body["nonce"] in session.nonces}
    done.append(item)
    if not item["already_recorded"]:
        signed = {**{k: body[k] for k in ("round", "step", "seconds", "nonce")}, "signature": payload["sig"]}
        data = session.extension_data(player, None, None, "player", "asked in a signed block", signed)
        item["requests"] = data["requests"]
        yield "extended", data


def _commits_first(blocks: list) -> list[tuple[int, dict]]:
    """The blocks, numbered as pasted, in the order they are applied: a reveal block pasted
    above the commit block it opens (same player, round and step) comes just after it (a
    reveal sent early, docs/protocol.md §3); everything else in the order pasted."""
    def key(payload):
        body = payload.get("body") if isinstance(payload, dict) else None
        if not isinstance(body, dict):
            return None, None
        return body.get("kind"), repr((body.get("player"), body.get("round"), body.get("step")))
    keys = [key(payload) for payload in blocks]
    ordered, waiting = [], {}
    for index, (number, payload) in enumerate(enumerate(blocks, start=1)):
        kind, mine = keys[index]
        if kind == "reveal" and ("commit", mine) in keys[index + 1:]:
            waiting.setdefault(mine, []).append((number, payload))
            continue
        ordered.append((number, payload))
        if kind == "commit":
            ordered += waiting.pop(mine, [])
    return ordered


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
        for number, payload in _commits_first(blocks):
            numbers.extend([current["number"]] * (len(done) - len(numbers)))  # the block of each item so far
            body = payload.get("body")
            if not isinstance(body, dict) or body.get("kind") not in ("commit", "reveal", "decide", "client_seed",
                                                                      "key", "extend"):
                raise Refused(f"submission block {number} holds no commit, reveal, decide, client_seed, key or extend")
            if body.get("game") != game_id:
                raise Refused(f"submission block {number} is for game {quote(body.get('game'))}, not {quote(game_id)}")
            if body["kind"] == "client_seed":
                current.update(number=number, what=f"client_seed of {body.get('player')}")
                yield from _seed_block(session, number, body, payload, done)
                continue
            if body["kind"] in ("key", "extend"):
                current.update(number=number, what=f"{body['kind']} of {body.get('player')}")
                yield from (_key_block if body["kind"] == "key" else _extend_block)(session, number, body, payload, done)
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
            if body["kind"] == "reveal" and hold_early(store, session, data):
                item["early"] = True  # kept, unseen, until every commitment is in
                continue
            kind, event = reveal_event(store, session, data) if body["kind"] == "reveal" else (body["kind"], data)
            yield kind, event
            if kind == "reveal_held":
                item["held"] = True
                continue
            if body["kind"] != "commit":
                item["applied"] = data["applied"]
            if body["kind"] == "reveal":
                item["illegal"] = data.get("illegal")

    current = {"number": 0, "what": ""}
    numbers: list[int] = []
    try:
        write(store, game_id, build, at)
    except Refused as exc:
        if len(blocks) == 1:
            raise
        raise Refused(f"block {current['number']} ({current['what']}): {exc}; nothing from this "
                      f"submission was recorded (send the blocks that belong together, in order)") from None
    numbers.extend([current["number"]] * (len(done) - len(numbers)))
    return [item for _, item in sorted(zip(numbers, done), key=lambda pair: pair[0])]  # in the order pasted
