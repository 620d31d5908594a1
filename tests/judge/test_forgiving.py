"""Mail as people write it (issue 16): greetings, sign-offs, client footers and chat are read
past, never refused; only a line that looks like a command of the game or the protocol is
refused; "Nothing was done" says why; hidden HTML is never read; a flowed mail's broken hash
is joined again. And the instructions: what each player is told to send, by mail."""

from __future__ import annotations

import json
from email.message import EmailMessage

from click.testing import CliRunner

from pbem.mail import ingest as pipeline
from pbem.protocol import commands, reports


def default_select(game, player):
    session = game.session()
    return session.rules.default(session.state, player, "select")


def answer_of(game) -> str:
    row = game.outbox("answer")[-1]
    return row["body_text"] or json.loads(row["render"])["parts"][0]["text"]


def test_greeting_sign_off_and_name_around_a_command_are_not_refused(game):
    pw = game.passwords["ani"]
    body = f"Hi judge,\n\nhope all is well!\npassword {pw}\nseal {default_select(game, 'ani')}\nThanks,\nAni\n"
    result = game.send("ani", body)
    assert result.outcome == "applied", result.lines
    assert [line["ok"] for line in result.lines] == [True]
    text = answer_of(game)
    assert "REFUSED" not in text and "Hi judge" not in text  # applied something: chat is not listed


def test_only_thanks_says_no_command_was_found(game):
    before = game.frozen()
    result = game.send("ani", "thanks!\n")
    assert result.outcome == "refused"
    text = answer_of(game)
    assert "Nothing was done: no command found in your message" in text
    assert "password" not in text.split("\n\n")[1]  # the reason is not a missing password
    assert game.frozen()[0] == before[0]


def test_chat_alone_is_listed_once_as_not_commands(game):
    result = game.send("ani", "Hello there\nHow do I play?\n")
    assert result.outcome == "refused"
    text = answer_of(game)
    assert "no command found in your message (not commands: 'Hello there', 'How do I play?')" in text


def test_a_command_without_the_password_says_the_password_is_missing(game):
    game.send("ani", f"Hi!\nseal {default_select(game, 'ani')}\nCheers\n")
    assert "Nothing was done: the password is missing." in answer_of(game)


def test_a_line_that_looks_like_a_choice_is_refused_with_its_reason(game):
    before = game.frozen()[0]
    result = game.send("ani", f"password {game.passwords['ani']}\nHello!\nskull:raid\n")
    assert [line["ok"] for line in result.lines] == [False, True]
    assert result.lines[0]["line"] == "skull:raid"
    assert result.lines[1]["text"] == "Not read as commands: 'Hello!'"
    assert game.frozen()[0] == before


def test_footers_and_disclaimers_are_not_read(game):
    pw = game.passwords["ani"]
    body = (f"password {pw}\nseal {default_select(game, 'ani')}\n\nSent from my iPhone\n"
            "CONFIDENTIALITY NOTICE: This e-mail is intended solely for the addressee.\nstatus please\n")
    result = game.send("ani", body)
    assert result.outcome == "applied" and len(result.lines) == 1


def test_hidden_html_is_never_read(game):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "ani@example.org", "judge@example.org", "[g1] move"
    msg["Message-ID"] = "<hidden-1@example.org>"
    msg.set_content(
        "<html><head><title>seal A</title></head><body>"
        f"<div>password {game.passwords['ani']}</div><div>status</div>"
        "<div style='display:none'><div>seal A</div>commit " + "ab" * 32 + "</div>"
        "<p hidden>seal B</p><!-- seal C --><span style='visibility: hidden'>seal D</span>"
        "</body></html>", subtype="html")
    before = game.frozen()[0]
    result = pipeline.ingest(game.store, msg.as_bytes(), "2030-01-01T10:05:00Z", ("judge@example.org",))
    assert [line["line"] for line in result.lines] == ["status"]
    assert game.frozen()[0] == before


