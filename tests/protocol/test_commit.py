"""Commitments: the byte format is pinned by vectors (also in docs/protocol.md)."""

import hashlib
import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pbem.protocol.commit import (
    COMMIT_TAG,
    CommitError,
    MalformedCommitment,
    MalformedSalt,
    commitment_matches,
    commitment_preimage,
    make_commitment,
    new_salt,
    parse_commitment,
    parse_salt,
)

# (game, round, step, player, choice, salt_hex) -> commitment. Frozen: never edit these.
VECTORS = [
    (
        ("demo-1", 1, 1, "ani", "A", "00" * 32),
        "6ba2c455e9867799af69e2e788fbab5a4810c6e2de3be46adc0cf59f649017ac",
    ),
    (
        ("tortuga-2024", 3, 2, "\u0160\u00e1rka", "B,C", bytes(range(32)).hex()),
        "6eb981d9b0214c0869caefd185de2d8ecbb21df0e070840c20338cf525b9a8c0",
    ),
    (
        ("forum game #7", 12, 4, "lothar", "", "ff" * 32),
        "4a6ff7904af2b9fe714d10299f1506482a0dcb150fc18e5cebc15e3c603fbfd8",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), VECTORS)
def test_vectors(fields, expected):
    assert make_commitment(*fields) == expected
    assert commitment_matches(expected, *fields)


@pytest.mark.parametrize(("fields", "expected"), VECTORS)
def test_vectors_follow_the_documented_format_without_pbem(fields, expected):
    game, round_, step, player, choice, salt_hex = fields
    fields_json = json.dumps(
        {"game": game, "round": round_, "step": step, "player": player, "choice": choice},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    preimage = b"pbem-commit-v1\x00" + fields_json + b"\x00" + bytes.fromhex(salt_hex)
    assert commitment_preimage(*fields) == preimage
    assert hashlib.sha256(preimage).hexdigest() == expected


def test_non_ascii_player_is_hashed_as_utf8():
    preimage = commitment_preimage(*VECTORS[1][0])
    assert '"player":"\u0160\u00e1rka"'.encode() in preimage
    assert preimage.startswith(COMMIT_TAG.encode() + b"\x00{")


def test_new_salt_is_64_lowercase_hex_and_fresh():
    salts = {new_salt() for _ in range(20)}
    assert len(salts) == 20
    for salt in salts:
        assert parse_salt(salt) == salt
        assert len(salt) == 64


def test_parse_normalises_case_and_whitespace():
    commitment = VECTORS[0][1]
    assert parse_commitment(f"  {commitment.upper()}\r\n") == commitment
    assert parse_salt("\t" + "AB" * 32 + " ") == "ab" * 32
    fields, expected = VECTORS[1]
    assert commitment_matches(f" {expected.upper()} ", *fields[:5], fields[5].upper())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a" * 63, "got 63 characters"),
        ("a" * 65, "got 65 characters"),
        ("", "got 0 characters"),
        ("abcdg" + "a" * 59, "contains 'g' at position 5"),
        ("sha256:" + "a" * 64, "contains 's' at position 1"),
        ("a" * 32 + " " + "a" * 32, "contains ' ' at position 33"),
        (None, "got NoneType"),
    ],
)
def test_malformed_commitment(text, message):
    with pytest.raises(MalformedCommitment) as info:
        parse_commitment(text)
    assert str(info.value) == (
        f"commitment must be 64 hexadecimal characters (sha256), {message}"
    )
    assert isinstance(info.value, CommitError) and isinstance(info.value, ValueError)


def test_malformed_salt():
    with pytest.raises(MalformedSalt, match=r"^salt must be 64 hexadecimal characters .*got 62"):
        parse_salt("ab" * 31)
    with pytest.raises(MalformedSalt, match="contains 'x' at position 2"):
        make_commitment("g", 1, 1, "p", "A", "0x" + "0" * 62)


def test_malformed_reveal_raises_rather_than_not_matching():
    fields, expected = VECTORS[0]
    with pytest.raises(MalformedSalt):
        commitment_matches(expected, *fields[:5], "00" * 31)
    with pytest.raises(MalformedCommitment):
        commitment_matches(expected[:-1], *fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("g", "1", 1, "p", "A"), "round must be an integer, got str"),
        (("g", 1, True, "p", "A"), "step must be an integer, got bool"),
        (("g", 1, 1, "p", ["A"]), "choice must be a string, got list"),
        ((7, 1, 1, "p", "A"), "game must be a string, got int"),
    ],
)
def test_field_types_are_checked(fields, message):
    with pytest.raises(CommitError, match=f"^{message}$"):
        make_commitment(*fields, "00" * 32)


names = st.text(max_size=20)
numbers = st.integers(min_value=-(2**63), max_value=2**63)
salts = st.binary(min_size=32, max_size=32).map(bytes.hex)
reveals = st.tuples(names, numbers, numbers, names, names, salts)


@given(reveals)
def test_commit_then_reveal_matches(fields):
    assert commitment_matches(make_commitment(*fields), *fields)


@given(reveals, st.integers(min_value=0, max_value=5), st.data())
def test_changing_any_one_field_breaks_the_match(fields, index, data):
    other = data.draw([names, numbers, numbers, names, names, salts][index])
    assume(other != fields[index])
    changed = list(fields)
    changed[index] = other
    assert not commitment_matches(make_commitment(*fields), *changed)
