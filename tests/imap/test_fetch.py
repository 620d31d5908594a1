"""'pbem mail fetch' against a real Dovecot on 127.0.0.1: fetch, ingest, and only then flag
or move; a run killed between the commit and the flag applies nothing twice; a rebuilt
folder (new UIDVALIDITY) is noticed; every failure to connect is one line and writes nothing."""

from __future__ import annotations

import json

import pytest

from pbem.store.faults import CRASH_EXIT_CODE

SEEN = "\\Seen"


def fetch_args(server, *more) -> list[str]:
    return ["mail", "fetch", "--imap", f"{server.host}:{server.port}", "--security", "plain",
            "--user", server.user, "--judge", "judge@example.org", *more]


def env(server) -> dict:
    return {"PBEM_IMAP_PASSWORD": server.password}


def flags(server, folder="INBOX") -> dict[int, bool]:
    """{uid: seen?} of the folder."""
    return {uid: SEEN in found for uid, (found, _) in server.messages(folder).items()}


def test_fetch_applies_each_message_then_flags_it_seen(dovecot, table, cli):
    server = dovecot()
    uids = [server.append(table.mail("ani")), server.append(table.mail("alex")),
            server.append(table.mail("ani", "status"))]
    assert flags(server) == {uid: False for uid in uids}

    out = cli(*fetch_args(server), env=env(server)).stdout.splitlines()
    assert out == [f"uid {uids[0]}: seed1.ani@example.org (g1, ani): applied; answer queued",
                   f"uid {uids[1]}: seed2.alex@example.org (g1, alex): applied; answer queued",
                   f"uid {uids[2]}: seed3.ani@example.org (g1, ani): applied; answer queued"]
    assert table.seeds() == ["ani-1", "alex-2"]
    assert table.answers() == ["<seed1.ani@example.org>", "<seed2.alex@example.org>", "<seed3.ani@example.org>"]
    assert flags(server) == {uid: True for uid in uids}
    assert table.query("select folder, last_uid from imap_folders") == [("INBOX", uids[-1])]
    assert table.query("select * from imap_unmarked") == []


def test_fetching_twice_does_nothing_the_second_time_and_then_takes_only_new_mail(dovecot, table, cli):
    server = dovecot()
    server.append(table.mail("ani"))
    cli(*fetch_args(server), env=env(server))
    before = (table.seeds(), table.answers())

    again = cli(*fetch_args(server), env=env(server)).stdout
    assert again == f"no new messages in INBOX at 127.0.0.1:{server.port}\n"
    assert (table.seeds(), table.answers()) == before

    # A new message is taken even when someone read it first (in the judge's webmail, say):
    # after the first run, what is new is told by its UID, not by the flag.
    uid = server.append(table.mail("alex"), flags=SEEN)
    out = cli(*fetch_args(server), env=env(server)).stdout
    assert out.startswith(f"uid {uid}: seed2.alex@example.org (g1, alex): applied")
    assert table.seeds() == ["ani-1", "alex-2"]


def test_the_first_run_leaves_mail_read_before_it_alone(dovecot, table, cli):
    server = dovecot()
    server.append(table.mail("ani"), flags=SEEN)  # read before the judge ever looked
    uid = server.append(table.mail("alex"))
    out = cli(*fetch_args(server), env=env(server)).stdout
    assert out.startswith(f"uid {uid}: ") and out.count("\n") == 1
    assert table.seeds() == ["alex-2"]


def test_json_output(dovecot, table, cli):
    server = dovecot()
    uid = server.append(table.mail("ani"))
    report = json.loads(cli(*fetch_args(server, "--json"), env=env(server)).stdout)
    assert report["account"] == "judge@example.org@127.0.0.1" and report["folder"] == "INBOX"
    assert report["uidvalidity"] == server.uidvalidity()
    assert [(m["uid"], m["key"], m["outcome"], m["game"], m["player"]) for m in report["messages"]] == \
        [(uid, "seed1.ani@example.org", "applied", "g1", "ani")]
    assert report["stopped"] is None and report["marked_late"] == 0 and report["notes"] == []


