"""Time witnessed by others (docs/protocol.md §15): the mail servers that received the
judge's mail stamped when they did, and ``pbem audit --heads MBOX`` compares those stamps
with the times of the events each mail covers. A judge whose clock ran ahead (``pbem mail
tick --at`` the deadline an hour early, ``pbem nmr`` under a clock set ahead) applied a
default before its deadline, unforced; the players' own mailboxes show it.

The mail goes over real SMTP (aiosmtpd on 127.0.0.1) to a receiving server that writes
``Received:`` lines as Postfix, Exim and Gmail write them, each with the time of its own
clock, a parameter of the test (the true time), and keeps each recipient's mail in a
real mbox (``mailbox.mbox``)."""

from __future__ import annotations

import json
import mailbox
from datetime import datetime, timedelta, timezone

import pytest
import typer.main
from click.testing import CliRunner

from pbem.cli.program import app
from pbem.mail import deadlines, judge
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.protocol import commands
from pbem.store import export_lines

PBEM = typer.main.get_command(app)
DAY, HOUR = 86400, 3600
DUE = "2030-01-02T10:00:00Z"  # the deadline of the first step: the game starts at 10:00, 24h


def when(text: str, seconds: int = 0) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) + timedelta(seconds=seconds)


def stamp(at: datetime, style: str) -> str:
    """A ``Received:`` line as a real server writes it, dated ``at`` (its own clock)."""
    if style == "postfix":  # Postfix: day of month space-padded, zone name as a comment
        return (f"from mail.lists.example.org (mail.lists.example.org [192.0.2.10])\n\tby mx.example.org (Postfix) "
                f"with ESMTPS id 4T2xYz1bQ9z9sT8\n\tfor <ani@example.org>; {at.strftime('%a, %e %b %Y %H:%M:%S +0000')}"
                f" (UTC)")
    if style == "exim":
        return (f"from [192.0.2.10] (helo=mail.lists.example.org)\n\tby mx.example.net with esmtps  (TLS1.3) tls "
                f"TLS_AES_256_GCM_SHA384\n\t(Exim 4.96)\n\t(envelope-from <judge@example.org>)\n\tid 1rAbCd-000123-Xy"
                f"\n\tfor ani@example.org;\n\t{at.strftime('%a, %d %b %Y %H:%M:%S +0000')}")
    pacific = at.astimezone(timezone(timedelta(hours=-8)))  # Gmail, in the receiving data centre's zone
    return (f"by 2002:a05:6a10:b8a:b0:5e4:1c2d:3e4f with SMTP id k10csp1234567pxb;\n        "
            f"{pacific.strftime('%a, %-d %b %Y %H:%M:%S -0800')} (PST)")


class PlayersServer:
    """The players' mail server: an aiosmtpd handler that stamps each message with a
    ``Received:`` line of its own clock (``now``, set by the test), on top of the line the
    judge's own server wrote with the judge's clock (``judge_now``), and files it in each
    recipient's mbox."""

    def __init__(self, folder, style: str = "postfix"):
        self.folder, self.style = folder, style
        self.now = self.judge_now = None

    async def handle_DATA(self, server, session, envelope):
        content = envelope.content.replace(b"\r\n", b"\n")
        judges = ("Received: from localhost (localhost [127.0.0.1])\n\tby mail.judge.example.org (Postfix) with "
                  f"ESMTP id 8F2A1C0040\n\tfor <{envelope.rcpt_tos[0]}>; "
                  f"{self.judge_now.strftime('%a, %e %b %Y %H:%M:%S +0000')} (UTC)\n")
        ours = f"Received: {stamp(self.now, self.style)}\n"
        for address in envelope.rcpt_tos:
            box = mailbox.mbox(str(self.folder / f"{address.lower()}.mbox"))
            box.lock()
            try:
                box.add((ours + judges).encode() + content)
                box.flush()
            finally:
                box.unlock()
        return "250 Message accepted for delivery"


