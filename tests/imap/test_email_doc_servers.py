"""The example commands of docs/email.md that need a mail server, run for real (issue 16:
"every example command run by a test"). tests/judge/test_email_doc.py parses every example
line and runs those that need no server; this module runs the others, each against real
servers on 127.0.0.1: aiosmtpd (the SMTP server of tests/mail/conftest.py, which records
whether each message came over TLS and with which login) and the real Dovecot of
tests/imap/conftest.py, both with TLS from the test CA.

Each example is taken from the page itself (``doc_command`` fails when the line is no longer
there), and changed as little as can be. The only changes, each said again where it is made:

- a host name of the examples (smtp.example.org, imap.example.org, localhost) and its port
  are mapped to the test server's address (127.0.0.1, or localhost kept as it is) and port:
  the servers run on this machine, on free ports;
- the passwords go in the documented variables, PBEM_SMTP_PASSWORD and PBEM_IMAP_PASSWORD,
  as the examples put them (``PBEM_SMTP_PASSWORD='...' pbem ...``, the systemd unit's
  EnvironmentFile);
- ``~/.config/pbem/mail.toml`` is ``$XDG_CONFIG_HOME/pbem/mail.toml`` in the test's folder
  (the fixture sets XDG_CONFIG_HOME); /etc/pbem/mail.toml, /srv/pbem/pbem.db and ~/Maildir
  are files in the test's folder. The config files are the page's own TOML blocks, with
  the host and port mapped as above, and ``ca_file`` (a documented setting) added: the
  servers' certificate is the test CA's, which the system's trust store does not hold.
  Where an example has no config file of its own (``--smtp smtp.example.org:587``), the
  default file holds only that ``ca_file``;
- TLS is not changed: every example asks for STARTTLS or implicit TLS (or plain, for the
  local relay), and the test servers offer exactly that;
- ``pbem mail run`` (and ``--every 5m``) runs for ever: it is started as a process, and
  stopped with SIGTERM (as systemd stops it) once its output shows that its first pass
  sent the answer to the mail it took: a condition, polled, never a wait for a time.

The cron lines of the page (``*/5 * * * *  pbem mail send >> ...``, ``(pbem mail fetch; pbem
mail send) >> ...``) are the same commands as ``pbem mail send`` and ``pbem mail fetch`` with
the settings file, run here; cron and the shell's redirection are not. Every example runs:
none had to be left out or rewritten.

Mail answers that only confirm a move wait up to the game's hold time (10 minutes) for the
player's next message; the games of the `mail run` examples set ``--hold-answers 0`` (a
documented example of its own) so that the first pass sends the answer it caused.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import ssl
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
JUDGE = "judge@example.org"
SMTP_PASSWORD = "smtp-secret-2"
SEEN = "\\Seen"
# Seconds without the expected output before the test fails and shows the output: a guard
# against a judge that hangs, not a measure of speed (a loaded 2-core machine is slow).
STUCK_AFTER = 600.0


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_doc = _load("pbem_tests_judge_test_email_doc", "tests/judge/test_email_doc.py")
_mail = _load("pbem_tests_mail_conftest", "tests/mail/conftest.py")
_imap = _load("pbem_tests_imap_conftest", "tests/imap/conftest.py")  # its Table, for a game in /srv
smtp_server = _mail.smtp_server  # the fixture: aiosmtpd on 127.0.0.1 with the options given (TLS, login)

# every example of the page that needs a server, and the test that runs it
SERVED = {
    "mail send": "test_mail_send_with_the_settings_file",
    "mail send --smtp smtp.example.org:587 --user judge@example.org --from judge@example.org":
        "test_mail_send_to_a_providers_submission_port",
    "mail send --smtp localhost:25 --security plain --from judge@example.org": "test_mail_send_to_the_local_relay",
    "mail fetch": "test_mail_fetch_with_the_settings_file",
    "mail fetch --imap imap.example.org --user judge@example.org": "test_mail_fetch_over_imaps",
    "mail fetch --imap imap.example.org --starttls --user judge@example.org --move-to Judged":
        "test_mail_fetch_over_starttls_moving_to_judged",
    "mail run": "test_mail_run_with_the_settings_file",
    "mail run --every 5m --config /etc/pbem/mail.toml --db /srv/pbem/pbem.db": "test_mail_run_as_the_systemd_unit",
    "mail run --maildir ~/Maildir": "test_mail_run_with_a_maildir",
    "mail run --once": "test_mail_run_once",
}


def doc_command(line: str) -> list[str]:
    """The example ``pbem LINE`` as docs/email.md has it (the test fails once it is gone)."""
    args = shlex.split(line)
    assert args in _doc.example_commands(), f"'pbem {line}' is no longer an example of docs/email.md"
    return args


def doc_toml(first_line: str) -> dict:
    """The settings of the page's TOML block whose first line is ``first_line``."""
    fences = [t for t in MarkdownIt("commonmark").parse(_doc.DOC.read_text(encoding="utf-8"))
              if t.type == "fence" and t.info.strip() == "toml"]
    found = [t.content for t in fences if t.content.splitlines()[0].strip() == first_line]
    assert len(found) == 1, f"no single TOML block of docs/email.md starts with {first_line!r}"
    return tomllib.loads(found[0])