@pytest.mark.parametrize("point", ["fetch:after-commit", "commit:before"])
def test_killed_between_ingest_and_flag_applies_nothing_twice(dovecot, table, pbem_process,
                                                              private_environment, point):
    server = dovecot()
    uids = [server.append(table.mail("ani")), server.append(table.mail("alex"))]

    crashed = pbem_process(private_environment, *fetch_args(server), env=env(server), crash_at=point)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    assert flags(server) == {uid: False for uid in uids}  # never flagged: the process died first
    committed = point == "fetch:after-commit"
    assert table.seeds() == (["ani-1", "alex-2"] if committed else [])
    assert table.query("select uid from imap_unmarked order by uid") == ([(u,) for u in uids] if committed else [])

    again = pbem_process(private_environment, *fetch_args(server), env=env(server))
    assert again.returncode == 0, again.stderr
    if committed:
        assert again.stdout.splitlines() == [
            "marked 2 message(s) that an earlier run ingested but did not mark",
            f"no new messages in INBOX at 127.0.0.1:{server.port}"]
    else:
        assert [line.split(": ")[-1] for line in again.stdout.splitlines()] == ["applied; answer queued"] * 2
    assert table.seeds() == ["ani-1", "alex-2"]  # each once
    assert table.answers() == ["<seed1.ani@example.org>", "<seed2.alex@example.org>"]
    assert flags(server) == {uid: True for uid in uids}
    assert table.query("select * from imap_unmarked") == []


def test_without_the_fetch_record_ingest_still_applies_each_message_once(dovecot, table, pbem_process,
                                                                         private_environment):
    """The second layer: the record of the folder is lost (say, the database was restored
    from a backup taken between) and the messages are still unseen: ingest's own
    de-duplication by Message-ID, and by bytes, keeps them from being applied twice."""
    server = dovecot()
    uids = [server.append(table.mail("ani")), server.append(table.mail("alex", message_id=""))]
    crashed = pbem_process(private_environment, *fetch_args(server), env=env(server),
                           crash_at="fetch:after-commit")
    assert crashed.returncode == CRASH_EXIT_CODE
    assert table.seeds() == ["ani-1", "alex-2"]
    table.execute("delete from imap_folders")
    table.execute("delete from imap_unmarked")

    again = pbem_process(private_environment, *fetch_args(server), env=env(server))
    assert again.returncode == 0, again.stderr
    assert [line.split(": ")[-1] for line in again.stdout.splitlines()] == ["duplicate", "duplicate"]
    assert table.seeds() == ["ani-1", "alex-2"]
    assert len(table.answers()) == 2  # no second answer either
    assert flags(server) == {uid: True for uid in uids}


def test_move_to_a_folder(dovecot, table, cli):
    server = dovecot()
    server.command("create", '"Judged"')
    server.append(table.mail("ani"))
    server.append(table.mail("alex"))
    out = cli(*fetch_args(server, "--move-to", "Judged"), env=env(server)).stdout
    assert out.count("applied; answer queued") == 2
    assert server.messages("INBOX") == {}
    moved = server.messages("Judged")
    assert sorted(header for _, header in moved.values()) == [b"Message-ID: <seed1.ani@example.org>",
                                                              b"Message-ID: <seed2.alex@example.org>"]
    assert table.seeds() == ["ani-1", "alex-2"]
    again = cli(*fetch_args(server, "--move-to", "Judged"), env=env(server)).stdout
    assert again.startswith("no new messages")


