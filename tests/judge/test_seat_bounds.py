"""Deadlines have bounds (docs/protocol.md §"Seats and time"): a deadline an event sets lies at
most a year (365 days) after that event, and a duration is 1m to 365d. Anything outside is
refused in one line that names the bound, by mail (with an answer) as from the library, and
the log stays as it was."""

from __future__ import annotations

import pytest

from pbem.mail import addresses, judge
from pbem.protocol import away as absence, reports
from pbem.protocol.errors import Refused

DAY, HOUR = 86400, 3600
T0 = "2030-01-01T10:00:00Z"


@pytest.fixture
def timed(make_judge):
    game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "default"})
    judge.attach(game.store)
    return game


def refused(game, call, match: str) -> str:
    before = game.frozen()
    with pytest.raises(Refused, match=match) as caught:
        call()
    assert "\n" not in str(caught.value)
    assert game.frozen() == before
    return str(caught.value)


def test_an_extension_past_a_year_is_refused_naming_the_bound(timed):
    text = refused(timed, lambda: absence.extend(timed.store, "g1", "ani", until="9999-12-31T23:00:00Z", at=T0),
                   "more than a year")
    assert text == ("an extension's time 9999-12-31T23:00:00Z is more than a year (365 days) after now "
                    "(2030-01-01T10:00:00Z); the latest allowed is 2031-01-01T10:00:00Z")
    refused(timed, lambda: absence.extend(timed.store, "g1", "ani", seconds=366 * DAY, at=T0),
            "the latest allowed is 2031-01-01T10:00:00Z")
    # exactly a year is allowed, and then a duration on top of it is refused (no OverflowError)
    absence.extend(timed.store, "g1", "ani", until="2031-01-01T10:00:00Z", at=T0)
    refused(timed, lambda: absence.extend(timed.store, "g1", "ani", seconds=2 * HOUR, at=T0),
            "the new deadline 2031-01-01T12:00:00Z is more than a year")


def test_a_resume_past_a_year_is_refused_and_a_long_pause_resumes(timed):
    absence.pause(timed.store, "g1", "a long break", at=T0)
    refused(timed, lambda: absence.resume(timed.store, "g1", until="2032-01-01T10:00:00Z", at="2030-01-02T10:00:00Z"),
            r"--until 2032-01-01T10:00:00Z is more than a year \(365 days\)")
    # a pause of 15 months resumes, every open deadline moved on by the pause
    session = absence.resume(timed.store, "g1", at="2031-04-01T10:00:00Z")
    assert session.paused is None
    assert {w["due"] for w in reports.waiting(session)} == {"2031-04-02T10:00:00Z"}


def test_a_mailed_extension_past_the_bound_gets_an_answer(timed):
    absence.extend(timed.store, "g1", "ani", until="2031-01-01T10:00:00Z", at=T0)
    before = timed.frozen()[0]
    result = timed.send("ani", f"password {timed.passwords['ani']}\nextend 24h")
    assert not result.lines[0]["ok"]
    # its times as the rest of the player's mail shows them, not as the log writes them
    assert result.lines[0]["text"] == ("the new deadline 2031-01-02 10:00:00 UTC is more than a year (365 days) "
                                       "after now (2030-01-01 10:02:00 UTC); the latest allowed is "
                                       "2031-01-01 10:02:00 UTC")
    assert timed.frozen()[0] == before
    answers = [r for r in timed.outbox() if r["recipient"] == "ani@example.org" and "more than a year" in r["body_text"]]
    assert answers, "the player gets an answer"
    result = timed.send("alex", f"password {timed.passwords['alex']}\nextend 400d")
    assert result.lines[0]["text"] == ("extend 400d: a duration is a whole number of minutes, hours or days "
                                       "from 1m to 365d, like 12h or 1d, e.g. extend 24h")


def test_a_mailed_extension_in_full_width_digits_is_not_a_duration(timed):
    before = timed.frozen()
    result = timed.send("ani", f"password {timed.passwords['ani']}\nextend \uff19h")
    assert not result.lines[0]["ok"]
    assert result.lines[0]["text"] == ("extend \uff19h: a duration is a whole number of minutes, hours or days "
                                       "from 1m to 365d, like 12h or 1d, e.g. extend 24h")
    assert timed.frozen()[0] == before[0]


def test_a_mailed_refusal_at_the_bound_shows_the_players_zone_too(timed):
    addresses.register(timed.store, "g1", "ani", "ani@example.org", at=T0, tz="Europe/Prague")
    absence.extend(timed.store, "g1", "ani", until="2031-01-01T10:00:00Z", at=T0)
    result = timed.send("ani", f"password {timed.passwords['ani']}\nextend 24h")
    text = result.lines[0]["text"]
    assert text.startswith("the new deadline 2031-01-02 10:00:00 UTC (2031-01-02 11:00:00 CET, Europe/Prague) "
                           "is more than a year"), text
    assert "T10:" not in text
