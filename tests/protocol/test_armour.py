"""Armoured submission blocks: survive what mail and forums do; detect real damage."""

import base64
import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.protocol.armour import BEGIN_LINE, END_LINE, ArmourError, armour, extract_blocks
from pbem.protocol.canonical import canonical_json

PAYLOAD = {
    "body": {
        "kind": "commit",
        "game": "tortuga-2024",
        "round": 3,
        "step": 2,
        "player": "\u0160\u00e1rka",
        "commitment": "6eb981d9b0214c0869caefd185de2d8ecbb21df0e070840c20338cf525b9a8c0",
    },
    "sig": (
        "Lf814Ys7o5A//89qNzGCXxnQVknei5ZPRWUS1SsUA2p8tjSqBSYQVsRX8aJy+hiYIpAGZZvOE/dCsRI0zSdMBQ=="
    ),
}
# Frozen vector of an arbitrary payload (docs/protocol.md armours a full signed submission).
ARMOURED = """\
-----BEGIN PBEM SUBMISSION-----
eyJib2R5Ijp7ImNvbW1pdG1lbnQiOiI2ZWI5ODFkOWIwMjE0YzA4NjljYWVmZDE4
NWRlMmQ4ZWNiYjIxZGYwZTA3MDg0MGMyMDMzOGNmNTI1YjlhOGMwIiwiZ2FtZSI6
InRvcnR1Z2EtMjAyNCIsImtpbmQiOiJjb21taXQiLCJwbGF5ZXIiOiLFoMOhcmth
Iiwicm91bmQiOjMsInN0ZXAiOjJ9LCJzaWciOiJMZjgxNFlzN281QS8vODlxTnpH
Q1h4blFWa25laTVaUFJXVVMxU3NVQTJwOHRqU3FCU1lRVnNSWDhhSnkraGlZSXBB
R1padk9FL2RDc1JJMHpTZE1CUT09In0=
=f61d4a55
-----END PBEM SUBMISSION-----
"""
OTHER = {"body": {"kind": "reveal", "choice": "B,C"}, "sig": "x"}


def quote(text: str, prefix: str) -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


def rewrap(block: str, width: int) -> str:
    """Join the base64 and checksum and re-split them at another width, as a reflow would."""
    lines = block.strip("\n").split("\n")
    inner = "".join(lines[1:-2]) + lines[-2]
    chunks = [inner[i : i + width] for i in range(0, len(inner), width)]
    return "\n".join([lines[0], *chunks, lines[-1]]) + "\n"


def body_lines(block: str) -> list[str]:
    return block.splitlines()[1:-2]


def test_vector():
    assert armour(PAYLOAD) == ARMOURED
    assert extract_blocks(ARMOURED) == [PAYLOAD]


def test_format():
    lines = armour(PAYLOAD).split("\n")
    assert lines[0] == BEGIN_LINE and lines[-2] == END_LINE and lines[-1] == ""
    assert all(len(line) == 64 for line in lines[1:-4]) and 0 < len(lines[-4]) <= 64
    data = base64.b64decode("".join(lines[1:-3]))
    assert data == canonical_json(PAYLOAD)
    assert lines[-3] == "=" + hashlib.sha256(data).hexdigest()[:8]


def test_no_block_is_an_empty_list():
    assert extract_blocks("") == []
    assert extract_blocks("Hi all,\n> earlier mail\nI pass this round.\n") == []


def test_armour_refuses_what_is_not_an_object():
    with pytest.raises(ArmourError, match="only a JSON object"):
        armour([1, 2])