def test_move_without_the_move_extension_copies_and_expunges(dovecot, table):
    """A server without MOVE (RFC 6851): COPY, flag \\Deleted, expunge those UIDs only."""
    from pbem.mail.config import MailConfig
    from pbem.mail.fetch import fetch, open_imap
    from pbem.store import Store

    server = dovecot()
    server.command("create", '"Judged"')
    keep = server.append(b"From: someone@example.org\r\nSubject: not for the judge\r\n\r\nhi\r\n",
                         flags="\\Seen \\Deleted")  # deleted by a person, not yet expunged
    server.append(table.mail("ani"))
    config = MailConfig(imap_host=server.host, imap_port=server.port, imap_security="plain",
                        imap_user=server.user, imap_password=server.password, imap_done_folder="Judged")

    def without_move(config):
        imap = open_imap(config)
        imap._pbem_capabilities = {"IMAP4REV1", "UIDPLUS"}  # what the server says it can do, less MOVE
        return imap
    with Store(table.db) as store:
        report = fetch(store, config, lambda: "2030-01-01T10:00:00Z", ("judge@example.org",),
                       connect=without_move)
    assert [r.outcome for _, r in report.results] == ["applied"]
    assert list(server.messages("INBOX")) == [keep]  # the person's deleted message is theirs to expunge
    assert [h for _, h in server.messages("Judged").values()] == [b"Message-ID: <seed1.ani@example.org>"]


def test_a_rebuilt_folder_is_noticed_by_its_new_uidvalidity(dovecot, table, cli):
    server = dovecot()
    server.command("create", '"Players"')
    first = [table.mail("ani"), table.mail("alex")]
    for raw in first:
        server.append(raw, folder="Players")
    cli(*fetch_args(server, "--folder", "Players"), env=env(server))
    old = server.uidvalidity("Players")

    # The folder is rebuilt (restored from a backup, say): new UIDs from 1 under a new
    # UIDVALIDITY. A new message gets UID 1, below the last UID processed before: without
    # noticing the UIDVALIDITY it would be taken for one processed already, and lost.
    server.command("delete", '"Players"')
    server.command("create", '"Players"')
    new_uid = server.append(table.mail("ani"), folder="Players")
    for raw in first:
        server.append(raw, folder="Players")
    assert new_uid == 1 and server.uidvalidity("Players") != old

    out = cli(*fetch_args(server, "--folder", "Players"), env=env(server)).stdout.splitlines()
    assert out[0].startswith(f"the UIDVALIDITY of Players changed from {old} to {server.uidvalidity('Players')}: "
                             "the server rebuilt the folder")
    assert out[1:] == ["uid 1: seed3.ani@example.org (g1, ani): applied; answer queued",
                       "uid 2: seed1.ani@example.org from ani@example.org: duplicate",
                       "uid 3: seed2.alex@example.org from alex@example.org: duplicate"]
    assert table.seeds() == ["ani-1", "alex-2", "ani-3"]
    assert len(table.answers()) == 3
    assert table.query("select uidvalidity, last_uid from imap_folders") == [(server.uidvalidity("Players"), 3)]


# -- failures: one line, exit 1, nothing written ------------------------------------------------


def refused(cli, table, server, args, environment, match: str):
    before = table.dump()
    mail_before = server.messages() if server is not None else None
    result = cli(*args, env=environment, code=1)
    assert result.stdout == ""
    assert result.stderr.startswith("pbem: ") and result.stderr.count("\n") == 1, result.stderr
    assert match in result.stderr, result.stderr
    assert table.dump() == before
    if server is not None:
        assert server.messages() == mail_before
    return result.stderr


def test_login_refused(dovecot, table, cli):
    server = dovecot()
    server.append(table.mail("ani"))
    error = refused(cli, table, server, fetch_args(server), {"PBEM_IMAP_PASSWORD": "wrong"},
                    f"127.0.0.1:{server.port}: login refused for judge@example.org: ")
    assert "AUTHENTICATIONFAILED" in error and "wrong" not in error


def test_a_missing_folder_is_named_with_the_folders_there(dovecot, table, cli):
    server = dovecot()
    server.command("create", '"Judged"')
    server.append(table.mail("ani"))
    refused(cli, table, server, fetch_args(server, "--folder", "Inbx"), env(server),
            f"127.0.0.1:{server.port}: no folder 'Inbx' to fetch mail from for judge@example.org; "
            "folders there: INBOX, Judged")
    refused(cli, table, server, fetch_args(server, "--move-to", "Done"), env(server),
            "no folder 'Done' to move fetched mail to for judge@example.org; folders there: INBOX, Judged")


