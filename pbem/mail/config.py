"""Mail settings: the judge's address, the SMTP server (mail out) and the IMAP server
(mail in), from a TOML file and the environment.

Passwords never come from the command line (other users can read it in the process list,
and it stays in the shell's history). Each comes from an environment variable
(``PBEM_SMTP_PASSWORD`` and ``PBEM_IMAP_PASSWORD``, or the ones the file names with
``password_env`` and ``imap_password_env``), or from the config file itself when only its
owner can read it (``chmod 600``).

The file, by default ``$PBEM_MAIL_CONFIG``, else ``$XDG_CONFIG_HOME/pbem/mail.toml``
(``~/.config/pbem/mail.toml``)::

    judge_address = "judge@example.org"
    smtp_host = "smtp.example.org"
    smtp_port = 587               # default: 587 for starttls, 465 for tls, 25 for plain
    security = "starttls"         # or "tls" (SMTPS) or "plain" (a relay on this machine)
    smtp_user = "judge@example.org"
    password_env = "PBEM_SMTP_PASSWORD"
    imap_host = "imap.example.org"
    imap_port = 993               # default: 993 for tls, 143 for starttls and plain
    imap_security = "tls"         # or "starttls" or "plain" (a server on this machine)
    imap_user = "judge@example.org"
    imap_password_env = "PBEM_IMAP_PASSWORD"
    imap_folder = "INBOX"         # where players' mail arrives
    imap_done_folder = "Judged"   # move each message here once ingested (default: flag it \\Seen)
    replica_barrier = true        # send nothing before Litestream's replica holds it (docs/hosting.md)
    litestream = "litestream"     # the program (a name on PATH, or a path)
    litestream_socket = "/var/run/litestream.sock"   # its control socket (socket.path in litestream.yml)
    replica_timeout = 30          # seconds one barrier waits for the replica before mail waits a pass
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

SECURITIES = ("starttls", "tls", "plain")
DEFAULT_PORTS = {"starttls": 587, "tls": 465, "plain": 25}
PASSWORD_ENV = "PBEM_SMTP_PASSWORD"
IMAP_PORTS = {"tls": 993, "starttls": 143, "plain": 143}
IMAP_PASSWORD_ENV = "PBEM_IMAP_PASSWORD"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
KEYS = ("judge_address", "smtp_host", "smtp_port", "security", "smtp_user", "smtp_password",
        "password_env", "timeout", "ca_file", "imap_host", "imap_port", "imap_security", "imap_user",
        "imap_password", "imap_password_env", "imap_folder", "imap_done_folder", "replica_barrier", "litestream",
        "litestream_socket", "replica_timeout")
LITESTREAM_SOCKET = "/var/run/litestream.sock"  # Litestream's own default
PASSWORD_KEYS = ("smtp_password", "imap_password")


class MailConfigError(ValueError):
    """The mail settings are missing, malformed or unsafe; the message says how to fix them."""


@dataclass(frozen=True)
class MailConfig:
    """Where and how the judge sends and fetches mail. Passwords are left out of ``repr``."""

    judge_address: str | None = None
    smtp_host: str | None = None
    smtp_port: int | None = None  # None: the usual port of ``security``
    security: str = "starttls"
    smtp_user: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    password_env: str = PASSWORD_ENV  # the environment variable the password was looked for in
    timeout: float = 60.0  # seconds for each step of the SMTP conversation
    ca_file: Path | None = None  # trust this CA bundle instead of the system's
    imap_host: str | None = None
    imap_port: int | None = None  # None: the usual port of ``imap_security``
    imap_security: str = "tls"
    imap_user: str | None = None
    imap_password: str | None = field(default=None, repr=False)
    imap_password_env: str = IMAP_PASSWORD_ENV
    imap_folder: str = "INBOX"
    imap_done_folder: str | None = None  # None: flag each fetched message \Seen instead of moving it
    replica_barrier: bool = False  # True: no mail goes out before the replica holds it (pbem.mail.replica)
    litestream: str = "litestream"
    litestream_socket: str = LITESTREAM_SOCKET
    replica_timeout: float = 30.0
    source: Path | None = None  # the file the settings came from, for messages

    @property
    def port(self) -> int:
        return self.smtp_port or DEFAULT_PORTS[self.security]

    @property
    def server(self) -> str:
        return _server(self.smtp_host, self.port)

    @property
    def imap_port_or_default(self) -> int:
        return self.imap_port or IMAP_PORTS[self.imap_security]

    @property
    def imap_server(self) -> str:
        return _server(self.imap_host, self.imap_port_or_default)


def _server(host: str | None, port: int) -> str:
    return f"[{host}]:{port}" if host and ":" in host else f"{host}:{port}"


def default_config_path(env: Mapping[str, str]) -> Path:
    if env.get("PBEM_MAIL_CONFIG"):
        return Path(env["PBEM_MAIL_CONFIG"])
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".config")
    return Path(base) / "pbem" / "mail.toml"


def load_config(path: Path | None, env: Mapping[str, str]) -> MailConfig:
    """The settings of ``path`` (else the default file, when it exists) and ``env``.

    A missing default file gives empty settings (the command line may supply them); a
    missing file that was named explicitly is an error.
    """
    import tomllib

    named = path is not None or bool(env.get("PBEM_MAIL_CONFIG"))
    path = Path(path) if path is not None else default_config_path(env)
    values: dict = {}
    if path.exists() or named:
        try:
            with open(path, "rb") as handle:
                values = tomllib.load(handle)
        except FileNotFoundError:
            raise MailConfigError(f"no mail config file at {path}; create it (see docs/email.md) "
                                  "or point --config / PBEM_MAIL_CONFIG at yours") from None
        except tomllib.TOMLDecodeError as exc:
            raise MailConfigError(f"{path} is not valid TOML ({exc})") from None
        except OSError as exc:
            raise MailConfigError(f"cannot read the mail config {path}: {exc.strerror}") from None
    unknown = sorted(set(values) - set(KEYS))
    if unknown:
        raise MailConfigError(f"{path}: unknown setting {unknown[0]!r}; known: {', '.join(KEYS)}")
    if any(key in values for key in PASSWORD_KEYS) and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise MailConfigError(f"{path} holds a password but other users may read it; "
                              f"run: chmod 600 {path}")
    password_env = _text(values, "password_env", path) or PASSWORD_ENV
    password = env.get(password_env) or _text(values, "smtp_password", path)
    imap_password_env = _text(values, "imap_password_env", path) or IMAP_PASSWORD_ENV
    imap_password = env.get(imap_password_env) or _text(values, "imap_password", path)
    port = _port(values, "smtp_port", 587, path)
    timeout = values.get("timeout", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise MailConfigError(f"{path}: timeout must be a number of seconds such as 60, got {timeout!r}")
    ca_file = _text(values, "ca_file", path)
    barrier = values.get("replica_barrier", False)
    if not isinstance(barrier, bool):
        raise MailConfigError(f"{path}: replica_barrier must be true or false, got {barrier!r}")
    replica_timeout = values.get("replica_timeout", 30.0)
    if isinstance(replica_timeout, bool) or not isinstance(replica_timeout, (int, float)) or replica_timeout <= 0:
        raise MailConfigError(f"{path}: replica_timeout must be a number of seconds such as 30, "
                              f"got {replica_timeout!r}")
    socket = _text(values, "litestream_socket", path)
    config = MailConfig(
        judge_address=_text(values, "judge_address", path),
        smtp_host=_text(values, "smtp_host", path),
        smtp_port=port,
        security=_text(values, "security", path) or "starttls",
        smtp_user=_text(values, "smtp_user", path),
        smtp_password=password,
        password_env=password_env,
        timeout=float(timeout),
        ca_file=(path.parent / Path(ca_file).expanduser()) if ca_file else None,
        imap_host=_text(values, "imap_host", path),
        imap_port=_port(values, "imap_port", 993, path),
        imap_security=_text(values, "imap_security", path) or "tls",
        imap_user=_text(values, "imap_user", path),
        imap_password=imap_password,
        imap_password_env=imap_password_env,
        imap_folder=_text(values, "imap_folder", path) or "INBOX",
        imap_done_folder=_text(values, "imap_done_folder", path),
        replica_barrier=barrier,
        litestream=_text(values, "litestream", path) or "litestream",
        litestream_socket=str(path.parent / Path(socket).expanduser()) if socket else LITESTREAM_SOCKET,
        replica_timeout=float(replica_timeout),
        source=path if values else None,
    )
    return check_config(config)


def _port(values: dict, key: str, example: int, path: Path) -> int | None:
    port = values.get(key)
    if port is not None and (not isinstance(port, int) or isinstance(port, bool)):
        raise MailConfigError(f"{path}: {key} must be a number such as {example}, got {port!r}")
    return port


def _text(values: dict, key: str, path: Path) -> str | None:
    value = values.get(key)
    if value is not None and not isinstance(value, str):
        raise MailConfigError(f"{path}: {key} must be a string in quotes, got {value!r}")
    return value or None


def with_overrides(config: MailConfig, *, smtp: str | None = None, security: str | None = None,
                   user: str | None = None, judge_address: str | None = None) -> MailConfig:
    """The settings with the command line's options put over the file's."""
    changes: dict = {}
    if smtp is not None:
        changes["smtp_host"], changes["smtp_port"] = parse_server(smtp)
    if security is not None:
        changes["security"] = security
    if user is not None:
        changes["smtp_user"] = user
    if judge_address is not None:
        changes["judge_address"] = judge_address
    return check_config(dataclasses.replace(config, **changes))


def with_imap_overrides(config: MailConfig, *, imap: str | None = None, security: str | None = None,
                        user: str | None = None, folder: str | None = None, move_to: str | None = None,
                        judge_address: str | None = None) -> MailConfig:
    """The IMAP settings with the command line's options put over the file's."""
    changes: dict = {}
    if imap is not None:
        changes["imap_host"], changes["imap_port"] = parse_server(imap)
    for key, value in (("imap_security", security), ("imap_user", user), ("imap_folder", folder),
                       ("imap_done_folder", move_to), ("judge_address", judge_address)):
        if value is not None:
            changes[key] = value
    return check_config(dataclasses.replace(config, **changes))


def parse_server(text: str) -> tuple[str, int | None]:
    """``HOST:PORT``, ``HOST`` or ``[IPv6]:PORT`` as (host, port or None)."""
    found = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d+))?|([A-Za-z0-9.-]+)(?::(\d+))?", text.strip())
    if not found:
        raise MailConfigError(f"{text!r} is not a server; give HOST:PORT such as smtp.example.org:587")
    host = found.group(1) or found.group(3)
    port = found.group(2) or found.group(4)
    if port is not None and not 0 < int(port) < 65536:
        raise MailConfigError(f"{text!r}: the port must be between 1 and 65535")
    return host, int(port) if port else None


def check_config(config: MailConfig) -> MailConfig:
    where = f" (in {config.source})" if config.source else ""
    if config.security not in SECURITIES:
        raise MailConfigError(f"security {config.security!r}{where} is not one of {', '.join(SECURITIES)}")
    if config.judge_address is not None:
        from pbem.store.outbox import check_address
        from pbem.store import StoreError
        try:
            check_address(config.judge_address, "judge_address")
        except StoreError as exc:
            raise MailConfigError(f"{exc}{where}") from None
    if config.smtp_port is not None and not 0 < config.smtp_port < 65536:
        raise MailConfigError(f"smtp_port {config.smtp_port}{where} must be between 1 and 65535")
    if config.imap_security not in SECURITIES:
        raise MailConfigError(f"imap_security {config.imap_security!r}{where} is not one of {', '.join(SECURITIES)}")
    if config.imap_port is not None and not 0 < config.imap_port < 65536:
        raise MailConfigError(f"imap_port {config.imap_port}{where} must be between 1 and 65535")
    for key in ("imap_folder", "imap_done_folder"):
        name = getattr(config, key)
        if name is not None and (not name.strip() or any(ord(c) < 32 or c == "\x7f" for c in name)):
            raise MailConfigError(f"{key} {name!r}{where} is not a folder name; give one such as INBOX or Judged")
    if config.imap_done_folder is not None and config.imap_done_folder == config.imap_folder:
        raise MailConfigError(f"the folder to move fetched mail to{where} is the folder it is fetched from "
                              f"({config.imap_folder}); name another folder, or leave it out to flag mail \\Seen")
    return config


def check_sendable(config: MailConfig) -> MailConfig:
    """Refuse settings that cannot send, or would send the password in the clear."""
    hint = f"set it in {config.source}" if config.source else "set it in the mail config file"
    if not config.smtp_host:
        raise MailConfigError(f"no SMTP server: give --smtp HOST:PORT or {hint} (smtp_host)")
    if not config.judge_address:
        raise MailConfigError(f"no judge address to send from: give --from ADDRESS or {hint} (judge_address)")
    if config.smtp_user and not config.smtp_password:
        raise MailConfigError(f"no password for SMTP user {config.smtp_user}: set the environment "
                              f"variable {config.password_env} (never a command-line argument)")
    if config.smtp_user and config.security == "plain" and config.smtp_host not in LOOPBACK:
        raise MailConfigError(f"security 'plain' would send the password for {config.smtp_user} "
                              f"unencrypted to {config.smtp_host}; use starttls or tls")
    return config


def check_fetchable(config: MailConfig) -> MailConfig:
    """Refuse settings that cannot fetch, or would send the IMAP password in the clear."""
    hint = f"set it in {config.source}" if config.source else "set it in the mail config file"
    if not config.imap_host:
        raise MailConfigError(f"no IMAP server: give --imap HOST[:PORT] or {hint} (imap_host)")
    if not config.imap_user:
        raise MailConfigError(f"no IMAP user: give --user NAME or {hint} (imap_user)")
    if not config.imap_password:
        raise MailConfigError(f"no password for IMAP user {config.imap_user}: set the environment "
                              f"variable {config.imap_password_env} (never a command-line argument)")
    if config.imap_security == "plain" and config.imap_host not in LOOPBACK:
        raise MailConfigError(f"security 'plain' would send the password for {config.imap_user} "
                              f"unencrypted to {config.imap_host}; use tls (port 993) or starttls (port 143)")
    return config
