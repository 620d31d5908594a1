"""Fixtures for 'pbem mail fetch': a real Dovecot IMAP server on 127.0.0.1, started from a
throwaway configuration in the test's own folder, with one user and a Maildir.

``./dev test`` installs Dovecot (Debian's dovecot-imapd) when it is missing. Without it the
tests fail when CI=true, and are skipped (with the reason) on a developer's machine.
Nothing here leaves 127.0.0.1, and nothing sleeps to wait for time: starting the server
polls its port in a bounded loop.
"""

from __future__ import annotations

import datetime
import imaplib
import json
import os
import grp
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

REPO_ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD = "judge@example.org", "imap-secret-1"
START_TIMEOUT = 120.0  # seconds for Dovecot to answer on its port (generous: a loaded machine)


@pytest.fixture(autouse=True)
def private_environment(tmp_path, monkeypatch) -> Path:
    """Each test gets its own database, and no mail settings of the user running the tests."""
    path = tmp_path / "pbem.db"
    monkeypatch.setenv("PBEM_DB", str(path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("PBEM_MAIL_CONFIG", "PBEM_SMTP_PASSWORD", "PBEM_IMAP_PASSWORD", "PBEM_CRASH_AT"):
        monkeypatch.delenv(name, raising=False)
    return path


def _unavailable(reason: str):
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"Dovecot is needed for the IMAP tests and {reason}; ./dev test installs it "
                    "(apt-get install dovecot-imapd)", pytrace=False)
    pytest.skip(f"Dovecot {reason} (./dev test installs it: apt-get install dovecot-imapd)")


def dovecot_binary() -> str:
    found = shutil.which("dovecot") or next(
        (p for p in ("/usr/sbin/dovecot", "/usr/local/sbin/dovecot") if os.access(p, os.X_OK)), None)
    if not found:
        _unavailable("is not installed")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory) -> SimpleNamespace:
    """A self-signed certificate for 127.0.0.1 and localhost (its own CA): ``cert``, ``key``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("imap-tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pbem test IMAP server")])
    # Valid around the real moment only because TLS checks it against the clock; nothing a
    # test asserts depends on the date.
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return SimpleNamespace(cert=cert_path, key=key_path)


class Dovecot:
    """One Dovecot process with its own configuration under ``root``: IMAP on ``port``
    (STARTTLS offered when ``tls``), IMAPS on ``tls_port`` when ``tls``; user USER."""

    def __init__(self, root: Path, tls=None):
        self.root, self.tls = root, tls
        self.host, self.user, self.password = "127.0.0.1", USER, PASSWORD
        self.port = free_port()
        self.tls_port = free_port() if tls else None
        self.log = root / "dovecot.log"
        self.process: subprocess.Popen | None = None
        self.config = self._write_config()

    def _write_config(self) -> Path:
        root = self.root
        for name in ("run", "state", "mail"):
            (root / name).mkdir(parents=True, exist_ok=True)
        (root / "users").write_text(f"{self.user}:{{PLAIN}}{self.password}\n")
        if os.getuid() == 0:
            # Dovecot runs no login process as root and gives no mailbox to uid 0: as root,
            # the packaged unprivileged users serve, and they must reach the test's folder.
            mail_user, login_user = "dovecot", "dovenull"
            try:
                owner = pwd.getpwnam(mail_user)
                pwd.getpwnam(login_user)
            except KeyError:
                _unavailable(f"has no {mail_user}/{login_user} users (install the dovecot-core package)")
            uid, gid, internal_group = owner.pw_uid, owner.pw_gid, grp.getgrgid(owner.pw_gid).gr_name
            # Only the server's own folder is opened (search, not read), never one above it:
            # it lives outside pytest's folders (see the dovecot fixture).
            root.chmod(root.stat().st_mode | 0o001)
            os.chown(root / "mail", uid, gid)
            auth_user = "service auth {\n  user = root\n}\n"
        else:
            mail_user = login_user = pwd.getpwuid(os.getuid()).pw_name
            uid, gid, internal_group = os.getuid(), os.getgid(), grp.getgrgid(os.getgid()).gr_name
            auth_user = ""
        if self.tls:
            ssl = (f"ssl = yes\nssl_cert = <{self.tls.cert}\nssl_key = <{self.tls.key}\n")
            imaps = f"  inet_listener imaps {{\n    address = 127.0.0.1\n    port = {self.tls_port}\n  }}\n"
        else:
            ssl = "ssl = no\n"
            imaps = "  inet_listener imaps {\n    port = 0\n  }\n"
        text = f"""# A throwaway Dovecot for the pbem tests: 127.0.0.1 only, one user, a Maildir.
