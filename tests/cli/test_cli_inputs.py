"""Bounded input: every command that reads a file or standard input ends quickly with one
line when given something endless, too large, with an endless line, or not text, and
changes nothing; refusals quote at most 80 characters of what they refuse."""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
import time

import pytest

from pbem.cli.inputs import EXPORT, KEY, MiB, SUBMISSION, InputRefused, Limits, read_limited, read_text
from pbem.protocol.armour import armour, extract_blocks
from pbem.text import QUOTE_LIMIT, quote, shorten

GARBAGE = "x" * 10_000


def _limit_memory():  # a reader that regressed fails here instead of eating the machine
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run_pbem(helpers, pbem_db, *args, stdin=subprocess.DEVNULL):
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(helpers.REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    # CPU seconds of the child, not wall time: a busy machine slows the wall clock, not this
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "pbem.cli.app", *map(str, args)], env=env, stdin=stdin,
                          capture_output=True, text=True, timeout=600, preexec_fn=_limit_memory)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


ZERO_COMMANDS = {
    "submit FILE": ["submit", "g", "/dev/zero"],
    "submit -": ["submit", "g", "-"],
    "audit --file": ["audit", "--file", "/dev/zero"],
    "replay": ["replay", "/dev/zero"],
    "new --faces": ["new", "h", "--players", "ani,alex", "--faces", "/dev/zero"],
    "keygen --public-of": ["keygen", "--public-of", "/dev/zero"],
    "decide --key": ["decide", "g", "ani", "skull:raid", "--key", "/dev/zero"],
}


@pytest.mark.parametrize("name", ZERO_COMMANDS)
def test_dev_zero_ends_at_once_with_one_line(name, new_game, cli, helpers, pbem_db):
    new_game("g")
    before = cli.snapshot("g")
    args = ZERO_COMMANDS[name]
    with open("/dev/zero", "rb") as zero:
        done, took = run_pbem(helpers, pbem_db, *args, stdin=zero)
    assert done.returncode == 1, done.stderr
    reason = done.stderr.strip()
    assert reason.startswith("pbem: ") and "\n" not in reason and "Traceback" not in reason, reason
    assert "device" in reason or " is longer than " in reason, reason
    assert took < 20, f"pbem {' '.join(args)} used {took:.1f} CPU seconds"
    assert cli.snapshot("g") == before
    assert not cli("status", "h").exit_code == 0  # new --faces made no game


def test_a_submission_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(step_game, cli, tmp_path):
    line = b"quoted reply text, no block here\n"
    body = line * (10 * MiB // len(line))
    at_limit = body + b"x" * (10 * MiB - len(body))
    (tmp_path / "full.txt").write_bytes(at_limit)
    (tmp_path / "over.txt").write_bytes(at_limit + b"x")
    cli.refused("g", "submit", "g", tmp_path / "full.txt", match="no submission block found")
    reason = cli.refused("g", "submit", "g", tmp_path / "over.txt")
    assert reason == (f"pbem: {tmp_path / 'over.txt'} is larger than 10 MiB, the most a submission may be; "
                      f"give the mail or post that holds the submission blocks")
    reason = cli.refused("g", "submit", "g", "-", input=at_limit + b"x")
    assert reason.startswith("pbem: standard input is larger than 10 MiB, the most a submission may be")


def test_a_submission_line_over_1_mib_is_refused(step_game, cli, tmp_path):
    """1 MiB, not less: a forum page saved from a browser has long lines of markup."""
    block = armour({"body": {"kind": "decide", "game": "g"}})
    at_limit = "a" * (1024 * 1024)
    cli.refused("g", "submit", "g", "-", input=f"hello\n{at_limit}\n{block}", match="submission block 1 lacks")
    reason = cli.refused("g", "submit", "g", "-", input=f"hello\r\n\r\n{at_limit}b\n{block}")
    assert reason == ("pbem: standard input: line 3 is longer than 1 MiB, the most a line of a submission "
                      "may be; give the mail or post that holds the submission blocks")


def test_a_submission_in_another_charset_is_read(step_game, cli):
    """Mail may come in any charset: bytes that are not UTF-8 are replaced, the blocks read."""
    block = armour({"body": {"kind": "decide", "game": "g"}})
    text = "Grüße aus Köln\n".encode("latin-1") + block.encode("ascii")
    cli.refused("g", "submit", "g", "-", input=text, match="submission block 1 lacks")


def test_an_export_over_the_limit_or_with_an_endless_line_is_refused(finished_copy, cli, tmp_path):
    export = cli.ok("export", "done").stdout
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:  # sparse: refused by its size before any byte is read
        handle.truncate(256 * MiB + 1)
    for command in (["audit", "--file", huge], ["replay", huge]):
        reason = cli.refused("done", *command)
        assert reason.endswith("is larger than 256 MiB, the most an export may be; "
                               "give a log written by pbem export (JSON Lines)")
    long_line = tmp_path / "long.jsonl"
    lines = export.splitlines(keepends=True)
    long_line.write_text("".join(lines[:2]) + "x" * (MiB + 1) + "\n" + "".join(lines[2:]), encoding="utf-8")
    for command in (["audit", "--file", long_line], ["replay", long_line]):
        reason = cli.refused("done", *command)
        assert reason.startswith(f"pbem: {long_line}: line 3 is longer than 1 MiB, the most a line of an export")


def test_an_export_that_is_not_utf8_names_the_line(finished_copy, cli, tmp_path):
    lines = cli.ok("export", "done").stdout.encode("utf-8").splitlines(keepends=True)
    lines[4] = lines[4].replace(b'"kind"', b'"k\xffnd"', 1)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join(lines))
    for command in (["audit", "--file", damaged], ["replay", damaged]):
        reason = cli.refused("done", *command)
        assert reason.startswith(f"pbem: {damaged}: line 5 is not UTF-8 text (byte "), reason


