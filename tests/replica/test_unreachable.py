"""The SFTP replica goes away for a while: the judge under the replica barrier takes mail in
and applies it, but sends nothing; its log and 'pbem status' say why; nothing is lost; and
once the server is back the waiting mail goes out and play goes on (docs/hosting.md)."""

from __future__ import annotations

from .table import Table


def test_mail_waits_while_the_replica_is_unreachable_and_goes_once_it_is_back(tmp_path, mailroom, sftp, fixed_seed):
    port, room = mailroom
    table = Table(tmp_path / "host", room, port, sftp.replica(tmp_path / "sftp-replica"), barrier=True)
    table.judge.start()
    table.wait_quiet()
    table.turns(limit=6)

    sftp.stop()  # the backup machine is gone, and every connection to it
    before, received = len(table.judge.text()), len(room.received)
    blind = table.turns_blind(2)
    assert blind and not any(answered for _, answered in blind), blind
    log = table.judge.text()[before:]
    assert "send: failing: the replica does not hold the latest changes (litestream sync -wait: " in log, log
    table.judge.wait_for("the mail taken in", lambda text: not any((table.maildir / "new").iterdir()))
    assert f"ingest: {blind[0][0].strip('<>')}" in log  # taken in and applied all the same
    waiting = table.queued()
    assert waiting > 0 and len(room.received) == received  # nothing went out
    status = table.pbem("status", "g1")
    assert "MAIL WAITS FOR THE REPLICA since " in status.stdout, status.stdout
    assert f"mail: {waiting} queued" in status.stdout

    sftp.start()  # back: the waiting mail goes, and play goes on
    table.judge.wait_for("the send step working again", lambda text: "send: working again" in text[before:])
    table.wait_quiet()
    assert all(table.answered(message_id) for message_id, _ in blind)
    assert "REPLICA" not in table.pbem("status", "g1").stdout
    table.turns(limit=6)
    table.judge.stop()
    audit = table.pbem("audit", "g1", check=False)
    assert audit.exit_code == 3 and audit.stdout.startswith("INCOMPLETE"), audit.stdout  # still in play
    answers = table.answers_mbox(tmp_path / "answers.mbox")
    check = table.pbem("check-restore", "--receipts", str(answers))
    assert check.stdout.startswith("RESTORE OK: 1 game audits"), check.stdout
