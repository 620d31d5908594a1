"""The outbox table: a message is a row first (queued in the transaction of the events that
caused it), and bad header values are refused before they can reach a message."""

from __future__ import annotations

import pytest

from pbem.store import StoreError, export_lines
from pbem.store import outbox

T0 = "2024-05-01T12:00:00Z"


def queue(store, **changes) -> str:
    values = {"game": "g1", "kind": "private", "recipient": "ani@example.org",
              "subject": "[g1] your roll", "text": "You rolled 3 skulls.\n", "at": T0, **changes}
    return outbox.queue(store, **values)


def count(store) -> int:
    return store.conn.execute("select count(*) from outbox").fetchone()[0]


def test_queue_fixes_a_message_id_and_stores_the_row(store):
    with store.transaction():
        store.append("g1", "new", {}, at=T0)
        first = queue(store, domain="judge.example.org")
        answer = queue(store, kind="answer", in_reply_to="<abc@mail.example>",
                       references=["<root@mail.example>", "<abc@mail.example>"], html="<p>hi</p>")
    assert first.startswith("<pbem.") and first.endswith("@judge.example.org>")
    assert answer.endswith("@pbem.invalid>") and answer != first
    rows = outbox.pending(store)
    assert [row.message_id for row in rows] == [first, answer]
    private, reply = rows
    assert (private.id, private.game, private.kind, private.recipient) == (1, "g1", "private", "ani@example.org")
    assert private.auto_submitted == "auto-generated" and reply.auto_submitted == "auto-replied"
    assert private.in_reply_to is None and private.references == () and private.body_html is None
    assert reply.in_reply_to == "<abc@mail.example>"
    assert reply.references == ("<root@mail.example>", "<abc@mail.example>")
    assert store.conn.execute("select refs from outbox where id = 2").fetchone()[0] == \
        "<root@mail.example> <abc@mail.example>"
    assert (private.state, private.attempts, private.queued_at, private.next_try_at) == ("queued", 0, T0, T0)
    assert private.last_error is None and private.sent_at is None
    assert "body_text" not in private.as_dict() and private.as_dict(bodies=True)["body_text"] == "You rolled 3 skulls.\n"


def test_a_message_id_may_be_given(store):
    with store.transaction():
        assert queue(store, message_id="<fixed.1@judge.example.org>") == "<fixed.1@judge.example.org>"
    with pytest.raises(StoreError, match="queued already"):
        with store.transaction():
            store.append("g1", "tick", {}, at=T0)
            queue(store, message_id="<fixed.1@judge.example.org>")
    assert count(store) == 1 and store.count("g1") == 0  # the event went with the refusal


def test_queue_outside_a_transaction_is_refused(store):
    with pytest.raises(StoreError, match=r"outbox.queue\(\) must run inside store.transaction\(\)"):
        queue(store)
    assert count(store) == 0


def test_a_rolled_back_transaction_leaves_no_message(store):
    with pytest.raises(RuntimeError, match="crash"):
        with store.transaction():
            store.append("g1", "new", {}, at=T0)
            queue(store)
            raise RuntimeError("crash after queueing")
    assert count(store) == 0 and store.count("g1") == 0


@pytest.mark.parametrize("changes, says", [
    ({"subject": "hello\r\nBcc: everyone@example.org"}, "control character"),
    ({"subject": "hello\nX-Evil: 1"}, "control character"),
    ({"subject": "line\u2028separator"}, "control character"),
    ({"recipient": "ani@example.org\r\nBcc: x@example.org"}, "not one email address"),
    ({"recipient": "ani@example.org, alex@example.org"}, "not one email address"),
    ({"recipient": "Ani <ani@example.org>"}, "not one email address"),
    ({"recipient": "ani"}, "not one email address"),
    ({"recipient": "ani@exa mple.org"}, "not one email address"),
    ({"in_reply_to": "<a@b>\r\nBcc: x@example.org"}, "not a Message-ID"),
    ({"in_reply_to": "a@b"}, "not a Message-ID"),
    ({"references": ["<a@b>", "<c d@e>"]}, "not a Message-ID"),
    ({"message_id": "<a@b>\n"}, "not a Message-ID"),
    ({"domain": "evil.org>\r\nBcc: x@example.org"}, "not a host name"),
    ({"kind": "spam"}, "unknown outbox message kind 'spam'; use one of answer, private"),
    ({"at": "yesterday"}, "must look like 2024-05-01T12:00:00Z"),
    ({"text": "lone surrogate \udcff"}, "cannot be encoded as UTF-8"),
    ({"game": ""}, "game must be a non-empty string"),
])
def test_header_injection_and_bad_values_are_refused(store, changes, says):
    with pytest.raises(StoreError) as refused:
        with store.transaction():
            store.append("g1", "new", {}, at=T0)
            queue(store, **changes)
    assert says in str(refused.value)
    assert "\n" not in str(refused.value).replace("\\n", "")
    assert count(store) == 0 and store.count("g1") == 0


