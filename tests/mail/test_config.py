"""Mail settings: a TOML file plus the environment; the password never from an argument and
never from a file other users can read."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.mail.config import (MailConfig, MailConfigError, check_sendable, default_config_path,
                              load_config, parse_server, with_overrides)

SAMPLE = """\
judge_address = "judge@example.org"
smtp_host = "smtp.example.org"
smtp_port = 587
security = "starttls"
smtp_user = "judge@example.org"
password_env = "JUDGE_SMTP_PASSWORD"
"""


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_sample_file_with_the_password_from_the_named_variable(tmp_path):
    path = write(tmp_path / "mail.toml", SAMPLE)
    config = load_config(path, {"JUDGE_SMTP_PASSWORD": "s3cret", "PBEM_SMTP_PASSWORD": "other"})
    assert (config.judge_address, config.smtp_host, config.port, config.security) == \
        ("judge@example.org", "smtp.example.org", 587, "starttls")
    assert config.smtp_user == "judge@example.org" and config.smtp_password == "s3cret"
    assert config.source == path and config.server == "smtp.example.org:587"
    assert "s3cret" not in repr(config)
    assert check_sendable(config) is config


def test_the_default_variable_and_the_usual_ports(tmp_path):
    path = write(tmp_path / "mail.toml", 'smtp_host = "mx.example.org"\nsecurity = "tls"\n')
    config = load_config(path, {"PBEM_SMTP_PASSWORD": "pw"})
    assert config.smtp_password == "pw" and config.port == 465
    assert MailConfig(security="plain").port == 25 and MailConfig().port == 587


def test_a_password_in_a_file_only_its_owner_can_read(tmp_path):
    text = SAMPLE.replace('password_env = "JUDGE_SMTP_PASSWORD"', 'smtp_password = "in-file"')
    private = write(tmp_path / "private.toml", text, 0o600)
    assert load_config(private, {}).smtp_password == "in-file"
    assert load_config(private, {"PBEM_SMTP_PASSWORD": "env wins"}).smtp_password == "env wins"
    shared = write(tmp_path / "shared.toml", text, 0o640)
    with pytest.raises(MailConfigError) as refused:
        load_config(shared, {})
    assert str(refused.value) == f"{shared} holds a password but other users may read it; run: chmod 600 {shared}"
    # a readable file without a password is fine
    assert load_config(write(tmp_path / "open.toml", SAMPLE, 0o644), {}).smtp_password is None


def test_where_the_file_is_looked_for(tmp_path):
    home = str(tmp_path / "home")
    assert default_config_path({"HOME": home}) == Path(home) / ".config" / "pbem" / "mail.toml"
    assert default_config_path({"HOME": home, "XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/pbem/mail.toml")
    assert default_config_path({"PBEM_MAIL_CONFIG": "/etc/judge.toml", "XDG_CONFIG_HOME": "/xdg"}) == \
        Path("/etc/judge.toml")
    # no file at the default place: empty settings; the command line may give them
    assert load_config(None, {"XDG_CONFIG_HOME": str(tmp_path)}) == MailConfig()
    (tmp_path / "pbem").mkdir()
    write(tmp_path / "pbem" / "mail.toml", SAMPLE)
    assert load_config(None, {"XDG_CONFIG_HOME": str(tmp_path)}).smtp_host == "smtp.example.org"


@pytest.mark.parametrize("path_given", [True, False])
def test_a_named_file_that_is_missing_is_an_error(tmp_path, path_given):
    missing = tmp_path / "nope.toml"
    env = {} if path_given else {"PBEM_MAIL_CONFIG": str(missing)}
    with pytest.raises(MailConfigError, match=f"no mail config file at {missing}"):
        load_config(missing if path_given else None, env)


@pytest.mark.parametrize("text, says", [
    ('smtp_hots = "x"\n', "unknown setting 'smtp_hots'"),
    ('smtp_port = "587"\n', "smtp_port must be a number"),
    ("smtp_port = 70000\n", "between 1 and 65535"),
    ('security = "ssl"\n', "security 'ssl'"),
    ('judge_address = "Judge <j@example.org>"\n', "not one email address"),
    ("smtp_host = 5\n", "smtp_host must be a string"),
    ("timeout = -1\n", "timeout must be a number of seconds"),
    ("smtp_host = \n", "is not valid TOML"),
])
def test_malformed_settings_are_refused_with_a_hint(tmp_path, text, says):
    path = write(tmp_path / "mail.toml", text)
    with pytest.raises(MailConfigError) as refused:
        load_config(path, {})
    assert says in str(refused.value)


def test_command_line_options_override_the_file(tmp_path):
    config = load_config(write(tmp_path / "mail.toml", SAMPLE), {"JUDGE_SMTP_PASSWORD": "pw"})
    changed = with_overrides(config, smtp="127.0.0.1:2525", security="plain", user="bob",
                             judge_address="referee@example.org")
    assert (changed.smtp_host, changed.port, changed.security, changed.smtp_user, changed.judge_address) == \
        ("127.0.0.1", 2525, "plain", "bob", "referee@example.org")
    assert changed.smtp_password == "pw"
    assert with_overrides(config, smtp="mx.example.org").port == 587  # no port: the usual one


def test_parse_server():
    assert parse_server("smtp.example.org:465") == ("smtp.example.org", 465)
    assert parse_server("smtp.example.org") == ("smtp.example.org", None)
    assert parse_server("[::1]:25") == ("::1", 25)
    for bad in ("smtp.example.org:0", "smtp.example.org:99999", "a b:25", "host:port", ""):
        with pytest.raises(MailConfigError):
            parse_server(bad)


@pytest.mark.parametrize("config, says", [
    (MailConfig(judge_address="j@example.org"), "no SMTP server: give --smtp HOST:PORT"),
    (MailConfig(smtp_host="mx.example.org"), "no judge address to send from: give --from"),
    (MailConfig(smtp_host="mx.example.org", judge_address="j@example.org", smtp_user="j"),
     "no password for SMTP user j: set the environment variable PBEM_SMTP_PASSWORD"),
    (MailConfig(smtp_host="mx.example.org", judge_address="j@example.org", smtp_user="j",
                smtp_password="pw", security="plain"), "would send the password for j unencrypted"),
])
def test_settings_that_cannot_send_safely(config, says):
    with pytest.raises(MailConfigError) as refused:
        check_sendable(config)
    assert says in str(refused.value)


def test_plain_with_a_login_is_allowed_to_a_relay_on_this_machine():
    config = MailConfig(smtp_host="127.0.0.1", judge_address="j@example.org", smtp_user="j",
                        smtp_password="pw", security="plain")
    assert check_sendable(config) is config
