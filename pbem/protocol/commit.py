"""Sealed choices: hash commitments to a choice, revealed later with their salt.

This module is a contract (see ``docs/protocol.md``). Changing the byte format below changes
every commitment ever made, so it is versioned by ``COMMIT_TAG`` and pinned by test vectors
in ``tests/protocol/test_commit.py``.

Byte format
    preimage   = b"pbem-commit-v1" + b"\\x00"
                 + canonical_json({"game": game, "round": round, "step": step,
                                   "player": player, "choice": choice})
                 + b"\\x00" + salt
    commitment = sha256(preimage) as 64 lowercase hex characters

``salt`` is 32 random bytes; it travels as 64 lowercase hex characters. ``game``,
``player`` and ``choice`` are strings, ``round`` and ``step`` integers. Binding game, round,
step and player means a commitment cannot be replayed in another step or copied by another
player; the salt stops anyone guessing the choice from the commitment.

Commitments and salts are accepted with surrounding whitespace and in upper case; they are
normalised to lowercase hex.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from .canonical import canonical_json

COMMIT_TAG = "pbem-commit-v1"
SALT_BYTES = 32
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class CommitError(ValueError):
    """A commitment, salt or sealed choice that cannot be used."""


class MalformedCommitment(CommitError):
    """Text that is not a commitment (64 hexadecimal characters)."""


class MalformedSalt(CommitError):
    """Text that is not a salt (64 hexadecimal characters)."""


def _parse_hex64(text: object, what: str, meaning: str, error: type[CommitError]) -> str:
    expected = f"{what} must be 64 hexadecimal characters ({meaning})"
    if not isinstance(text, str):
        raise error(f"{expected}, got {type(text).__name__}")
    value = text.strip()
    for position, char in enumerate(value, start=1):
        if char not in _HEX_DIGITS:
            raise error(f"{expected}, contains {char!r} at position {position}")
    if len(value) != 64:
        raise error(f"{expected}, got {len(value)} characters")
    return value.lower()


def parse_commitment(text: str) -> str:
    """Normalise a commitment to 64 lowercase hex characters, or raise MalformedCommitment."""
    return _parse_hex64(text, "commitment", "sha256", MalformedCommitment)


def parse_salt(text: str) -> str:
    """Normalise a salt to 64 lowercase hex characters, or raise MalformedSalt."""
    return _parse_hex64(text, "salt", "32 random bytes", MalformedSalt)


def new_salt() -> str:
    """A fresh random salt: 32 bytes from ``secrets``, as 64 lowercase hex characters."""
    return secrets.token_bytes(SALT_BYTES).hex()


def _check_fields(
    game: object, round: object, step: object, player: object, choice: object
) -> None:
    for name, value in (("game", game), ("player", player), ("choice", choice)):
        if not isinstance(value, str):
            raise CommitError(f"{name} must be a string, got {type(value).__name__}")
    for name, value in (("round", round), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise CommitError(f"{name} must be an integer, got {type(value).__name__}")


def commitment_preimage(
    game: str, round: int, step: int, player: str, choice: str, salt_hex: str
) -> bytes:
    """The exact bytes a commitment hashes (see the module docstring)."""
    _check_fields(game, round, step, player, choice)
    salt = bytes.fromhex(parse_salt(salt_hex))
    fields = {"game": game, "round": round, "step": step, "player": player, "choice": choice}
    return COMMIT_TAG.encode("ascii") + b"\x00" + canonical_json(fields) + b"\x00" + salt


def make_commitment(
    game: str, round: int, step: int, player: str, choice: str, salt_hex: str
) -> str:
    """The commitment (64 lowercase hex characters) to ``choice`` with this salt."""
    preimage = commitment_preimage(game, round, step, player, choice, salt_hex)
    return hashlib.sha256(preimage).hexdigest()


def commitment_matches(
    commitment: str, game: str, round: int, step: int, player: str, choice: str, salt_hex: str
) -> bool:
    """True when the reveal (choice, salt) opens ``commitment`` for this game, step and player.

    A well-formed reveal that does not match returns False; a commitment or salt that is not
    64 hex characters raises MalformedCommitment / MalformedSalt (not understood, rather than
    not matching), so the caller can say which.
    """
    expected = parse_commitment(commitment)
    actual = make_commitment(game, round, step, player, choice, salt_hex)
    return hmac.compare_digest(expected, actual)
