"""Tampering with a finished game is found: in the SQLite file and in an exported log,
``pbem audit`` exits 1 and names the first bad sequence number."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pbem.protocol.canonical import GENESIS_HASH, canonical_text, event_hash

GAME = "done"
ROOT = Path(__file__).resolve().parents[2]


def _flip_hex(text: str, start: int) -> str:
    """``text`` with the first hex digit at or after ``start`` changed (one byte)."""
    for i in range(start, len(text)):
        if text[i] in "0123456789abcdef":
            return text[:i] + ("1" if text[i] == "0" else "0") + text[i + 1:]
    raise AssertionError("no hex digit to change")


def _salt_position(body: str) -> int:
    return body.index('"salt":"') + len('"salt":"')


@pytest.fixture
def done(finished_copy, cli):
    """The finished game in this test's database, its log, and its published head."""
    log = cli.log(GAME)
    assert cli.json("status", GAME)["finished"] and cli.ok("audit", GAME)
    reveals = [r["seq"] for r in log if r["kind"] == "reveal" and r["seq"] < len(log) - 10]
    head = f"{log[-1]['seq']}:{log[-1]['hash']}"
    return finished_copy, log, reveals[len(reveals) // 2], head


def _sql(path, *statements) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement, params in statements:
            changed = conn.execute(statement, params).rowcount
            assert changed >= 1, statement
    conn.close()


def _audit_fails_at(cli, seq: int, *args: str) -> str:
    """``pbem audit ARGS`` exits 1 naming event ``seq`` as the first bad one."""
    result = cli(*args)
    reason = result.stderr.strip()
    assert result.exit_code == 1, (result.exit_code, result.stdout, reason)
    assert "\n" not in reason and reason.startswith("pbem: ")
    # a published head names the event it disagrees with: "published head event N H…" (§13)
    assert f"event {seq}:" in reason or reason.startswith("pbem: audit failed: published head event "), reason
    report = json.loads(cli(*args, "--json").stdout)
    assert report["ok"] is False and report["bad_seq"] == seq, report
    return reason


def _body(path, seq: int) -> str:
    conn = sqlite3.connect(path)
    body = conn.execute("select body from events where game = ? and seq = ?", (GAME, seq)).fetchone()[0]
    conn.close()
    return body


# ---------------------------------------------------------------------- the database


def test_db_one_byte_of_a_body_changed(cli, done):
    path, _log, k, head = done
    body = _body(path, k)
    _sql(path, ("update events set body = ? where game = ? and seq = ?", (_flip_hex(body, _salt_position(body)), GAME, k)))
    assert "hash does not match" in _audit_fails_at(cli, k, "audit", GAME)
    _audit_fails_at(cli, k, "audit", GAME, "--head", head)


def test_db_one_byte_change_that_breaks_the_json(cli, done):
    path, _log, k, _head = done
    body = _body(path, k)
    _sql(path, ("update events set body = ? where game = ? and seq = ?", (body.replace('"', "'", 1), GAME, k)))
    _audit_fails_at(cli, k, "audit", GAME)


def test_db_one_byte_of_a_column_changed(cli, done):
    path, _log, k, _head = done
    _sql(path, ("update events set kind = 'revea1' where game = ? and seq = ?", (GAME, k)))
    _audit_fails_at(cli, k, "audit", GAME)


def test_db_row_deleted(cli, done):
    path, _log, k, head = done
    _sql(path, ("delete from events where game = ? and seq = ?", (GAME, k)))
    assert "missing" in _audit_fails_at(cli, k, "audit", GAME)
    _audit_fails_at(cli, k, "audit", GAME, "--head", head)


def test_db_two_bodies_swapped(cli, done):
    path, _log, k, _head = done
    a, b = _body(path, k), _body(path, k + 1)
    _sql(path, ("update events set body = ? where game = ? and seq = ?", (b, GAME, k)),
         ("update events set body = ? where game = ? and seq = ?", (a, GAME, k + 1)))
    _audit_fails_at(cli, k, "audit", GAME)


def test_db_two_rows_swapped_whole(cli, done):
    """Swap everything but the sequence numbers: bodies, kinds, times and hashes."""
    path, _log, k, _head = done
    conn = sqlite3.connect(path)
    cols = "kind, at, body, prev_hash, hash"
    rows = {seq: conn.execute(f"select {cols} from events where game = ? and seq = ?", (GAME, seq)).fetchone()
            for seq in (k, k + 3)}
    with conn:
        for seq, other in ((k, k + 3), (k + 3, k)):
            conn.execute("update events set kind = ?, at = ?, body = ?, prev_hash = ?, hash = ? "
                         "where game = ? and seq = ?", (*rows[other], GAME, seq))
    conn.close()
    _audit_fails_at(cli, k, "audit", GAME)


def test_db_truncated_is_found_with_the_published_head(cli, done):
    path, log, _k, head = done
    last = log[-1]["seq"]
    _sql(path, ("delete from events where game = ? and seq > ?", (GAME, last - 4)))
    reason = _audit_fails_at(cli, last - 3, "audit", GAME, "--head", head)
    assert f"the log stops at event {last - 4}" in reason
    # the moderator's own database also keeps a snapshot of the state at the head, so the
    # cut is found there even without the published head
    _audit_fails_at(cli, last - 3, "audit", GAME)
    # a head that was published before the cut still matches the chain
    early = log[last - 10]
    result = cli("audit", GAME, "--head", f"{early['seq']}:{early['hash']}", "--json")
    assert json.loads(result.stdout)["chain"] is True


def test_db_wrong_published_head(cli, done):
    _path, log, _k, _head = done
    last = log[-1]
    wrong = f"{last['seq']}:{_flip_hex(last['hash'], 0)}"
    _audit_fails_at(cli, last["seq"], "audit", GAME, "--head", wrong)


# ---------------------------------------------------------------------- an exported file


@pytest.fixture
def exported(done, cli, tmp_path):
    _path, log, k, head = done
    path = tmp_path / "done.jsonl"
    cli.ok("export", GAME, "-o", path)
    assert cli.json("audit", "--file", path, "--head", head)["replay"] == "full"
    return path, path.read_text(encoding="utf-8").splitlines(keepends=True), k, head


def _write(path, lines) -> None:
    path.write_text("".join(lines), encoding="utf-8")


def test_file_one_byte_changed(cli, exported):
    path, lines, k, head = exported
    line = lines[k - 1]
    lines[k - 1] = _flip_hex(line, _salt_position(line))
    _write(path, lines)
    assert "hash does not match" in _audit_fails_at(cli, k, "audit", "--file", path)
    _audit_fails_at(cli, k, "audit", "--file", path, "--head", head)


def test_file_one_byte_change_that_breaks_the_json(cli, exported):
    path, lines, k, _head = exported
    lines[k - 1] = lines[k - 1].replace('"', "'", 1)
    _write(path, lines)
    _audit_fails_at(cli, k, "audit", "--file", path)


def test_file_line_deleted(cli, exported):
    path, lines, k, head = exported
    del lines[k - 1]
    _write(path, lines)
    assert "missing" in _audit_fails_at(cli, k, "audit", "--file", path)
    _audit_fails_at(cli, k, "audit", "--file", path, "--head", head)


def test_file_two_bodies_swapped(cli, exported):
    path, lines, k, _head = exported
    a, b = json.loads(lines[k - 1]), json.loads(lines[k])
    a["data"], b["data"] = b["data"], a["data"]
    lines[k - 1], lines[k] = canonical_text(a) + "\n", canonical_text(b) + "\n"
    _write(path, lines)
    _audit_fails_at(cli, k, "audit", "--file", path)


def test_file_two_lines_swapped(cli, exported):
    path, lines, k, _head = exported
    lines[k - 1], lines[k] = lines[k], lines[k - 1]
    _write(path, lines)
    _audit_fails_at(cli, k, "audit", "--file", path)


def test_file_truncated_is_found_with_the_published_head(cli, exported):
    path, lines, _k, head = exported
    last = len(lines)
    _write(path, lines[: last - 4])
    _audit_fails_at(cli, last - 3, "audit", "--file", path, "--head", head)
    # a cut mid-line is found as well
    _write(path, lines[: last - 1] + [lines[-1][:40]])
    result = cli("audit", "--file", path)
    assert result.exit_code == 1 and str(last) in result.stderr


def test_file_rewritten_history_with_recomputed_hashes(cli, exported):
    """A forger who changes a reveal and recomputes every later hash: the chain is valid,
    but the replay finds the reveal no longer opens its commitment, and the head differs."""
    path, lines, k, head = exported
    rows = [json.loads(line) for line in lines]
    row = rows[k - 1]
    assert row["kind"] == "reveal"
    row["data"]["salt"] = _flip_hex(row["data"]["salt"], 0)
    prev = GENESIS_HASH if k == 1 else rows[k - 2]["hash"]
    for r in rows[k - 1:]:
        r["prev_hash"] = prev
        r["hash"] = prev = event_hash(prev, {f: r[f] for f in ("game", "seq", "kind", "at", "data")})
    _write(path, [canonical_text(r) + "\n" for r in rows])
    reason = _audit_fails_at(cli, k, "audit", "--file", path)
    assert "does not match" in reason
    _audit_fails_at(cli, len(rows), "audit", "--file", path, "--head", head)


def test_file_of_a_game_type_pbem_does_not_know(cli, tmp_path):
    """A log whose created names a game pbem has no rules for: FAIL at event 1 in one line
    (the verifier page's words), never a crash."""
    rows = [json.loads(line) for line in (ROOT / "examples" / "games" / "two-players.jsonl").read_text().splitlines()]
    rows[0]["data"]["game_type"] = "chess"
    prev = GENESIS_HASH
    for r in rows:
        r["prev_hash"] = prev
        r["hash"] = prev = event_hash(prev, {f: r[f] for f in ("game", "seq", "kind", "at", "data")})
    path = tmp_path / "chess.jsonl"
    _write(path, [canonical_text(r) + "\n" for r in rows])
    reason = _audit_fails_at(cli, 1, "audit", "--file", path)
    assert reason == "pbem: audit failed: event 1: unknown game type 'chess'; known: tortuga, tortuga1667"
