"""The judge composes its mail with ``sendpolicy.SEND_POLICY`` (each header value parsed
once): every message must be byte for byte the message ``email.policy.default`` makes, as
``as_bytes()``, as smtplib flattens it for the wire, and as a .eml file (CRLF). And it
flattens it for the wire with ``sendpolicy.wire_bytes``: the bytes smtplib's
``send_message`` sends, as a real SMTP server receives them."""

from __future__ import annotations

import io
import json
from email.generator import BytesGenerator
from email.policy import default

import pytest

from pbem.mail import addresses, send, sendpolicy
from pbem.store import outbox

T0 = "2030-01-01T10:00:00Z"
NAMES = ("ani", "alex", "frank", "lothar", "mary")


def wire(message) -> list[bytes]:
    """The message as as_bytes(), as smtplib.send_message flattens it, and as write_due does."""
    smtp = io.BytesIO()
    BytesGenerator(smtp).flatten(message, linesep="\r\n")
    return [message.as_bytes(), smtp.getvalue(),
            message.as_bytes(policy=message.policy.clone(linesep="\r\n"))]


def rows_of(store) -> list:
    send.render_pending(store)
    return outbox.listing(store, include_sent=True)


@pytest.fixture
def rows(game):
    """A Tortuga game's mail (welcomes, privates, summaries with boards, answers), a 1667
    game's (its table), and rows with the odd shapes: non-ASCII, long lines, attachments."""
    for player in ("ani", "alex"):
        game.send(player, f"password {game.passwords[player]}\norder 1 2 3")
    addresses.create_game(game.store, "g2", "tortuga1667", list(NAMES), {},
                          {p: f"{p}@example.org" for p in NAMES}, "table@example.org", at=T0, start=True)
    long_line = "Ani würfelt ☠☠⚓ — " + "lang " * 300
    with game.store.transaction():
        outbox.queue(game.store, game="g1", kind="private", recipient="ani@example.org",
                     subject="[g1] Dein Wurf ☠ " + "und noch mehr Worte " * 6, text=long_line + "\n",
                     html=f"<p>{long_line}</p>", at=T0, in_reply_to="<q@x.example>",
                     references=["<q@x.example>", "<r@x.example>"])
        outbox.queue(game.store, game="g1", kind="answer", recipient="alex@example.org",
                     subject="[g1] From here", text="From the judge:\nFrom here on\n>From\n",
                     html="<p>x</p>\nFrom the judge\n", at=T0)
        outbox.queue(game.store, game="g1", kind="summary", recipient="frank@example.org",
                     subject="[g1] the log", text="ok\n", at=T0,
                     attachments=json.dumps([{"filename": "g1.jsonl", "content_type": "application/json",
                                              "text": '{"kind": "würfel"}\n'},
                                             {"filename": "notes ☠.txt", "content_type": "text/plain",
                                              "text": "x\n" * 100}]))
    return rows_of(game.store)


def test_every_message_is_the_default_policys_byte_for_byte(rows, monkeypatch):
    assert {r.game for r in rows} == {"g1", "g2"} and {"image/png", "multipart/mixed"} <= {
        part.get_content_type() for row in rows for part in send.compose(row, "judge@example.org").walk()}
    for plain in (False, True):
        ours = [wire(send.compose(row, "judge@example.org", plain)) for row in rows]
        with monkeypatch.context() as patched:
            patched.setattr(sendpolicy, "SEND_POLICY", default)
            theirs = [wire(send.compose(row, "judge@example.org", plain)) for row in rows]
        assert send.compose(rows[0], "judge@example.org").policy is sendpolicy.SEND_POLICY
        assert ours == theirs


def test_a_long_run_keeps_a_bounded_number_of_headers(rows, monkeypatch):
    monkeypatch.setattr(sendpolicy, "KEPT", 50)
    policy = sendpolicy.HeadersOnce()
    monkeypatch.setattr(sendpolicy, "SEND_POLICY", policy)
    before = [wire(send.compose(row, "judge@example.org")) for row in rows]
    assert 0 < len(policy._made) <= 50
    assert [wire(send.compose(row, "judge@example.org")) for row in rows] == before


def test_header_injection_and_a_second_subject_are_still_refused():
    from email.message import EmailMessage
    message = EmailMessage(policy=sendpolicy.SEND_POLICY)
    with pytest.raises(ValueError, match="linefeed"):
        message["Subject"] = "hello\nBcc: everyone@example.org"
    message["Subject"] = "one"
    with pytest.raises(ValueError, match="at most 1 subject headers"):
        message["subject"] = "two"
    message["Comments"] = "any number"
    message["Comments"] = "of these"
    assert message.get_all("Comments") == ["any number", "of these"]


def test_the_rows_hold_both_games_boards(rows):
    with_boards = {row.game for row in rows if row.body_html and "<svg" in row.body_html}
    assert with_boards == {"g1", "g2"}, [(r.game, r.kind, r.subject) for r in rows]


def test_wire_bytes_are_what_smtplib_sends(rows):
    for plain in (False, True):
        for row in rows:
            message = send.compose(row, "judge@example.org", plain)
            assert sendpolicy.wire_bytes(message) == wire(message)[1], (row.kind, row.subject)
    mangled = next(sendpolicy.wire_bytes(send.compose(row, "judge@example.org"))
                   for row in rows if row.subject == "[g1] From here")
    assert b"\r\n>From the judge:\r\n>From here on\r\n>From\r\n" in mangled  # as smtplib does


def test_the_server_receives_the_same_bytes(rows, smtp_mailroom):
    import smtplib
    port, room = smtp_mailroom
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        for row in rows:
            message = send.compose(row, "judge@example.org")
            smtp.send_message(message, from_addr="judge@example.org", to_addrs=[row.recipient])
            send._hand_over(smtp, message, "judge@example.org", row.recipient)
    received = [r.raw for r in room.received]
    assert len(received) == 2 * len(rows) and received[0::2] == received[1::2]


def test_the_policy_reads_as_its_settings_without_the_headers_it_keeps(rows):
    send.compose(rows[0], "judge@example.org")
    assert sendpolicy.SEND_POLICY._made
    assert repr(sendpolicy.SEND_POLICY.clone(linesep="\r\n")) == "HeadersOnce(linesep='\\r\\n')"