def test_a_folder_the_server_will_not_open_is_not_called_missing(dovecot, table, cli):
    """The folder is there, but the server cannot open it (here: its files unreadable to
    it): the server's own words, not "no folder INBOX; folders there: INBOX"."""
    import os
    server = dovecot()
    server.append(table.mail("ani"))
    box = server.root / "mail" / server.user
    os.chmod(box / "cur", 0)
    os.chmod(box / "new", 0)
    try:
        before = table.dump()
        result = cli(*fetch_args(server), env=env(server), code=1)
        assert result.stderr.startswith(f"pbem: 127.0.0.1:{server.port}: the server would not open INBOX for "
                                        f"judge@example.org: ") and result.stderr.count("\n") == 1, result.stderr
        assert "no folder" not in result.stderr and table.dump() == before
    finally:
        os.chmod(box / "cur", 0o700)
        os.chmod(box / "new", 0o700)


def test_server_down(dovecot, table, cli):
    server = dovecot()
    server.stop()
    refused(cli, table, None, fetch_args(server), env(server),
            f"pbem: 127.0.0.1:{server.port}: connection refused (is the server running, and is the port right?)")


def test_no_password_is_refused_before_connecting(table, cli):
    refused(cli, table, None, ["mail", "fetch", "--imap", "127.0.0.1:1", "--user", "judge"], {},
            "no password for IMAP user judge: set the environment variable PBEM_IMAP_PASSWORD")


# -- TLS and STARTTLS, with a private CA ---------------------------------------------------------


def tls_config(tmp_path, server, test_ca, security: str, ca: bool = True):
    path = tmp_path / "mail.toml"
    port = server.tls_port if security == "tls" else server.port
    lines = [f'imap_host = "localhost"', f"imap_port = {port}", f'imap_security = "{security}"',
             f'imap_user = "{server.user}"', 'judge_address = "judge@example.org"']
    if ca:
        lines.append(f'ca_file = "{test_ca.cert}"')
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("security", ["tls", "starttls"])
def test_tls_and_starttls_with_the_test_ca(dovecot, table, cli, tmp_path, test_ca, security):
    server = dovecot(tls=test_ca)
    server.append(table.mail("ani"))
    config = tls_config(tmp_path, server, test_ca, security)
    out = cli("mail", "fetch", "--config", config, env=env(server)).stdout
    assert out.endswith("(g1, ani): applied; answer queued\n")
    assert table.seeds() == ["ani-1"]


def test_the_starttls_flag(dovecot, table, cli, tmp_path, test_ca):
    server = dovecot(tls=test_ca)
    server.append(table.mail("ani"))
    config = tls_config(tmp_path, server, test_ca, "tls")  # the file says tls; --starttls wins
    out = cli("mail", "fetch", "--config", config, "--imap", f"localhost:{server.port}", "--starttls",
              env=env(server)).stdout
    assert "applied" in out


@pytest.mark.parametrize("security", ["tls", "starttls"])
def test_a_certificate_from_an_unknown_ca_is_refused(dovecot, table, cli, tmp_path, test_ca, security):
    server = dovecot(tls=test_ca)
    server.append(table.mail("ani"))
    config = tls_config(tmp_path, server, test_ca, security, ca=False)
    error = refused(cli, table, server, ["mail", "fetch", "--config", config], env(server),
                    "certificate not trusted (self")  # self-signed, in OpenSSL's words
    assert error.endswith("; set ca_file for a private CA\n")


def test_tls_to_a_plain_port_says_what_to_do(dovecot, table, cli):
    server = dovecot()
    error = refused(cli, table, None, ["mail", "fetch", "--imap", f"127.0.0.1:{server.port}", "--user", server.user],
                    env(server), "TLS failed (")  # OpenSSL's reason, then the fix:
    assert error.endswith("); if this port speaks plain IMAP first, use --starttls (port 143)\n")


