"""Fixtures for the email judge: a database with a game whose players have addresses,
and a way to write messages as mail clients do (with the ``email`` package)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import secrets
from email.message import EmailMessage
from email.policy import EmailPolicy
from types import SimpleNamespace

import pytest

from pbem.mail import ingest as pipeline
from pbem.mail import addresses
from pbem.protocol import commands, loading
from pbem.store import Store

PLAYERS = ("ani", "alex", "frank", "lothar")
T0 = "2030-01-01T10:00:00Z"
_ids = itertools.count(1)


def at(minutes: int) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def mail(sender: str, body: str, subject: str = "[g1] move", message_id: str | None = "auto",
         headers: dict | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "judge@example.org"
    msg["Subject"] = subject
    if message_id == "auto":
        message_id = f"<m{next(_ids)}@players.example.org>"
    if message_id:
        msg["Message-ID"] = message_id
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content(body)
    return msg.as_bytes()


class Judge:
    """A game g1 with four players who have addresses; passwords captured from the welcome mail."""

    def __init__(self, path, start: bool = True, signed_keys: dict | None = None, at: str = T0, **settings):
        self.store = Store(path)
        settings["start"] = start
        if signed_keys:
            settings.update(require_signatures=True, keys=signed_keys)
        addresses.create_game(self.store, "g1", "tortuga", list(PLAYERS), {},
                              {p: f"{p}@example.org" for p in PLAYERS}, "table@lists.example.org", at=at, **settings)
        self.passwords = {}
        for row in self.outbox():
            found = re.search(r"Your mail password for this game: (\S+)", row["body_text"])
            if found:
                self.passwords[row["recipient"].split("@")[0]] = found.group(1)
        self.minute = 1

    def outbox(self, kind: str | None = None, rendered: bool = True) -> list[dict]:
        """The outbox's rows; ``rendered``: first render the rows that wait to be rendered
        (public summaries, private messages), as ``pbem mail send`` does before it sends."""
        if rendered:
            from pbem.mail.send import render_pending
            render_pending(self.store)
        cur = self.store.conn.execute("select * from outbox order by id")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
        return [r for r in rows if kind is None or r["kind"] == kind]

    def send(self, player_or_address: str, body: str, **kw):
        sender = player_or_address if "@" in player_or_address else f"{player_or_address}@example.org"
        self.minute += 1
        return pipeline.ingest(self.store, mail(sender, body, **kw), at(self.minute), ("judge@example.org",))

    def session(self):
        return loading.load(self.store, "g1")

    def log(self) -> list:
        return [e.export_dict() for e in self.store.events("g1")]

    def frozen(self):
        """Everything a refused message must leave as it was (but the seen-record)."""
        return (json.dumps(self.log()), json.dumps(self.outbox(rendered=False)))


class FixedSeed:
    """``secrets`` as pbem.protocol.commands sees it: the 32 bytes of a new game's server
    seed come from a name, everything else stays random. The server seed decides the dice
    (there are no client seeds here), so a fixed seed makes every run the same game."""

    def __init__(self, name: str):
        self.seed = hashlib.sha256(f"test_game_by_mail {name}".encode()).digest()

    def token_bytes(self, n: int) -> bytes:
        assert n == len(self.seed), n
        return self.seed

    def __getattr__(self, name):
        return getattr(secrets, name)


@pytest.fixture
def fixed_seed(monkeypatch):
    """``fixed_seed(name)``: the games created after it get the server seed named ``name``."""
    from pbem.protocol import commands as protocol_commands

    def fix(name: str) -> None:
        monkeypatch.setattr(protocol_commands, "secrets", FixedSeed(name))
    return fix


@pytest.fixture
def game(tmp_path):
    return Judge(tmp_path / "judge.db")


@pytest.fixture
def make_judge(tmp_path):
    def make(**kw):
        return Judge(tmp_path / f"judge{next(_ids)}.db", **kw)
    return make


@pytest.fixture
def helpers():
    return SimpleNamespace(mail=mail, at=at, PLAYERS=PLAYERS)


# ---------------------------------------------------------------------- a real SMTP server

class ReadOnce(EmailPolicy):
    """``email.policy.default``, but each header value is parsed once: the parser and every
    ``get_content_type()`` read the same Content-Type again and again, and ``default`` parses
    it anew each time (the most of the parse of the judge's mail). A header object is a pure
    function of (name, value) and nobody changes one in place, so a message reads exactly
    as under ``default``; tests/judge/test_mailroom.py holds them side by side."""

    def __init__(self, **kw):
        super().__init__(**kw)
        object.__setattr__(self, "_parsed", {})

    def __repr__(self):  # without the parsed headers kept
        return "ReadOnce()"

    def header_fetch_parse(self, name, value):
        if hasattr(value, "name"):
            return value
        key = (name, value)
        header = self._parsed.get(key)
        if header is None:
            if len(self._parsed) >= 20000:
                self._parsed.clear()
            header = self._parsed[key] = super().header_fetch_parse(name, value)
        return header


class Mailroom:
    """An aiosmtpd handler that keeps every message it accepts, parsed (as ``policy.default``
    reads it, see ``ReadOnce``), with its envelope: what each recipient's mail program would
    have received."""

    def __init__(self):
        self.received: list[SimpleNamespace] = []
        self.boxes: dict[str, list] = {}
        self.policy = ReadOnce()

    async def handle_DATA(self, server, session, envelope):
        import email
        content = envelope.content.replace(b"\r\n", b"\n")  # as a Unix mailbox keeps it
        message = email.message_from_bytes(content, policy=self.policy)
        rcpt_tos = [a.lower() for a in envelope.rcpt_tos]
        self.received.append(SimpleNamespace(rcpt_tos=rcpt_tos, raw=content, message=message))
        for address in rcpt_tos:
            self.boxes.setdefault(address, []).append(message)
        return "250 Message accepted for delivery"

    def inbox(self, address: str) -> list:
        """The messages delivered to ``address``, in the order they arrived."""
        return self.boxes.get(address.lower(), [])


def smtp_server(handler):
    """A real SMTP server on 127.0.0.1 with the aiosmtpd ``handler``, on a free port bound
    here (no race for it), started; the caller stops it."""
    import socket

    from aiosmtpd.controller import Controller

    class Bound(Controller):
        def __init__(self, handler):
            # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
            # proto says TCP, and with Nagle on every multi-line reply (EHLO) waits 40 ms
            # for the client's delayed ACK
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            self._listener.bind(("127.0.0.1", 0))
            super().__init__(handler, hostname="127.0.0.1", port=self._listener.getsockname()[1])

        def _create_server(self):
            return self.loop.create_server(self._factory_invoker, sock=self._listener)

    controller = Bound(handler)
    controller.start()
    return controller


@pytest.fixture
def smtp_servers():
    """``start(handler)``: a real SMTP server (``smtp_server``); all stopped at the end of the test."""
    started = []

    def start(handler):
        started.append(smtp_server(handler))
        return started[-1]
    yield start
    for controller in started:
        controller.stop()


@pytest.fixture
def smtp_mailroom(smtp_servers):
    """A real SMTP server on 127.0.0.1; yields (port, Mailroom). Stopped at the end of the test."""
    room = Mailroom()
    yield smtp_servers(room).port, room
