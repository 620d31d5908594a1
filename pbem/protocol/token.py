"""The one-line seal token a private message carries, so a player with only that message
can check and seal their choice offline (``pbem seal --context TOKEN CHOICE``): what a
player's open requests put in it (``context_token``), how it is written and read back.

    token = "pbem1." + base64url(canonical_json(payload)) without padding + "." + check
    check = first 8 hex characters of sha256(canonical_json(payload))

payload: {"game", "type", "player", "round", "step", "kind", "options", "signatures"}.
"""

from __future__ import annotations

import base64
import binascii
import json

from .canonical import canonical_json, sha256_hex
from .errors import Refused

PREFIX = "pbem1."


def make_token(payload: dict) -> str:
    body = canonical_json(payload)
    text = base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")
    return f"{PREFIX}{text}.{sha256_hex(body)[:8]}"


def context_token(session, player: str) -> str | None:
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


def read_token(token: str) -> dict:
    token = "".join(token.split()).lstrip(">")  # survive wrapping and quoting
    if not token.startswith(PREFIX) or token.count(".") != 2:
        raise Refused("not a seal token: copy the whole line starting with 'pbem1.' from your private message")
    _, text, check = token.split(".")
    try:
        body = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        payload = json.loads(body)
    except (binascii.Error, ValueError, RecursionError):
        raise Refused("the seal token is damaged (not base64 JSON): copy the whole line again") from None
    if sha256_hex(body)[:8] != check:
        raise Refused("the seal token is damaged or truncated (check mismatch): copy the whole line again")
    if not _well_formed(payload):
        raise Refused("this is not a seal token pbem made (fields missing or of the wrong type): "
                      "copy the whole line from your private message")
    return payload


def _well_formed(payload) -> bool:
    texts, numbers = ("game", "type", "player", "kind"), ("round", "step")
    return (isinstance(payload, dict) and all(isinstance(payload.get(k), str) for k in texts)
            and all(type(payload.get(k)) is int for k in numbers)
            and (payload.get("options") is None or (isinstance(payload["options"], list)
                                                    and all(isinstance(o, str) for o in payload["options"]))))