instance_name = pbem-test-{self.port}
base_dir = {root}/run
state_dir = {root}/state
log_path = {self.log}
protocols = imap
listen = 127.0.0.1
{ssl}disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = {mail_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = 1
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {root}/users
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
{imaps}}}
service anvil {{
  chroot =
  # no growing delay after wrong passwords: the tests refuse logins on purpose
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
{auth_user}"""
        config = root / "dovecot.conf"
        config.write_text(text)
        return config

    def start(self) -> Dovecot:
        binary = dovecot_binary()
        # A session of its own: Dovecot's children share its process group, so the end of
        # the test can stop them all at once (see stop).
        self.process = subprocess.Popen([binary, "-F", "-c", str(self.config)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                _unavailable(f"did not start (exit {self.process.returncode}): {self._why()}")
            if self._greets():
                return self
            if time.monotonic() > deadline:
                self.stop()
                _unavailable(f"did not answer on 127.0.0.1:{self.port} within {START_TIMEOUT:.0f}s: {self._why()}")
            time.sleep(0.02)  # polling for readiness, not waiting for a time

    def _greets(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=2) as sock:
                return sock.recv(64).startswith(b"* OK")
        except OSError:
            return False

    def _why(self) -> str:
        out = self.process.stdout.read().decode(errors="replace") if self.process and self.process.poll() is not None else ""
        log = self.log.read_text(errors="replace") if self.log.exists() else ""
        return " ".join((out + " " + log).split())[-1500:] or "no output"

    def stop(self, gracefully: bool = True) -> None:
        """Stop the server: by SIGTERM, which Dovecot takes a second or so to obey, or (at
        the end of a test, when nothing is left to tidy) by SIGKILL to its whole group."""
        if self.process is None:
            return
        if self.process.poll() is None:
            if gracefully:
                self.process.terminate()
                try:
                    self.process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    gracefully = False
            if not gracefully:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()

    # -- the test's own mail client ----------------------------------------------------------

    def client(self) -> imaplib.IMAP4:
        imap = imaplib.IMAP4(self.host, self.port, timeout=120)
        imap.login(self.user, self.password)
        return imap

    def append(self, raw: bytes, folder: str = "INBOX", flags: str = "") -> int:
        """Deliver ``raw`` into ``folder``; returns its UID."""
        imap = self.client()
        try:
            typ, data = imap.append(f'"{folder}"', f"({flags})" if flags else None, None, raw)
            assert typ == "OK", data
            return int(re.search(rb"APPENDUID \d+ (\d+)", data[0]).group(1))
        finally:
            imap.logout()

    def command(self, *args):
        imap = self.client()
        try:
            typ, data = getattr(imap, args[0])(*args[1:])
            assert typ == "OK", data
            return data
        finally:
            imap.logout()

    def messages(self, folder: str = "INBOX") -> dict[int, tuple[set, bytes]]:
        """{uid: (flags, Message-ID header line)} of the folder, read without changing flags."""
        imap = self.client()
        try:
            typ, _ = imap.select(f'"{folder}"', readonly=True)
            assert typ == "OK", folder
            typ, data = imap.uid("FETCH", "1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            found = {}
            for item in data:
                if isinstance(item, tuple):
                    uid = int(re.search(rb"UID (\d+)", item[0]).group(1))
                    flags = set(re.search(rb"FLAGS \(([^)]*)\)", item[0]).group(1).decode().split())
                    flags.discard("\\Recent")  # says which session saw it first, not what pbem did
                    found[uid] = (flags, item[1].strip())
            return found
        finally:
            imap.logout()

    def uidvalidity(self, folder: str = "INBOX") -> int:
        data = self.command("status", f'"{folder}"', "(UIDVALIDITY)")
        return int(re.search(rb"UIDVALIDITY (\d+)", data[0]).group(1))


@pytest.fixture
def dovecot(tmp_path):
    """``dovecot(tls=None)``: a running Dovecot (``tls=test_ca`` for TLS and STARTTLS),
    stopped at the end of the test."""
    started: list[Dovecot] = []

    def start(tls=None) -> Dovecot:
        if os.getuid() == 0:
            # As root, Dovecot serves as its own unprivileged users, who must reach the mail
            # folder. pytest keeps its root folder (/tmp/pytest-of-root) at mode 0700 and sets
            # it back whenever another pytest session starts, so the server's folder is made
            # outside it, in the system's temporary folder, and removed at the end.
            root = Path(tempfile.mkdtemp(prefix="pbem-dovecot-"))
        else:
            root = tmp_path / f"dovecot{len(started)}"
        server = Dovecot(root, tls)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop(gracefully=False)
        if os.getuid() == 0:
            shutil.rmtree(server.root, ignore_errors=True)


# -- a game whose players write to the judge ----------------------------------------------------


class Cli:
    """``cli("mail", "fetch", ...)``: the command line in-process; returns click's Result."""

    def __init__(self):
        from pbem.cli.program import app
        self.app, self.runner = app, CliRunner()

    def __call__(self, *args, env: dict | None = None, code: int | None = 0):
        result = self.runner.invoke(self.app, [str(a) for a in args], env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"pbem {' '.join(map(str, args))} crashed: {result.exception!r}") from result.exception
        if code is not None:
            assert result.exit_code == code, (args, result.stdout, result.stderr)
        return result


@pytest.fixture
def cli() -> Cli:
    return Cli()


class Table:
    """Game g1 (not started: players may send client seeds) with ani and alex at
    example.org, their mail passwords, and ways to write their mail and read the database."""

    def __init__(self, cli: Cli, db: Path):
        self.cli, self.db = cli, db
        cli("new", "g1", "--players", "ani=ani@example.org,alex=alex@example.org")
        self.passwords = {}
        for recipient, body in self.query("select recipient, body_text from outbox"):
            found = re.search(r"Your mail password for this game: (\S+)", body)
            if found:
                self.passwords[recipient.split("@")[0]] = found.group(1)
        assert set(self.passwords) == {"ani", "alex"}
        self.sent = 0

    def mail(self, player: str, body: str | None = None, message_id: str | None = None) -> bytes:
        """A message from ``player``; by default a client seed (one event when applied).
        ``message_id=""`` leaves the Message-ID out (ingest then knows it by its bytes)."""
        self.sent += 1
        msg = EmailMessage()
        msg["From"] = f"{player}@example.org"
        msg["To"] = USER
        msg["Subject"] = "[g1] my seed"
        if message_id != "":
            msg["Message-ID"] = message_id or f"<seed{self.sent}.{player}@example.org>"
        msg.set_content(body if body is not None else
                        f"password {self.passwords[player]}\nclient-seed {player}-{self.sent}\n")
        return msg.as_bytes()

    def query(self, sql: str, params=()) -> list[tuple]:
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def execute(self, sql: str, params=()) -> None:
        conn = sqlite3.connect(self.db)
        try:
            with conn:
                conn.execute(sql, params)
        finally:
            conn.close()

    def seeds(self) -> list[str]:
        """The client seeds in the log, in order: each applied message adds one."""
        rows = self.query("select body from events where game = 'g1' and kind = 'client_seed' order by seq")
        return [json.loads(body)["data"]["seed"] for (body,) in rows]

    def answers(self) -> list[str]:
        """The Message-IDs of the mails answered, sorted: an answer alone, or one that only
        confirms and travels inside a later message (References names every mail it answers;
        these mails carry no References of their own); "" for an answer to a mail without one."""
        rows = self.query("select refs from outbox where kind = 'answer' order by id")
        return sorted(ref for (refs,) in rows for ref in (refs.split() or [""]))

    def dump(self) -> list[str]:
        """The whole database as SQL: what a refused fetch must leave exactly as it was."""
        conn = sqlite3.connect(self.db)
        try:
            return list(conn.iterdump())
        finally:
            conn.close()


@pytest.fixture
def table(cli, private_environment) -> Table:
    return Table(cli, private_environment)


def run_pbem(db: Path, *args: str, env: dict | None = None, crash_at: str | None = None):
    """'pbem ARGS' as a separate process (so a crash point can kill it)."""
    full = {**os.environ, "PBEM_DB": str(db), "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    full.pop("PBEM_CRASH_AT", None)
    if crash_at:
        full["PBEM_CRASH_AT"] = crash_at
    return subprocess.run([sys.executable, "-m", "pbem.cli.app", *args], env=full,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def pbem_process():
    return run_pbem
