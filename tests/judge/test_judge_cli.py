"""The judge's commands as a moderator types them: new with addresses, address, mail ingest."""

from __future__ import annotations

import json
import mailbox
from email.message import EmailMessage

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app


@pytest.fixture
def pbem(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_DB", str(tmp_path / "pbem.db"))
    monkeypatch.delenv("PBEM_MAIL_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no config file: defaults
    runner = CliRunner()

    def run(*args, input=None, code=0):
        result = runner.invoke(app, [str(a) for a in args], input=input)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == code, (args, result.stdout, result.stderr)
        return result
    return run


def message(sender: str, body: str, message_id: str, subject: str = "[g1] move") -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, "judge@example.org", subject, message_id
    msg.set_content(body)
    return msg.as_bytes()


def outbox(pbem) -> list[dict]:
    return json.loads(pbem("mail", "outbox", "--json").stdout)


def log(pbem) -> str:
    return pbem("log", "g1", "--json").stdout


def test_new_with_addresses_queues_each_player_a_welcome(pbem):
    out = pbem("new", "g1", "--players", "ani=ani@example.org,alex=Alex@Example.org", "--now").stdout
    assert "mail for 2 player(s) queued" in out
    rows = outbox(pbem)
    assert sorted(r["recipient"] for r in rows) == ["alex@example.org", "ani@example.org"]
    assert all(r["kind"] == "private" for r in rows)


def test_a_bad_address_at_new_creates_nothing(pbem, tmp_path):
    result = pbem("new", "g1", "--players", "ani=ani@,alex", code=1)
    assert result.stderr.startswith("pbem: ") and "not a plain email address" in result.stderr
    assert pbem("games").stdout.strip() == "no games yet (pbem new)"


def test_address_sets_changes_and_refuses_with_one_line(pbem):
    pbem("new", "g1", "--players", "ani,alex", "--now")
    before = log(pbem)
    assert "a new mail password and their private message are queued" in pbem("address", "g1", "ani", "ani@example.org").stdout
    refused = pbem("address", "g1", "alex", "ani@example.org", code=1)
    assert "already the address of ani" in refused.stderr and refused.stderr.count("\n") == 1
    refused = pbem("address", "g1", "alex", "<alex@example.org>", code=1)
    assert "not a plain email address" in refused.stderr
    assert log(pbem) == before  # addresses are private: never in the public log
    pbem("address", "g1", "--list", "table@lists.example.org")
    assert "table@lists.example.org" not in log(pbem)


def test_ingest_from_stdin_file_mbox_and_maildir(pbem, tmp_path):
    pbem("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--now")
    status = message("ani@example.org", "status", "<s1@example.org>")
    out = pbem("mail", "ingest", input=status).stdout
    assert "(g1, ani): applied; answer queued" in out
    (tmp_path / "s1.eml").write_bytes(status)
    assert "duplicate" in pbem("mail", "ingest", "--file", tmp_path / "s1.eml").stdout
    box = mailbox.mbox(str(tmp_path / "in.mbox"))
    for n in range(3):
        box.add(message("alex@example.org", "help", f"<h{n}@example.org>"))
    box.flush()
    data = json.loads(pbem("mail", "ingest", "--mbox", tmp_path / "in.mbox", "--json").stdout)
    assert [m["outcome"] for m in data["messages"]] == ["applied"] * 3
    folder = tmp_path / "Maildir"
    for sub in ("new", "cur", "tmp"):
        (folder / sub).mkdir(parents=True)
    (folder / "new" / "1.eml").write_bytes(message("ani@example.org", "private", "<p1@example.org>"))
    assert "applied" in pbem("mail", "ingest", "--maildir", folder).stdout
    assert not list((folder / "new").iterdir())
    assert [p.name for p in (folder / "cur").iterdir()] == ["1.eml:2,S"]


def test_ingest_refuses_two_sources_as_a_usage_error(pbem, tmp_path):
    result = pbem("mail", "ingest", "--file", tmp_path / "a.eml", "--maildir", tmp_path, code=2)
    assert "give one of --file, --mbox or --maildir" in result.stderr


def test_a_maildir_that_is_not_one_is_a_one_line_refusal(pbem, tmp_path):
    pbem("new", "g1", "--players", "ani,alex")
    result = pbem("mail", "ingest", "--maildir", tmp_path, code=1)
    assert "is not a Maildir" in result.stderr


def test_mail_queued_from_the_command_line_has_the_judges_domain(pbem, tmp_path, monkeypatch):
    config = tmp_path / "config" / "pbem" / "mail.toml"
    config.parent.mkdir(parents=True)
    config.write_text('judge_address = "judge@tortuga.example.net"\n')
    pbem("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--now")
    rows = outbox(pbem)
    assert rows and all(r["message_id"].endswith("@tortuga.example.net>") for r in rows)
    assert all(", roll step 1" in r["subject"] for r in rows)


def test_an_address_the_outbox_could_not_mail_is_refused_at_once(pbem):
    pbem("new", "g1", "--players", "ani,alex", "--now")
    refused = pbem("address", "g1", "ani", "a..b@example.org", code=1)
    assert "not a plain email address" in refused.stderr


def test_ingest_refuses_a_device_and_a_file_that_is_not_an_mbox(pbem, tmp_path):
    pbem("new", "g1", "--players", "ani=ani@example.org,alex", "--now")
    refused = pbem("mail", "ingest", "--file", "/dev/zero", code=1)
    assert "is a terminal or device, not a message" in refused.stderr
    (tmp_path / "one.eml").write_bytes(message("ani@example.org", "status", "<o1@example.org>"))
    refused = pbem("mail", "ingest", "--mbox", tmp_path / "one.eml", code=1)
    assert "not an mbox file" in refused.stderr and "--file" in refused.stderr


def test_a_corrected_address_drops_the_mail_waiting_for_the_old_one(pbem):
    pbem("new", "g1", "--players", "ani,alex", "--now")
    pbem("address", "g1", "ani", "ani@exmaple.org")  # a typo
    out = pbem("address", "g1", "ani", "ani@example.org").stdout
    assert "1 message(s) not yet sent to the old address were dropped" in out
    assert "a new mail password" in out  # the dropped mail held the password
    assert [r["recipient"] for r in outbox(pbem)] == ["ani@example.org"]


def test_a_tag_naming_a_game_the_sender_does_not_play_is_refused(pbem):
    pbem("new", "g1", "--players", "ani=ani@example.org,alex", "--now")
    pbem("new", "g2", "--players", "bob=bob@example.org,cy", "--now")
    before = log(pbem)
    out = pbem("mail", "ingest", input=message("ani@example.org", "seal A", "<t1@example.org>",
                                                 subject="Re: [g2] move")).stdout
    assert "refused: not a player of that game" in out
    assert log(pbem) == before


def test_the_moderators_address_is_set_shown_changed_and_removed(pbem, tmp_path):
    import sqlite3
    pbem("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org", "--now",
         "--moderator", "Mod@Example.org", "--list", "table@example.org")

    def stored():
        conn = sqlite3.connect(tmp_path / "pbem.db")
        try:
            return conn.execute("select list_address, moderator_address from mail_games").fetchall()
        finally:
            conn.close()
    assert stored() == [("table@example.org", "mod@example.org")]
    out = pbem("address", "g1", "--moderator", "other@example.org").stdout
    assert out == "the moderator of g1 is told at other@example.org when mail to a player cannot be delivered\n"
    pbem("address", "g1", "--list", "forum@example.org")  # the list changes, the moderator stays
    assert stored() == [("forum@example.org", "other@example.org")]
    before = stored()
    bad = pbem("address", "g1", "--moderator", "Mod <mod@example.org>", code=1)
    assert bad.stderr.startswith("pbem: 'Mod <mod@example.org>' is not a plain email address")
    assert stored() == before
    pbem("address", "g1", "ani", "--moderator", "x@example.org", code=2)
    assert pbem("address", "g1", "--moderator", "none").stdout == "game g1 has no moderator address now\n"
    assert stored() == [("forum@example.org", None)]
