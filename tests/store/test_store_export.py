"""Reading an export strictly: every malformed line is refused with its line number."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pbem.store import StoreError, export_lines, read_export, verify_chain


@pytest.fixture
def text(filled):
    return "".join(export_lines(filled.events("g")))


def refused(text: str) -> str:
    with pytest.raises(StoreError) as caught:
        read_export(text)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_export_round_trips(filled, text):
    assert text.count("\n") == 6 and text.endswith("\n")
    rows = read_export(text)
    assert rows == [event.export_dict() for event in filled.events("g")]
    verify_chain(rows, filled.head("g"))


def test_missing_final_newline_and_crlf_are_accepted(filled, text):
    expected = [event.export_dict() for event in filled.events("g")]
    assert read_export(text.rstrip("\n")) == expected
    assert read_export(text.replace("\n", "\r\n")) == expected


def test_empty_export_is_an_empty_log():
    assert read_export("") == []


def test_truncated_last_line(text):
    assert refused(text[:-25]) == "line 6 is not valid JSON (truncated file?)"


def test_line_that_is_not_json(text):
    lines = text.splitlines(keepends=True)
    lines[2] = "this is not json\n"
    assert refused("".join(lines)) == "line 3 is not valid JSON (Expecting value)"


def test_blank_line_in_the_middle(text):
    lines = text.splitlines(keepends=True)
    lines.insert(2, "\n")
    assert refused("".join(lines)) == "line 3 is empty"


def test_missing_field(text):
    lines = text.splitlines(keepends=True)
    lines[1] = lines[1].replace('"kind":"tick",', "")
    assert refused("".join(lines)) == "line 2 is missing the field 'kind'"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('"seq":4', '"seq":"4"', "line 4 field 'seq' must be a positive integer, got '4'"),
        ('"seq":4', '"seq":true', "line 4 field 'seq' must be a positive integer, got True"),
        ('"data":{"n":4}', '"data":[4]', "line 4 field 'data' must be a JSON object, got list"),
        ('"data":{"n":4}', '"data":{"n":4.0}', "line 4 field 'data' has no canonical JSON form"),
        ('"data":{"n":4}', '"data":{"n":NaN}', "line 4 uses NaN, which is not JSON"),
        ('"kind":"tick"', '"kind":""', "line 4 field 'kind' must be a non-empty string"),
        ('"kind":"tick"', '"kind":"tick","kind":"x"', "line 4 repeats the key 'kind'"),
        ('"kind":"tick"', '"kind":"tick","note":"x"', "line 4 has unknown field 'note'"),
        ('"hash":"', '"hash":"XY', "line 4 field 'hash' must be 64 lowercase hex digits"),
    ],
)
def test_wrong_types_and_shapes(text, old, new, message):
    lines = text.splitlines(keepends=True)
    assert old in lines[3]
    lines[3] = lines[3].replace(old, new, 1)
    assert refused("".join(lines)).startswith(message)


def test_line_that_is_not_an_object(text):
    assert refused(text + "[1,2]\n") == "line 7 is a JSON list, not an object"


def test_secrets_never_reach_the_export(filled):
    filled.put_secret("g", "seed", "TOP-SECRET-SEED")
    text = "".join(export_lines(filled.events("g")))
    assert "TOP-SECRET-SEED" not in text


def test_auditing_a_file_does_not_load_sqlite_utils():
    repo_root = Path(__file__).resolve().parents[2]
    script = (
        "import sys; from pbem.store import read_export, verify_chain; "
        "verify_chain(read_export('')); print('sqlite_utils' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=repo_root, capture_output=True, text=True, check=True
    )
    assert result.stdout == "False\n"
