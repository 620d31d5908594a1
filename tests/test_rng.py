"""The labelled random source is a contract: these vectors pin it (see docs/protocol.md).

Every number below was computed once and frozen. If one of them changes, every roll of
every game ever played changes with it; that is a protocol version bump, not a test fix.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest

from pbem.protocol.canonical import canonical_json
from pbem.protocol.rng import RNG_TAG, RandomSource, accept, combine_client_seeds

SERVER_SEED = bytes(range(32))
GAME_ID = "game-1"
CLIENT_SEEDS = {"ani": "hello"}
CLIENT_ENTROPY = "a13305c16eb6f44cefebd9dadc7344af153bff055b8481d9e0734143f7668c91"


@pytest.fixture(scope="module")
def source() -> RandomSource:
    return RandomSource(SERVER_SEED, GAME_ID, combine_client_seeds(CLIENT_SEEDS))


def block_u32(source: RandomSource, label: str, counter: int) -> int:
    return int.from_bytes(source.block(label, counter)[:4], "big")


# ----------------------------------------------------------------------------- vectors

def test_client_entropy_vector():
    assert combine_client_seeds(CLIENT_SEEDS) == CLIENT_ENTROPY
    assert combine_client_seeds({}) == (
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )
    # The mapping, not the order it was given in, decides the entropy.
    assert combine_client_seeds({"b": "2", "a": "1"}) == combine_client_seeds({"a": "1", "b": "2"})


@pytest.mark.parametrize(
    ("label", "n", "expected"),
    [
        ("setup/ani/chest1", 40, 9),
        ("r1/roll1/ani/A", 6, 2),
        ("r1/roll1/ani/B", 6, 0),
        ("r1/hunt/1/tile1", 30, 23),
        ("x", 1, 0),
        ("x", 2, 1),
        ("big", 2**32, 2648353903),
        ('ünïcode "q"', 1000, 365),
    ],
)
def test_below_vectors(source, label, n, expected):
    assert source.below(label, n) == expected


def test_block_vectors(source):
    assert source.block("r1/roll1/ani/A", 0).hex() == (
        "e26dd0802e57f94be7c22c1f53b9eb5832cee47f313de32baf00d67fb2165cb3"
    )
    assert source.block("r1/roll1/ani/A", 1).hex() == (
        "0275c66aafe2531609405588876043ec81d90e2aec80613a706e3762639a583b"
    )


def test_message_vector():
    assert canonical_json([RNG_TAG, GAME_ID, CLIENT_ENTROPY, "r1/roll1/ani/A", 0]) == (
        b'["pbem-rng-v1","game-1",'
        b'"a13305c16eb6f44cefebd9dadc7344af153bff055b8481d9e0734143f7668c91",'
        b'"r1/roll1/ani/A",0]'
    )


@pytest.mark.parametrize("label", ["r1/roll1/ani/A", "", 'quote " and \\ slash', "ünïcode ☠", "a,b:c/d"])
@pytest.mark.parametrize("counter", [0, 1, 7, 2**40])
def test_block_is_hmac_of_the_documented_message(source, label, counter):
    message = canonical_json(["pbem-rng-v1", GAME_ID, CLIENT_ENTROPY, label, counter])
    expected = hmac.new(SERVER_SEED, message, hashlib.sha256).digest()
    assert source.block(label, counter) == expected


def test_inputs_all_matter(source):
    entropy = combine_client_seeds(CLIENT_SEEDS)
    variants = [
        RandomSource(SERVER_SEED, GAME_ID, entropy),
        RandomSource(bytes(range(1, 33)), GAME_ID, entropy),
        RandomSource(SERVER_SEED, "game-2", entropy),
        RandomSource(SERVER_SEED, GAME_ID, combine_client_seeds({"ani": "hellO"})),
    ]
    blocks = {v.block("label", 0) for v in variants}
    assert len(blocks) == len(variants)
    assert source.block("label", 0) != source.block("label", 1)
    assert source.block("label", 0) != source.block("label2", 0)


def test_for_testing_is_keyed_by_sha256_of_the_text():
    source = RandomSource.for_testing("x")
    same = RandomSource(hashlib.sha256(b"x").digest(), "test", "")
    assert source.block("a", 0) == same.block("a", 0)
    assert source.below("a", 6) == 5


def test_bad_seed_refused():
    with pytest.raises(ValueError):
        RandomSource(b"", GAME_ID)
    with pytest.raises(ValueError):
        RandomSource("not bytes", GAME_ID)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- rejection

@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 30, 40, 1000, 3 * 2**30, 2**31 + 1, 2**32 - 1, 2**32])
def test_accept_rejects_exactly_the_top_remainder(n):
    limit = 2**32 - 2**32 % n
    assert accept(0, n) == 0
    assert accept(limit - 1, n) == (limit - 1) % n
    if limit < 2**32:
        assert accept(limit, n) is None
        assert accept(2**32 - 1, n) is None
    else:  # a power of two divides 2**32: nothing is rejected
        assert accept(2**32 - 1, n) == (2**32 - 1) % n


@pytest.mark.parametrize("n", [0, -1, 2**32 + 1])
def test_accept_refuses_bad_ranges(n):
    with pytest.raises(ValueError):
        accept(0, n)


N_QUARTER_REJECTED = 3 * 2**30  # limit 3 * 2**30: a quarter of all blocks are rejected


def test_rejected_first_block_moves_to_counter_1(source):
    # Found by searching labels "reject/0", "reject/1", ...: the first whose counter-0
    # block is rejected and whose counter-1 block is accepted.
    label = "reject/11"
    assert source.block(label, 0)[:4].hex() == "dabf3c60"
    assert accept(block_u32(source, label, 0), N_QUARTER_REJECTED) is None
    assert source.block(label, 1)[:4].hex() == "4fc8145d"
    assert source.below(label, N_QUARTER_REJECTED) == 0x4FC8145D == 1338512477


def test_three_rejections_move_to_counter_3(source):
    label = "reject/6"
    prefixes = [source.block(label, c)[:4].hex() for c in range(4)]
    assert prefixes == ["dbec4f03", "e644a6d3", "d63bbeb5", "4b1d3a7d"]
    assert [accept(block_u32(source, label, c), N_QUARTER_REJECTED) is None for c in range(4)] == [
        True, True, True, False,
    ]
    assert source.below(label, N_QUARTER_REJECTED) == 0x4B1D3A7D == 1260206717


def test_accepted_first_block_uses_counter_0(source):
    u = block_u32(source, "r1/roll1/ani/A", 0)
    assert source.below("r1/roll1/ani/A", 6) == u % 6


# ----------------------------------------------------------------------------- distribution

def test_faces_are_roughly_uniform():
    source = RandomSource.for_testing("distribution")
    draws = 60_000
    counts = Counter(source.below(f"d/{i}", 6) for i in range(draws))
    assert set(counts) == set(range(6))
    expected = draws / 6
    for face, count in counts.items():
        assert abs(count - expected) <= 0.15 * expected, (face, count)


def test_same_label_same_value():
    a, b = RandomSource.for_testing("s"), RandomSource.for_testing("s")
    assert [a.below(f"l{i}", 37) for i in range(50)] == [b.below(f"l{i}", 37) for i in range(50)]


# ----------------------------------------------------------------------------- the HMAC written out

@pytest.mark.parametrize("seed", [b"\x01", bytes(range(32)), bytes(63), b"k" * 64, b"\xff" * 65, bytes(range(200))])
def test_draws_are_hmac_sha256_for_any_seed_length(seed):
    # the source computes HMAC as its two hashes with the key padded to a block (or hashed
    # first when longer than one): the same bytes as hmac.new, whatever the seed's length
    source = RandomSource(seed, "g-é", "ent")
    for label, counter in [("r1/roll1/ani/A", 0), ("", 3), ('q"\\/☠', 0), ("x" * 300, 2**33)]:
        message = canonical_json([RNG_TAG, "g-é", "ent", label, counter])
        assert source.block(label, counter) == hmac.new(seed, message, hashlib.sha256).digest()
    for i in range(200):
        label = f"r{i}/ünï\"{i}\\"
        u = int.from_bytes(hmac.new(seed, canonical_json([RNG_TAG, "g-é", "ent", label, 0]),
                                   hashlib.sha256).digest()[:4], "big")
        assert source.below(label, 6) == u % 6  # 6 rejects only u >= 2**32 - 4: never here
        assert source.below(label, 6) == u % 6  # the second time from the tails kept by label
