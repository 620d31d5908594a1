"""The one-line seal token a private message carries, so a player with only that message
can check and seal their choice offline (``pbem seal --context TOKEN CHOICE``).

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