def write_toml(path: Path, values: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key} = {_toml_value(value)}\n" for key, value in values.items()))
    path.chmod(0o600)
    return path


def _toml_value(value) -> str:
    return str(value) if isinstance(value, int) else '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def default_config(values: dict) -> Path:
    """~/.config/pbem/mail.toml: here $XDG_CONFIG_HOME/pbem/mail.toml, in the test's folder."""
    return write_toml(Path(os.environ["XDG_CONFIG_HOME"]) / "pbem" / "mail.toml", values)


def smtp_settings(smtp, test_ca) -> dict:
    """The page's sending settings (Configuration), the server mapped to the test's aiosmtpd."""
    values = doc_toml("# ~/.config/pbem/mail.toml")
    assert (values["smtp_host"], values["smtp_port"], values["security"]) == ("smtp.example.org", 587, "starttls")
    # changed: smtp.example.org:587 -> 127.0.0.1:<the test server's port>; ca_file added (the test CA)
    return {**values, "smtp_host": "127.0.0.1", "smtp_port": smtp.port, "ca_file": str(test_ca.cert)}


def imap_settings(server, test_ca) -> dict:
    """The page's fetching settings (Fetching by IMAP), the server mapped to the test's Dovecot."""
    values = doc_toml("# ~/.config/pbem/mail.toml (chmod 600 if it holds a password)")
    assert (values["imap_host"], values["imap_port"], values["imap_security"]) == ("imap.example.org", 993, "tls")
    # changed: imap.example.org:993 (IMAPS) -> 127.0.0.1:<Dovecot's IMAPS port>; ca_file added (the test CA)
    return {**values, "imap_host": "127.0.0.1", "imap_port": server.tls_port, "ca_file": str(test_ca.cert)}


# ---------------------------------------------------------------------- servers


