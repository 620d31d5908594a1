"""The IMAP settings: keys in the mail config file, the password from the environment or a
private file (never an argument), plain text only to this machine; folder names on the wire."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.mail.config import (MailConfig, MailConfigError, check_fetchable, load_config,
                              with_imap_overrides)
from pbem.mail.fetch import account_name, quoted, unutf7

SAMPLE = """\
judge_address = "judge@example.org"
imap_host = "imap.example.org"
imap_user = "judge@example.org"
imap_password_env = "JUDGE_IMAP_PASSWORD"
imap_folder = "Players"
imap_done_folder = "Judged"
"""


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_imap_keys_with_the_password_from_the_named_variable(tmp_path):
    config = load_config(write(tmp_path / "mail.toml", SAMPLE),
                         {"JUDGE_IMAP_PASSWORD": "s3cret", "PBEM_IMAP_PASSWORD": "other"})
    assert (config.imap_host, config.imap_port_or_default, config.imap_security) == ("imap.example.org", 993, "tls")
    assert (config.imap_user, config.imap_password) == ("judge@example.org", "s3cret")
    assert (config.imap_folder, config.imap_done_folder) == ("Players", "Judged")
    assert config.imap_server == "imap.example.org:993" and "s3cret" not in repr(config)
    assert check_fetchable(config) is config
    assert account_name(config) == "judge@example.org@imap.example.org"


def test_defaults_ports_and_the_default_variable(tmp_path):
    config = load_config(write(tmp_path / "mail.toml", 'imap_host = "mx.example.org"\n'), {"PBEM_IMAP_PASSWORD": "pw"})
    assert config.imap_password == "pw" and config.imap_folder == "INBOX" and config.imap_done_folder is None
    assert MailConfig(imap_security="starttls").imap_port_or_default == 143
    assert MailConfig(imap_security="plain").imap_port_or_default == 143
    assert MailConfig(imap_port=1143).imap_port_or_default == 1143


def test_an_imap_password_in_a_file_only_its_owner_can_read(tmp_path):
    text = SAMPLE + 'imap_password = "in-file"\n'
    assert load_config(write(tmp_path / "private.toml", text, 0o600), {}).imap_password == "in-file"
    shared = write(tmp_path / "shared.toml", text, 0o644)
    with pytest.raises(MailConfigError, match="holds a password but other users may read it; run: chmod 600"):
        load_config(shared, {})


@pytest.mark.parametrize("text, message", [
    ("imap_port = \"993\"\n", "imap_port must be a number such as 993"),
    ("imap_security = \"ssl\"\n", "imap_security 'ssl'"),
    ("imap_port = 70000\n", "imap_port 70000"),
    ("imap_folder = \"INBOX\"\nimap_done_folder = \"INBOX\"\n", "is the folder it is fetched from (INBOX)"),
    ("imap_foldr = \"x\"\n", "unknown setting 'imap_foldr'"),
])
def test_bad_settings_are_named(tmp_path, text, message):
    with pytest.raises(MailConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(write(tmp_path / "mail.toml", text), {})


@pytest.mark.parametrize("config, message", [
    (MailConfig(), "no IMAP server: give --imap HOST[:PORT]"),
    (MailConfig(imap_host="imap.example.org"), "no IMAP user: give --user NAME"),
    (MailConfig(imap_host="imap.example.org", imap_user="j"),
     "no password for IMAP user j: set the environment variable PBEM_IMAP_PASSWORD (never a command-line argument)"),
    (MailConfig(imap_host="imap.example.org", imap_user="j", imap_password="pw", imap_security="plain"),
     "security 'plain' would send the password for j unencrypted to imap.example.org"),
])
def test_settings_that_cannot_fetch(config, message):
    with pytest.raises(MailConfigError) as refused:
        check_fetchable(config)
    assert str(refused.value).startswith(message)


def test_plain_text_to_this_machine_is_allowed():
    for host in ("localhost", "127.0.0.1", "::1"):
        check_fetchable(MailConfig(imap_host=host, imap_user="j", imap_password="pw", imap_security="plain"))


def test_the_command_line_goes_over_the_file():
    config = with_imap_overrides(MailConfig(imap_host="a.example.org", imap_folder="Players"),
                                 imap="b.example.org:1993", security="starttls", user="me",
                                 folder="INBOX", move_to="Done")
    assert (config.imap_host, config.imap_port, config.imap_security, config.imap_user) == \
        ("b.example.org", 1993, "starttls", "me")
    assert (config.imap_folder, config.imap_done_folder) == ("INBOX", "Done")


@pytest.mark.parametrize("name, wire", [
    ("INBOX", '"INBOX"'),
    ("Judged games", '"Judged games"'),
    ("Gelöscht", '"Gel&APY-scht"'),  # RFC 3501's example alphabet: modified UTF-7
    ("日本語", '"&ZeVnLIqe-"'),
    ("R&D", '"R&-D"'),
    ('say "hi"\\', '"say \\"hi\\"\\\\"'),
])
def test_folder_names_on_the_wire(name, wire):
    assert quoted(name) == wire
    inner = wire[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    assert unutf7(inner) == name


def test_usage_errors(tmp_path):
    from typer.testing import CliRunner

    from pbem.cli.program import app
    result = CliRunner().invoke(app, ["mail", "fetch", "--imap", "x.example.org", "--starttls", "--security", "tls"])
    assert result.exit_code == 2 and "--starttls and --security tls disagree" in result.stderr
    result = CliRunner().invoke(app, ["mail", "fetch", "--imap", "x.example.org", "--security", "ssl"])
    assert result.exit_code == 2 and "use tls (port 993), starttls (port 143) or plain" in result.stderr
