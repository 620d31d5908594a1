"""Hostile mail: each shape of benchmarks/hostile_shapes.py, small, has the outcome it must
have (the time each takes is the benchmark's business, never a test's); a message past a
limit is refused with an answer naming the limit, or ignored when it is automatic, and
changes nothing; loops (RFC 3834), odd strangers and deep nesting."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pbem.mail import ingest as pipeline
from pbem.mail import limits

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import hostile_shapes  # noqa: E402

JUDGE = ("judge@example.org",)


def answers(game) -> list[dict]:
    return game.outbox("answer")


@pytest.mark.parametrize("name", list(hostile_shapes.SHAPES))
def test_each_hostile_shape_has_its_outcome(game, helpers, name):
    build, expected = hostile_shapes.SHAPES[name]
    raw = build(hostile_shapes.SMALL, game.passwords["ani"])
    log, before = game.frozen()[0], len(answers(game))
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    if expected == "applied":
        assert result.outcome == "applied", result.lines
        status = [line for line in result.lines if line["line"] == "status"]
        assert status and status[0]["text"].startswith("g1: round 1")  # the status line was read and answered
    elif expected in ("refused", "refused: too many lines"):
        assert result.outcome == expected and result.answered
        assert game.frozen()[0] == log
    else:
        assert result.outcome.startswith(f"refused: past a limit: {expected} "), result.outcome
        assert result.answered and result.game == "g1" and result.player == "ani"
        answer = answers(game)[-1]["body_text"]
        assert "Nothing was done: your message is past one of the judge's limits: " + expected in answer
        assert game.frozen()[0] == log  # the log is exactly as before
    assert len(answers(game)) == before + 1  # one answer, to the player's registered address
    assert answers(game)[-1]["recipient"] == "ani@example.org"


def test_the_same_hostile_message_again_is_a_duplicate(game, helpers):
    raw = hostile_shapes.encoded_words_from(hostile_shapes.SMALL, game.passwords["ani"])
    assert pipeline.ingest(game.store, raw, helpers.at(5), JUDGE).answered
    again = pipeline.ingest(game.store, raw, helpers.at(6), JUDGE)
    assert again.outcome == "duplicate" and not again.answered


def test_a_from_of_twenty_thousand_encoded_words_is_refused_without_parsing_them(game, helpers):
    """The message that took the judge down (6.6 GB, 40 s): the sender is still found and
    answered, from the header lines the judge keeps of it."""
    word = b" =?utf-8?q?a?="
    raw = (b"From:" + word * 20_000 + b" <ani@example.org>\nTo: judge@example.org\nSubject: [g1] move\n"
           b"Message-ID: <ew20000@example.org>\n\npassword " + game.passwords["ani"].encode() + b"\nseal A\n")
    assert len(raw) < limits.MAX_BYTES
    log = game.frozen()[0]
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome.startswith("refused: past a limit: header block ") and result.answered
    assert game.frozen()[0] == log


def test_automatic_mail_past_a_limit_is_ignored(game, helpers):
    raw = hostile_shapes.encoded_words_from(hostile_shapes.SMALL, game.passwords["ani"])
    raw = raw.replace(b"\nTo: ", b"\nAuto-Submitted: auto-replied\nTo: ", 1)
    frozen = game.frozen()
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome.startswith("not answered: an automatic message") and not result.answered
    assert game.frozen() == frozen


def test_a_bounce_past_a_limit_is_ignored_without_being_read(game, helpers):
    """A message shaped as a bounce (empty return path) but past the limits is screened out
    and not handed to the bounce reader (which would parse it whole)."""
    raw = b"Return-Path: <>\n" + hostile_shapes.nested_rfc822(hostile_shapes.SMALL, game.passwords["ani"])
    assert limits.check(raw) is not None
    frozen = game.frozen()
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome == "not answered: a bounce: the return path is empty (<>)" and not result.answered
    assert game.frozen() == frozen


def test_references_are_kept_once_each_and_the_last_ones(game, helpers):
    ids = [f"<r{i}@x>" for i in range(3000)]
    refs = " ".join(ids + ids[:500])  # repeats: each id is kept once, where it first stood
    raw = helpers.mail("ani@example.org", f"password {game.passwords['ani']}\nstatus",
                       headers={"References": refs, "In-Reply-To": "<r1@x>"})
    from pbem.mail.message import read_message
    kept = read_message(raw).references
    assert len(kept) == limits.REFERENCES_KEPT and len(set(kept)) == len(kept)
    # the message it answers (In-Reply-To) last, as a thread is ordered: kept whatever is cut
    assert kept == tuple(ids[-limits.REFERENCES_KEPT + 1:]) + ("<r1@x>",)
    assert pipeline.ingest(game.store, raw, helpers.at(5), JUDGE).outcome == "applied"
    assert answers(game)[-1]["refs"].split()[:-1] == ids[-8:] + ["<r1@x>"]  # under the last ones and the answered


# ---------------------------------------------------------------------- commands at any depth

def nested_mail(password: str, depth: int) -> bytes:
    return hostile_shapes.nested(1 << 20, password, depth=depth)


def test_a_command_at_the_deepest_nesting_allowed_is_read(game, helpers):
    raw = nested_mail(game.passwords["ani"], limits.MAX_DEPTH)
    assert limits.check(raw) is None
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome == "applied" and [line["line"] for line in result.lines] == ["status"]


def test_one_level_deeper_is_refused_naming_the_limit(game, helpers):
    raw = nested_mail(game.passwords["ani"], limits.MAX_DEPTH + 1)
    log = game.frozen()[0]
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome == (f"refused: past a limit: nesting depth {limits.MAX_DEPTH + 1}, "
                              f"at most {limits.MAX_DEPTH}")
    assert game.frozen()[0] == log


def test_a_seal_inside_nested_alternatives_is_applied(game, helpers):
    """25 levels of multipart/mixed around a multipart/alternative (more than the 20 levels
    the judge read before): the plain part's seal is applied."""
    from email.message import EmailMessage
    inner = EmailMessage()
    inner.set_content(f"password {game.passwords['ani']}\nseal A\n")
    inner.add_alternative("<p>ignored</p>", subtype="html")
    for _ in range(24):
        outer = EmailMessage()
        outer.make_mixed()
        outer.attach(inner)
        inner = outer
    inner["From"], inner["To"], inner["Subject"] = "ani@example.org", "judge@example.org", "[g1] move"
    inner["Message-ID"] = "<deep25@example.org>"
    result = pipeline.ingest(game.store, bytes(inner), helpers.at(5), JUDGE)
    assert result.outcome == "applied", result.lines
    assert "ani" in game.session().sealed.commits


