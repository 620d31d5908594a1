"""pbem submit reads what a moderator saves: a mail (.eml, quoted-printable, base64 or HTML
only) or a forum thread page saved from a browser, with plain or signed blocks."""

from email.message import EmailMessage

import pytest

from pbem.protocol import commands, offline
from pbem.protocol.armour import ArmourError, extract_blocks


def commit_blocks(driver, keys: dict | None = None) -> dict[str, str]:
    """A commit block for every player the open sealed step waits for (signed with ``keys``)."""
    session = driver.session()
    bots = driver.bots(session)
    blocks = {}
    for player in session.sealed.owes_commit():
        sealed = commands.seal(session, player, bots[player].choose(session.state, player, "select"))
        blocks[player] = offline.signed_blocks(sealed, (keys or {}).get(player))["commit"]
    return blocks


def commits_in_log(cli, game: str) -> list[str]:
    return [e["data"]["player"] for e in cli.log(game) if e["kind"] == "commit"]


def saved_mail(body: str, **content) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Ani <ani@example.org>"
    msg["To"] = "Moderator <mod@example.org>"
    msg["Subject"] = "[g] my commitment"
    msg["Message-ID"] = "<saved-1@example.org>"
    msg.set_content(body, **content)
    return bytes(msg)


def readable_undecoded(data: bytes) -> bool:
    try:
        return bool(extract_blocks(data.decode("utf-8", errors="replace")))
    except ArmourError:
        return False


def html_lines(text: str) -> str:
    return "<br>\n".join(text.splitlines())


SHAPES = {
    "quoted-printable": lambda block: saved_mail(f"Here is my block:\n\n{block}\nAni\n", cte="quoted-printable"),
    "base64": lambda block: saved_mail(f"Here is my block:\n\n{block}\nAni\n", cte="base64"),
    "html-only": lambda block: saved_mail(
        f"<html><body><p>Here is my block:</p><p>{html_lines(block)}</p></body></html>",
        subtype="html", charset="windows-1252", cte="quoted-printable"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_saved_mail_with_an_unsigned_block(cli, new_game, tmp_path, shape):
    driver = new_game("g")
    player, block = next(iter(commit_blocks(driver).items()))
    path = tmp_path / "mail.eml"
    path.write_bytes(SHAPES[shape](block))
    assert not readable_undecoded(path.read_bytes())  # read as plain text, it held no block
    out = cli.ok("submit", "g", path)
    assert f"commitment of {player} for round 1 step 1 recorded" in out.stdout
    assert commits_in_log(cli, "g") == [player]


def test_saved_mail_on_standard_input(cli, new_game):
    driver = new_game("g")
    player, block = next(iter(commit_blocks(driver).items()))
    cli.ok("submit", "g", "-", input=SHAPES["quoted-printable"](block).decode("ascii"))
    assert commits_in_log(cli, "g") == [player]


@pytest.mark.parametrize("shape", SHAPES)
def test_saved_mail_with_a_signed_block(cli, driver_for, tmp_path, shape):
    keys, public = {}, {}
    for player in ("ani", "alex"):
        made = cli.json("keygen", "-o", tmp_path / f"{player}.key")
        keys[player] = (tmp_path / f"{player}.key").read_text().strip()
        public[player] = made["public_key"]
    cli.ok("new", "s", "--players", "ani,alex", "--require-signatures", "--now",
           "--key", f"ani={public['ani']}", "--key", f"alex={public['alex']}")
    driver = driver_for("s")
    blocks = commit_blocks(driver, keys)
    (tmp_path / "mail.eml").write_bytes(SHAPES[shape](blocks["alex"]))
    cli.ok("submit", "s", tmp_path / "mail.eml")
    assert commits_in_log(cli, "s") == ["alex"]
    signed = [e for e in cli.log("s") if e["kind"] == "commit"][0]["data"]
    assert signed.get("signature")


def test_forum_thread_page_with_blocks_in_pre_and_in_paragraphs(cli, new_game, tmp_path):
    driver = new_game("g")
    blocks = commit_blocks(driver)
    first, second = list(blocks)[:2]
    page = (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Tortuga g - Page 2</title>"
        "<script>window.dataLayer = [];</script><link rel='stylesheet' href='style.css'></head><body>"
        "<div id='page-body'>"
        f"<div class='post'><div class='author'>by {first} &raquo; Mon Jan 06, 2025 10:00 am</div>"
        f"<div class='content'>My move:<div class='codebox'><p>Code: <a href='#'>Select all</a></p>"
        f"<pre><code>{blocks[first]}</code></pre></div></div></div>\n"
        f"<div class='post'><div class='author'>by {second} &raquo; Mon Jan 06, 2025 11:00 am</div>"
        f"<div class='content'><p>Mine, pasted:<br>\n{html_lines(blocks[second])}<br>\ncheers</p></div></div>"
        "</div><footer>Powered by phpBB&reg; Forum Software</footer></body></html>\n")
    path = tmp_path / "thread-page-2.html"
    path.write_text(page, encoding="utf-8")
    cli.ok("submit", "g", path)
    assert sorted(commits_in_log(cli, "g")) == sorted([first, second])


def test_saved_mail_without_a_block_is_refused_and_changes_nothing(cli, new_game, tmp_path):
    new_game("g")
    path = tmp_path / "mail.eml"
    path.write_bytes(saved_mail("seal B,C\n", cte="base64"))
    cli.refused("g", "submit", "g", path, match="no submission block found")

