"""docs/email.md stays whole and true (issue 16): rendered as Markdown it has no stray merge
markers and no accidental headings, every section has its content and every code block is
closed; each example message is what the judge sends in the game of email_examples.py; and
each example command line is understood by the command line, the ones that need no server
run against a database of their own. The ones that need a mail server (``mail send`` to
SMTP, ``mail fetch``, ``mail run``) run for real against aiosmtpd and Dovecot in
tests/imap/test_email_doc_servers.py, which fails when one of them is run by no test."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import click
import pytest
import typer.main
from click.testing import CliRunner
from markdown_it import MarkdownIt

from pbem.cli.program import app

DOC = Path(__file__).parents[2] / "docs" / "email.md"
README = Path(__file__).parents[2] / "README.md"
PBEM = typer.main.get_command(app)
SECTIONS = ["Setting up a game by mail", "What a player may send", "What the judge reads in a message",
            "Loop safety: mail the judge never answers", "Limits on a message",
            "What the database holds that is secret", "Sending: the outbox", "Deadlines and reminders",
            "When mail cannot be delivered", "Configuration", "Fetching by IMAP",
            "Running by itself: `pbem mail run`", "Examples"]
EXAMPLES = ["welcome", "answer", "refusal", "reminder", "moment", "carried", "summary", "list", "result"]
# commands that need no mail server: run for real, in this order, on one database
RUNNABLE = ("new", "address", "mail settings", "mail tick", "mail outbox", "mail send --to-dir")

_spec = importlib.util.spec_from_file_location("email_examples", Path(__file__).with_name("email_examples.py"))
examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(examples)


def tokens():
    return MarkdownIt("commonmark").enable("table").parse(DOC.read_text(encoding="utf-8"))


def test_no_stray_markers_and_no_accidental_headings():
    text = DOC.read_text(encoding="utf-8")
    outside = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    assert not re.search(r"^(<{7}|={7}|>{7})(\s|$)", outside, re.M), "a merge marker is left"
    headings = [t for t in tokens() if t.type == "heading_open"]
    assert [t.markup for t in headings if t.markup not in ("#", "##", "###")] == [], "a setext heading"
    assert [t.tag for t in headings].count("h1") == 1


def test_every_section_is_there_with_content_and_every_block_is_closed():
    text = DOC.read_text(encoding="utf-8")
    assert len(re.findall(r"^```", text, re.M)) % 2 == 0, "a code block is never closed"
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    titles = [part.split("\n", 1)[0] for part in parts]
    assert [t for t in titles if t in SECTIONS] == SECTIONS  # these, in this order (others may come between)
    assert titles[-1] == "Examples" and len(set(titles)) == len(titles)
    for title, part in zip(titles, parts):
        body = part.split("\n", 1)[1]
        assert len(body.strip()) > 200, f"section {title!r} is (nearly) empty"
        assert body.rstrip().endswith(("```", ".", ":", ")")), f"section {title!r} stops mid-sentence"
    fences = [t for t in tokens() if t.type == "fence"]
    assert fences and not any("\n## " in t.content for t in fences), "a code block runs into a section"


def doc_examples(doc: Path = DOC) -> dict[str, str]:
    text = doc.read_text(encoding="utf-8")
    found = dict(re.findall(r"<!-- example: (\w+) -->\n```text\n(.*?)\n```", text, re.S))
    assert sorted(found) == sorted(EXAMPLES), doc
    return found


@pytest.mark.parametrize("doc", [DOC, README], ids=["email.md", "README.md"])
def test_every_example_message_is_what_the_judge_sends(tmp_path, monkeypatch, doc):
    sent = examples.play(tmp_path, monkeypatch)
    for name, shown in doc_examples(doc).items():
        head, _, body = shown.partition("\n\n")
        message = sent[name]
        assert f"Subject: {message['subject']}" == head.split("\n")[0], name
        if "Attached:" in head:
            assert head.split("\n")[1] == "Attached: " + ", ".join(message["files"])
        real = examples.shown(message["text"])
        assert examples.matches(body, real), f"{doc.name}: the example {name!r} is not what the judge sends:\n{real}"


def example_commands() -> list[list[str]]:
    """Every ``pbem ...`` line of the sh blocks (an environment assignment in front, a cron
    schedule, a trailing comment or a continuation line taken care of)."""
    out = []
    for token in tokens():
        if token.type != "fence" or token.info.strip() not in ("sh", ""):
            continue
        text = token.content.replace("\\\n", " ")
        for line in text.splitlines():
            line = re.split(r"\s#\s|\s>>|\s&&\s|;\s", line)[0].strip()
            found = re.search(r"(?:^|\s|\()pbem (.*)$", line)
            if found and not line.startswith("#") and "|" not in line:
                out.append(shlex.split(found.group(1).rstrip(")")))
    return out


def _parse(args: list[str]) -> None:
    """Let click parse ``args`` as the command line would, without running anything."""
    command, parent, name = PBEM, None, "pbem"
    while True:
        ctx = command.make_context(name, list(args), parent=parent)
        if not isinstance(command, click.Group):
            return
        rest = [*ctx._protected_args, *ctx.args] if hasattr(ctx, "_protected_args") else [*ctx.protected_args, *ctx.args]
        name, command, args = command.resolve_command(ctx, rest)
        parent = ctx


def test_every_example_command_is_understood():
    commands = example_commands()
    assert len(commands) > 25
    for args in commands:
        try:
            _parse(args)
        except click.UsageError as exc:
            pytest.fail(f"pbem {' '.join(args)}: {exc}")


def test_the_example_commands_without_a_server_run(tmp_path):
    db = str(tmp_path / "pbem.db")
    runnable = [args for args in example_commands()
                if any(" ".join(args).startswith(prefix) for prefix in RUNNABLE)]
    assert {args[0] if args[0] != "mail" else " ".join(args[:2]) for args in runnable} == {
        "new", "address", "mail settings", "mail tick", "mail outbox", "mail send"}
    ran = 0
    env = {"PBEM_DB": db, "PBEM_JUDGE_ADDRESS": "judge@example.org"}
    for args in runnable:
        if args[0] == "new" and ran:  # one game, made by the first example
            continue
        args = [a.replace("out/", str(tmp_path / "out") + "/").replace("outgoing/", str(tmp_path / "out") + "/")
                for a in args]
        result = CliRunner().invoke(PBEM, args, env=env)
        assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        ran += 1
    assert ran >= 8
