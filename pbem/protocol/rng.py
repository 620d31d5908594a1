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
import hmac
import struct
from json.encoder import encode_basestring as _quote  # what json.dumps(str, ensure_ascii=False) writes

try:  # OpenSSL's HMAC object itself: copy, update and digest are single C calls
    from _hashlib import hmac_new as _hmac_new
except ImportError:  # pragma: no cover - an interpreter without OpenSSL's hashlib
    _hmac_new = None

from .canonical import canonical_json, sha256_hex

RNG_TAG = "pbem-rng-v1"
_SPACE = 2**32
_first_word = struct.Struct(">I").unpack_from  # big-endian u32 of bytes 0..3


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

    __slots__ = ("_seed", "_prefix", "_keyed", "game_id", "client_entropy", "draws")

    def __init__(self, server_seed: bytes, game_id: str, client_entropy: str = ""):
        if not isinstance(server_seed, (bytes, bytearray)) or not server_seed:
            raise ValueError("server seed must be non-empty bytes")
        self._seed = bytes(server_seed)
        self.game_id = game_id
        self.client_entropy = client_entropy
        # canonical_json of the list up to the label, without its closing bracket, so each
        # draw only serialises its label and counter.
        self._prefix = canonical_json([RNG_TAG, game_id, client_entropy])[:-1] + b","
        # HMAC keyed with the seed that has already absorbed that prefix: each draw copies
        # it and adds only its own tail (the same bytes, so the same digest, at a fraction
        # of the cost). OpenSSL's object where there is one: ``hmac.HMAC`` wraps each of its
        # calls in Python, which cost several times the hashing itself.
        self._keyed = (_hmac_new(self._seed, self._prefix, digestmod="sha256") if _hmac_new is not None
                       else hmac.new(self._seed, self._prefix, hashlib.sha256))
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
        keyed = self._keyed.copy()
        keyed.update(f"{_quote(label)},{counter}]".encode())
        return keyed.digest()

    def below(self, label: str, n: int) -> int:
        """A uniform integer in range(n) for this label (``block`` and ``accept`` inlined
        for counter 0: every roll comes through here)."""
        if type(label) is not str and not isinstance(label, str):
            raise TypeError("a draw label is a string and its counter an integer")
        if not 1 <= n <= _SPACE:
            raise ValueError(f"range size must be 1..2**32, got {n}")
        keyed = self._keyed.copy()
        keyed.update((_quote(label) + ",0]").encode())
        u = _first_word(keyed.digest())[0]
        limit = _SPACE - (_SPACE % n)
        counter = 0
        while u >= limit:  # rejected: the next counter (rare but for huge n)
            counter += 1
            u = _first_word(self.block(label, counter))[0]
        value = u % n
        if self.draws is not None:
            self.draws.append((label, n, value))
        return value
