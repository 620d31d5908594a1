"""Canonical JSON and hashing: the byte formats every hash in pbem is computed over.

This module is a contract. Changing anything here changes every commitment, every event
hash and every signature ever made, so it is versioned by the tags below and pinned by test
vectors in ``tests/test_canonical.py`` and ``docs/protocol.md``.

Canonical JSON
    ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    encoded as UTF-8. Values are limited to objects with string keys, arrays, strings,
    integers, true, false and null. Floats are refused (their text form is not portable),
    and so are strings that are not valid Unicode (lone surrogates).

Hashes
    ``sha256_hex(data)`` is the lowercase hex SHA-256 of ``data``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

GENESIS_HASH = "0" * 64
EVENT_TAG = "pbem-event-v1"


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (a float, a non-string key, ...)."""


def _check(value: Any, path: str = "$") -> None:
    if value is None or isinstance(value, (bool, str)):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise CanonicalError(f"{path}: string is not valid Unicode") from exc
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        raise CanonicalError(f"{path}: floats are not allowed in canonical JSON; use integers")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalError(f"{path}: object keys must be strings, got {key!r}")
            _check(key, f"{path} key")
            _check(item, f"{path}.{key}")
        return
    raise CanonicalError(f"{path}: {type(value).__name__} has no canonical JSON form")


def plain(value: Any, tuples: bool = True) -> bool:
    """True when ``value`` is built of nothing but exactly dict (with str keys), list, str,
    int, bool and None, and tuple unless ``tuples`` is False. Such a value has a canonical
    form once its strings' Unicode is checked (encoding the text does that), and comes back
    equal from JSON's round trip when it holds no tuple. False for anything else (a float,
    another key type, a subclass), which the caller then asks the long way (``_check``
    names the place). Quick: no path is made for every item."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or item is None or plain(item, tuples)):
                return False
        return True
    if kind is list or (tuples and kind is tuple):
        for item in value:
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or item is None or plain(item, tuples)):
                return False
        return True
    return kind is str or kind is int or kind is bool or value is None


def canonical_json(value: Any) -> bytes:
    """Return the canonical JSON bytes of ``value`` (sorted keys, no spaces, UTF-8)."""
    if not plain(value):
        _check(value)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate somewhere: say where
        _check(value)
        raise CanonicalError("$: string is not valid Unicode") from None


def canonical_text(value: Any) -> str:
    return canonical_json(value).decode("utf-8")


def sha256_hex(data: bytes) -> str:
    return _sha256(data).hexdigest()


def _sha256(data: bytes):
    """OpenSSL's SHA-256 (hashlib) once anything has loaded it, else the interpreter's own:
    importing hashlib loads OpenSSL, about 4 ms that a command hashing one snapshot (``pbem
    status``) need not pay; a write, which hashes the whole chain, loads it (``Store``)."""
    hashlib = sys.modules.get("hashlib")
    if hashlib is not None:
        return hashlib.sha256(data)
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:  # 3.12 and later
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256(data)


def event_hash(prev_hash: str, event: dict) -> str:
    """Hash of one log event: ``sha256(prev_hash_hex_ascii + canonical_json(event))``.

    ``prev_hash`` is the previous event's hash (64 lowercase hex characters), or
    ``GENESIS_HASH`` for the first event of a game.
    """
    return sha256_hex(prev_hash.encode("ascii") + canonical_json(event))