def test_a_flowed_mail_that_breaks_a_commitment_at_a_soft_break(game):
    """format=flowed, delsp=no: the client broke the 64-hex line after a space it added."""
    session = game.session()
    token = reports.private(session, "alex")["context"]
    choice = default_select(game, "alex")
    import typer.main
    from pbem.cli.program import app
    sealed = CliRunner().invoke(typer.main.get_command(app), ["seal", "--context", token, choice, "--json"],
                                env={"PBEM_DB": "/nonexistent/no.db"})
    kept = json.loads(sealed.stdout)
    commitment = kept["commitment"]
    body = (f"password {game.passwords['alex']}\r\ncommit {commitment[:30]} \r\n{commitment[30:]}\r\n")
    raw = ("From: alex@example.org\r\nTo: judge@example.org\r\nSubject: [g1] move\r\n"
           "Message-ID: <flowed-1@example.org>\r\nMIME-Version: 1.0\r\n"
           "Content-Type: text/plain; charset=utf-8; format=flowed; delsp=no\r\n\r\n" + body).encode()
    result = pipeline.ingest(game.store, raw, "2030-01-01T10:05:00Z", ("judge@example.org",))
    assert result.outcome == "applied", result.lines
    assert game.log()[-1]["data"]["commitment"].endswith(commitment)


# ---------------------------------------------------------------------- the right instructions

def latest_private_text(game, player) -> str:
    for row in reversed(game.outbox()):
        if row["recipient"] == f"{player}@example.org":
            texts = [row["body_text"]] if row["body_text"] else [p.get("text", "") for p in json.loads(row["render"])["parts"]]
            for text in texts:
                if f"private message for {player}\n" in text:
                    return text[text.index(f"g1 - Tortuga - private message for {player}"):]
    raise AssertionError(f"no private message for {player}")


def test_a_mail_player_is_told_to_reply_seal_choice(game):
    text = latest_private_text(game, "ani")
    assert "Send seal CHOICE, CHOICE exactly one of: " in text
    assert "privately to the moderator" not in text


def test_a_home_sealer_is_told_to_reveal_with_the_salt_and_can(game):
    import typer.main
    from pbem.cli.program import app
    session = game.session()
    token = reports.private(session, "alex")["context"]
    choice = default_select(game, "alex")
    sealed = CliRunner().invoke(typer.main.get_command(app), ["seal", "--context", token, choice, "--json"],
                                env={"PBEM_DB": "/nonexistent/no.db"})
    kept = json.loads(sealed.stdout)
    assert game.send("alex", f"password {game.passwords['alex']}\ncommit {kept['commitment']}").outcome == "applied"
    for player in ("ani", "frank", "lothar"):
        game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")
    text = latest_private_text(game, "alex")
    assert "send your reveal now" in text
    assert "Send reveal CHOICE SALT" in text and "exactly one of" not in text.split("You owe:")[1]
    result = game.send("alex", f"password {game.passwords['alex']}\nreveal {kept['choice']} {kept['salt']}\nThanks!")
    assert result.outcome == "applied", result.lines


def test_the_final_result_carries_the_export_and_the_audit_line(game, tmp_path):
    from pbem.mail.send import write_due
    session = game.session()
    commands.reveal_seed(game.store, "g1", force=True, at="2030-01-01T11:00:00Z")  # play ends: the result
    write_due(game.store, tmp_path, "2030-01-01T12:00:00Z", "judge@example.org")
    results = [p for p in tmp_path.glob("*.eml") if b"final result" in p.read_bytes()]
    assert results, "no final result was mailed"
    import email
    from email.policy import default
    message = email.message_from_bytes(results[0].read_bytes(), policy=default)
    files = {part.get_filename(): part.get_content() for part in message.iter_attachments()}
    assert set(files) == {"g1.jsonl"}  # the viewer is made from it (issue 30: light mail)
    text = message.get_body(("plain",)).get_content()
    assert "save it and run: pbem audit --file g1.jsonl" in text and "pbem export" not in text
    assert "pbem page --file g1.jsonl -o g1.html" in text
    exported = tmp_path / "g1.jsonl"
    exported.write_bytes(files["g1.jsonl"])
    import typer.main
    from pbem.cli.program import app
    # the game's viewer (pbem page), made from the log the mail carries and nothing else, as the mail says
    page = CliRunner().invoke(typer.main.get_command(app), ["page", "--file", str(exported), "-o", str(tmp_path / "g1.html")],
                              env={"PBEM_DB": str(tmp_path / "none.db")})
    assert page.exit_code == 0, page.output
    viewer = (tmp_path / "g1.html").read_text()
    assert "<!DOCTYPE html>" in viewer and "default-src 'none'" in viewer
    assert all(json.loads(line)["hash"] in viewer for line in files["g1.jsonl"].splitlines())
    audit = CliRunner().invoke(typer.main.get_command(app), ["audit", "--file", str(exported), "--json"],
                               env={"PBEM_DB": str(tmp_path / "none.db")})
    assert json.loads(audit.stdout)["seed_revealed"], audit.output
    assert session.game_id == "g1"