def test_a_face_table_that_is_not_utf8_or_a_directory_is_refused(cli, tmp_path, pbem_db):
    faces = tmp_path / "faces.txt"
    faces.write_bytes(b"A: 1 2 3 4 5\n\xe9\n")
    result = cli("new", "h", "--players", "ani,alex", "--faces", faces)
    assert result.exit_code == 1 and result.stderr.strip().startswith(f"pbem: {faces}: line 2 is not UTF-8 text")
    result = cli("new", "h", "--players", "ani,alex", "--faces", tmp_path)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"pbem: {tmp_path} is a directory, not a file; give a file"
    assert not pbem_db.exists() or cli("status", "h").exit_code == 1


# ---------------------------------------------------------------------- the reader itself


def _limits(size, line):
    return Limits("a test input", size, line, strict=True, hint="give a test file")


@pytest.mark.parametrize("chunking", [1, 3, 64 * 1024])
def test_reader_counts_lines_across_chunks(chunking, monkeypatch):
    monkeypatch.setattr("pbem.cli.inputs.CHUNK", chunking)
    ok = b"abcd\r\nabcd\rabcd\n\nabcd"
    assert read_limited(io.BytesIO(ok), "t", _limits(100, 4)) == ok
    with pytest.raises(InputRefused, match=r"^t: line 3 is longer than 4 bytes"):
        read_limited(io.BytesIO(b"abcd\r\nabcd\nabcde\nab"), "t", _limits(100, 4))
    with pytest.raises(InputRefused, match=r"^t is larger than 20 bytes"):
        read_limited(io.BytesIO(b"ab\n" * 7), "t", _limits(20, 4))
    assert read_limited(io.BytesIO(b"ab\n" * 6 + b"ab"), "t", _limits(20, 4))


def test_reader_limits_are_the_documented_ones():
    assert (SUBMISSION.size, SUBMISSION.line) == (10 * MiB, MiB)
    assert (EXPORT.size, EXPORT.line) == (256 * MiB, MiB)
    assert KEY.size <= 64 * 1024


def test_reader_refuses_a_missing_file(tmp_path):
    with pytest.raises(InputRefused, match="No such file"):
        read_text(tmp_path / "nothing", KEY)


def test_a_pipe_is_read_like_a_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(fifo)!r}, 'w').write('A: 1 2 3 4 5\\n')"])
    assert read_text(fifo, KEY) == "A: 1 2 3 4 5\n"
    writer.wait(timeout=10)


def test_armour_reads_long_runs_of_dashes_in_linear_time():
    """The marker search once tried every dash of a run as a start: 20,000 dashes took
    seconds, a 64 KiB line of them minutes."""
    started = time.process_time()  # CPU time: other load on the machine does not count
    assert extract_blocks(("-" * 20_000 + "\n") * 3) == []
    assert time.process_time() - started < 2


# ---------------------------------------------------------------------- quoting


def test_quote_shortens_to_80_characters_with_an_ellipsis():
    assert quote("abc") == "'abc'"
    assert quote("a" * 80) == repr("a" * 80)
    assert quote("a" * 81) == repr("a" * 79 + "…")
    assert quote(12) == "12" and quote(None) == "None"
    assert len(shorten(GARBAGE)) == QUOTE_LIMIT


