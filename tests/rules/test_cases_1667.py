"""Runs every Tortuga 1667 rule case in tests/rules/cases/1667-*.toml (format: casefile1667.py)."""

import re
from pathlib import Path

import pytest

from casefile1667 import ERRORS, load_cases, lookup, probe, run

CASES = load_cases()
DOC = Path(__file__).parents[2] / "docs" / "rules-1667.md"


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


def test_every_ruling_is_pinned_and_every_pin_is_documented():
    """Each ruling marked in docs/rules-1667.md is pinned by a case, and each case names a
    ruling or rule that the document lists."""
    documented = set(re.findall(r"\(`([a-z0-9-]+)`\)", DOC.read_text(encoding="utf-8")))
    rulings = set(re.findall(r"\*\*RULING\*\* \(`([a-z0-9-]+)`\)", DOC.read_text(encoding="utf-8")))
    pinned = {case["ruling"] for _, case in CASES}
    assert rulings <= pinned, f"rulings without a case: {sorted(rulings - pinned)}"
    assert pinned <= documented | rulings, f"cases naming no documented rule: {sorted(pinned - documented - rulings)}"


def test_every_refusal_code_is_documented_and_pinned():
    doc = DOC.read_text(encoding="utf-8")
    documented = dict(re.findall(r"^\| `([a-z-]+)` \| (invalid|illegal|turn) \|", doc, re.M))
    pinned = {case["error_code"]: case["error"] for _, case in CASES if "error" in case}
    assert pinned == documented


def test_enough_cases():
    assert len(CASES) >= 30
