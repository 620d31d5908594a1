"""``times.shift`` and ``seconds_between`` read the log's one spelling directly, not through
strptime: the same answers and the same errors as strptime/strftime, for any text."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.protocol import times
from pbem.protocol.times import AT_FORMAT, seconds_between, shift


def slow_shift(at, seconds):
    return (datetime.strptime(at, AT_FORMAT) + timedelta(seconds=seconds)).strftime(AT_FORMAT)


def slow_between(earlier, later):
    return int((datetime.strptime(later, AT_FORMAT) - datetime.strptime(earlier, AT_FORMAT)).total_seconds())


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except (ValueError, TypeError, OverflowError) as exc:
        return (type(exc).__name__, str(exc))


# times in the log's spelling, valid or not: every field from a digit string that may be out of range
digits = lambda n: st.text("0123456789", min_size=n, max_size=n)  # noqa: E731
spelled = st.builds(lambda y, mo, d, h, mi, s: f"{y}-{mo}-{d}T{h}:{mi}:{s}Z",
                    digits(4), digits(2), digits(2), digits(2), digits(2), digits(2))
valid = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0).strftime(AT_FORMAT))
odd = st.one_of(st.text(max_size=24), st.sampled_from([
    "2030-1-01T00:00:00Z", "2030-01-01 00:00:00Z", "2030-01-01T00:00:00", "2030-02-30T00:00:00Z",
    "2030-01-01T24:00:00Z", "2030-01-01T00:60:00Z", "2030-01-01T00:00:60Z", "0000-01-01T00:00:00Z",
    "２０３０-01-01T00:00:00Z", "2030-01-01T00:00:00z", " 2030-01-01T00:00:00Z", "2030-01-01T00:00:00Z\n",
    "0999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"]))
times_ = st.one_of(valid, spelled, odd)
seconds = st.one_of(st.integers(-10**11, 10**11), st.sampled_from([0, 1, -1, 0.5, -0.25, 86400, 600]))


@settings(max_examples=600, deadline=None)
@given(times_, seconds)
def test_shift_is_strptime_and_strftime(at, by):
    assert outcome(shift, at, by) == outcome(slow_shift, at, by)


@settings(max_examples=600, deadline=None)
@given(times_, times_)
def test_seconds_between_is_strptime(earlier, later):
    assert outcome(seconds_between, earlier, later) == outcome(slow_between, earlier, later)


@pytest.mark.parametrize("value", [None, 5, b"2030-01-01T00:00:00Z"])
def test_what_is_no_text_fails_as_strptime_does(value):
    assert outcome(shift, value, 1) == outcome(slow_shift, value, 1)


def test_the_quick_reading_is_used():
    """Guards the test itself: the quick path is there and reads a time the log writes."""
    assert times._parsed("2030-05-06T07:08:09Z") == datetime(2030, 5, 6, 7, 8, 9)
    assert shift("2030-12-31T23:59:59Z", 1) == "2031-01-01T00:00:00Z"
    assert shift("1000-01-01T00:00:00Z", -1) == slow_shift("1000-01-01T00:00:00Z", -1)
