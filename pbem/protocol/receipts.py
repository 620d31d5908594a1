"""The judge's signed receipts: a promise that an event is in the log (docs/protocol.md §12).

This module is a contract. A receipt body is::

    {"v": 1, "kind": "receipt", "game": G, "player": P, "seq": N, "event": KIND,
     "hash": H, "head_seq": M, "head_hash": HM, "judge_key": K}

signed with Ed25519 by the judge key over ``b"pbem-receipt-v1" 0x00 canonical_json(body)``
and armoured (label RECEIPT) around ``{"receipt": body, "sig": base64 signature}``. It
binds only hashes and indexes: never a choice, a salt or a hidden card. For a reveal held
early (docs/protocol.md §3) ``event`` is ``early_reveal`` and ``seq``/``hash`` name the
player's commitment it opens: the judge's word that it holds that reveal (``dropped``).

Checking a receipt against a log gives a contradiction (the judge lied: ``Contradiction``)
or nothing; a receipt that cannot be used at all (unreadable, malformed, for another game,
badly signed) raises ``UnusableReceipt``. Game-agnostic.
"""

from __future__ import annotations

import base64
import re

from .canonical import canonical_json
from .errors import BadAuditInput

RECEIPT_TAG = "pbem-receipt-v1"
SECRET_NAME = "judge_key"  # the store's private entry holding the judge's secret key
# the events a player's submission writes (and a key the moderator sets for a seat), which earn
# that player a receipt; an extension only when the player asked for it
RECEIPTED = ("commit", "reveal", "reveal_held", "decide", "client_seed", "key", "extended")
EARLY = "early_reveal"  # a receipt's event word for a reveal held before every commitment was in (§3, §12)
FIELDS = ("v", "kind", "game", "player", "seq", "event", "hash", "head_seq", "head_hash", "judge_key")
_HASH = re.compile(r"[0-9a-f]{64}")


class UnusableReceipt(BadAuditInput):
    """A receipt that proves nothing (a usage error of the audit, not a verdict)."""


def short(digest: str) -> str:
    return f"{digest[:8]}…"


def signed_message(body: dict) -> bytes:
    return RECEIPT_TAG.encode("ascii") + b"\x00" + canonical_json(body)


def make_body(game: str, player: str, seq: int, kind: str, event_hash: str,
              head: tuple[int, str], judge_public: str) -> dict:
    return {"v": 1, "kind": "receipt", "game": game, "player": player, "seq": seq, "event": kind,
            "hash": event_hash, "head_seq": head[0], "head_hash": head[1], "judge_key": judge_public}


def sign_body(secret_text: str, body: dict, data: bytes | None = None) -> str:
    """``data``: ``canonical_json(body)``, when the caller has it."""
    from .signing import private_key
    message = signed_message(body) if data is None else RECEIPT_TAG.encode("ascii") + b"\x00" + data
    return base64.b64encode(private_key(secret_text).sign(message)).decode("ascii")


def receipt_block(secret_text: str, body: dict) -> str:
    """The armoured receipt (one block, ending with a newline): ``armour({"receipt": body,
    "sig": ...}, RECEIPT)``, with the body's canonical JSON made once for the signature and
    the block (canonical JSON of an object is its sorted members' texts, joined)."""
    from .armour import RECEIPT, armoured
    data = canonical_json(body)
    sig = sign_body(secret_text, body, data)
    return armoured(b'{"receipt":' + data + b',"sig":' + canonical_json(sig) + b"}", RECEIPT)


def read_receipts(text: str, where: str = "") -> list[dict]:
    """The receipt bodies of every receipt block in ``text``, each checked for form and
    signature; raise UnusableReceipt naming the block otherwise."""
    from .armour import RECEIPT, ArmourError, extract_blocks
    prefix = f"{where}: " if where else ""
    try:
        payloads = extract_blocks(text, RECEIPT)
    except ArmourError as exc:
        raise UnusableReceipt(f"{prefix}{exc}") from None
    return [_checked(payload, f"{prefix}receipt block {number}")
            for number, payload in enumerate(payloads, start=1)]


def _checked(payload: dict, block: str) -> dict:
    from .signing import KeyFormatError, parse_public_key
    body = payload.get("receipt")
    if set(payload) != {"receipt", "sig"} or not isinstance(body, dict) or set(body) != set(FIELDS):
        raise UnusableReceipt(f"{block} is not a pbem receipt (fields {', '.join(FIELDS)} and a signature)")
    ints = [body[k] for k in ("seq", "head_seq")]
    if (body["v"] != 1 or body["kind"] != "receipt" or any(type(i) is not int for i in ints)
            or not 1 <= body["seq"] <= body["head_seq"]
            or not all(isinstance(body[k], str) for k in ("game", "player", "event", "judge_key"))
            or not all(isinstance(body[k], str) and _HASH.fullmatch(body[k]) for k in ("hash", "head_hash"))):
        raise UnusableReceipt(f"{block} is malformed: version 1, indexes 1 <= seq <= head_seq, "
                              f"hashes of 64 lowercase hex characters")
    try:
        parse_public_key(body["judge_key"])
        good = _verify(body, payload["sig"])
    except KeyFormatError as exc:
        raise UnusableReceipt(f"{block}: its judge key is not a key: {exc}") from None
    if not good:
        raise UnusableReceipt(f"{block}: the signature does not verify under its judge key, so it proves "
                              f"nothing (altered, or not made by a judge)")
    return body


def _verify(body: dict, signature: object) -> bool:
    from .signing import parse_public_key, strict_b64decode
    if not isinstance(signature, str):
        return False
    raw = strict_b64decode(signature.strip())
    if raw is None or len(raw) != 64:
        return False
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        Ed25519PublicKey.from_public_bytes(parse_public_key(body["judge_key"])).verify(raw, signed_message(body))
    except (InvalidSignature, ValueError):
        return False
    return True


