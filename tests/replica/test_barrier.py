"""The replica barrier's settings and its refusals, with the real Litestream, and
'pbem check-restore' on a database that lost its last events (docs/hosting.md)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.mail import replica
from pbem.mail.config import MailConfigError, load_config
from pbem.mail.send import send_due
from pbem.store import outbox

from .conftest import litestream_program, litestream_yml, poll

T0 = "2030-01-01T10:00:00Z"


def _judge(tmp_path: Path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("judge_conftest_for_barrier",
                                                  Path(__file__).resolve().parents[1] / "judge" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Judge(tmp_path / "g.db"), module


def _config(tmp_path: Path, port: int, **more) -> Path:
    path = tmp_path / "mail.toml"
    lines = ['judge_address = "judge@example.org"', 'smtp_host = "127.0.0.1"', f"smtp_port = {port}",
             'security = "plain"', *(f"{key} = {json.dumps(value)}" for key, value in more.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_settings_are_read_and_bad_ones_refused(tmp_path):
    config = load_config(_config(tmp_path, 25, replica_barrier=True, litestream="/opt/ls/litestream",
                                 litestream_socket="run/ls.sock", replica_timeout=5), {})
    assert (config.replica_barrier, config.litestream, config.replica_timeout) == (True, "/opt/ls/litestream", 5.0)
    assert config.litestream_socket == str(tmp_path / "run" / "ls.sock")  # relative to the config file
    plain = load_config(_config(tmp_path, 25), {})
    assert (plain.replica_barrier, plain.litestream_socket) == (False, "/var/run/litestream.sock")
    for key, value, words in (("replica_barrier", "yes", "replica_barrier must be true or false"),
                              ("replica_timeout", 0, "replica_timeout must be a number of seconds"),
                              ("litestream", 3, "litestream must be a string")):
        with pytest.raises(MailConfigError, match=words):
            load_config(_config(tmp_path, 25, **{key: value}), {})


def test_without_the_setting_the_judge_never_calls_litestream(tmp_path, mailroom):
    port, room = mailroom
    judge, _ = _judge(tmp_path)
    config = load_config(_config(tmp_path, port, litestream="/nonexistent/litestream"), {})
    report = send_due(judge.store, config, T0)
    assert report.ok and len(report.sent) == len(room.received) > 0
    assert not replica.wait_path(judge.store.path).exists()


def test_with_the_setting_and_no_litestream_mail_waits_and_status_says_why(tmp_path, mailroom):
    port, room = mailroom
    judge, _ = _judge(tmp_path)
    queued = len(outbox.due(judge.store, T0))
    db = judge.store.path
    missing = load_config(_config(tmp_path, port, replica_barrier=True, litestream="/nonexistent/litestream"), {})
    report = send_due(judge.store, missing, T0)
    assert report.stopped.startswith("replica barrier: the program '/nonexistent/litestream' is not found")
    assert (report.left, report.results, room.received) == (queued, [], [])
    # Litestream installed, but not running: no control socket
    config = load_config(_config(tmp_path, port, replica_barrier=True, litestream=litestream_program(),
                                 litestream_socket=str(tmp_path / "none.sock"), replica_timeout=1), {})
    report = send_due(judge.store, config, "2030-01-01T10:05:00Z")
    assert report.stopped.startswith("the replica does not hold the latest changes (litestream sync -wait: ")
    assert (report.left, room.received, len(outbox.due(judge.store, T0))) == (queued, [], queued)
    status = CliRunner().invoke(app, ["status", "g1", "--db", db])
    assert status.exit_code == 0
    assert ("MAIL WAITS FOR THE REPLICA since 2030-01-01 10:00:00 UTC: the replica does not hold the latest "
            "changes") in status.stdout, status.stdout
    listing = CliRunner().invoke(app, ["games", "--db", db])
    assert "MAIL WAITS FOR THE REPLICA" in listing.stdout
    sent = CliRunner().invoke(app, ["mail", "send", "--config", str(tmp_path / "mail.toml"), "--db", db,
                                     "--at", "2030-01-01T10:06:00Z"])
    assert sent.exit_code == 1 and "stopped: the replica does not hold the latest changes" in sent.stderr

    # Litestream runs, with a file replica: the batch goes, after one barrier, and the note goes too
    socket_path = tmp_path / "ls.sock"
    yml = litestream_yml(tmp_path / "litestream.yml", Path(db).absolute(), {"url": f"file://{tmp_path / 'replica'}"},
                         socket_path)
    config = load_config(_config(tmp_path, port, replica_barrier=True, litestream=litestream_program(),
                                 litestream_socket=str(socket_path)), {})
    with subprocess.Popen([litestream_program(), "replicate", "-config", str(yml)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as litestream:
        try:
            poll(socket_path.exists, "Litestream's control socket")
            report = send_due(judge.store, config, "2030-01-01T10:10:00Z")
        finally:
            litestream.terminate()
    assert report.ok and len(room.received) == queued
    assert not replica.wait_path(db).exists()
    assert "REPLICA" not in CliRunner().invoke(app, ["status", "g1", "--db", db]).stdout


def test_check_restore_names_every_receipt_the_restored_log_lacks(tmp_path):
    judge, module = _judge(tmp_path)
    for player in module.PLAYERS[:2]:
        result = judge.send(player, f"password {judge.passwords[player]}\nseal A")
        assert result.outcome == "applied", result.lines
    early = tmp_path / "early.db"  # the replica's state before the last mails: a restore that lost them
    with sqlite3.connect(early) as copy:
        judge.store.conn.backup(copy)
    kept = judge.store.count("g1")
    for player in module.PLAYERS[2:]:
        result = judge.send(player, f"password {judge.passwords[player]}\nseal A")
        assert result.outcome == "applied", result.lines
    answers = tmp_path / "answers.txt"
    answers.write_text("\n\n".join(r["body_text"] for r in judge.outbox("answer")))
    cli = CliRunner()
    whole = cli.invoke(app, ["check-restore", "--db", judge.store.path, "--receipts", str(answers)])
    assert whole.exit_code == 0, whole.output
    assert whole.stdout.startswith("RESTORE OK: 1 game audits, 5 receipts all in the log"), whole.stdout
    lost = cli.invoke(app, ["check-restore", "--db", str(early), "--receipts", str(answers), "--json"])
    assert lost.exit_code == 1
    report = json.loads(lost.stdout)
    # (listed in the order of the answers that carry them, which the game's random dice can change)
    first = min(report["missing"], key=lambda m: m["seq"])
    assert {m["player"] for m in report["missing"]} == {"frank", "lothar"} and first["seq"] == kept + 1
    assert first["reason"].endswith(f"the log stops at event {kept}: the judge cut the log")
    assert "RESTORE FAIL: 3 of 5 receipts are not in the log" in lost.stderr
    unreadable = cli.invoke(app, ["check-restore", "--db", str(early), "--receipts", str(tmp_path / "none.mbox")])
    assert unreadable.exit_code == 2
