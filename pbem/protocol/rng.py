"""Provably fair randomness: labelled draws derived from a committed server seed.

This module is a contract (see ``docs/protocol.md``); changing it changes every roll.

A draw in ``range(n)`` for a ``label`` is computed as follows, for counter = 0, 1, 2, ...:

    message = canonical_json(["pbem-rng-v1", game_id, client_entropy, label, counter])
    block   = HMAC-SHA256(key=server_seed, msg=message)
    u       = int.from_bytes(block[0:4], "big")            # 0 <= u < 2**32
    limit   = 2**32 - (2**32 % n)                          # largest multiple of n <= 2**32
    if u < limit: return u % n                             # accepted: no modulo bias
    else: try the next counter                             # rejected

``client_entropy`` is the lowercase hex SHA-256 of the canonical JSON object mapping each
player who gave a client seed to that seed (``{}`` when nobody did); see
``combine_client_seeds``. Labels are chosen by the game; every draw of a game has its own.
"""

from __future__ import annotations

import hashlib
import struct
from json.encoder import encode_basestring as _quote  # what json.dumps(str, ensure_ascii=False) writes

from .canonical import canonical_json, sha256_hex

RNG_TAG = "pbem-rng-v1"
_SPACE = 2**32
_first_word = struct.Struct(">I").unpack_from  # big-endian u32 of bytes 0..3
_BLOCK = 64  # SHA-256's block size, in bytes: HMAC pads (or first hashes) its key to it
_TAILS: dict[str, bytes] = {}  # label -> the message's tail for counter 0 (labels recur across games)


def _tail0(label: str) -> bytes:
    tail = _TAILS.get(label)
    if tail is None:
        if len(_TAILS) >= 16384:  # player names vary: keep the table bounded (about 2 MB at most)
            _TAILS.clear()
        tail = _TAILS[label] = (_quote(label) + ",0]").encode()
    return tail


def _hmac_halves(key: bytes, message: bytes):
    """HMAC-SHA256 (RFC 2104) split in its two hashes, each having absorbed its padded key
    (the inner one also ``message``): ``HMAC(key, message + tail)`` is then
    ``outer'(inner'(tail))``, where ' is a copy updated with the argument."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
    inner.update(message)
    return inner, hashlib.sha256(bytes(b ^ 0x5C for b in key))


def combine_client_seeds(seeds: dict[str, str]) -> str:
    """The fixed client entropy of a game: sha256 of the canonical JSON of player -> seed."""
    return sha256_hex(canonical_json(dict(seeds)))


def accept(u: int, n: int) -> int | None:
    """Map a 32-bit integer to range(n) without bias, or None when it must be rejected."""
    if not 1 <= n <= _SPACE:
        raise ValueError(f"range size must be 1..2**32, got {n}")
    limit = _SPACE - (_SPACE % n)
    return u % n if u < limit else None


class RandomSource:
    """Draws labelled, reproducible, uniformly distributed integers (see module doc)."""

    __slots__ = ("_seed", "_prefix", "_inner", "_outer", "game_id", "client_entropy", "draws")

    def __init__(self, server_seed: bytes, game_id: str, client_entropy: str = ""):
        if not isinstance(server_seed, (bytes, bytearray)) or not server_seed:
            raise ValueError("server seed must be non-empty bytes")
        self._seed = bytes(server_seed)
        self.game_id = game_id
        self.client_entropy = client_entropy
        # canonical_json of the list up to the label, without its closing bracket, so each
        # draw only serialises its label and counter.
        self._prefix = canonical_json([RNG_TAG, game_id, client_entropy])[:-1] + b","
        # HMAC-SHA256 written out as its two hashes, each keyed once, the inner one having
        # absorbed that prefix: a draw copies both and adds only its own tail (the same
        # bytes, so the same digest). Copying two plain hashes costs less than copying
        # OpenSSL's HMAC object, and ``hmac.HMAC`` wraps each call in Python.
        self._inner, self._outer = _hmac_halves(self._seed, self._prefix)
        # when a list: every draw is appended as (label, n, value), for 'pbem replay --json'
        self.draws: list | None = None

    @classmethod
    def for_testing(cls, text: str = "test", game_id: str = "test") -> "RandomSource":
        """A source keyed by sha256(text): for tests, bots and simulations, never for play."""
        return cls(hashlib.sha256(text.encode("utf-8")).digest(), game_id, "")

    def block(self, label: str, counter: int) -> bytes:
        if not isinstance(label, str) or type(counter) is not int:
            raise TypeError("a draw label is a string and its counter an integer")
        # the tail of canonical_json([..., label, counter]), written directly: this is the
        # hot path of every roll (tests check it equals canonical_json of the whole list)
        inner = self._inner.copy()
        inner.update(f"{_quote(label)},{counter}]".encode())
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def below(self, label: str, n: int) -> int:
        """A uniform integer in range(n) for this label (``block`` and ``accept`` inlined
        for counter 0: every roll comes through here)."""
        if type(label) is not str and not isinstance(label, str):
            raise TypeError("a draw label is a string and its counter an integer")
        if not 1 <= n <= _SPACE:
            raise ValueError(f"range size must be 1..2**32, got {n}")
        inner = self._inner.copy()
        inner.update(_TAILS.get(label) or _tail0(label))
        outer = self._outer.copy()
        outer.update(inner.digest())
        u = _first_word(outer.digest())[0]
        limit = _SPACE - (_SPACE % n)
        counter = 0
        while u >= limit:  # rejected: the next counter (rare but for huge n)
            counter += 1
            u = _first_word(self.block(label, counter))[0]
        value = u % n
        if self.draws is not None:
            self.draws.append((label, n, value))
        return value