DAMAGE = {
    "quoted '> '": lambda t: quote(t, "> "),
    "quoted '> > '": lambda t: quote(t, "> > "),
    "quoted '>>> '": lambda t: quote(t, ">>> "),
    "quoted '>' without space": lambda t: quote(t, ">"),
    "quoted and indented": lambda t: quote(t, "    >  > "),
    "indented with tabs and no-break spaces": lambda t: quote(t, "\t\u00a0 "),
    "CRLF": lambda t: t.replace("\n", "\r\n"),
    "CR only": lambda t: t.replace("\n", "\r"),
    "trailing spaces": lambda t: t.replace("\n", "   \n"),
    "trailing tabs and CRLF": lambda t: t.replace("\n", " \t\r\n"),
    "rewrapped at 40": lambda t: rewrap(t, 40),
    "rewrapped at 76": lambda t: rewrap(t, 76),
    "rewrapped at 7": lambda t: rewrap(t, 7),
    "rewrapped onto one line": lambda t: rewrap(t, 10_000),
    "blank line inside": lambda t: t.replace("\n", "\n\n", 3),
    "blank lines everywhere": lambda t: t.replace("\n", "\n \n"),
    "checksum on its own paragraph": lambda t: t.replace("\n=", "\n\n\n="),
    "text before and after": lambda t: "Dear GM,\n\nmy move:\n\n" + t + "\n-- \nAni\n",
    "text on the marker lines": lambda t: "Here: " + t.replace(END_LINE, END_LINE + " thanks"),
    "everything at once": lambda t: quote(rewrap(t, 76), "> > ").replace("\n", "  \r\n\r\n"),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_survives(damage):
    assert extract_blocks(damage(ARMOURED)) == [PAYLOAD]


def test_two_blocks_in_one_mail_in_order():
    text = "first:\n" + ARMOURED + "\nand also\n\n" + quote(armour(OTHER), "> ")
    assert extract_blocks(text) == [PAYLOAD, OTHER]
    assert extract_blocks(armour(OTHER) + armour(PAYLOAD)) == [OTHER, PAYLOAD]


def test_a_quoted_reply_keeps_earlier_blocks():
    reply = "Received:\n" + quote("On Monday Ani wrote:\n" + ARMOURED, "> ")
    assert extract_blocks(reply + armour(OTHER)) == [PAYLOAD, OTHER]


def error(text: str) -> str:
    with pytest.raises(ArmourError) as info:
        extract_blocks(text)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_cut_off_without_end_line():
    cut = "".join(ARMOURED.splitlines(keepends=True)[:4])
    assert error(cut) == "submission block 1 is cut off: no END line; paste the whole block"
    assert error(ARMOURED + cut).startswith("submission block 2 is cut off: no END line")


def test_cut_off_then_another_block():
    cut = "".join(ARMOURED.splitlines(keepends=True)[:4])
    message = error(cut + ARMOURED)
    assert message.startswith("submission block 1 is cut off: no END line before the next BEGIN")


def test_end_without_begin():
    tail = "".join(ARMOURED.splitlines(keepends=True)[3:])
    message = error(ARMOURED + tail)
    assert message.startswith("submission block 2 is cut off: END line without a BEGIN line")


def test_missing_data_line_is_detected():
    lines = ARMOURED.splitlines(keepends=True)
    message = error("".join(lines[:2] + lines[3:]))
    assert message.startswith("submission block 1 is damaged: checksum f61d4a55 does not match")


def test_truncated_data_is_detected():
    lines = ARMOURED.splitlines(keepends=True)
    lines[2] = lines[2][:30] + "\n"
    message = error("".join(lines))
    assert message.startswith("submission block 1 is damaged:")
    assert "not a multiple of 4 (characters lost or truncated)" in message


@pytest.mark.parametrize("position", [40, 100, 200, 300])
def test_flipped_character_is_detected(position):
    start = len(BEGIN_LINE) + 1
    text = list(ARMOURED)
    index = start + position
    assert text[index] not in "\n="
    text[index] = "A" if text[index] != "A" else "B"
    assert error("".join(text)) == (
        "submission block 1 is damaged: checksum f61d4a55 does not match "
        "(contents changed or truncated)"
    )


def test_flipped_checksum_is_detected():
    message = error(ARMOURED.replace("=f61d4a55", "=f61d4a56"))
    assert message.startswith("submission block 1 is damaged: checksum f61d4a56 does not match")


def test_upper_case_checksum_is_fine():
    assert extract_blocks(ARMOURED.replace("=f61d4a55", "=F61D4A55")) == [PAYLOAD]


def test_second_block_is_named():
    damaged = armour(OTHER).replace("\n=", "\nX=", 1)
    assert error(ARMOURED + damaged).startswith("submission block 2 is damaged:")


def test_missing_checksum_line():
    message = error(ARMOURED.replace("=f61d4a55\n", ""))
    assert message.startswith("submission block 1 has no checksum line")
    assert message.endswith("paste the whole block")
    assert error(ARMOURED.replace("=f61d4a55\n", "=f61d4a5\n")).startswith(
        "submission block 1 has no checksum line"
    )


def test_empty_block():
    assert error(BEGIN_LINE + "\n" + END_LINE).startswith(
        "submission block 1 has no checksum line"
    )


def test_bad_base64_character():
    message = error(ARMOURED.replace("InRvcnR1", "InR*cnR1"))
    assert message.startswith(
        "submission block 1 is damaged: '*' (base64 character 132) is not base64"
    )


def test_padding_in_the_middle():
    lines = ARMOURED.splitlines(keepends=True)
    reordered = "".join([lines[0], lines[6], *lines[1:6], *lines[7:]])
    assert "padding in the middle" in error(reordered)


def test_altered_padding_bits():
    # "In0=" -> "In1=" decodes to the same bytes: still refused, one text per payload.
    assert "last base64 characters were changed" in error(ARMOURED.replace("In0=", "In1="))


def forge(data: bytes) -> str:
    """A block with a correct checksum around arbitrary bytes."""
    encoded = base64.b64encode(data).decode()
    return f"{BEGIN_LINE}\n{encoded}\n={hashlib.sha256(data).hexdigest()[:8]}\n{END_LINE}\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"hello", "submission block 1 does not hold JSON: Expecting value at character 0"),
        (b"\xff\xfe", "submission block 1 does not hold UTF-8 text (byte 0)"),
        (b"[1,2]", "submission block 1 holds a JSON array, expected a JSON object"),
        (b'"text"', "submission block 1 holds a JSON string, expected a JSON object"),
        (b"null", "submission block 1 holds a JSON null, expected a JSON object"),
        (b'{"b":1, "a":2}', "submission block 1 does not hold canonical JSON (sorted keys"),
        (b'{"a":1,"a":2}', "submission block 1 does not hold canonical JSON (sorted keys"),
        (b'{"a":1.5}', "submission block 1 does not hold canonical JSON: $.a: floats"),
        (b'{"a":NaN}', "submission block 1 does not hold canonical JSON: NaN is not allowed"),
        (b'{"a":"\\ud800"}', "submission block 1 does not hold canonical JSON: $.a: string"),
        (b'{"\\ud800":1}', "submission block 1 does not hold canonical JSON:"),
        (b"[" * 100_000 + b"]" * 100_000, "submission block 1 does not hold canonical JSON:"),
    ],
)
def test_payload_that_is_not_a_canonical_object(data, message):
    assert error(forge(data)).startswith(message)


def test_non_text_input():
    with pytest.raises(ArmourError, match="expected the text of a message"):
        extract_blocks(ARMOURED.encode())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
payloads = st.dictionaries(st.text(max_size=10), json_values, max_size=6)
quote_prefixes = st.lists(st.sampled_from(["> ", ">", " > ", ">  "]), max_size=4).map("".join)


@given(
    payloads,
    quote_prefixes,
    st.sampled_from(["\n", "\r\n", "  \n", "\n\n"]),
    st.integers(min_value=1, max_value=120),
    st.text(max_size=30).filter(lambda t: "-" not in t),
)
def test_round_trip_through_damage(payload, prefix, newline, width, before):
    text = before + "\n" + quote(rewrap(armour(payload), width), prefix).replace("\n", newline)
    assert extract_blocks(text) == [payload]
    assert json.loads(canonical_json(payload)) == payload