# ---------------------------------------------------------------------- loops (RFC 3834)

AUTOMATIC = {
    "an empty return path": ({"Return-Path": "<>"}, "a bounce: the return path is empty"),
    "MAILER-DAEMON as return path": ({"Return-Path": "<MAILER-DAEMON@mx.example.org>"},
                                     "a bounce or mail-system notice (Return-Path: <mailer-daemon@mx.example.org>)"),
    "postmaster as return path": ({"Return-Path": "<postmaster@example.org>"}, "a bounce or mail-system notice"),
    "X-Auto-Response-Suppress": ({"X-Auto-Response-Suppress": "All"},
                                 "its sender asks for no automatic answer (X-Auto-Response-Suppress: All)"),
    "X-Auto-Response-Suppress OOF": ({"X-Auto-Response-Suppress": "DR, OOF, AutoReply"},
                                     "its sender asks for no automatic answer"),
    "Precedence: bulk": ({"Precedence": "bulk"}, "bulk or list mail (Precedence: bulk)"),
    "Precedence: list": ({"Precedence": "list"}, "bulk or list mail (Precedence: list)"),
    "Precedence: junk": ({"Precedence": "junk"}, "bulk or list mail (Precedence: junk)"),
    "Auto-Submitted: auto-replied": ({"Auto-Submitted": "auto-replied"}, "an automatic message"),
    "Auto-Submitted: auto-generated": ({"Auto-Submitted": "auto-generated"}, "an automatic message"),
    "Auto-Submitted: auto-notified": ({"Auto-Submitted": "auto-notified; owner-email=x@example.org"},
                                      "an automatic message (Auto-Submitted: auto-notified"),
}


@pytest.mark.parametrize("case", list(AUTOMATIC))
def test_automatic_mail_is_never_answered(game, helpers, case):
    headers, reason = AUTOMATIC[case]
    frozen = game.frozen()
    raw = helpers.mail("ani@example.org", f"password {game.passwords['ani']}\nseal A", headers=headers)
    result = pipeline.ingest(game.store, raw, helpers.at(5), JUDGE)
    assert result.outcome.startswith("not answered: " + reason), result.outcome
    assert not result.answered and game.frozen() == frozen


def test_the_senders_own_mail_is_answered(game, helpers):
    """What the screen lets through: Auto-Submitted: no, X-Auto-Response-Suppress: None."""
    raw = helpers.mail("ani@example.org", f"password {game.passwords['ani']}\nstatus",
                       headers={"Auto-Submitted": "no", "X-Auto-Response-Suppress": "None",
                                "Return-Path": "<ani@example.org>"})
    assert pipeline.ingest(game.store, raw, helpers.at(5), JUDGE).outcome == "applied"


