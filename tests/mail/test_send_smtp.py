"""Delivering the outbox to a real SMTP server (aiosmtpd on 127.0.0.1): what arrives, AUTH,
STARTTLS and TLS with certificate checks, and the failures that must lose nothing and send
nothing twice: a dropped connection, a refused recipient, a hung server, no server at all."""

from __future__ import annotations

import socket

import pytest

from pbem.mail.config import MailConfig
from pbem.mail.send import open_smtp, send_due
from pbem.store import outbox

# aiosmtpd warns that AUTH without TLS is unsafe: here it is 127.0.0.1 and on purpose
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")

T0 = "2024-05-01T12:00:00Z"
T1 = "2024-05-01T12:00:30Z"  # before the first retry is due
T2 = "2024-05-01T12:01:00Z"  # the first retry is due


def plain(port: int, **changes) -> MailConfig:
    return MailConfig(**{"judge_address": "judge@example.org", "smtp_host": "127.0.0.1",
                         "smtp_port": port, "security": "plain", "timeout": 10.0, **changes})


def states(store) -> dict[int, tuple[str, int]]:
    return {row.id: (row.state, row.attempts) for row in outbox.listing(store, include_sent=True)}


def test_messages_arrive_with_their_headers_and_bodies(store, smtp_server):
    server = smtp_server()
    with store.transaction():
        answer_id = outbox.queue(store, game="g1", kind="answer", recipient="ani@example.org",
                                 subject="Re: [g1] my moves", text="Applied: commit.\n",
                                 in_reply_to="<m1@players.example>",
                                 references=["<m0@players.example>", "<m1@players.example>"],
                                 at=T0, domain="judge.example.org")
        summary_id = outbox.queue(store, game="g1", kind="summary", recipient="alex@example.org",
                                  subject="[g1] Runde 3: Überfall ☠", text="Zusammenfassung: Schätze ☠\n",
                                  html="<p>Zusammenfassung: <b>Schätze</b> ☠</p>", at=T0)

    report = send_due(store, plain(server.port), T0)

    assert report.ok and [r.outcome for r in report.results] == ["sent", "sent"]
    got = server.handler.received
    assert [r.rcpt_tos for r in got] == [["ani@example.org"], ["alex@example.org"]]
    assert {r.mail_from for r in got} == {"judge@example.org"}
    answer, summary = got[0].message, got[1].message
    assert answer["Message-ID"] == answer_id and answer_id.endswith("@judge.example.org>")
    assert answer["From"] == "judge@example.org" and answer["To"] == "ani@example.org"
    assert answer["Subject"] == "Re: [g1] my moves"
    assert answer["Date"] == "Wed, 01 May 2024 12:00:00 +0000"
    assert answer["In-Reply-To"] == "<m1@players.example>"
    assert answer["References"] == "<m0@players.example> <m1@players.example>"
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer["MIME-Version"] == "1.0"
    assert answer.get_content_type() == "text/plain"
    assert answer.get_content() == "Applied: commit.\n"

    assert summary["Message-ID"] == summary_id
    assert summary["Subject"] == "[g1] Runde 3: Überfall ☠"  # decoded from RFC 2047
    assert summary["Auto-Submitted"] == "auto-generated"
    assert "In-Reply-To" not in summary and "References" not in summary
    assert summary.get_content_type() == "multipart/alternative"
    text, html = summary.iter_parts()
    assert text.get_content_type() == "text/plain" and text.get_content_charset() == "utf-8"
    assert text.get_content() == "Zusammenfassung: Schätze ☠\n"
    assert html.get_content_type() == "text/html"
    assert html.get_content() == "<p>Zusammenfassung: <b>Schätze</b> ☠</p>\n"
    # 7-bit clean on the wire: no server needs 8BITMIME for it
    assert all(byte < 128 for r in got for byte in r.raw)

    assert states(store) == {1: ("sent", 1), 2: ("sent", 1)}
    assert {row.sent_at for row in outbox.listing(store, include_sent=True)} == {T0}
    assert send_due(store, plain(server.port), T2).results == []  # nothing is sent twice
    assert len(server.handler.received) == 2


