"""'pbem mail send' and 'pbem mail outbox' against a real SMTP server on 127.0.0.1."""

from __future__ import annotations

import email
import json
import os
import subprocess
import sys
from email.policy import default as default_policy
from pathlib import Path

import pytest

from pbem.store import outbox

REPO_ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


def smtp_args(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--security", "plain", "--from", "judge@example.org"]


def one_line_refusal(result, says: str) -> None:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    reason = result.stderr.strip()
    assert "\n" not in reason and reason.startswith("pbem: "), reason
    assert says in reason, reason


def rows(store) -> list[tuple[int, str, int]]:
    return [(r.id, r.state, r.attempts) for r in outbox.listing(store, include_sent=True)]


def test_send_delivers_everything_due(cli, store, put, smtp_server):
    server = smtp_server()
    put(store, 2)
    result = cli("mail", "send", *smtp_args(server.port))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "sent #1 g1 private to p1@example.org: [g1] message 1",
        "sent #2 g1 private to p2@example.org: [g1] message 2",
        "2 sent, 0 failed",
    ]
    assert [r.rcpt_tos for r in server.handler.received] == [["p1@example.org"], ["p2@example.org"]]
    assert rows(store) == [(1, "sent", 1), (2, "sent", 1)]
    again = cli("mail", "send", *smtp_args(server.port))
    assert again.exit_code == 0 and again.stdout == "nothing due to send\n"
    assert len(server.handler.received) == 2


def test_a_failure_exits_1_with_one_line_and_stays_queued(cli, store, put, smtp_server):
    server = smtp_server()
    server.handler.refuse = {"p2@example.org": "451 4.2.1 mailbox busy, try later"}
    put(store, 3)
    result = cli("mail", "send", *smtp_args(server.port))
    one_line_refusal(result, "1 message stays queued for the next 'pbem mail send'")
    lines = result.stdout.splitlines()
    assert lines[1].startswith("failed #2 g1 private to p2@example.org: [g1] message 2: "
                               "recipient refused: 451 4.2.1 mailbox busy, try later; retry at ")
    assert lines[1].endswith(" UTC") and lines[-1] == "2 sent, 1 failed"
    assert rows(store) == [(1, "sent", 1), (2, "queued", 1), (3, "sent", 1)]


def test_a_permanent_refusal_exits_1_and_is_failed_for_good(cli, store, put, smtp_server):
    server = smtp_server()
    server.handler.refuse = {"p2@example.org": "550 5.1.1 unknown user"}
    put(store, 3)
    result = cli("mail", "send", *smtp_args(server.port))
    one_line_refusal(result, "1 message failed for good")
    lines = result.stdout.splitlines()
    assert lines[1] == ("FAILED #2 g1 private to p2@example.org: [g1] message 2: recipient refused: "
                        "550 5.1.1 unknown user; given up, not retried (see pbem status g1)")
    assert rows(store) == [(1, "sent", 1), (2, "failed", 1), (3, "sent", 1)]
    listed = cli("mail", "outbox").stdout.splitlines()
    assert len(listed) == 1 and listed[0].startswith("#2 g1 private to p2@example.org: [g1] message 2 - FAILED ")
    assert listed[0].endswith("after 1 attempt(s): recipient refused: 550 5.1.1 unknown user")