def contradiction(number: int, body: dict, judge_key: str | None, hashes: list[str]) -> str | None:
    """Why the log (``hashes[i]`` is the hash of event i+1, ``judge_key`` its created's)
    contradicts receipt ``number``, in the words of docs/protocol.md §13; None if it agrees."""
    from .signing import fingerprint
    what = f"receipt {number} ({body['player']}, event {body['seq']} {body['event']})"
    if judge_key is None:
        return (f"{what} is signed by judge key {fingerprint(body['judge_key'])}, but this log's created "
                f"names no judge key")
    if judge_key != body["judge_key"]:
        return (f"{what} is signed by judge key {fingerprint(body['judge_key'])}, but this log's created "
                f"names judge key {fingerprint(judge_key)}")
    last = len(hashes)
    if body["seq"] > last:
        return f"{what} is contradicted: the judge signed event {body['seq']} as {short(body['hash'])}, the log stops at event {last}: the judge cut the log"
    if hashes[body["seq"] - 1] != body["hash"]:
        return (f"{what} is contradicted: the judge signed event {body['seq']} as {short(body['hash'])}, "
                f"the log has {short(hashes[body['seq'] - 1])} there: the judge changed or dropped that event")
    if body["head_seq"] > last:
        return (f"{what} is contradicted: the judge signed head event {body['head_seq']} as "
                f"{short(body['head_hash'])}, the log stops at event {last}")
    if hashes[body["head_seq"] - 1] != body["head_hash"]:
        return (f"{what} is contradicted: the judge signed head event {body['head_seq']} as "
                f"{short(body['head_hash'])}, the log has {short(hashes[body['head_seq'] - 1])} there")
    return None


def dropped(number: int, body: dict, rows: list[dict]) -> tuple[int, str] | None:
    """For a receipt of a reveal sent early (``event`` EARLY, docs/protocol.md §3, §12): the
    event and reason of the log's contradiction, when it defaults the player's sealed choice
    in the step of the commitment the receipt names, with no commitment or reveal of theirs
    in that step between (the judge held the reveal and dropped it); None otherwise. ``rows``: the log's
    events as dicts (``kind``, ``data``), the receipt's other fields already checked."""
    if body["event"] != EARLY:
        return None
    what = f"receipt {number} ({body['player']}, event {body['seq']} {body['event']})"
    commit = rows[body["seq"] - 1]
    data = commit["data"] if isinstance(commit.get("data"), dict) else {}
    if commit["kind"] != "commit" or data.get("player") != body["player"]:
        return body["seq"], (f"{what} is contradicted: the judge signed that event {body['seq']} is a commitment of "
                             f"{body['player']}, the log has a {commit['kind']} there")
    step = (data.get("round"), data.get("step"))
    for seq, row in enumerate(rows[body["seq"]:], start=body["seq"] + 1):
        other = row["data"] if isinstance(row.get("data"), dict) else {}
        if (row["kind"] == "replaced" and other.get("seat") == body["player"]) or \
                (row["kind"] == "key" and other.get("player") == body["player"]):
            return None  # the held reveal no longer stands (§3): the seat's new person or key owes it
        if other.get("player") != body["player"] or (other.get("round"), other.get("step")) != step:
            continue
        if row["kind"] in ("commit", "reveal", "reveal_held"):
            return None  # a later commitment replaced the one the held reveal opened, or it was recorded
        if row["kind"] == "default" and other.get("sealed") is True:
            return seq, (f"{what} is contradicted: the judge signed that it held {body['player']}'s reveal of the "
                         f"commitment at event {body['seq']}, and event {seq} defaults {body['player']} in step "
                         f"{step[0]}.{step[1]}: the judge dropped the reveal")
    return None


def early_receipts(store, game: str, early, events, head) -> list[str]:
    """Receipt blocks (``event`` EARLY) for the reveals held early in this command:
    ``early`` lists (player, round, step); each names the player's commitment event in the
    log the held reveal opens (their latest of the step), bound to the head now."""
    secret = store.get_secret(game, SECRET_NAME)
    if secret is None or not early:
        return []
    from .signing import public_from_secret
    public = public_from_secret(secret)
    out = []
    for player, round_, step in early:
        for source in (events, None):
            rows = store.events(game) if source is None else source
            made = next((ev for ev in reversed(rows) if ev.kind == "commit" and ev.data.get("player") == player
                         and (ev.data.get("round"), ev.data.get("step")) == (round_, step)), None)
            if made is not None:
                out.append(receipt_block(secret, make_body(game, player, made.seq, EARLY, made.hash, head, public)))
                break
    return out


def issue(store, game: str, after_seq: int, players, events=None, head=None, early=()) -> list[str]:
    """Receipt blocks for the events after ``after_seq`` that name one of ``players`` and
    are submissions, each bound to the head now; [] in a game without a judge key.
    ``events`` and ``head``: those events and the head now, when the caller has just read
    them in the same transaction. ``early``: (player, round, step) of each reveal held
    early by the command, whose receipts (``early_receipts``) follow."""
    secret = store.get_secret(game, SECRET_NAME)
    if secret is None:
        return []
    from .signing import public_from_secret
    public = public_from_secret(secret)
    if head is None or events is None:
        head, events = store.head(game), store.events(game, after=after_seq)
    wanted = set(players)
    return [*(receipt_block(secret, make_body(game, ev.data["player"], ev.seq, ev.kind, ev.hash, head, public))
            for ev in events if ev.kind in RECEIPTED and ev.data.get("player") in wanted
            and (ev.kind != "extended" or ev.data.get("by") == "player")),  # the moderator's is no submission
            *early_receipts(store, game, list(early), events, head)]