def test_nothing_due_opens_no_connection(store):
    def connect(config):
        raise AssertionError("no message is due, so no connection should be opened")

    assert send_due(store, plain(1), T0, connect=connect).ok


def test_rows_queued_for_later_wait_until_due(store, smtp_server, put):
    server = smtp_server()
    put(store, 1, at=T2)
    assert send_due(store, plain(server.port), T0).results == []
    assert server.handler.received == []
    assert [r.outcome for r in send_due(store, plain(server.port), T2).results] == ["sent"]


def test_auth_login(store, smtp_server, put, auth_checker):
    server = smtp_server(authenticator=auth_checker("judge", "s3cret"), auth_required=True,
                         auth_require_tls=False)
    put(store, 2)
    report = send_due(store, plain(server.port, smtp_user="judge", smtp_password="s3cret"), T0)
    assert report.ok and len(server.handler.received) == 2
    assert {r.login for r in server.handler.received} == {"judge"}


def test_a_batch_goes_over_one_connection_with_one_login(store, smtp_server, put, auth_checker):
    """A judge with twenty messages due logs in once, not twenty times; a refused
    recipient on the way fails its own message and the connection goes on."""
    logins = []
    check = auth_checker("judge", "s3cret")

    def counted(*args):
        logins.append(args[3])  # the mechanism
        return check(*args)
    server = smtp_server(authenticator=counted, auth_required=True, auth_require_tls=False)
    server.handler.refuse = {"p7@example.org": "550 5.1.1 no such user here"}
    put(store, 20)
    report = send_due(store, plain(server.port, smtp_user="judge", smtp_password="s3cret"), T0)
    assert [r.id for r in report.failed] == [7] and len(report.sent) == 19
    assert len(server.handler.received) == 19 and len(logins) == 1
    assert len({id(r.session) for r in server.handler.received}) == 1


def test_a_wrong_password_touches_no_row(store, smtp_server, put, auth_checker):
    server = smtp_server(authenticator=auth_checker("judge", "s3cret"), auth_required=True,
                         auth_require_tls=False)
    put(store, 2)
    report = send_due(store, plain(server.port, smtp_user="judge", smtp_password="wrong"), T0)
    assert not report.ok and report.results == [] and report.left == 2
    assert report.stopped.startswith(f"127.0.0.1:{server.port}: login refused: 535")
    assert states(store) == {1: ("queued", 0), 2: ("queued", 0)}
    assert [row.id for row in outbox.due(store, T0)] == [1, 2]  # still due at once


def test_a_server_that_requires_login_refuses_an_anonymous_sender(store, smtp_server, put, auth_checker):
    server = smtp_server(authenticator=auth_checker("judge", "s3cret"), auth_required=True,
                         auth_require_tls=False)
    put(store, 1)
    report = send_due(store, plain(server.port), T0)
    assert [r.outcome for r in report.results] == ["failed"]
    assert "530" in report.results[0].error and server.handler.received == []


def test_starttls_with_a_trusted_certificate(store, smtp_server, put, certificate, auth_checker):
    server = smtp_server(tls_context=certificate.server_context(), require_starttls=True,
                         authenticator=auth_checker("judge", "s3cret"), auth_required=True)
    put(store, 2)
    config = plain(server.port, security="starttls", ca_file=certificate.cert,
                   smtp_user="judge", smtp_password="s3cret")
    report = send_due(store, config, T0)
    assert report.ok, report
    assert [(r.tls, r.login) for r in server.handler.received] == [(True, "judge"), (True, "judge")]


def test_starttls_refuses_a_certificate_it_does_not_trust(store, smtp_server, put, certificate):
    """Production verifies certificates by default: the self-signed one is not in the
    system's trust store, so nothing is sent (and the password is never offered)."""
    server = smtp_server(tls_context=certificate.server_context(), require_starttls=True)
    put(store, 2)
    report = send_due(store, plain(server.port, security="starttls"), T0)
    assert report.results == [] and report.left == 2
    assert "certificate not trusted" in report.stopped
    assert server.handler.received == [] and states(store) == {1: ("queued", 0), 2: ("queued", 0)}


def test_starttls_is_required_when_configured(store, smtp_server, put):
    server = smtp_server()  # offers no STARTTLS
    put(store, 1)
    report = send_due(store, plain(server.port, security="starttls"), T0)
    assert "does not offer STARTTLS" in report.stopped and server.handler.received == []