def test_starttls_is_required_when_asked_for(dovecot, table, cli):
    server = dovecot()  # ssl = no: no STARTTLS offered
    refused(cli, table, server, fetch_args(server, "--security", "starttls"), env(server),
            "the server does not offer STARTTLS")


def test_a_connection_lost_mid_run_keeps_what_was_committed(dovecot, table):
    """The connection drops after the first batch: that batch stays applied and flagged,
    the rest stays unseen on the server, and the next run takes it, once."""
    import socket

    from pbem.mail.config import MailConfig
    from pbem.mail.fetch import fetch, open_imap
    from pbem.store import Store

    server = dovecot()
    uids = [server.append(table.mail("ani")), server.append(table.mail("alex"))]
    config = MailConfig(imap_host=server.host, imap_port=server.port, imap_security="plain",
                        imap_user=server.user, imap_password=server.password)
    clock = lambda: "2030-01-01T10:00:00Z"  # noqa: E731

    def dropping_on_the_second_fetch(config):
        imap = open_imap(config)
        real, fetches = imap.uid, []

        def uid(command, *args):
            if command == "FETCH":
                fetches.append(args)
                if len(fetches) == 2:
                    imap.sock.shutdown(socket.SHUT_RDWR)  # the network goes away
            return real(command, *args)
        imap.uid = uid
        return imap

    with Store(table.db) as store:
        report = fetch(store, config, clock, batch=1, connect=dropping_on_the_second_fetch)
        assert [(uid, r.outcome) for uid, r in report.results] == [(uids[0], "applied")]
        assert report.stopped.startswith(f"127.0.0.1:{server.port}: connection lost")
        assert table.seeds() == ["ani-1"] and flags(server) == {uids[0]: True, uids[1]: False}

        again = fetch(store, config, clock)
        assert [(uid, r.outcome) for uid, r in again.results] == [(uids[1], "applied")]
        assert again.stopped is None
    assert table.seeds() == ["ani-1", "alex-2"] and flags(server) == {uids[0]: True, uids[1]: True}


def test_a_stop_request_ends_the_run_after_the_batch_in_hand_and_the_rest_waits(dovecot, table):
    """'pbem mail run' asked to stop: the batch in hand is applied and flagged, and the
    folder is not counted as read through, so the next run takes the rest."""
    from pbem.mail.config import MailConfig
    from pbem.mail.fetch import STOPPED, fetch
    from pbem.store import Store

    server = dovecot()
    uids = [server.append(table.mail(player)) for player in ("ani", "alex", "ani")]
    config = MailConfig(imap_host=server.host, imap_port=server.port, imap_security="plain",
                        imap_user=server.user, imap_password=server.password)
    clock = lambda: "2030-01-01T10:00:00Z"  # noqa: E731
    heard = []
    with Store(table.db) as store:
        report = fetch(store, config, clock, batch=1, should_stop=lambda: bool(heard),
                       on_message=lambda uid, result: heard.append((uid, result.outcome)))
        assert heard == [(uid, r.outcome) for uid, r in report.results] == [(uids[0], "applied")]
        assert report.stopped == STOPPED
        assert flags(server) == {uids[0]: True, uids[1]: False, uids[2]: False}

        again = fetch(store, config, clock)
        assert [uid for uid, _ in again.results] == uids[1:] and again.stopped is None
    assert table.seeds() == ["ani-1", "alex-2", "ani-3"] and set(flags(server).values()) == {True}


def test_status_and_games_show_the_last_fetch(dovecot, table, cli):
    server = dovecot()
    server.append(table.mail("ani"))
    assert "last mail fetch: none recorded" in cli("games").stdout
    cli(*fetch_args(server), env=env(server))
    [folder] = table.query("select checked_at from imap_folders")
    games = json.loads(cli("games", "--json").stdout)
    assert games["last_fetch"]["at"] == folder[0] and games["last_fetch"]["folder"] == "INBOX"
    assert f"last mail fetch: {folder[0].replace('T', ' ').replace('Z', ' UTC')}" in cli("status", "g1").stdout
