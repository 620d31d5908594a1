"""Runs every rule case in tests/rules/cases/*.toml (see casefile.py for the format)."""

import re
from pathlib import Path

import pytest

from casefile import ERRORS, load_cases, lookup, probe, run

CASES = load_cases()


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[n for n, _ in CASES])
def test_case(case):
    state, error = run(case)
    if "error" in case:
        assert error is not None, "expected the last choice to be refused"
        assert isinstance(error, ERRORS[case["error"]]), f"got {type(error).__name__}: {error}"
        if "error_contains" in case:
            assert case["error_contains"] in str(error), str(error)
        assert error.code == case["error_code"], f"code {error.code!r}: {error}"
    else:
        assert error is None
    seen = probe(state)
    for path, expected in case.get("expect", {}).items():
        assert lookup(seen, path) == expected, f"{path}: expected {expected!r}, got {lookup(seen, path)!r}"


def test_every_refusal_code_is_documented_and_pinned():
    """The codes a verifier compares (docs/protocol.md lists them with their kind of error):
    each documented code is pinned by a case, and each case's code is documented."""
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
    documented = dict(re.findall(r"^\| `([a-z-]+)` \| (invalid|illegal|turn) \|", doc, re.M))
    pinned = {case["error_code"]: case["error"] for _, case in CASES if "error" in case}
    assert pinned == documented


def test_enough_cases():
    assert len(CASES) >= 60
