"""Ed25519 signatures over submissions.

This module is a contract (see ``docs/protocol.md``); the formats below are pinned by a test
vector in ``tests/protocol/test_signing.py``.

Keys
    secret: ``pbem-ed25519-secret:`` + base64 (standard alphabet, padded) of the 32-byte raw
            private key
    public: ``pbem-ed25519-public:`` + base64 of the 32-byte raw public key

Signed message
    ``b"pbem-sig-v1" + b"\\x00" + canonical_json(body)`` where ``body`` is a JSON object.
    The signature travels as base64 (standard, padded) of its 64 raw bytes.

Fingerprint
    The first 16 hex characters of sha256 of the raw public key; for display only.

``cryptography`` is imported inside the functions that need it, so importing this module
stays cheap. Error messages never quote a secret key.
"""

from __future__ import annotations

import base64
import binascii
import functools

from .canonical import canonical_json, sha256_hex

SIG_TAG = "pbem-sig-v1"
SECRET_PREFIX = "pbem-ed25519-secret:"
PUBLIC_PREFIX = "pbem-ed25519-public:"
_KEY_BYTES = 32
_SIGNATURE_BYTES = 64


class SigningError(ValueError):
    """Something that cannot be signed or used to sign."""


class KeyFormatError(SigningError):
    """Text that is not a pbem key of the expected kind."""


def strict_b64decode(text: str) -> bytes | None:
    """Decode canonical standard base64, or None (one text per byte string, no malleability)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != text:
        return None
    return raw


def _parse_key(text: object, kind: str, prefix: str, other_prefix: str) -> bytes:
    expected = f"a {kind} key is {prefix!r} followed by base64 of 32 bytes"
    if not isinstance(text, str):
        raise KeyFormatError(f"{expected}, got {type(text).__name__}")
    text = text.strip()
    if text.startswith(other_prefix):
        other = "secret" if kind == "public" else "public"
        raise KeyFormatError(f"this is a {other} key; {expected}")
    if not text.startswith(prefix):
        raise KeyFormatError(f"{expected}; this text does not start with {prefix!r}")
    raw = strict_b64decode("".join(text[len(prefix) :].split()))
    if raw is None:
        raise KeyFormatError(f"{expected}; the part after the prefix is not valid base64")
    if len(raw) != _KEY_BYTES:
        raise KeyFormatError(f"{expected}; the base64 decodes to {len(raw)} bytes")
    return raw


def parse_secret_key(text: str) -> bytes:
    """The 32 raw private key bytes of a secret key text, or raise KeyFormatError."""
    return _parse_key(text, "secret", SECRET_PREFIX, PUBLIC_PREFIX)


def parse_public_key(text: str) -> bytes:
    """The 32 raw public key bytes of a public key text, or raise KeyFormatError."""
    return _parse_key(text, "public", PUBLIC_PREFIX, SECRET_PREFIX)


def _secret_text(raw: bytes) -> str:
    return SECRET_PREFIX + base64.b64encode(raw).decode("ascii")


def _public_text(raw: bytes) -> str:
    return PUBLIC_PREFIX + base64.b64encode(raw).decode("ascii")


def private_key(secret_text: str):
    """The key object of a secret key text. Making one derives its public key (a scalar
    multiplication); the judge signs a receipt with the same key for every move of a game,
    so the last few are kept (in this process only, as the key text itself is)."""
    if isinstance(secret_text, str):
        return _cached_key(secret_text)
    return _key(secret_text)  # not a key text: refused with the usual words


@functools.lru_cache(maxsize=16)
def _cached_key(secret_text: str):
    return _key(secret_text)


def _key(secret_text: str):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(parse_secret_key(secret_text))


def generate_keypair() -> tuple[str, str]:
    """A new key pair as (secret_text, public_text)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    public_raw = key.public_key().public_bytes_raw()
    return _secret_text(key.private_bytes_raw()), _public_text(public_raw)


def public_from_secret(secret_text: str) -> str:
    """The public key text that belongs to a secret key text (the last few kept, as with
    ``private_key``: the judge names its public key in every receipt)."""
    if isinstance(secret_text, str):
        return _cached_public(secret_text)
    return _public_text(private_key(secret_text).public_key().public_bytes_raw())


@functools.lru_cache(maxsize=16)
def _cached_public(secret_text: str) -> str:
    return _public_text(private_key(secret_text).public_key().public_bytes_raw())


def signed_message(body: dict) -> bytes:
    """The exact bytes a signature covers (see the module docstring)."""
    if not isinstance(body, dict):
        kind = type(body).__name__
        raise SigningError(f"the signed body must be a JSON object (dict), got {kind}")
    return SIG_TAG.encode("ascii") + b"\x00" + canonical_json(body)


def sign(secret_text: str, body: dict) -> str:
    """The base64 Ed25519 signature of ``body`` under the secret key."""
    message = signed_message(body)
    return base64.b64encode(private_key(secret_text).sign(message)).decode("ascii")


def verify(public_text: str, body: dict, signature_b64: str) -> bool:
    """True when ``signature_b64`` is a valid signature of ``body`` by this public key.

    Anything wrong with the signature (malformed, truncated, not base64, made by another key
    or over another body) gives False; so does a body that could never have been signed (not
    a JSON object, or without canonical JSON). Only a malformed public key raises
    KeyFormatError, because that is the caller's or the registry's mistake, not the sender's.
    """
    key = _public_key(public_text) if isinstance(public_text, str) else parse_public_key(public_text)
    if not isinstance(signature_b64, str):
        return False
    signature = strict_b64decode(signature_b64.strip())
    if signature is None or len(signature) != _SIGNATURE_BYTES:
        return False
    try:
        message = signed_message(body)
    except ValueError:  # SigningError, CanonicalError, or a lone surrogate in a key
        return False

    from cryptography.exceptions import InvalidSignature

    if key is None:
        return False
    try:
        key.verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=1024)
def _public_key(public_text: str):
    """The key object of a public key text, made once per text in a process (an audit checks
    every signature of a game against its players' few keys); KeyFormatError for a malformed
    text (not kept), None for 32 bytes that are no Ed25519 key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw_public = parse_public_key(public_text)
    try:
        return Ed25519PublicKey.from_public_bytes(raw_public)
    except ValueError:
        return None


def fingerprint(public_text: str) -> str:
    """First 16 hex characters of sha256 of the raw public key, for display."""
    return sha256_hex(parse_public_key(public_text))[:16]