def smtp_with_starttls_and_login(smtp_server, test_ca):
    """What a provider's submission port offers: STARTTLS, required, then a required login."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(test_ca.cert, test_ca.key)
    return smtp_server(tls_context=context, require_starttls=True, auth_required=True,
                       authenticator=_mail.password_checker(JUDGE, SMTP_PASSWORD))


def arrived(smtp) -> list[tuple]:
    """(envelope sender, recipients, over TLS?, login) of each message the server took."""
    return [(r.mail_from, tuple(r.rcpt_tos), r.tls, r.login) for r in smtp.handler.received]


def subjects(smtp) -> list[tuple[str, str]]:
    return sorted((r.rcpt_tos[0], r.message["Subject"]) for r in smtp.handler.received)


def the_outbox(table) -> list[tuple[str, str]]:
    """(recipient, subject) of every message the judge queued."""
    return sorted(table.query("select recipient, subject from outbox"))


# ---------------------------------------------------------------------- the list is complete


def test_every_example_that_needs_a_server_is_run_here():
    needing = {" ".join(args) for args in _doc.example_commands()
               if not any(" ".join(args).startswith(prefix) for prefix in _doc.RUNNABLE)}
    assert needing == set(SERVED), "an example command of docs/email.md is run by no test"
    assert all(name in globals() for name in SERVED.values())


# ---------------------------------------------------------------------- pbem mail send


def test_mail_send_with_the_settings_file(smtp_server, test_ca, table, cli):
    """``pbem mail send``, settings in ~/.config/pbem/mail.toml (the page's Configuration block)."""
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    default_config(smtp_settings(smtp, test_ca))
    args = doc_command("mail send")  # unchanged
    out = cli(*args, env={"PBEM_SMTP_PASSWORD": SMTP_PASSWORD}).stdout
    assert out.count("sent #") == 2, out
    assert subjects(smtp) == the_outbox(table) and len(subjects(smtp)) == 2  # the welcomes
    assert {(sender, tls, login) for sender, _, tls, login in arrived(smtp)} == {(JUDGE, True, JUDGE)}
    assert table.query("select distinct state from outbox") == [("sent",)]


def test_mail_send_to_a_providers_submission_port(smtp_server, test_ca, table, cli):
    """``PBEM_SMTP_PASSWORD='...' pbem mail send --smtp smtp.example.org:587 --user ... --from ...``"""
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    # changed: the example has no config file; the default one holds only ca_file (the test CA)
    default_config({"ca_file": str(test_ca.cert)})
    args = doc_command("mail send --smtp smtp.example.org:587 --user judge@example.org --from judge@example.org")
    # changed: smtp.example.org:587 -> 127.0.0.1:<the test server's port>; STARTTLS (the default) kept
    args[args.index("smtp.example.org:587")] = f"127.0.0.1:{smtp.port}"
    # the password as the example gives it: PBEM_SMTP_PASSWORD='...' in front of the command
    out = cli(*args, env={"PBEM_SMTP_PASSWORD": SMTP_PASSWORD}).stdout
    assert out.count("sent #") == 2, out
    assert subjects(smtp) == the_outbox(table)
    assert {(sender, tls, login) for sender, _, tls, login in arrived(smtp)} == {(JUDGE, True, JUDGE)}
    assert {r.message["From"] for r in smtp.handler.received} == {JUDGE}


def test_mail_send_to_the_local_relay(smtp_server, table, cli):
    """``pbem mail send --smtp localhost:25 --security plain --from judge@example.org``: a
    relay on this machine, no TLS, no login (no config file)."""
    smtp = smtp_server()  # a local relay: no STARTTLS, no login
    args = doc_command("mail send --smtp localhost:25 --security plain --from judge@example.org")
    # changed: port 25 -> the test server's port (localhost kept: the server is on this machine)
    args[args.index("localhost:25")] = f"localhost:{smtp.port}"
    out = cli(*args, env={}).stdout
    assert out.count("sent #") == 2, out
    assert subjects(smtp) == the_outbox(table)
    assert {(sender, tls, login) for sender, _, tls, login in arrived(smtp)} == {(JUDGE, False, None)}


# ---------------------------------------------------------------------- pbem mail fetch


def fetched(table, server, uid: int, folder: str = "INBOX") -> None:
    """ani's mail (uid) was read and acted on: her client seed is in the log, her answer
    queued, and the judge recorded the UID."""
    assert table.seeds() == ["ani-1"]
    assert table.answers() == ["<seed1.ani@example.org>"]
    assert table.query("select folder, last_uid from imap_folders") == [(folder, uid)]


def test_mail_fetch_with_the_settings_file(dovecot, test_ca, table, cli):
    """``pbem mail fetch``, settings in ~/.config/pbem/mail.toml (the page's IMAP block): IMAPS."""
    server = dovecot(tls=test_ca)
    uid = server.append(table.mail("ani"))
    default_config(imap_settings(server, test_ca))
    args = doc_command("mail fetch")  # unchanged
    out = cli(*args, env={"PBEM_IMAP_PASSWORD": server.password}).stdout
    assert out == f"uid {uid}: seed1.ani@example.org (g1, ani): applied; answer queued\n"
    fetched(table, server, uid)
    assert [flags for flags, _ in server.messages().values()] == [{SEEN}]


def test_mail_fetch_over_imaps(dovecot, test_ca, table, cli):
    """``PBEM_IMAP_PASSWORD='...' pbem mail fetch --imap imap.example.org --user judge@example.org``"""
    server = dovecot(tls=test_ca)
    uid = server.append(table.mail("ani"))
    # changed: the example has no config file; the default one holds only ca_file (the test CA)
    default_config({"ca_file": str(test_ca.cert)})
    args = doc_command("mail fetch --imap imap.example.org --user judge@example.org")
    # changed: imap.example.org (IMAPS, port 993) -> 127.0.0.1:<Dovecot's IMAPS port>; TLS (the default) kept
    args[args.index("imap.example.org")] = f"127.0.0.1:{server.tls_port}"
    out = cli(*args, env={"PBEM_IMAP_PASSWORD": server.password}).stdout
    assert out == f"uid {uid}: seed1.ani@example.org (g1, ani): applied; answer queued\n"
    fetched(table, server, uid)
    assert [flags for flags, _ in server.messages().values()] == [{SEEN}]


def test_mail_fetch_over_starttls_moving_to_judged(dovecot, test_ca, table, cli):
    """``pbem mail fetch --imap imap.example.org --starttls --user judge@example.org --move-to Judged``"""
    server = dovecot(tls=test_ca)
    server.command("create", '"Judged"')  # the folder is the moderator's to make (a missing one is refused)
    uid = server.append(table.mail("ani"))
    # changed: the example has no config file; the default one holds only ca_file (the test CA)
    default_config({"ca_file": str(test_ca.cert)})
    args = doc_command("mail fetch --imap imap.example.org --starttls --user judge@example.org --move-to Judged")
    # changed: imap.example.org (port 143, STARTTLS) -> 127.0.0.1:<Dovecot's IMAP port, which offers STARTTLS>
    args[args.index("imap.example.org")] = f"127.0.0.1:{server.port}"
    out = cli(*args, env={"PBEM_IMAP_PASSWORD": server.password}).stdout
    assert out == f"uid {uid}: seed1.ani@example.org (g1, ani): applied; answer queued\n"
    fetched(table, server, uid)
    assert server.messages() == {}  # moved out of INBOX ...
    assert [header for _, header in server.messages("Judged").values()] == [b"Message-ID: <seed1.ani@example.org>"]


# ---------------------------------------------------------------------- pbem mail run


class Run:
    """``pbem mail run ...`` as a process, its output in a file."""

    def __init__(self, args: list[str], out: Path, env: dict):
        self.out = out
        full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
        for name in ("PBEM_CRASH_AT", "PBEM_INTERRUPT_AT", "PBEM_TEST_CLOCK_FILE", "PBEM_MAIL_CONFIG"):
            full.pop(name, None)
        with open(out, "wb") as handle:
            self.process = subprocess.Popen([sys.executable, "-m", "pbem.cli.app", *args], env=full,
                                            stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, pattern: str) -> None:
        """Until the output has a line matching ``pattern`` (polled; STUCK_AFTER is a guard
        against a hang, not a limit on speed)."""
        started = time.monotonic()
        while not re.search(pattern, self.text(), re.M):
            assert self.process.poll() is None, f"pbem mail run ended ({self.process.returncode}):\n{self.text()}"
            assert time.monotonic() - started < STUCK_AFTER, f"no line {pattern!r} yet:\n{self.text()}"
            time.sleep(0.01)  # polling the output, not waiting for a time

    def stop(self) -> None:
        """SIGTERM, as systemd stops it: exit status 0 and a last line saying so."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=STUCK_AFTER) == 0, self.text()
        assert "run: stopped on SIGTERM" in self.text().splitlines()[-1], self.text()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def runs():
    """``runs(args, out, env)``: a started ``Run``, killed at the end of the test whatever happened."""
    started: list[Run] = []

    def start(*args) -> Run:
        started.append(Run(*args))
        return started[-1]
    yield start
    for run in started:
        run.kill()


def no_hold(cli, db: Path | None = None) -> None:
    """Answers at once (the page's ``pbem mail settings g1 --hold-answers 0``): the first pass
    then sends the answer to the mail it took, as the test waits for."""
    doc_command("mail settings g1 --hold-answers 0")
    cli("mail", "settings", "g1", "--hold-answers", "0", *(["--db", db] if db else []))


FIRST_PASS = r"send: sent #\d+ g1 answer to ani@example\.org"


def answered_ani(smtp, table) -> None:
    """The first pass did it all: ani's mail applied, and her answer, with the welcomes, sent
    over STARTTLS with the judge's login."""
    assert table.seeds() == ["ani-1"]
    assert subjects(smtp) == the_outbox(table) and ("ani@example.org", "Re: [g1] my seed") in subjects(smtp)
    assert {(sender, tls, login) for sender, _, tls, login in arrived(smtp)} == {(JUDGE, True, JUDGE)}
    assert table.query("select distinct state from outbox") == [("sent",)]


def test_mail_run_with_the_settings_file(dovecot, smtp_server, test_ca, table, cli, tmp_path, runs):
    """``pbem mail run``: settings in ~/.config/pbem/mail.toml (the page's sending and
    fetching blocks, one file, as the page says: "the same file as for sending"); a pass
    every minute, stopped once the first one is done."""
    server = dovecot(tls=test_ca)
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    default_config({**smtp_settings(smtp, test_ca), **imap_settings(server, test_ca)})
    no_hold(cli)
    uid = server.append(table.mail("ani"))
    run = runs(doc_command("mail run"),  # unchanged
               tmp_path / "run.out", {"PBEM_SMTP_PASSWORD": SMTP_PASSWORD, "PBEM_IMAP_PASSWORD": server.password})
    run.wait_for(FIRST_PASS)
    run.stop()
    assert "a pass every 1m" in run.text() and f"uid {uid}: seed1.ani@example.org (g1, ani): applied" in run.text()
    answered_ani(smtp, table)
    assert [flags for flags, _ in server.messages().values()] == [{SEEN}]


def test_mail_run_as_the_systemd_unit(dovecot, smtp_server, test_ca, cli, tmp_path, runs, monkeypatch):
    """``pbem mail run --every 5m --config /etc/pbem/mail.toml --db /srv/pbem/pbem.db``, with
    the page's minimal /etc/pbem/mail.toml and the passwords in the environment (judge.env)."""
    server = dovecot(tls=test_ca)
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    values = doc_toml('judge_address = "judge@example.org"')  # the systemd section's file (no title line)
    assert (values["smtp_host"], values["imap_host"]) == ("smtp.example.org", "imap.example.org")
    # changed: /etc/pbem/mail.toml -> a file in the test's folder; smtp.example.org (STARTTLS,
    # 587) and imap.example.org (IMAPS, 993) -> 127.0.0.1 and the servers' ports; ca_file added
    config = write_toml(tmp_path / "etc" / "pbem" / "mail.toml", {
        **values, "smtp_host": "127.0.0.1", "smtp_port": smtp.port, "imap_host": "127.0.0.1",
        "imap_port": server.tls_port, "ca_file": str(test_ca.cert)})
    # changed: /srv/pbem/pbem.db -> a database in the test's folder, which the game is made in
    db = tmp_path / "srv" / "pbem" / "pbem.db"
    db.parent.mkdir(parents=True)
    monkeypatch.setenv("PBEM_DB", str(db))
    table = _imap.Table(cli, db)  # the game of the other tests, made in that database
    monkeypatch.delenv("PBEM_DB")  # the run finds the database by --db alone
    no_hold(cli, db)
    uid = server.append(table.mail("ani"))
    args = doc_command("mail run --every 5m --config /etc/pbem/mail.toml --db /srv/pbem/pbem.db")
    args[args.index("/etc/pbem/mail.toml")] = str(config)
    args[args.index("/srv/pbem/pbem.db")] = str(db)
    run = runs(args, tmp_path / "run.out", {"PBEM_SMTP_PASSWORD": SMTP_PASSWORD, "PBEM_IMAP_PASSWORD": server.password})
    run.wait_for(FIRST_PASS)
    run.stop()  # five minutes before its next pass: SIGTERM ends the wait at once
    assert f"on {db}: a pass every 5m" in run.text()
    assert f"uid {uid}: seed1.ani@example.org (g1, ani): applied" in run.text()
    answered_ani(smtp, table)
    assert [flags for flags, _ in server.messages().values()] == [{SEEN}]


def test_mail_run_with_a_maildir(smtp_server, test_ca, table, cli, tmp_path, runs):
    """``pbem mail run --maildir ~/Maildir``: mail fetched by getmail into a Maildir, sent by
    the settings of ~/.config/pbem/mail.toml (the page's sending block: no IMAP)."""
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    default_config(smtp_settings(smtp, test_ca))
    no_hold(cli)
    maildir = tmp_path / "Maildir"  # changed: ~/Maildir -> a Maildir in the test's folder
    for name in ("new", "cur", "tmp"):
        (maildir / name).mkdir(parents=True)
    (maildir / "new" / "1700000000.1.getmail").write_bytes(table.mail("ani"))
    args = doc_command("mail run --maildir ~/Maildir")
    args[args.index("~/Maildir")] = str(maildir)
    run = runs(args, tmp_path / "run.out", {"PBEM_SMTP_PASSWORD": SMTP_PASSWORD})
    run.wait_for(FIRST_PASS)
    run.stop()
    assert f"reading the Maildir {maildir}" in run.text()
    answered_ani(smtp, table)
    assert os.listdir(maildir / "new") == [] and len(os.listdir(maildir / "cur")) == 1  # read, moved to cur/


def test_mail_run_once(dovecot, smtp_server, test_ca, table, cli):
    """``pbem mail run --once``: one pass and exit 0 (settings in ~/.config/pbem/mail.toml)."""
    server = dovecot(tls=test_ca)
    smtp = smtp_with_starttls_and_login(smtp_server, test_ca)
    default_config({**smtp_settings(smtp, test_ca), **imap_settings(server, test_ca)})
    no_hold(cli)
    uid = server.append(table.mail("ani"))
    args = doc_command("mail run --once")  # unchanged
    out = cli(*args, env={"PBEM_SMTP_PASSWORD": SMTP_PASSWORD,
                                         "PBEM_IMAP_PASSWORD": server.password}).stdout
    assert "one pass" in out and f"uid {uid}: seed1.ani@example.org (g1, ani): applied" in out
    assert re.search(FIRST_PASS, out), out
    answered_ani(smtp, table)
    assert [flags for flags, _ in server.messages().values()] == [{SEEN}]
