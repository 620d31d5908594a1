"""Published heads are found in what the public kept: summaries in any format, an mbox of
the list (only the messages that name the game), a saved forum thread (docs/protocol.md §13)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from pbem.protocol.heads import NoHeads, heads_in_file, heads_in_text

H1, H2, H3 = "1" * 64, "ab" * 32, "c" * 64


def test_heads_in_every_summary_format_once_each_in_order():
    text = (f"Chain head after round 1: event 28 {H1}\nChain head now: event 40 `{H2}`\n"
            f"<p class=\"chain\">Chain head: event 40 <code>{H2}</code></p>\n"
            f"[b]Chain head:[/b] event 7 [code]{H3.upper()}[/code]\n> > quoted: Event&nbsp;3 {H1}\n")
    assert heads_in_text(text) == [(28, H1), (40, H2), (7, H3), (3, H1)]
    assert heads_in_text(f"event 5 {H1[:-1]}\n{H1[-1]}") == []  # a hash broken over two lines is none
    assert heads_in_text(f"event 5 {H1}0") == []  # 65 hex characters are not a hash


def _message(subject: str, body: str, cte: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "judge@example.org", "list@example.org", subject
    msg.set_content(body, cte=cte)
    return b"From judge@example.org Sat Jan  1 00:00:00 2030\n" + msg.as_bytes() + b"\n"


def test_an_mbox_is_decoded_and_only_messages_naming_the_game_are_read():
    long_line = "Chain head after round 2: event 49 " + H2 + " " + "x" * 40  # soft line breaks in QP
    mbox = (_message("[g1] round 1", f"Chain head: event 28 {H1}\n", "base64")
            + _message("[g1] round 2", long_line + "\n", "quoted-printable")
            + _message("[g10] round 1", f"Chain head: event 5 {H3}\n", "7bit"))
    assert heads_in_file(mbox, "g1") == [(28, H1), (49, H2)]
    assert heads_in_file(mbox, "g10") == [(5, H3)]
    with pytest.raises(NoHeads, match="no chain head in it"):
        heads_in_file(mbox, "g2")


def test_cli_heads_file_without_heads_is_a_usage_error(tmp_path):
    from typer.testing import CliRunner

    from pbem.cli.program import app
    export = tmp_path / "g.jsonl"
    export.write_text((__import__("pathlib").Path(__file__).parents[2] / "examples/games/two-players.jsonl").read_text())
    empty = tmp_path / "nothing.txt"
    empty.write_text("no heads here\n")
    result = CliRunner().invoke(app, ["audit", "--file", str(export), "--heads", str(empty)])
    assert result.exit_code == 2 and "nothing.txt: no chain head in it" in result.stderr
    good = CliRunner().invoke(app, ["audit", "--file", str(export), "--heads",
                                    str(export.parents[0] / "g.jsonl"), "--head", "0:" + "0" * 64])
    assert good.exit_code == 2  # an export holds hashes but no 'event N HASH' head
    summary = tmp_path / "summary.md"
    summary.write_text((__import__("pathlib").Path(__file__).parents[2] / "examples/games/two-players.summary.md").read_text())
    ok = CliRunner().invoke(app, ["audit", "--file", str(export), "--heads", str(summary)])
    assert ok.exit_code == 0 and ok.stdout.startswith("OK: complete, seed hash not compared (none given), ")
    assert ok.stdout.splitlines()[0].endswith("receipts not possible (no judge key in created)")


def test_cli_a_missing_heads_or_receipt_file_is_a_usage_error(tmp_path):
    from typer.testing import CliRunner

    from pbem.cli.program import app
    export = __import__("pathlib").Path(__file__).parents[2] / "examples/games/two-players.jsonl"
    for option in ("--heads", "--receipt"):
        result = CliRunner().invoke(app, ["audit", "--file", str(export), option, str(tmp_path / "gone.txt")])
        assert result.exit_code == 2 and "gone.txt" in result.stderr and not result.stdout


def test_markup_is_replaced_by_a_space_not_removed():
    """§13 step 2: tags become a space, so a tag between two words separates them and a tag
    inside a word or a hash splits it."""
    assert heads_in_text(f"event<b>70</b>{H1}") == [(70, H1)]
    assert heads_in_text(f"ev<i></i>ent 70 {H1}") == []
    assert heads_in_text(f"event 70 {H1[:32]}[b][/b]{H1[32:]}") == []
    assert heads_in_text(f"event`70`{H1}") == [(70, H1)]
