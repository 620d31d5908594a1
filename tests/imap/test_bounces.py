"""Bounces that come back to the judge, read through the ways mail comes in: 'pbem mail
ingest' (files, as an MTA pipe or a moderator would hand them over) and 'pbem mail fetch'
from a real Dovecot. Each of the hand-written bounces (tests/judge/bounces: RFC 3464,
Postfix, Exim, qmail, Yahoo, Gmail) is understood with the right address, none is
answered, none changes the game, and the moderator is told once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BOUNCES = Path(__file__).resolve().parents[1] / "judge" / "bounces"
FORMATS = ("rfc3464-dsn", "postfix", "exim", "qmail", "yahoo", "gmail")
MODERATOR = "mod@example.org"


def fill(name: str, address: str, message_id: str, serial: int) -> bytes:
    text = (BOUNCES / f"{name}.eml").read_text()
    for key, value in (("{ADDRESS}", address), ("{DOMAIN}", address.partition("@")[2]),
                       ("{PLAYER}", address.partition("@")[0]), ("{MESSAGE_ID}", message_id)):
        text = text.replace(key, value)
    # each copy its own message to the judge, even where the format has no Message-ID of its own
    return f"X-Test-Copy: {serial}\n{text}".encode()


@pytest.fixture
def game(cli, private_environment, tmp_path):
    """g1: ani and frank at example.org, a moderator; everything queued written out (sent)."""
    cli("new", "g1", "--players", "ani=ani@example.org,frank=frank@example.org", "--now",
        "--moderator", MODERATOR)
    cli("mail", "send", "--to-dir", tmp_path / "out", "--from", "judge@example.org")
    return private_environment


def state(cli) -> dict:
    return {"log": cli("log", "g1", "--json").stdout,
            "outbox": json.loads(cli("mail", "outbox", "--all", "--json").stdout)}


def frank_message(cli) -> str:
    return next(r["message_id"] for r in json.loads(cli("mail", "outbox", "--all", "--json").stdout)
                if r["recipient"] == "frank@example.org")


def check_after(cli, before: dict, outcomes: list[str]) -> None:
    for outcome in outcomes:
        assert outcome.startswith("not answered: "), outcome
        assert "; bounce: frank@example.org failed" in outcome, outcome
    after = state(cli)
    assert after["log"] == before["log"]  # no bounce changes the game
    new = after["outbox"][len(before["outbox"]):]
    # nothing answered: the one new message is the moderator's notice, once for all of them
    assert [(r["kind"], r["recipient"], r["subject"]) for r in new] == [
        ("notice", MODERATOR, "[g1] mail to frank not delivered: no more reminders")]
    status = cli("status", "g1").stdout
    assert "mail cannot be delivered: frank <frank@example.org>: MAIL NOT DELIVERED (no reminders)" in status
    assert "try: pbem address g1 frank NEW-ADDRESS" in status
    assert "MAIL CANNOT BE DELIVERED to frank (not delivered: no reminders)" in cli("games").stdout


def test_each_bounce_through_pbem_mail_ingest(cli, game, tmp_path):
    before = state(cli)
    message_id = frank_message(cli)
    files = []
    for serial, name in enumerate(FORMATS):
        path = tmp_path / f"{name}.eml"
        path.write_bytes(fill(name, "frank@example.org", message_id, serial))
        files += ["--file", path]
    done = json.loads(cli("mail", "ingest", *files, "--judge", "judge@example.org", "--json").stdout)
    outcomes = [m["outcome"] for m in done["messages"]]
    assert [m["answered"] for m in done["messages"]] == [False] * len(FORMATS)
    assert [m["bounced"] for m in done["messages"]][0] == ["frank@example.org failed (marked mail not delivered)"]
    check_after(cli, before, outcomes)
    # the message that came back is failed in the outbox, with the server's words
    listed = cli("mail", "outbox", "--game", "g1").stdout
    assert "to frank@example.org" in listed and "FAILED" in listed


def test_each_bounce_through_imap(cli, game, dovecot):
    server = dovecot()
    before = state(cli)
    message_id = frank_message(cli)
    uids = [server.append(fill(name, "frank@example.org", message_id, serial)) for serial, name in enumerate(FORMATS)]
    out = cli("mail", "fetch", "--imap", f"{server.host}:{server.port}", "--security", "plain",
              "--user", server.user, "--judge", "judge@example.org", "--json",
              env={"PBEM_IMAP_PASSWORD": server.password}).stdout
    results = json.loads(out)["messages"]
    assert [r["uid"] for r in results] == uids
    assert [r["answered"] for r in results] == [False] * len(FORMATS)
    check_after(cli, before, [r["outcome"] for r in results])
    assert all("\\Seen" in flags for flags, _ in server.messages().values())