@pytest.fixture
def players_server(smtp_servers, tmp_path):
    def start(style: str = "postfix"):
        server = PlayersServer(tmp_path, style)
        port = smtp_servers(server).port
        config = MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=port,
                            security="plain", timeout=30.0)

        def deliver(game, true_time: str, judge_time: str | None = None) -> None:
            """Send what the judge queued, at ``true_time``, while the judge's clock (its
            ``pbem mail send --at``, and its own server's stamp) says ``judge_time``."""
            server.now, server.judge_now = when(true_time, 1), when(judge_time or true_time, 0)
            assert send_due(game.store, config, judge_time or true_time).ok
        return deliver, tmp_path
    return start


def play_to_the_deadline(game, deliver) -> None:
    """Three of four players seal in the first hour; ani does not. Each mail the judge
    queues goes out at once (the judge's clock is right so far)."""
    judge.attach(game.store)
    deliver(game, "2030-01-01T10:00:00Z")
    for minute, player in enumerate(("alex", "frank", "lothar"), start=2):
        game.minute = minute - 1
        game.send(player, f"password {game.passwords[player]}\nseal A")
        deliver(game, f"2030-01-01T10:0{minute}:00Z")


def audit(tmp_path, game, mbox) -> tuple[int, str, dict]:
    export = tmp_path / "g1.jsonl"
    export.write_text("".join(export_lines(game.store.events("g1"))), encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(PBEM, ["audit", "--file", str(export), "--heads", str(mbox)])
    report = json.loads(runner.invoke(PBEM, ["audit", "--file", str(export), "--heads", str(mbox), "--json"]).stdout)
    return done.exit_code, done.stdout.splitlines()[0], report


@pytest.fixture
def timed(make_judge, fixed_seed):
    def make():
        fixed_seed("witnessed time 0")  # a deal whose first step resolves once ani is defaulted
        return make_judge(deadline_seconds=DAY, deadlines={"remind": 6 * HOUR, "grace": 0, "on_late": "default"})
    return make


def _late_default(game) -> dict:
    return next(e for e in game.log() if e["kind"] in ("nmr", "default") and e["data"]["player"] == "ani")


@pytest.mark.parametrize("style", ["postfix", "exim", "gmail"])
def test_a_tick_an_hour_early_is_caught_by_the_players_mail_servers(timed, players_server, style):
    deliver, folder = players_server(style)
    game = timed()
    play_to_the_deadline(game, deliver)
    # the judge runs `pbem mail tick --at 2030-01-02T10:00:00Z` at 09:00: ani is defaulted
    # "at the deadline", unforced, and the step resolves; `pbem mail send --at` the same
    # time sends its summary at once
    actions = deadlines.tick(game.store, DUE)
    assert [(a.player, a.action) for a in actions] == [("ani", "defaulted")]
    late = _late_default(game)
    assert late["at"] == DUE and not late["data"].get("forced")
    deliver(game, "2030-01-02T09:00:30Z", judge_time="2030-01-02T10:00:30Z")  # the judge's own server: its clock
    mbox = folder / "ani@example.org.mbox"
    assert b"Received: " in mbox.read_bytes()
    code, line, report = audit(folder, game, mbox)
    summary = [m for m in _messages(mbox) if _covered(m) >= late["seq"]][0]  # the first mail to cover it
    assert code == 1, line
    expected_time = "2030-01-02T09:00:31Z"  # the players' server's line, not the judge's server's (10:00:30)
    assert line == (f"FAIL: event {late['seq']} ({late['kind']}) is stamped {DUE}, but mail {summary['Message-ID']} "
                    f"carried head event {_covered(summary)} at {expected_time} "
                    f"(its Received line 1), more than 5 minutes before: the judge's clock ran ahead")
    assert report["verdict"] == "FAIL" and report["bad_seq"] == late["seq"]


def _messages(path) -> list:
    import email
    import email.policy
    return [email.message_from_bytes(m.as_bytes(), policy=email.policy.default) for m in mailbox.mbox(str(path))]


def _covered(message) -> int:
    """The highest event a mail's heads cover (0: it carries none)."""
    from pbem.protocol.heads import heads_in_text
    text = "\n".join(part.get_content() for part in message.walk()
                     if part.get_content_type() in ("text/plain", "text/html"))
    return max((seq for seq, _ in heads_in_text(text)), default=0)


def test_an_nmr_under_a_clock_two_hours_ahead_is_caught(timed, players_server):
    deliver, folder = players_server()
    game = timed()
    play_to_the_deadline(game, deliver)
    # true time 08:30; the judge's clock says 10:30, past the deadline: `pbem nmr g1 ani`
    commands.nmr(game.store, "g1", "ani", at="2030-01-02T10:30:00Z")
    deliver(game, "2030-01-02T08:30:05Z", judge_time="2030-01-02T10:30:05Z")
    code, line, report = audit(folder, game, folder / "ani@example.org.mbox")
    nmr = _late_default(game)
    assert code == 1 and line.startswith(f"FAIL: event {nmr['seq']} ({nmr['kind']}) is stamped 2030-01-02T10:30:00Z, "
                                         f"but mail <")
    assert "at 2030-01-02T08:30:06Z (its Received line 1)" in line and line.endswith("the judge's clock ran ahead")


@pytest.mark.parametrize("ahead", [0, 240])
def test_an_honest_judge_and_a_clock_within_the_tolerance_audit_ok(timed, players_server, ahead):
    deliver, folder = players_server()
    game = timed()
    play_to_the_deadline(game, deliver)
    # the deadline passes; the judge's clock is right (or 4 minutes ahead, within the tolerance)
    judges = when(DUE, 60).strftime("%Y-%m-%dT%H:%M:%SZ")
    deadlines.tick(game.store, judges)
    deliver(game, when(DUE, 60 - ahead).strftime("%Y-%m-%dT%H:%M:%SZ"), judge_time=judges)
    for mbox, count in (("ani@example.org.mbox", 1), ("table@lists.example.org.mbox", 1)):
        code, line, report = audit(folder, game, folder / mbox)
        assert code == 3, line  # the game goes on: INCOMPLETE, nothing failed
        assert report["mails_timed"] == count
        assert "1 published head is a prefix, no event stamped after a mail that carried it (1 mail timed)" in line


def test_the_date_header_and_unreadable_stamps(tmp_path):
    """Which times count: every Received line's date (after its last ';') and the Date;
    the earliest one is the mail's; a line without a readable date is left out."""
    from pbem.protocol.heads import mail_time, witnessed_mails
    assert mail_time("Wed,  2 Jan 2030 01:00:31 -0800 (PST)") == "2030-01-02T09:00:31Z"
    assert mail_time("2 Jan 2030 09:00 GMT") == "2030-01-02T09:00:00Z"
    assert mail_time("Wed, 2 Jan 2030 04:00:31 EST") == "2030-01-02T09:00:31Z"
    assert mail_time("Sun, 31 Feb 2030 09:00:31 +0000") is None  # no such day
    assert mail_time("yesterday") is None and mail_time("2 Jan 2030 09:00:31") is None  # no zone
    head = "ab" * 32
    mbox = (b"From judge@example.org Wed Jan  2 09:00:31 2030\n"
            b"Received: from a (a [192.0.2.1]) by b; Wed, 2 Jan 2030 09:10:00 +0000\n"
            b"Received: by c with LMTP id x; no date here\n"
            b"Date: Wed, 02 Jan 2030 10:05:00 +0100\n"
            b"Subject: [g1] round 1\n\n"
            b"Chain head: event 7 " + head.encode() + b"\n"
            b"From judge@example.org Wed Jan  2 09:00:31 2030\n"
            b"Subject: [g1] round 2\n\nChain head: event 9 " + head.encode() + b"\n")
    assert witnessed_mails(mbox, "g1", "list.mbox") == [
        {"mail": "mail 1 of list.mbox", "covers": 7, "at": "2030-01-02T09:05:00Z", "by": "its Date"}]
