"""Mail that cannot be delivered: a real SMTP server (aiosmtpd on 127.0.0.1) that refuses one
player for good (550) and another for now (451); bounces written by hand after the formats
their servers document, fed through ingest; the bounce score; the moderator told once."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pbem.mail import addresses, deadlines, failures, letters
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.store import outbox

BOUNCES = Path(__file__).parent / "bounces"
MODERATOR = "mod@example.org"
DAY, HOUR = 86400, 3600
PERMANENT = ("rfc3464-dsn", "postfix", "exim", "qmail", "yahoo", "gmail")
SERVER_WORDS = {"rfc3464-dsn": "550 5.1.1 <frank@example.org>... User unknown",
                "postfix": "550 5.1.1 <frank@example.org>: Recipient address rejected: User unknown",
                "exim": "550 5.1.1 No such user here",
                "qmail": "Sorry, no mailbox here by that name. (#5.1.1)",
                "yahoo": "This user doesn't have a yahoo.com account",
                "gmail": "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking"}


def when(hours: float) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def bounce(name: str, address: str = "frank@example.org", message_id: str = "<pbem.unknown1@example.org>",
           player: str = "frank") -> bytes:
    text = (BOUNCES / f"{name}.eml").read_text()
    for key, value in (("{ADDRESS}", address), ("{DOMAIN}", address.partition("@")[2]),
                       ("{PLAYER}", player), ("{MESSAGE_ID}", message_id)):
        text = text.replace(key, value)
    return text.encode()


class Refusing:
    """aiosmtpd handler: refuses the addresses in ``refuse`` at RCPT TO with the given reply,
    keeps what it accepts, counts the RCPTs it saw per address."""

    def __init__(self, refuse: dict[str, str]):
        self.refuse, self.received, self.rcpts = refuse, [], {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        self.rcpts[address] = self.rcpts.get(address, 0) + 1
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        import email
        from email.policy import default
        message = email.message_from_bytes(envelope.content.replace(b"\r\n", b"\n"), policy=default)
        self.received.append(SimpleNamespace(rcpt_tos=list(envelope.rcpt_tos), message=message))
        return "250 OK"

    def to(self, address: str) -> list:
        return [r.message for r in self.received if address in r.rcpt_tos]


@pytest.fixture
def refusing(smtp_servers):
    """``start(refuse)``: a real SMTP server that refuses the addresses in ``refuse``."""
    return lambda refuse: smtp_servers(Refusing(refuse))


def config(port: int) -> MailConfig:
    return MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=port,
                      security="plain", timeout=10.0)


@pytest.fixture
def moderated(make_judge):
    """g1 (24h deadlines, reminders 6h before, 1h grace) with a moderator address."""
    def make(**kw):
        game = make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": HOUR}, **kw)
        addresses.set_moderator(game.store, "g1", MODERATOR)
        return game
    return make


def rows(game, **where) -> list[dict]:
    return [r for r in game.outbox() if all(r[k] == v for k, v in where.items())]


# ---------------------------------------------------------------------- SMTP: 550 and 451


def test_a_550_fails_at_once_is_never_retried_and_the_moderator_is_told_once(moderated, refusing):
    game = moderated()
    server = refusing({"frank@example.org": "550 5.1.1 <frank@example.org>: Mailbox unavailable"})
    report = send_due(game.store, config(server.port), when(0))
    [failed] = [r for r in report.results if r.recipient == "frank@example.org"]
    assert failed.outcome == "failed" and failed.given_up and failed.next_try_at is None
    assert failed.error == "recipient refused: 550 5.1.1 <frank@example.org>: Mailbox unavailable"
    [row] = rows(game, recipient="frank@example.org")
    assert row["state"] == "failed" and row["failed_at"] == when(0) and row["attempts"] == 1
    assert game.passwords["frank"] not in row["body_text"]  # given up: its password leaves the database too
    # the moderator was told in the same run: since when, the server's words, what helps
    [notice] = server.handler.to(MODERATOR)
    assert notice["Subject"] == "[g1] mail to frank not delivered: no more reminders"
    text = notice.get_content()
    assert "The judge cannot deliver mail to frank in game g1 (frank@example.org)." in text
    assert f"Failing since:     {when(0).replace('T', ' ').replace('Z', ' UTC')}" in text
    assert "Last server answer: recipient refused: 550 5.1.1 <frank@example.org>: Mailbox unavailable" in text
    assert "  pbem address g1 frank NEW-ADDRESS" in text
    assert failures.is_dead(game.store, "frank@example.org")
    # never retried, however often the sender runs
    for hours in (0.1, 1, 5, 30):
        send_due(game.store, config(server.port), when(hours))
    assert server.handler.rcpts["frank@example.org"] == 1
    # no reminder goes to him; the others are reminded; the moderator is not told again
    acts = deadlines.tick(game.store, when(18))
    assert sorted(a.player for a in acts) == ["alex", "ani", "lothar"]
    assert not rows(game, recipient="frank@example.org", kind="reminder")
    send_due(game.store, config(server.port), when(18))
    assert len(server.handler.to(MODERATOR)) == 1
    # status and games say it, with the commands that help
    entry = failures.for_game(game.store, "g1")[0]
    assert entry["player"] == "frank" and entry["marked"] and entry["since"] == when(0)
    assert "pbem address g1 frank NEW-ADDRESS" in failures.line(entry)


def test_a_451_is_retried_with_back_off_and_delivered_once_the_server_takes_it(moderated, refusing):
    game = moderated()
    server = refusing({"lothar@example.org": "451 4.2.1 Mailbox busy, try again later"})
    report = send_due(game.store, config(server.port), when(0))
    [deferred] = [r for r in report.results if r.recipient == "lothar@example.org"]
    assert deferred.outcome == "failed" and not deferred.given_up
    assert deferred.next_try_at == "2030-01-01T10:01:00Z"  # one minute, as before
    [row] = rows(game, recipient="lothar@example.org")
    assert row["state"] == "queued" and row["deferred_since"] == when(0)
    assert send_due(game.store, config(server.port), "2030-01-01T10:00:30Z").results == []
    send_due(game.store, config(server.port), "2030-01-01T10:01:00Z")  # refused again: 2 minutes
    assert rows(game, recipient="lothar@example.org")[0]["next_try_at"] == "2030-01-01T10:03:00Z"
    del server.handler.refuse["lothar@example.org"]
    report = send_due(game.store, config(server.port), "2030-01-01T10:03:00Z")
    assert [r.outcome for r in report.results] == ["sent"]
    assert len(server.handler.to("lothar@example.org")) == 1 and server.handler.rcpts["lothar@example.org"] == 3
    assert rows(game, recipient="lothar@example.org")[0]["state"] == "sent"
    assert not server.handler.to(MODERATOR) and failures.for_game(game.store, "g1") == []


def test_a_451_that_lasts_past_the_limit_is_failed_and_counted_once(make_judge, refusing):
    game = make_judge()  # no deadline: the outbox's own limit, 3 days, is the earlier
    addresses.set_moderator(game.store, "g1", MODERATOR)
    server = refusing({"lothar@example.org": "451 4.2.1 Mailbox busy"})
    send_due(game.store, config(server.port), when(0))
    send_due(game.store, config(server.port), when(71.9))
    assert rows(game, recipient="lothar@example.org")[0]["state"] == "queued"
    report = send_due(game.store, config(server.port), when(72))
    [given_up] = [r for r in report.results if r.recipient == "lothar@example.org"]
    assert given_up.given_up and given_up.error.startswith("refused for 3 days, last: recipient refused: 451")
    assert rows(game, recipient="lothar@example.org")[0]["state"] == "failed"
    entry = failures.get(game.store, "lothar@example.org")
    assert entry["score"] == 1 and entry["dead_since"] is None  # a temporary trouble: one bad day
    [notice] = server.handler.to(MODERATOR)
    assert notice["Subject"] == "[g1] mail to lothar cannot be delivered"


def test_the_judges_own_server_being_down_fails_nobody(moderated):
    import socket
    game = moderated()
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        for hours in (0, 24, 80):
            send_due(game.store, config(port), when(hours))
    assert {r["state"] for r in game.outbox()} == {"queued"}
    assert failures.for_game(game.store, "g1") == []


# ---------------------------------------------------------------------- bounces by mail


def frank_private(game) -> str:
    """The Message-ID of a message the judge sent to frank (as if his server took it, then bounced it)."""
    row = rows(game, recipient="frank@example.org")[0]
    outbox.claim(game.store, row["id"], when(0), 0)
    outbox.mark_sent(game.store, row["id"], when(0))
    return row["message_id"]


@pytest.mark.parametrize("name", PERMANENT)
def test_a_bounce_quoting_the_judges_message_marks_the_address_and_is_never_answered(moderated, name):
    game = moderated()
    message_id = frank_private(game)
    log, before = json.dumps(game.log()), len(game.outbox())
    from pbem.mail import ingest as pipeline
    result = pipeline.ingest(game.store, bounce(name, message_id=message_id), when(1), ("judge@example.org",))
    assert result.outcome.startswith("not answered: ") and not result.answered
    assert result.bounced == ["frank@example.org failed (marked mail not delivered)"]
    assert json.dumps(game.log()) == log  # a bounce never changes a game
    new = game.outbox()[before:]
    assert [(r["kind"], r["recipient"]) for r in new] == [("notice", MODERATOR)]  # no answer to anyone
    [row] = [r for r in game.outbox() if r["message_id"] == message_id]
    assert row["state"] == "failed" and SERVER_WORDS[name] in row["last_error"]
    entry = failures.get(game.store, "frank@example.org")
    assert entry["dead_since"] == when(1) and SERVER_WORDS[name] in entry["last_answer"]
    assert SERVER_WORDS[name] in new[0]["body_text"]
    assert deadlines.tick(game.store, when(18)) and not rows(game, recipient="frank@example.org", kind="reminder")


@pytest.mark.parametrize("name", PERMANENT)
def test_a_bounce_of_an_unknown_message_counts_once_a_day_up_to_the_threshold(moderated, name):
    game = moderated()
    from pbem.mail import ingest as pipeline
    scores = []
    for n, hours in enumerate((1, 2, 25, 49)):
        raw = bounce(name, message_id=f"<other{n}@example.org>").replace(b"Message-I", f"X-N: {n}\nMessage-I".encode(), 1)
        result = pipeline.ingest(game.store, raw, when(hours), ("judge@example.org",))
        assert result.outcome.startswith("not answered: ") and result.bounced, result
        scores.append(failures.get(game.store, "frank@example.org")["score"])
    assert scores == [1, 1, 2, 3]  # the second bounce of the first day is not counted
    assert failures.is_dead(game.store, "frank@example.org")
    notices = rows(game, kind="notice")
    assert [n["subject"] for n in notices] == ["[g1] mail to frank cannot be delivered",
                                               "[g1] mail to frank not delivered: no more reminders"]


def test_a_delay_notice_is_understood_but_not_counted(moderated):
    game = moderated()
    from pbem.mail import ingest as pipeline
    result = pipeline.ingest(game.store, bounce("delayed-dsn"), when(1), ("judge@example.org",))
    assert result.bounced == ["frank@example.org delayed (not counted)"] and not result.answered
    assert failures.get(game.store, "frank@example.org") is None and not rows(game, kind="notice")


def test_a_stranger_that_only_looks_like_a_bounce_changes_nothing(moderated):
    game = moderated()
    from pbem.mail import ingest as pipeline
    frozen = game.frozen()
    # a real-looking bounce about an address that is nobody's here
    result = pipeline.ingest(game.store, bounce("postfix", address="someone@else.example.net", player="someone"),
                             when(1), ("judge@example.org",))
    assert result.bounced == ["someone@else.example.net failed (no player's address: nothing changed)"]
    # a stranger's ordinary mail that talks like a bounce and names a player
    fake = game.send("stranger@else.example.net", "Undelivered: <frank@example.org>: 550 5.1.1 User unknown\n",
                     subject="Undelivered Mail Returned to Sender")
    assert fake.outcome == "unknown sender" and fake.bounced == []
    assert game.frozen()[0] == frozen[0]
    assert [r["recipient"] for r in game.outbox()[len(json.loads(frozen[1])):]] == ["stranger@else.example.net"]
    assert game.store.conn.execute("select count(*) from mail_failures").fetchone()[0] == 0


def test_mail_from_the_player_or_a_new_address_clears_the_mark(moderated):
    game = moderated()
    from pbem.mail import ingest as pipeline
    message_id = frank_private(game)
    pipeline.ingest(game.store, bounce("exim", message_id=message_id), when(1), ("judge@example.org",))
    assert failures.is_dead(game.store, "frank@example.org")
    game.send("frank", "status\n")  # frank writes again: his address works
    assert not failures.is_dead(game.store, "frank@example.org")
    assert deadlines.tick(game.store, when(18)) and rows(game, recipient="frank@example.org", kind="reminder")
    # marked again, then the moderator gives the address again
    other = bounce("qmail", address="ani@example.org", player="ani",
                   message_id=rows(game, recipient="ani@example.org")[0]["message_id"])
    outbox.claim(game.store, rows(game, recipient="ani@example.org")[0]["id"], when(0), 0)
    outbox.mark_sent(game.store, rows(game, recipient="ani@example.org")[0]["id"], when(0))
    pipeline.ingest(game.store, other, when(2), ("judge@example.org",))
    assert failures.is_dead(game.store, "ani@example.org")
    addresses.register(game.store, "g1", "ani", "ani@example.org", at=when(3))
    assert not failures.is_dead(game.store, "ani@example.org")


# ---------------------------------------------------------------------- nothing stale goes out


def test_a_settled_requests_queued_reminder_is_dropped_unless_handed_to_smtp(moderated):
    from pbem.protocol import commands
    game = moderated()
    deadlines.tick(game.store, when(18))
    reminders = {r["recipient"]: r for r in rows(game, kind="reminder")}
    assert len(reminders) == 4
    handed = reminders["alex@example.org"]
    assert outbox.claim(game.store, handed["id"], when(18), 0)  # in the sender's hands
    for player in ("ani", "alex"):
        session = game.session()
        choice = session.rules.default(session.state, player, "select")
        commands.commit_for_player(game.store, "g1", player, choice, at=when(19))
    states = {r["recipient"]: (r["state"], r["last_error"]) for r in rows(game, kind="reminder")}
    assert states["ani@example.org"] == ("dropped", "its request was settled before it went")
    assert states["alex@example.org"][0] == "queued"  # handed to SMTP: it may have gone already
    assert states["frank@example.org"][0] == states["lothar@example.org"][0] == "queued"
    assert outbox.due(game.store, when(19))  # the others still go
    assert reminders["ani@example.org"]["id"] not in {r.id for r in outbox.due(game.store, when(30))}


def test_only_the_start_of_a_bounce_is_read_so_a_long_one_still_counts_and_a_hostile_one_costs_little():
    from pbem.mail import bounces
    long_tail = bounce("postfix", message_id="<pbem.kept@example.org>").replace(
        b"g1 - Tortuga - private message for frank\n", b"a line of the returned message\n" * 40000)
    assert len(long_tail) > 1_000_000
    found = bounces.read(long_tail)
    assert [f.address for f in found.failures] == ["frank@example.org"]
    assert found.message_ids == ("<pbem.kept@example.org>",)
    nested = (b"Return-Path: <>\nFrom: MAILER-DAEMON@relay.example.net\nMIME-Version: 1.0\n"
              + b"".join(b'Content-Type: multipart/mixed; boundary="n%d"\n\n--n%d\n' % (i, i) for i in range(100))
              + b"Content-Type: text/plain\n\nfrank@example.org: 550 user unknown\n")
    assert bounces.read(nested) is None
    assert bounces.read(b"From: someone@example.org\n\nhello\n") is None


def test_a_score_not_raised_for_seven_days_starts_again(moderated):
    game = moderated()
    from pbem.mail import ingest as pipeline
    scores = []
    for n, hours in enumerate((1, 25, 25 + 8 * 24)):
        raw = bounce("exim", message_id=f"<other{n}@example.org>").replace(b"Message-I", f"X-N: {n}\nMessage-I".encode(), 1)
        pipeline.ingest(game.store, raw, when(hours), ("judge@example.org",))
        scores.append((failures.get(game.store, "frank@example.org")["score"],
                       failures.get(game.store, "frank@example.org")["since"]))
    assert scores == [(1, when(1)), (2, when(1)), (1, when(25 + 8 * 24))]
    assert not failures.is_dead(game.store, "frank@example.org")


# ---------------------------------------------------------------------- the list's and the moderator's own addresses

def test_a_failing_list_address_is_told_to_the_moderator_and_a_failing_moderator_shows_in_status(moderated, refusing):
    game = moderated()
    server = refusing({"table@lists.example.org": "550 5.1.1 no such list",
                       MODERATOR: "550 5.1.1 <mod> gone"})
    with game.store.transaction():  # something for the list to carry
        letters.queue_summary(game.store, game.session(), 1, when(0))
    send_due(game.store, config(server.port), when(0))
    # the list: the moderator is mailed, with what helps; players' mail is untouched
    [notice] = [r for r in game.outbox() if r["recipient"] == MODERATOR and "list" in r["subject"]]
    assert notice["subject"] == "[g1] mail to the list not delivered"
    assert notice["body_text"].startswith("The judge cannot deliver the public summaries of game g1 to its list "
                                          "(table@lists.example.org).")
    assert "  pbem address g1 --list NEW-ADDRESS (or none)" in notice["body_text"]
    assert not any(failures.is_dead(game.store, f"{p}@example.org") for p in ("ani", "alex", "frank", "lothar"))
    # the moderator's own address refuses that notice too: nobody to mail, but status says both
    send_due(game.store, config(server.port), when(0.1))
    entries = failures.for_game(game.store, "g1")
    assert [(e["role"], e["player"], e["address"], e["marked"]) for e in entries] == [
        ("list", None, "table@lists.example.org", True), ("moderator", None, MODERATOR, True)]
    lines = [failures.line(e) for e in entries]
    assert lines[0].startswith("the list <table@lists.example.org>: MAIL NOT DELIVERED; failing since")
    assert lines[1].startswith(f"the moderator <{MODERATOR}>: MAIL NOT DELIVERED; failing since")
    assert "try: pbem address g1 --moderator NEW-ADDRESS" in lines[1]
    # the moderator gives the list address again: tried afresh
    addresses.set_list(game.store, "g1", "table@lists.example.org")
    addresses.set_moderator(game.store, "g1", MODERATOR)
    assert failures.for_game(game.store, "g1") == []


def test_a_reminder_held_back_by_a_451_past_its_deadline_is_dropped_not_sent(make_judge, refusing):
    """Issue 30: --deadline 48h --remind 12h --grace 1h; lothar's server answers 451 from the
    reminder's time until past the deadline. The reminder ("is due ...") never goes out
    after the time it names: it is checked as it is sent, not only when it is queued."""
    game = make_judge(deadline_seconds=2 * DAY, deadlines={"remind": 12 * HOUR, "grace": HOUR})
    addresses.set_moderator(game.store, "g1", MODERATOR)
    server = refusing({})
    send_due(game.store, config(server.port), when(0))  # the welcomes go
    deadlines.tick(game.store, when(36))
    [reminder] = rows(game, kind="reminder", recipient="lothar@example.org")
    assert reminder["expires_at"] == when(48)
    server.handler.refuse["lothar@example.org"] = "451 4.2.1 Mailbox busy, try again later"
    send_due(game.store, config(server.port), when(36))
    send_due(game.store, config(server.port), when(47.5))
    assert rows(game, id=reminder["id"])[0]["state"] == "queued"
    del server.handler.refuse["lothar@example.org"]  # the server takes mail again, 10 minutes late
    deadlines.tick(game.store, when(48 + 1 / 6))  # within the grace: no default yet
    report = send_due(game.store, config(server.port), when(48 + 1 / 6))
    assert reminder["id"] not in {r.id for r in report.results}
    row = rows(game, id=reminder["id"])[0]
    assert row["state"] == "dropped" and row["last_error"] == outbox.EXPIRED
    send_due(game.store, config(server.port), when(50))  # a send alone, later: still nothing
    assert not [m for m in server.handler.to("lothar@example.org") if "reminder" in m["Subject"]]
    assert all("reminder" in m["Subject"] for p in ("ani", "alex", "frank")
               for m in server.handler.to(f"{p}@example.org")[1:2])  # the others had theirs in time


def test_a_451_is_given_up_at_the_players_next_deadline_and_failing_since_is_the_first_failure(moderated, refusing):
    """Issue 30: a 4xx address is given up by the earlier of the 3 days and the player's next
    deadline (here 24h), and the moderator is told then; "failing since" is the first 451."""
    game = moderated()
    server = refusing({"lothar@example.org": "451 4.2.1 Mailbox busy"})
    send_due(game.store, config(server.port), when(0))
    send_due(game.store, config(server.port), when(23.9))
    [welcome] = rows(game, recipient="lothar@example.org", kind="private")
    assert welcome["state"] == "queued" and not server.handler.to(MODERATOR)
    report = send_due(game.store, config(server.port), when(24))  # lothar's deadline
    [given_up] = [r for r in report.results if r.recipient == "lothar@example.org"]
    assert given_up.given_up
    assert given_up.error.startswith("refused since 2030-01-01 10:00:00 UTC, given up at the recipient's deadline, "
                                     "last: recipient refused: 451"), given_up.error
    [notice] = server.handler.to(MODERATOR)  # told in the same run, before the default (1h of grace)
    assert notice["Subject"] == "[g1] mail to lothar cannot be delivered"
    assert f"Failing since:     {when(0).replace('T', ' ').replace('Z', ' UTC')}" in notice.get_content()
    assert failures.get(game.store, "lothar@example.org")["since"] == when(0)


def test_greylisting_is_not_given_up_at_a_deadline_a_minute_away(moderated, refusing):
    game = moderated()
    server = refusing({})
    send_due(game.store, config(server.port), when(0))
    with game.store.transaction():  # lothar's private message again, a minute before his deadline
        letters.queue_private(game.store, game.session(), "lothar", when(23.98))
    server.handler.refuse["lothar@example.org"] = "451 4.7.1 Greylisted, try again in 5 minutes"
    send_due(game.store, config(server.port), when(23.98))
    send_due(game.store, config(server.port), when(24.01))  # past the deadline, 2 minutes after the first 451
    [row] = [r for r in rows(game, recipient="lothar@example.org") if r["state"] != "sent"]
    assert row["state"] == "queued"
    del server.handler.refuse["lothar@example.org"]
    send_due(game.store, config(server.port), when(24.2))
    assert rows(game, id=row["id"])[0]["state"] == "sent"