def test_implicit_tls(store, smtp_server, put, certificate):
    server = smtp_server(ssl_context=certificate.server_context())
    put(store, 2)
    report = send_due(store, plain(server.port, security="tls", ca_file=certificate.cert), T0)
    assert report.ok and [r.tls for r in server.handler.received] == [True, True]


def test_open_smtp_takes_a_context_of_the_callers_choosing(smtp_server, certificate):
    import ssl

    server = smtp_server(tls_context=certificate.server_context(), require_starttls=True)
    context = ssl.create_default_context(cafile=str(certificate.cert))
    smtp = open_smtp(plain(server.port, security="starttls"), context=context)
    try:
        assert smtp.noop()[0] == 250
    finally:
        smtp.quit()


def test_a_dropped_connection_loses_nothing_and_sends_nothing_twice(store, smtp_server, put):
    server = smtp_server()
    server.handler.drop_at = 3
    ids = put(store, 5)

    first = send_due(store, plain(server.port), T0)

    assert [(r.id, r.outcome) for r in first.results] == [(1, "sent"), (2, "sent"), (3, "failed")]
    assert first.left == 2 and "connection lost" in first.stopped and not first.ok
    assert first.results[2].next_try_at == T2  # one minute after the failed try
    assert server.handler.message_ids() == ids[:2]
    assert states(store) == {1: ("sent", 1), 2: ("sent", 1), 3: ("queued", 1),
                             4: ("queued", 0), 5: ("queued", 0)}
    row3 = outbox.get(store, 3)
    assert row3.last_error.startswith("Connection unexpectedly closed")
    assert outbox.get(store, 4).next_try_at == T0  # the rest untouched

    # The server is back. Half a minute later, 4 and 5 go; 3 waits for its retry.
    second = send_due(store, plain(server.port), T1)
    assert [(r.id, r.outcome) for r in second.results] == [(4, "sent"), (5, "sent")]
    third = send_due(store, plain(server.port), T2)
    assert [(r.id, r.outcome) for r in third.results] == [(3, "sent")]

    assert sorted(server.handler.message_ids()) == sorted(ids)  # each exactly once
    assert send_due(store, plain(server.port), "2024-05-02T00:00:00Z").results == []
    assert states(store) == {1: ("sent", 1), 2: ("sent", 1), 3: ("sent", 2),
                             4: ("sent", 1), 5: ("sent", 1)}


def test_an_acceptance_lost_in_transit_is_sent_again_with_the_same_message_id(store, smtp_server, put):
    """The one window the docs admit: the server took the message but its "250" never
    came back. The row is retried, and the copy carries the same Message-ID."""
    server = smtp_server()
    server.handler.drop_at, server.handler.drop_after_accepting = 1, True
    (only,) = put(store, 1)
    assert [r.outcome for r in send_due(store, plain(server.port), T0).results] == ["failed"]
    assert [r.outcome for r in send_due(store, plain(server.port), T2).results] == ["sent"]
    assert server.handler.message_ids() == [only, only]


def test_a_refused_recipient_fails_alone_and_the_run_goes_on(store, smtp_server, put):
    server = smtp_server()
    server.handler.refuse = {"p2@example.org": "550 5.1.1 no such user here",
                             "p3@example.org": "451 4.3.0 try again later"}
    put(store, 4)
    report = send_due(store, plain(server.port), T0)
    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (2, "failed"), (3, "failed"), (4, "sent")]
    assert report.stopped is None and report.left == 0 and not report.ok
    assert report.results[1].error == "recipient refused: 550 5.1.1 no such user here"
    assert report.results[2].error == "recipient refused: 451 4.3.0 try again later"
    assert [r.rcpt_tos for r in server.handler.received] == [["p1@example.org"], ["p4@example.org"]]
    assert outbox.get(store, 2).last_error == "recipient refused: 550 5.1.1 no such user here"


