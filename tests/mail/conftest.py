"""Fixtures for the mail tests: a real SMTP server (aiosmtpd) on 127.0.0.1 that records
what it receives and can misbehave on cue, a throwaway certificate for TLS, a store with
queued messages, and an in-process command line.

Nothing here leaves 127.0.0.1, and nothing sleeps: times are passed to the library.
"""

from __future__ import annotations

import asyncio
import datetime
import email
import socket
from email.policy import default as default_policy
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from typer.testing import CliRunner

from pbem.store import Store
from pbem.store import outbox

T0 = "2024-05-01T12:00:00Z"


@pytest.fixture(autouse=True)
def private_environment(tmp_path, monkeypatch) -> Path:
    """Each test gets its own database, and no mail settings of the user running the tests."""
    path = tmp_path / "pbem.db"
    monkeypatch.setenv("PBEM_DB", str(path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("PBEM_MAIL_CONFIG", "PBEM_SMTP_PASSWORD", "PBEM_CRASH_AT"):
        monkeypatch.delenv(name, raising=False)
    return path


class Recorder:
    """An aiosmtpd handler that keeps every accepted message, and can refuse or drop on cue.

    ``drop_at = n``: the n-th DATA closes the connection without an answer (the message is
    not accepted). ``drop_after_accepting = True`` records it first (accepted, but the "250"
    is lost). ``hang_at = n``: the n-th DATA never answers. ``refuse = {address: "550 ..."}``
    refuses that recipient.
    """

    def __init__(self):
        self.received: list[SimpleNamespace] = []
        self.data_count = 0
        self.drop_at: int | None = None
        self.drop_after_accepting = False
        self.hang_at: int | None = None
        self.refuse: dict[str, str] = {}
        self._never = None

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.data_count += 1
        if self.hang_at == self.data_count:
            self._never = asyncio.Event()
            await self._never.wait()  # cancelled when the server stops
        if self.drop_at == self.data_count:
            if self.drop_after_accepting:
                self._keep(server, session, envelope)
            server.transport.close()
            return "421 dropped"  # never reaches the client: the transport is closed
        self._keep(server, session, envelope)
        return "250 Message accepted for delivery"

    def _keep(self, server, session, envelope):
        self.received.append(SimpleNamespace(
            mail_from=envelope.mail_from, rcpt_tos=list(envelope.rcpt_tos),
            raw=envelope.content, tls=server.transport.get_extra_info("ssl_object") is not None,
            session=session,  # one per connection: kept here, so distinct sessions are distinct objects
            login=session.auth_data if session.authenticated else None,
            # stored as a Unix mailbox would: lines end in LF
            message=email.message_from_bytes(envelope.content.replace(b"\r\n", b"\n"), policy=default_policy)))

    def message_ids(self) -> list[str]:
        return [r.message["Message-ID"] for r in self.received]


class _BoundController(Controller):
    """A Controller listening on a socket bound here to a free port (no race for the port)."""

    def __init__(self, handler, **kwargs):
        # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto
        # says TCP, and with Nagle on every multi-line reply (EHLO) waits 40 ms for the
        # client's delayed ACK
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._listener.bind(("127.0.0.1", 0))
        super().__init__(handler, hostname="127.0.0.1", port=self._listener.getsockname()[1], **kwargs)

    def _create_server(self):
        return self.loop.create_server(self._factory_invoker, sock=self._listener, ssl=self.ssl_context)


@pytest.fixture
def smtp_server():
    """``smtp_server(**aiosmtpd_options)``: a running SMTP server on 127.0.0.1; its
    ``.handler`` is a Recorder and ``.port`` its port. Stopped at the end of the test."""
    started = []

    def start(**options) -> Controller:
        controller = _BoundController(Recorder(), **options)
        controller.start()
        started.append(controller)
        return controller

    yield start
    for controller in started:
        controller.stop()


def password_checker(user: str, password: str):
    """An aiosmtpd authenticator that accepts exactly one user and password."""

    def check(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user
              and auth_data.password.decode() == password)
        return AuthResult(success=ok, handled=False, auth_data=user if ok else None)

    return check


@pytest.fixture
def auth_checker():
    return password_checker


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> SimpleNamespace:
    """A throwaway self-signed certificate for 127.0.0.1 and localhost: ``cert`` and ``key``
    paths, ``server_context()`` for aiosmtpd. Clients trust it only when told to (ca_file)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pbem test server")])
    # Validity is fixed around the real moment only because TLS checks it against the
    # clock; nothing a test asserts depends on it.
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

    def server_context():
        import ssl
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_path, key_path)
        return context

    return SimpleNamespace(cert=cert_path, key=key_path, server_context=server_context)


@pytest.fixture
def store(private_environment):
    with Store(private_environment) as opened:
        yield opened


def queue_some(store, count: int, *, game: str = "g1", at: str = T0, kind: str = "private",
               start: int = 1) -> list[str]:
    """Queue ``count`` messages (to p1@example.org, p2@..., ...) in one transaction."""
    with store.transaction():
        return [outbox.queue(store, game=game, kind=kind, recipient=f"p{n}@example.org",
                             subject=f"[{game}] message {n}", text=f"Hello p{n}.\nThis is message {n}.\n",
                             at=at)
                for n in range(start, start + count)]


@pytest.fixture
def put():
    return queue_some


class Cli:
    """``cli("mail", "outbox")``: the command line in-process; returns click's Result."""

    def __init__(self):
        from pbem.cli.program import app
        self.app = app
        self.runner = CliRunner()

    def __call__(self, *args, env: dict | None = None):
        result = self.runner.invoke(self.app, [str(a) for a in args], env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"pbem {' '.join(map(str, args))} crashed: {result.exception!r}") from result.exception
        return result


@pytest.fixture
def cli() -> Cli:
    return Cli()
