"""The board as a picture in the judge's mail (issue 16, item 4).

Summaries and private messages go over real SMTP (aiosmtpd on 127.0.0.1) as
multipart/alternative: the text part, and an HTML part whose boards are PNG pictures
attached beside it (multipart/related, ``cid:``). The received HTML part, with its
pictures, is opened in the system Chromium: a script in the page reports each picture's
size and how many of its pixels are not background, and a screenshot is kept
(``PBEM_KEEP_SCREENSHOTS=DIR`` keeps it after the test) to be looked at.

Also: a player who asked for plain text gets one text part only; without the renderer,
mail still goes (text and HTML, no picture) and the moderator is told why; the pictures
carry legible text with nothing but Debian's default fonts (DejaVu).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import typer.main

from pbem.cli.program import app
from pbem.mail import pictures
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.protocol import commands

PBEM = typer.main.get_command(app)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DEJAVU = "/usr/share/fonts/truetype/dejavu"


def config(port: int) -> MailConfig:
    return MailConfig(judge_address="judge@example.org", smtp_host="127.0.0.1", smtp_port=port,
                      security="plain", timeout=30.0)


def play_one_step(game) -> None:
    """Everyone takes the default for the first sealed step: it resolves, a summary is queued."""
    session = game.session()
    for minute, player in enumerate(sorted(session.sealed.waiting), start=2):
        commands.nmr(game.store, "g1", player, force=True, at=game_helpers_at(minute))
    for minute, player in enumerate(sorted(game.session().sealed.owes_reveal() if game.session().sealed else []),
                                    start=20):
        commands.nmr(game.store, "g1", player, force=True, at=game_helpers_at(minute))


def game_helpers_at(minute: int) -> str:
    return f"2030-01-01T10:{minute:02d}:00Z"


def chromium() -> str:
    found = shutil.which("chromium") or (Path("/usr/bin/chromium").exists() and "/usr/bin/chromium")
    if not found:
        pytest.fail("chromium is not installed, and this test opens the received HTML mail in it: "
                    "apt-get install -y chromium (./dev test installs it)")
    return found


def html_with_pictures(message) -> tuple[str, dict[str, bytes]]:
    """The HTML part of a received message and its pictures by Content-ID (without <>)."""
    related = next(part for part in message.walk() if part.get_content_type() == "multipart/related")
    parts = list(related.iter_parts())
    html = parts[0].get_content()
    images = {part["Content-ID"].strip("<>"): part.get_content() for part in parts[1:]}
    assert all(part.get_content_type() == "image/png" for part in parts[1:])
    return html, images


def as_page(html: str, images: dict[str, bytes]) -> str:
    """What a mail client shows: each cid: reference resolved to its picture."""
    def resolve(match):
        cid = match.group(1)
        assert cid in images, f"cid:{cid} names no attached picture"
        return "data:image/png;base64," + base64.b64encode(images[cid]).decode("ascii")
    return re.sub(r"cid:([^\"'\s>]+)", resolve, html)


# The page reports, once loaded, every picture's natural size and how many of its pixels
# differ from its top-left corner (a blank picture has none).
REPORT = """<script>
window.addEventListener("load", () => {
  const out = [];
  for (const img of document.images) {
    const c = document.createElement("canvas");
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    let inked = 0;
    if (img.naturalWidth) {
      const g = c.getContext("2d"); g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) {
        if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 60) inked++;
      }
    }
    out.push({alt: img.alt, w: img.naturalWidth, h: img.naturalHeight, complete: img.complete, inked});
  }
  const pre = document.createElement("pre"); pre.id = "picture-report";
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>"""


def open_in_chromium(page_html: str, folder: Path, name: str) -> tuple[list[dict], Path]:
    """(the page's picture report, a screenshot of the page as received)."""
    page = folder / f"{name}.html"
    page.write_text(page_html, encoding="utf-8")
    probe = folder / f"{name}-probe.html"
    probe.write_text(page_html.replace("</body>", REPORT + "</body>"), encoding="utf-8")
    dumped = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={folder / 'profile-dom'}",
                             "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                            capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="picture-report">(.*?)</pre>', dumped.stdout, re.S)
    assert found, f"chromium gave no report (exit {dumped.returncode}): {dumped.stderr[-1500:]}"
    report = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    shot = folder / f"{name}.png"
    done = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={folder / 'profile-shot'}",
                           f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri()],
                          capture_output=True, text=True, timeout=300)
    assert shot.exists(), f"chromium made no screenshot (exit {done.returncode}): {done.stderr[-1500:]}"
    keep = os.environ.get("PBEM_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return report, shot


# ---------------------------------------------------------------------- the tests


def test_summary_and_private_message_arrive_with_the_board_as_a_picture(game, smtp_mailroom, tmp_path):
    port, room = smtp_mailroom
    play_one_step(game)
    report = send_due(game.store, config(port), "2030-01-01T11:00:00Z")
    assert report.ok and not report.notes, report.as_dict()

    inbox = room.inbox("ani@example.org")
    summary = next(m for m in inbox if "public summary" in m["Subject"])
    # a private message alone (the summary's message of the same moment carries ani's too)
    private = [m for m in inbox if "private message for ani" in m["Subject"]][-1]
    for message in (summary, private):
        assert message.get_content_type() == "multipart/alternative"
        text_part, html_part = message.get_payload()
        assert text_part.get_content_type() == "text/plain"
        assert html_part.get_content_type() == "multipart/related"
        assert "<svg" not in html_part.get_payload()[0].get_content()  # no client shows it: all pictures

    html, images = html_with_pictures(summary)
    report_, shot = open_in_chromium(as_page(html, images), tmp_path, "summary")
    boards = [r for r in report_ if r["alt"].startswith("board of")]
    # one board picture a message, the latest (issue 30: light mail); the others in words
    assert len(boards) == 1, [r["alt"] for r in boards]
    for picture in report_:
        assert picture["complete"] and picture["w"] > 0 and picture["h"] > 0, picture
        assert picture["inked"] > 0, f"{picture['alt']}: the picture is blank"
    for board in boards:  # drawn at its size (pictures.ZOOM): readable on a phone, a third of the bytes
        assert (board["w"], board["h"]) == (300, 468)
        assert board["inked"] > 5_000, board

    # the private message: the board too, and everything the text part says
    html, images = html_with_pictures(private)
    text = private.get_body(("plain",)).get_content()
    assert "To answer by mail" in text and "To answer by mail" in html
    report_, _shot = open_in_chromium(as_page(html, images), tmp_path, "private")
    # (the summary of the same moment may ride along in the same message, with everyone's boards)
    assert "board of ani" in [r["alt"] for r in report_]
    assert all(r["w"] > 0 and r["inked"] > 0 for r in report_)


def test_the_welcome_message_in_html_says_the_password_too(game, smtp_mailroom):
    port, room = smtp_mailroom
    assert send_due(game.store, config(port), "2030-01-01T11:00:00Z").ok
    welcome = room.inbox("alex@example.org")[0]
    password = game.passwords["alex"]
    html, images = html_with_pictures(welcome)
    assert password in welcome.get_body(("plain",)).get_content()
    assert password in html and images  # a reader who sees only the HTML part loses nothing


def test_a_player_who_asked_for_plain_text_gets_text_only(game, smtp_mailroom):
    port, room = smtp_mailroom
    runner = CliRunner()
    done = runner.invoke(PBEM, ["address", "g1", "frank", "--plain", "--db", str(game.store.path)])
    assert done.exit_code == 0, done.output
    assert "frank in g1 gets mail as plain text only" in done.output
    done = runner.invoke(PBEM, ["address", "g1", "--list", "table@lists.example.org", "--plain",
                                "--db", str(game.store.path)])
    assert done.exit_code == 0, done.output
    play_one_step(game)
    assert send_due(game.store, config(port), "2030-01-01T11:00:00Z").ok
    for address in ("frank@example.org", "table@lists.example.org"):
        got = room.inbox(address)
        assert got and all(m.get_content_type() == "text/plain" for m in got), address
    assert any(m.get_content_type() == "multipart/alternative" for m in room.inbox("ani@example.org"))
    # and back
    done = runner.invoke(PBEM, ["address", "g1", "frank", "--html", "--db", str(game.store.path), "--json"])
    assert done.exit_code == 0 and json.loads(done.output)["plain"] is False


def test_plain_is_refused_for_a_player_without_an_address(make_judge):
    game = make_judge()
    done = CliRunner().invoke(PBEM, ["address", "g1", "nobody", "--plain", "--db", str(game.store.path)])
    assert done.exit_code == 1
    assert "nobody" in done.output and "\n" == done.output[-1]


def test_without_the_renderer_mail_still_goes_and_the_moderator_is_told(make_judge, smtp_mailroom, monkeypatch):
    port, room = smtp_mailroom
    game = make_judge(at="2024-05-01T12:00:00Z")  # queued in the past: due for 'pbem mail send' now
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if pbem[mail] were not installed
    pictures.available.cache_clear()
    try:
        done = CliRunner().invoke(PBEM, ["mail", "send", "--smtp", f"127.0.0.1:{port}", "--security", "plain",
                                         "--from", "judge@example.org", "--db", str(game.store.path)])
        assert done.exit_code == 0, done.output
        assert f"pbem: note: {pictures.problem()}" in done.output
        assert "resvg-py is not installed" in done.output and "pbem[mail]" in done.output
        assert "4 sent" in done.output  # the welcome messages, all of them
        message = room.inbox("ani@example.org")[0]
        assert message.get_content_type() == "multipart/alternative"
        assert [p.get_content_type() for p in message.get_payload()] == ["text/plain", "text/html"]
        assert "Your mail password" in message.get_payload()[1].get_content()
    finally:
        pictures.available.cache_clear()


def test_pictures_have_legible_text_with_only_debians_default_fonts(game, tmp_path):
    if not Path(DEJAVU, "DejaVuSans.ttf").exists():
        pytest.fail(f"DejaVu Sans (Debian's default font, fonts-dejavu-core) is not in {DEJAVU}")
    from pbem.render import summary
    html = summary.render_private(game.session(), "ani", "html")[1]
    svg = re.search(r"<svg\b.*?</svg>", html, re.S).group(0)
    only_dejavu = pictures.Fonts(pictures.find_family([DEJAVU]), folders=(DEJAVU,), system=False)
    assert only_dejavu.family == "DejaVu Sans"
    with_text = pictures.render_png(svg, only_dejavu)
    without_text = pictures.render_png(re.sub(r"<text\b.*?</text>", "", svg, flags=re.S), only_dejavu)
    (tmp_path / "dejavu-only.png").write_bytes(with_text)
    keep = os.environ.get("PBEM_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "dejavu-only.png").write_bytes(with_text)
    # the text adds ink: the same board without its text is a much smaller picture
    assert len(with_text) > len(without_text) * 1.5, (len(with_text), len(without_text))
    # what resvg does without a family named: "sans-serif" is Arial, not there, so no text at all
    nameless = pictures.render_png(svg, pictures.Fonts(None, folders=(DEJAVU,), system=False))
    assert len(nameless) < len(with_text) * 0.7


def test_the_same_board_gives_the_same_message(game):
    """A message sent again after a crash is the same message: same pictures, same Content-IDs."""
    from pbem.mail.send import compose
    from pbem.store import outbox
    row = next(r for r in outbox.listing(game.store) if r.kind == "private")
    first, second = (compose(row, "judge@example.org").as_bytes() for _ in range(2))
    assert first == second
