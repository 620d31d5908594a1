"""Composing a row into a message, and writing due rows as .eml files (--to-dir)."""

from __future__ import annotations

import email
import os
from email.policy import default as default_policy

from pbem.mail.send import compose, safe_name, write_due
from pbem.store import outbox

T0 = "2024-05-01T12:00:00Z"
T1 = "2024-05-01T12:00:30Z"


def test_compose_a_plain_answer(store):
    with store.transaction():
        message_id = outbox.queue(store, game="g1", kind="answer", recipient="ani@example.org",
                                  subject="Re: [g1] moves", text="ok\n", in_reply_to="<q@x.example>",
                                  references=["<q@x.example>"], at=T0)
    (row,) = outbox.due(store, T0)
    message = compose(row, "judge@example.org")
    assert message["Message-ID"] == message_id
    assert message["Date"] == "Wed, 01 May 2024 12:00:00 +0000"
    assert message["Auto-Submitted"] == "auto-replied"
    assert message["Content-Transfer-Encoding"] == "7bit"
    assert message.get_content() == "ok\n"


def test_non_ascii_travels_as_quoted_printable_and_comes_back(store):
    text = "Ani würfelt ☠☠⚓ — " + "lang " * 300 + "\n"
    with store.transaction():
        outbox.queue(store, game="g1", kind="private", recipient="ani@example.org",
                     subject="[g1] Dein Wurf ☠", text=text, html="<p>☠</p>", at=T0)
    (row,) = outbox.due(store, T0)
    wire = compose(row, "judge@example.org").as_bytes()
    assert wire.isascii() and max(len(line) for line in wire.splitlines()) <= 78
    back = email.message_from_bytes(wire, policy=default_policy)
    assert back["Subject"] == "[g1] Dein Wurf ☠"
    assert back.get_body(("plain",)).get_content() == text
    assert back.get_body(("html",)).get_content() == "<p>☠</p>\n"


def test_write_due_writes_parseable_files_and_marks_them_sent(store, put, tmp_path):
    ids = put(store, 3)
    outbox.mark_failed(store, 2, "451 later", T0)  # not due at T1
    folder = tmp_path / "outgoing"

    report = write_due(store, folder, T1, "judge@example.org")

    assert [(r.id, r.outcome) for r in report.results] == [(1, "sent"), (3, "sent")] and report.ok
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"1-{safe_name(ids[0])}.eml", f"3-{safe_name(ids[2])}.eml"]
    assert [r.path for r in report.results] == [str(f) for f in files]
    for path, message_id, n in zip(files, (ids[0], ids[2]), (1, 3)):
        raw = path.read_bytes()
        assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")  # RFC 5322 line ends
        message = email.message_from_bytes(raw.replace(b"\r\n", b"\n"), policy=default_policy)
        assert message["Message-ID"] == message_id and message["From"] == "judge@example.org"
        assert message["To"] == f"p{n}@example.org"
        assert message.get_content() == f"Hello p{n}.\nThis is message {n}.\n"
    assert [(r.id, r.state) for r in outbox.listing(store, include_sent=True)] == \
        [(1, "sent"), (2, "queued"), (3, "sent")]
    assert not [f for f in os.listdir(folder) if f.startswith(".")]  # no temporary left
    assert write_due(store, folder, T1).results == []  # nothing written twice


def test_write_due_takes_the_from_address_from_the_message_id(store, tmp_path):
    with store.transaction():
        outbox.queue(store, game="g1", kind="notice", recipient="ani@example.org", subject="s",
                     text="t\n", at=T0, domain="judge.example.org")
    (result,) = write_due(store, tmp_path, T0).results
    message = email.message_from_bytes(open(result.path, "rb").read(), policy=default_policy)
    assert message["From"] == "judge@judge.example.org"


def test_a_file_that_cannot_be_written_fails_its_row_and_ends_the_run(store, put, tmp_path):
    ids = put(store, 2)
    folder = tmp_path / "out"
    (folder / f"1-{safe_name(ids[0])}.eml").mkdir(parents=True)  # a folder where the file must go
    report = write_due(store, folder, T0)
    assert [(r.id, r.outcome) for r in report.results] == [(1, "failed")]
    assert report.left == 1 and report.stopped.startswith("cannot write")
    assert [(r.state, r.attempts) for r in outbox.pending(store)] == [("queued", 1), ("queued", 0)]
    assert [p.name for p in folder.iterdir()] == [f"1-{safe_name(ids[0])}.eml"]  # no temporary left


def test_safe_name():
    assert safe_name("<pbem.ab12@judge.example.org>") == "pbem.ab12@judge.example.org"
    assert safe_name("<a/../b$c@x>") == "a_.._b_c@x"