def mailman_digest(subject: str = "Tortuga-players Digest, Vol 3, Issue 5", mime: bool = True) -> bytes:
    """A Mailman digest without List-Id or Precedence (some list servers strip them)."""
    from email.message import EmailMessage
    digest = EmailMessage()
    digest["From"] = "tortuga-players-request@lists.example.org"
    digest["To"] = "judge@example.org"
    digest["Subject"] = subject
    digest["Message-ID"] = "<digest.3.5@lists.example.org>"
    if not mime:
        digest.set_content("Send Tortuga-players mailing list submissions to ...\n\nseal A\n")
        return bytes(digest)
    digest.set_content("Today's Topics:\n\n   1. my move (ani)\n")
    part = EmailMessage()
    part["From"] = "ani@example.org"
    part["Subject"] = "my move"
    part.set_content("seal A\n")
    collection = EmailMessage()
    collection.make_mixed()
    collection.attach(part)
    collection.replace_header("Content-Type", collection["Content-Type"].replace("multipart/mixed", "multipart/digest"))
    digest.make_mixed()
    digest.attach(collection)
    return bytes(digest)


def test_a_digest_is_never_answered(game, helpers):
    from pbem.mail import judge
    with game.store.transaction():  # the list's robot address is even a player's, to be sure
        judge.tables.set_address(game.store, "g1", "ani", "tortuga-players-request@lists.example.org")
    frozen = game.frozen()
    for raw, reason in ((mailman_digest(), "a digest (Content-Type: multipart/digest)"),
                        (mailman_digest(mime=False), "a mailing-list digest (Subject: Tortuga-players Digest")):
        result = pipeline.ingest(game.store, raw.replace(b"digest.3.5", reason[:5].encode().replace(b" ", b"")),
                                 helpers.at(5), JUDGE)
        assert result.outcome.startswith("not answered: " + reason), result.outcome
    assert game.frozen() == frozen


def test_a_reply_to_a_digest_is_a_players_mail(game, helpers):
    raw = helpers.mail("ani@example.org", f"password {game.passwords['ani']}\nstatus",
                       subject="Re: [g1] Tortuga-players Digest, Vol 3, Issue 5")
    assert pipeline.ingest(game.store, raw, helpers.at(5), JUDGE).outcome == "applied"


# ---------------------------------------------------------------------- strangers

@pytest.mark.parametrize("sender", ["ani@example.org.", "Ani <ani@example.org.>", "ani@@example.org",
                                    "<ani@-example.org>", "ani@example..org"])
def test_a_stranger_at_an_odd_address_is_a_stranger_not_a_fault(game, helpers, sender):
    frozen = game.frozen()
    result = pipeline.ingest(game.store, helpers.mail(sender, "seal A"), helpers.at(5), JUDGE)
    assert not result.outcome.startswith("failed"), result.outcome
    assert result.outcome.startswith("not answered"), result.outcome
    assert game.frozen() == frozen


def test_a_stranger_at_a_deliverable_address_gets_one_answer_a_day(game, helpers):
    first = pipeline.ingest(game.store, helpers.mail("bob@example.net", "seal A"), helpers.at(5), JUDGE)
    second = pipeline.ingest(game.store, helpers.mail("bob@example.net", "seal A"), helpers.at(6), JUDGE)
    assert (first.outcome, first.answered) == ("unknown sender", True)
    assert second.outcome == "not answered: unknown sender (already answered today)"
    assert [row["recipient"] for row in answers(game)] == ["bob@example.net"]


# ---------------------------------------------------------------------- the limits themselves

def test_real_client_shapes_are_within_every_limit():
    """The corpus of mail clients' shapes that the reading tests use (Thunderbird, Apple
    Mail, Gmail, Outlook, attachments, a bounce) passes every limit, and reads the same."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "pbem_tests_read_message", Path(__file__).resolve().parents[1] / "mail" / "test_read_message.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    shapes = ("thunderbird_plain", "apple_flowed_delsp", "gmail_alternative", "outlook_html_only",
              "apple_top_posted", "qp_long_block", "with_attachments", "bounce")
    from pbem.mail.message import read_message
    for name in shapes:
        raw = getattr(corpus, name)()
        raw = raw[0] if isinstance(raw, tuple) else raw
        assert limits.check(raw) is None, name
        assert read_message(raw).over_limit is None, name


def test_the_skeleton_keeps_what_screening_and_answering_need():
    raw = (b"From: =?utf-8?q?A?=" + b" =?utf-8?q?a?=" * 30 + b" <ani@example.org>\r\nTo: judge@example.org\r\n"
           b"Return-Path: <>\r\nX-Loop: judge@example.org\r\nSubject: [g1] " + b"x" * 5000 + b"\r\n"
           b"References:" + b"".join(b" <r%d@x>" % i for i in range(500)) + b"\r\n"
           b"Content-Type: multipart/report; boundary=b\r\nX-Other: dropped\r\n\r\nbody\r\n")
    from pbem.mail.message import read_message
    msg = read_message(limits.skeleton(raw))
    assert msg.sender == "ani@example.org" and msg.return_path == "" and msg.text == ""
    assert msg.headers["x-loop"] == "judge@example.org" and msg.headers["content-type"] == "multipart/report"
    assert msg.subject.startswith("[g1] xxx") and len(msg.subject) < 1000
    assert msg.references[-1] == "<r499@x>" and "x-other" not in limits.skeleton(raw).decode()
