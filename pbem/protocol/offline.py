"""The blocks a player sends: armoured submission blocks (signed when a key is given), and,
with only a private message's token, a choice sealed or a decision made offline.
"""

from __future__ import annotations

import secrets

from .. import games
from ..games.base import ChoiceError
from .commit import make_commitment, new_salt
from .discretion import client_seed_body, extension_body, key_change_body
from .errors import Refused
from .moves import signed_body
from .session import Session
from .token import read_token


def client_seed_block(game_id: str, player: str, text: str, secret_key: str) -> str:
    """A signed client-seed block, made by the player (docs/protocol.md §14)."""
    from .armour import armour
    from .signing import sign
    body = client_seed_body(game_id, {"player": player, "seed": text, "nonce": secrets.token_hex(8)})
    return armour({"body": body, "sig": sign(secret_key, body)})


def key_change_block(game_id: str, player: str, public_key: str, secret_key: str) -> str:
    """A player's key change, signed with the key their seat holds now (docs/protocol.md §14)."""
    from .signing import parse_public_key
    try:
        parse_public_key(public_key)
    except ValueError as exc:
        raise Refused(f"the new key: {exc}") from None
    return _signed_block(key_change_body(game_id, {"player": player, "public_key": public_key.strip(),
                                                   "nonce": secrets.token_hex(8)}), secret_key)


def extension_block(game_id: str, player: str, round_step: tuple[int, int], seconds: int, secret_key: str) -> str:
    """A player's own extension of what they owe in one step, signed (docs/protocol.md §16)."""
    return _signed_block(extension_body(game_id, {"player": player, "round": round_step[0], "step": round_step[1],
                                                  "seconds": seconds, "nonce": secrets.token_hex(8)}), secret_key)


def _signed_block(body: dict, secret_key: str) -> str:
    from .armour import armour
    from .signing import sign
    return armour({"body": body, "sig": sign(secret_key, body)})


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
