"""Runs every rule case in tests/rules/cases/*.toml (see casefile.py for the format)."""

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
    else:
        assert error is None
    seen = probe(state)
    for path, expected in case.get("expect", {}).items():
        assert lookup(seen, path) == expected, f"{path}: expected {expected!r}, got {lookup(seen, path)!r}"


def test_enough_cases():
    assert len(CASES) >= 60