def test_no_server_at_all_touches_no_row(store, put):
    with socket.socket() as unused:  # bound, never listening: connecting is refused
        unused.bind(("127.0.0.1", 0))
        put(store, 2)
        report = send_due(store, plain(unused.getsockname()[1]), T0)
    assert report.results == [] and report.left == 2
    assert "connection refused" in report.stopped
    assert states(store) == {1: ("queued", 0), 2: ("queued", 0)}


def test_a_server_that_stops_answering_times_out_and_ends_the_run(store, smtp_server, put):
    server = smtp_server()
    server.handler.hang_at = 2
    put(store, 3)
    # 3 s: long enough for the first message on a loaded machine, still ending the hang
    report = send_due(store, plain(server.port, timeout=3.0), T0)
    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (2, "failed")]
    assert report.left == 1 and "timed out" in report.results[1].error
    assert states(store) == {1: ("sent", 1), 2: ("queued", 1), 3: ("queued", 0)}


def test_back_off_follows_the_time_passed_in(store, smtp_server, put):
    server = smtp_server()
    server.handler.refuse = {"p1@example.org": "450 mailbox busy"}
    put(store, 1)
    now, waits = T0, []
    for _ in range(8):
        (result,) = send_due(store, plain(server.port), now).results
        assert result.outcome == "failed"
        assert send_due(store, plain(server.port), now).results == []  # not due again yet
        waits.append(_minutes_between(now, result.next_try_at))
        now = result.next_try_at
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]
    assert outbox.get(store, 1).attempts == 8


def test_a_second_sender_skips_a_claimed_row(store, smtp_server, put):
    """Two 'pbem mail send' runs at once (cron overlapping a moderator): a row claimed by
    one is skipped by the other, so it goes out once."""
    server = smtp_server()
    put(store, 2)
    assert outbox.claim(store, 1, T0)  # the other sender is busy with row 1
    report = send_due(store, plain(server.port), T0)
    assert [(r.id, r.outcome) for r in report.results] == [(2, "sent")]
    assert [r.rcpt_tos for r in server.handler.received] == [["p2@example.org"]]


def test_a_row_claimed_by_another_sender_after_the_first_is_skipped(store, smtp_server, put):
    """The claim of row 2 goes with the mark of row 1; another sender holds row 2 already:
    the run skips it and goes on with row 3."""
    server = smtp_server()
    put(store, 3)
    assert outbox.claim(store, 2, T0)
    report = send_due(store, plain(server.port), T0)
    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (3, "sent")]
    assert [r.rcpt_tos for r in server.handler.received] == [["p1@example.org"], ["p3@example.org"]]
    assert outbox.get(store, 2).state == "queued"


def test_should_stop_is_asked_once_before_each_message(store, smtp_server, put):
    server = smtp_server()
    put(store, 4)
    asked = []

    def should_stop() -> bool:
        asked.append(len(server.handler.received))  # how many had gone when it was asked
        return len(asked) == 3
    report = send_due(store, plain(server.port), T0, should_stop=should_stop)
    assert asked == [0, 1, 2]
    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (2, "sent")]
    assert report.left == 2 and report.stopped is None
    assert [(r.id, r.state, r.claimed_at) for r in outbox.listing(store, include_sent=True)][2:] == \
        [(3, "queued", None), (4, "queued", None)]  # the rest untouched, not even claimed


def _minutes_between(a: str, b: str) -> int:
    from datetime import datetime

    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return int((datetime.strptime(b, fmt) - datetime.strptime(a, fmt)).total_seconds() // 60)


def test_a_clock_times_each_claim_and_mark_in_a_long_run(store, smtp_server, put):
    """Rows are picked by ``now``; with a clock, each claim and mark takes the clock's time,
    so a claim made late in a long run still holds for its full length."""
    server = smtp_server()
    server.handler.refuse = {"p2@example.org": "450 busy"}
    put(store, 2)
    ticks = iter(["2024-05-01T12:00:01Z", "2024-05-01T12:00:02Z", "2024-05-01T12:20:00Z",
                  "2024-05-01T12:20:05Z"])
    report = send_due(store, plain(server.port), T0, clock=lambda: next(ticks))
    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (2, "failed")]
    assert outbox.get(store, 1).sent_at == "2024-05-01T12:00:02Z"
    assert report.results[1].next_try_at == "2024-05-01T12:21:05Z"  # a minute after the failure