def _bounded(reason: str) -> str:
    assert GARBAGE[: QUOTE_LIMIT + 1] not in reason, reason[:200]
    assert len(reason) < 1000, f"{len(reason)} characters: {reason[:200]}..."
    return reason


@pytest.mark.parametrize("args", [
    ["decide", "g", "ani", GARBAGE],
    ["decide", "g", "ani", "board:" + GARBAGE],
    ["decide", "g", "ani", "skull:" + GARBAGE],
    ["seal", "g", "ani", GARBAGE],
    ["seal", "g", "ani", "A," + GARBAGE],
    ["commit", "g", "ani", "--choice", GARBAGE],
    ["commit", "g", "ani", GARBAGE],
    ["reveal", "g", "ani", GARBAGE, "00" * 32],
    ["decide", "g", GARBAGE, "B"],
    ["status", GARBAGE],
    ["nmr", GARBAGE, "ani"],
    ["client-seed", "g", GARBAGE, "seed"],
], ids=lambda a: " ".join(x[:12] for x in a))
def test_a_garbage_argument_gets_a_message_of_bounded_length(args, step_game, cli):
    result = cli(*args)
    assert result.exit_code == 1
    _bounded(result.stderr)
    assert cli.snapshot("g") == step_game


def test_garbage_in_names_and_options_is_quoted_short(cli):
    for args in (["new", "g", "--players", f"ani, {GARBAGE}"], ["new", "g", "--players", f"ani,{GARBAGE}"],
                 ["new", GARBAGE, "--players", "ani,alex"], ["new", "g", "--players", "ani,alex", "--game", GARBAGE],
                 ["new", "g", "--players", "ani,alex", "--start", GARBAGE],
                 ["new", "g", "--players", "ani,alex", "--variant", GARBAGE],
                 ["new", "g", "--players", "ani,alex", "--deadline", GARBAGE],
                 ["new", "g", "--players", "ani,alex", "--key", GARBAGE], ["show", "g", "--round", GARBAGE]):
        result = cli(*args)
        assert result.exit_code in (1, 2), args
        _bounded(result.stderr)


def test_a_garbage_submission_block_is_quoted_short(step_game, cli):
    block = armour({"body": {"v": 1, "kind": "decide", "game": GARBAGE}})
    _bounded(cli.refused("g", "submit", "g", "-", input=block))


def test_an_export_with_a_huge_field_is_reported_short(finished_copy, cli, tmp_path):
    lines = cli.ok("export", "done").stdout.splitlines(keepends=True)
    lines[2] = lines[2].replace('"game":"done"', f'"game":"{GARBAGE}"', 1)
    lines[3] = lines[3].replace('{"at"', '{"' + GARBAGE + '":1,"at"', 1)
    for damaged in ([lines[0], lines[1], lines[2]], [lines[0], lines[1], lines[3]]):
        path = tmp_path / "damaged.jsonl"
        path.write_text("".join(damaged), encoding="utf-8")
        result = cli("audit", "--file", path)
        assert result.exit_code == 1
        _bounded(result.stderr)
        _bounded(result.stdout)


@pytest.fixture
def step_game(new_game, cli):
    """Game "g", started, at its first sealed step; returns its snapshot (to compare)."""
    new_game("g")
    return cli.snapshot("g")


def _token(body: bytes) -> str:
    import base64
    import hashlib
    return "pbem1." + base64.urlsafe_b64encode(body).decode().rstrip("=") + "." + hashlib.sha256(body).hexdigest()[:8]


@pytest.mark.parametrize("body", [b"[" * 50_000, b"[1]", b"{}", b'{"game":"g","round":"1"}'],
                         ids=["deep", "list", "empty", "wrong-types"])
def test_a_crafted_token_is_refused_in_one_line(body, cli):
    for command in ("seal", "decide"):
        result = cli(command, "--context", _token(body), "A")
        assert result.exit_code == 1 and result.stderr.startswith("pbem: ") and "\n" not in result.stderr.strip()
        assert "token" in result.stderr


@pytest.mark.parametrize("line", ['{"seq":' + "1" * 5000 + "}", "[" * 100_000], ids=["long-number", "deep"])
def test_an_export_line_too_deep_or_too_long_a_number_is_reported(line, cli, tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = cli("audit", "--file", path)
    assert result.exit_code == 1
    assert result.stderr.strip() == ("pbem: audit failed: event 1: line 1 is not an event "
                                     "(a number too long or nesting too deep)")
    result = cli("replay", path)
    assert result.exit_code == 1 and result.stderr.strip() == (
        "pbem: line 1 is not an event (a number too long or nesting too deep)")
