"""A receipt block makes its body's canonical JSON once (for the signature and the block):
the same block, byte for byte, as armouring the payload whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.protocol.armour import RECEIPT, armour
from pbem.protocol.receipts import make_body, read_receipts, receipt_block, sign_body
from pbem.protocol.signing import generate_keypair

SECRET, PUBLIC = generate_keypair()
names = st.text(min_size=1, max_size=12).filter(lambda t: all(not 0xD800 <= ord(c) <= 0xDFFF for c in t))
hashes = st.text("0123456789abcdef", min_size=64, max_size=64)


@settings(max_examples=100, deadline=None)
@given(names, names, st.integers(1, 10**6), st.sampled_from(["commit", "reveal", "decide", "ü\"\\"]), hashes, hashes)
def test_the_block_is_the_whole_payload_armoured(game, player, seq, kind, event_hash, head_hash):
    body = make_body(game, player, seq, kind, event_hash, (seq + 1, head_hash), PUBLIC)
    block = receipt_block(SECRET, body)
    assert block == armour({"receipt": body, "sig": sign_body(SECRET, body)}, RECEIPT)
    assert read_receipts(block) == [body]


def test_the_public_key_kept_is_the_secrets_own():
    from pbem.protocol.signing import KeyFormatError, _cached_public
    import pytest
    pairs = [generate_keypair() for _ in range(20)]  # more than are kept
    for _ in range(2):
        for secret, public in pairs:
            from pbem.protocol.signing import public_from_secret
            assert public_from_secret(secret) == public
    assert _cached_public.cache_info().currsize <= 16
    with pytest.raises(KeyFormatError):
        public_from_secret("not a key")
