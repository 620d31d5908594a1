"""Who may take a seat (issue 29): never the judge or the list, the moderator only with
--moderator-plays (which the log records and the audit names); the ousted player is told
that their seat has passed on, and why. Each refusal is one line and changes nothing."""

from __future__ import annotations

import pytest

from pbem.mail import addresses, away, judge
from pbem.protocol.errors import Refused
from pbem.store.audit import audit_store, report_text

T1 = "2030-01-01T11:00:00Z"


def refused(game, call, match: str) -> str:
    before = game.frozen()
    with pytest.raises(Refused, match=match) as caught:
        call()
    assert "\n" not in str(caught.value)
    assert game.frozen() == before
    return str(caught.value)


@pytest.fixture
def table(game, monkeypatch):
    monkeypatch.setenv("PBEM_JUDGE_ADDRESS", "Judge@Example.org")
    judge.attach(game.store)
    addresses.set_moderator(game.store, "g1", "mod@example.org")
    return game


@pytest.mark.parametrize("address, words", [
    ("judge@example.org", "judge@example.org is the judge's own address; a seat goes to a person"),
    ("TABLE@lists.example.org", "is the list of game g1; a seat goes to a person"),
    ("mod@example.org", "mod@example.org is the moderator's address; to play the seat yourself say so with "
                        "--moderator-plays"),
])
def test_the_judge_the_list_and_the_moderator_are_refused(table, address, words):
    refused(table, lambda: away.replace(table.store, "g1", "lothar", address, at=T1), words)


def test_the_moderator_plays_a_seat_only_when_they_say_so_and_the_audit_names_it(table):
    done = away.replace(table.store, "g1", "lothar", "mod@example.org", at=T1, reason="nobody else",
                        moderator_plays=True)
    event = table.log()[-1]
    assert event["kind"] == "replaced" and event["data"]["moderator"] is True and done["seat"] == "lothar"
    report = audit_store(table.store, "g1")
    text = report_text(report)
    assert "1 replacement (1 seat given to the moderator)" in text


def test_the_ousted_player_is_told_that_their_seat_passed_on_and_why(table):
    sent = len(table.outbox())
    away.replace(table.store, "g1", "lothar", "maria@example.org", at=T1, reason="lothar asked to leave")
    seq = table.log()[-1]["seq"]
    mails = [r for r in table.outbox()[sent:] if r["recipient"] == "lothar@example.org"]
    assert len(mails) == 1
    assert mails[0]["subject"].endswith("your seat lothar has passed on")
    assert mails[0]["body_text"].startswith(
        f"Your seat lothar in game g1 has passed on to a new player, from event {seq} on (the moderator's "
        f"decision: lothar asked to leave). Mail from you no longer counts for this seat")


def test_when_the_judge_address_is_not_known_here_the_moderator_is_told_it_was_not_checked(game, tmp_path,
                                                                                        monkeypatch):
    """Without judge_address in the mail config or $PBEM_JUDGE_ADDRESS (a judge that sends
    with 'pbem mail send --from ...'), replace cannot tell the judge's own address from a
    person's: it says so, on stderr and under --json, rather than passing it silently."""
    from typer.testing import CliRunner

    from pbem.cli.program import app
    monkeypatch.delenv("PBEM_JUDGE_ADDRESS", raising=False)
    monkeypatch.delenv("PBEM_MAIL_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    result = CliRunner().invoke(app, ["replace", "g1", "lothar", "--email", "maria@example.org", "--reason", "left",
                                      "--db", str(game.store.path)])
    assert result.exit_code == 0, result.output
    assert result.stderr == ("pbem: note: the judge's own address is not known here (judge_address in the mail "
                             "config, or $PBEM_JUDGE_ADDRESS), so maria@example.org was not checked against it\n")
    monkeypatch.setenv("PBEM_JUDGE_ADDRESS", "judge@example.org")
    result = CliRunner().invoke(app, ["replace", "g1", "lothar", "--email", "mary@example.org", "--reason", "left",
                                      "--db", str(game.store.path), "--json"])
    assert result.exit_code == 0 and result.stderr == "", result.output
    import json
    assert json.loads(result.stdout)["judge_address_checked"] is True