def test_a_failure_under_json_is_one_document_with_the_report_and_the_error(cli, store, put, smtp_server):
    import json
    server = smtp_server()
    server.handler.refuse = {"p1@example.org": "550 5.1.1 unknown user"}
    put(store, 1)
    result = cli("mail", "send", *smtp_args(server.port), "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)  # exactly one JSON document
    assert data["code"] == 1 and "1 message failed for good" in data["error"]
    assert [r["outcome"] for r in data["results"]] == ["failed"]


def test_no_server_exits_1_and_touches_nothing(cli, store, put):
    import socket

    put(store, 2)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        result = cli("mail", "send", *smtp_args(port))
    one_line_refusal(result, f"stopped: 127.0.0.1:{port}: connection refused")
    assert "2 messages stay queued" in result.stderr
    assert result.stdout.splitlines() == ["0 sent, 0 failed, 2 not tried"]
    assert rows(store) == [(1, "queued", 0), (2, "queued", 0)]


def test_send_json(cli, store, put, smtp_server):
    server = smtp_server()
    put(store, 1)
    result = cli("mail", "send", *smtp_args(server.port), "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["ok"] and data["sent"] == 1 and data["failed"] == 0
    (sent,) = data["results"]
    assert sent["message_id"] == server.handler.received[0].message["Message-ID"]
    assert sent["outcome"] == "sent" and sent["recipient"] == "p1@example.org"


def test_login_password_from_the_environment_only(cli, store, put, smtp_server, auth_checker):
    server = smtp_server(authenticator=auth_checker("judge", "s3cret"), auth_required=True,
                         auth_require_tls=False)
    put(store, 1)
    args = ["mail", "send", *smtp_args(server.port), "--user", "judge"]
    one_line_refusal(cli(*args), "no password for SMTP user judge: set the environment variable PBEM_SMTP_PASSWORD")
    assert rows(store) == [(1, "queued", 0)] and server.handler.received == []
    assert cli(*args, "--password", "s3cret").exit_code == 2  # there is no such option
    result = cli(*args, env={"PBEM_SMTP_PASSWORD": "s3cret"})
    assert result.exit_code == 0, result.stderr
    assert [r.login for r in server.handler.received] == ["judge"]


def test_settings_from_the_config_file(cli, store, put, smtp_server, private_environment, tmp_path):
    server = smtp_server()
    folder = tmp_path / "config" / "pbem"
    folder.mkdir(parents=True)
    (folder / "mail.toml").write_text(
        f'judge_address = "judge@example.org"\nsmtp_host = "127.0.0.1"\nsmtp_port = {server.port}\n'
        'security = "plain"\n', encoding="utf-8")
    put(store, 1)
    result = cli("mail", "send")
    assert result.exit_code == 0, result.stderr
    assert server.handler.received[0].mail_from == "judge@example.org"


def test_a_password_in_a_readable_config_file_is_refused(cli, store, put, tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text('smtp_host = "127.0.0.1"\nsmtp_password = "s3cret"\n', encoding="utf-8")
    config.chmod(0o644)
    put(store, 1)
    one_line_refusal(cli("mail", "send", "--config", config), f"run: chmod 600 {config}")
    assert rows(store) == [(1, "queued", 0)]


def test_to_dir_writes_eml_files(cli, store, put, tmp_path):
    ids = put(store, 2)
    folder = tmp_path / "outgoing"
    result = cli("mail", "send", "--to-dir", folder, "--from", "judge@example.org")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "2 written, 0 failed"
    assert result.stdout.startswith(f"written #1 g1 private to p1@example.org: [g1] message 1 -> {folder}")
    files = sorted(folder.glob("*.eml"))
    parsed = [email.message_from_bytes(f.read_bytes(), policy=default_policy) for f in files]
    assert [m["Message-ID"] for m in parsed] == ids
    assert {m["From"] for m in parsed} == {"judge@example.org"}
    assert rows(store) == [(1, "sent", 1), (2, "sent", 1)]


@pytest.mark.parametrize("args, says", [
    (["--smtp", "127.0.0.1:25", "--to-dir", "x"], "not both"),
    (["--smtp", "smtp.example.org:99999"], "between 1 and 65535"),
    (["--smtp", "no such host:25"], "give HOST:PORT"),
    (["--security", "ssl"], "use starttls"),
])
def test_usage_errors_exit_2(cli, store, put, args, says):
    put(store, 1)
    result = cli("mail", "send", *args)
    assert result.exit_code == 2 and says in result.stderr, result.stderr
    assert rows(store) == [(1, "queued", 0)]


def test_missing_settings_are_named(cli, store, put):
    put(store, 1)
    one_line_refusal(cli("mail", "send", "--from", "judge@example.org"), "no SMTP server: give --smtp HOST:PORT")
    one_line_refusal(cli("mail", "send", "--smtp", "127.0.0.1:25"), "no judge address to send from: give --from")
    one_line_refusal(cli("mail", "send", "--smtp", "127.0.0.1:25", "--from", "Judge <j@x.org>"),
                     "not one email address")
    assert rows(store) == [(1, "queued", 0)]


def test_outbox_lists_what_waits(cli, store, put):
    put(store, 2)
    put(store, 1, game="g2", start=3)
    outbox.mark_failed(store, 2, "451 4.7.1 greylisted, come back later", "2024-05-01T12:00:00Z")
    outbox.mark_sent(store, 1, "2024-05-01T12:00:00Z")

    result = cli("mail", "outbox")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "#2 g1 private to p2@example.org: [g1] message 2 - attempts 1, next try 2024-05-01 12:01:00 UTC, "
        "last error: 451 4.7.1 greylisted, come back later",
        "#3 g2 private to p3@example.org: [g2] message 3 - attempts 0, next try 2024-05-01 12:00:00 UTC",
    ]
    assert [line.split()[0] for line in cli("mail", "outbox", "--game", "g1").stdout.splitlines()] == ["#2"]
    everything = cli("mail", "outbox", "--all").stdout.splitlines()
    assert everything[0] == "#1 g1 private to p1@example.org: [g1] message 1 - sent 2024-05-01 12:00:00 UTC"
    listed = json.loads(cli("mail", "outbox", "--all", "--json").stdout)
    assert [(r["id"], r["state"], r["attempts"]) for r in listed] == [(1, "sent", 1), (2, "queued", 1), (3, "queued", 0)]
    assert "body_text" not in listed[0]  # the listing shows no private text
    assert cli("mail", "outbox", "--game", "nothing-here").stdout == "the outbox is empty: nothing waits\n"


def test_outbox_without_a_database(cli, tmp_path):
    one_line_refusal(cli("mail", "outbox", "--db", tmp_path / "missing.db"), "no games database")
    assert not (tmp_path / "missing.db").exists()


def test_export_and_audit_leave_the_outbox_out(cli, store):
    from pbem.protocol import commands

    commands.create_game(store, "g1", "tortuga", ["ani", "alex"], {"variant": "standard"}, start=True)
    with store.transaction():
        outbox.queue(store, game="g1", kind="private", recipient="ani@example.org",
                     subject="[g1] your tiles", text="PRIVATE-TILES 3 and 5\n", at="2024-05-01T12:00:00Z")
    exported = cli("export", "g1")
    assert exported.exit_code == 0 and "PRIVATE-TILES" not in exported.stdout
    assert "ani@example.org" not in exported.stdout
    assert cli("audit", "g1").exit_code == 3  # INCOMPLETE: in play, nothing failed


def _mail_commands() -> list[tuple[str, str]]:
    from pbem.cli.program import app

    found = []
    for group in app.registered_groups:
        for info in group.typer_instance.registered_commands:
            found.append((group.name, info.name or info.callback.__name__.replace("_", "-")))
    return found


def test_the_mail_group_has_send_and_outbox():
    assert {("mail", "send"), ("mail", "outbox")} <= set(_mail_commands())


@pytest.mark.parametrize("group, name", _mail_commands())
def test_every_group_command_has_help_with_an_example(cli, group, name):
    result = cli(group, name, "--help")
    assert result.exit_code == 0
    example = next((line for line in result.stdout.splitlines() if "Example:" in line), "")
    assert f"pbem {group} {name}" in example, f"pbem {group} {name} --help has no example"
    assert "--json" in result.stdout


def test_outbox_starts_without_heavy_modules(store, put, private_environment):
    put(store, 1)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pbem.cli.app", "mail", "outbox"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "[g1] message 1" in done.stdout, done.stderr[-500:]
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    heavy = sorted(m for m in modules if m.split(".")[0] in ("jinja2", "cryptography", "email",
                                                             "smtplib", "ssl", "sqlite_utils"))
    assert not heavy, heavy



def test_a_held_answer_waits_until_its_time_and_send_at_sends_it_then(cli, store, smtp_server):
    """``pbem mail send --at TIME``: the time is a parameter; an answer held for the
    player's next message (``held_until``) is listed as held and goes once its time has come."""
    from pbem.protocol.times import shift
    from tests.mail.conftest import T0
    server = smtp_server()
    with store.transaction():
        outbox.queue(store, game="g1", kind="answer", recipient="p1@example.org", subject="Re: [g1] move",
                     text="The judge's answer for p1 in game g1:\n", at=T0, held_until=shift(T0, 600))
    listed = cli("mail", "outbox").stdout
    assert f"held until {shift(T0, 600).replace('T', ' ').replace('Z', ' UTC')} for the player's next message" in listed
    early = cli("mail", "send", *smtp_args(server.port), "--at", shift(T0, 599))
    assert early.exit_code == 0 and early.stdout.splitlines() == [
        "nothing due to send", "1 answer held for the players' next message; alone by 2024-05-01 12:10:00 UTC "
                               "at the latest"] and not server.handler.received
    sent = cli("mail", "send", *smtp_args(server.port), "--at", shift(T0, 600))
    assert sent.exit_code == 0 and sent.stdout.splitlines()[-1] == "1 sent, 0 failed"
    assert [r.rcpt_tos for r in server.handler.received] == [["p1@example.org"]]
    assert rows(store) == [(1, "sent", 1)] and outbox.get(store, 1).sent_at == shift(T0, 600)
    assert cli("mail", "send", *smtp_args(server.port), "--at", "soon").exit_code == 2