def test_due_pending_and_listing(store):
    with store.transaction():
        for n, (game, at) in enumerate([("g1", T0), ("g2", T0), ("g1", "2024-05-01T13:00:00Z")]):
            queue(store, game=game, at=at, recipient=f"p{n}@example.org")
    assert [row.id for row in outbox.due(store, T0)] == [1, 2]
    assert [row.id for row in outbox.due(store, T0, limit=1)] == [1]
    assert [row.id for row in outbox.due(store, "2024-05-01T13:00:00Z")] == [1, 2, 3]
    assert [row.id for row in outbox.due(store, "2024-05-01T11:59:59Z")] == []
    outbox.mark_sent(store, 1, T0)
    assert [row.id for row in outbox.pending(store)] == [2, 3]
    assert [row.id for row in outbox.pending(store, "g1")] == [3]
    assert [row.id for row in outbox.listing(store, "g1", include_sent=True)] == [1, 3]
    assert [row.id for row in outbox.listing(store, include_sent=True)] == [1, 2, 3]
    assert [row.id for row in outbox.due(store, "2024-05-02T00:00:00Z")] == [2, 3]
    with pytest.raises(StoreError, match="must look like"):
        outbox.due(store, "now")


def test_mark_sent_once(store):
    with store.transaction():
        queue(store)
    outbox.mark_sent(store, 1, "2024-05-01T12:05:00Z")
    row = outbox.get(store, 1)
    assert (row.state, row.sent_at, row.attempts) == ("sent", "2024-05-01T12:05:00Z", 1)
    with pytest.raises(StoreError, match="not queued"):
        outbox.mark_sent(store, 1, T0)
    with pytest.raises(StoreError, match="not queued"):
        outbox.mark_failed(store, 1, "late", T0)
    with pytest.raises(StoreError, match="not queued"):
        outbox.mark_sent(store, 99, T0)


def test_a_secret_leaves_the_stored_bodies_once_sent(store):
    """A welcome's password is kept only while the message waits: sent, it is gone from the
    row (and from the column that named it); a failed try keeps it for the next one."""
    with store.transaction():
        queue(store, text="Your mail password: k3y-s3cr3t\npassword k3y-s3cr3t\n", html="<p>k3y-s3cr3t</p>",
              redact="k3y-s3cr3t")
        queue(store, text="k3y-s3cr3t is no secret here\n")
    outbox.mark_failed(store, 1, "450 busy", T0)
    assert "k3y-s3cr3t" in outbox.get(store, 1).body_text
    outbox.mark_sent(store, 1, "2024-05-01T12:05:00Z")
    outbox.mark_sent(store, 2, "2024-05-01T12:05:00Z")
    row = outbox.get(store, 1)
    assert row.body_text == (f"Your mail password: {outbox.REDACTED}\npassword {outbox.REDACTED}\n")
    assert row.body_html == f"<p>{outbox.REDACTED}</p>"
    assert store.conn.execute("select count(*) from outbox where redact is not null").fetchone()[0] == 0
    assert outbox.get(store, 2).body_text == "k3y-s3cr3t is no secret here\n"  # nothing to redact there


def test_mark_failed_backs_off_from_the_time_given(store):
    with store.transaction():
        queue(store)
    expected = ["12:01", "12:02", "12:04", "12:08", "12:16", "12:32", "13:00", "13:00"]
    for want in expected:
        assert outbox.mark_failed(store, 1, "451 try later", T0) == f"2024-05-01T{want}:00Z"
    row = outbox.get(store, 1)
    assert (row.state, row.attempts, row.last_error) == ("queued", 8, "451 try later")
    assert [outbox.retry_delay(n) for n in (1, 2, 3, 7, 100)] == [60, 120, 240, 3600, 3600]


def test_a_long_error_is_kept_as_one_short_line(store):
    with store.transaction():
        queue(store)
    outbox.mark_failed(store, 1, "550 first line\r\n550 second line " + "x" * 500, T0)
    error = outbox.get(store, 1).last_error
    assert error.startswith("550 first line 550 second line xxx") and len(error) == 200
    assert "\n" not in error and "\r" not in error


def test_a_claimed_row_is_not_claimed_twice_until_the_claim_runs_out(store):
    with store.transaction():
        queue(store)
    assert outbox.claim(store, 1, T0)
    assert not outbox.claim(store, 1, T0)
    assert outbox.due(store, "2024-05-01T12:14:59Z") == []
    assert outbox.claim(store, 1, "2024-05-01T12:15:00Z")  # the first sender died
    outbox.mark_sent(store, 1, "2024-05-01T12:15:01Z")
    assert not outbox.claim(store, 1, "2024-05-02T00:00:00Z")


def test_the_outbox_is_never_exported(store):
    """Private messages live in the outbox; the public export holds events only."""
    with store.transaction():
        store.append("g1", "new", {"players": ["ani"]}, at=T0)
        queue(store, text="PRIVATE: your tiles are 3 and 5\n", subject="[g1] private")
    exported = "".join(export_lines(store.events("g1")))
    assert "PRIVATE" not in exported and "ani@example.org" not in exported
    store.verify("g1")
