"""The board picture in the judge's mail is readable on a phone (issue 30, "Light mail").

A real summary (Tortuga) and a real private message (Tortuga 1667) go over SMTP (aiosmtpd on
127.0.0.1); the received HTML part, its ``cid:`` pictures resolved, is opened in the system
Chromium at 390 x 844. Chromium reports how wide each board picture is shown; the SVG it was
drawn from (the one whose hash is the picture's Content-ID, read from the judge's outbox) says
its smallest font size and how wide it is drawn. Shown width / drawn width x smallest font
size = the smallest label on the phone, in CSS pixels, which must be at least 9 (Tortuga) or
8 (1667). A screenshot is kept with ``PBEM_KEEP_SCREENSHOTS=DIR``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from pbem.mail.send import send_due
from pbem.store.store import Store

_spec = importlib.util.spec_from_file_location("board_pictures", Path(__file__).with_name("test_board_pictures.py"))
bp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bp)

_cspec = importlib.util.spec_from_file_location("pbem_test_chromium_mail",
                                        Path(__file__).parents[1] / "pages" / "chromium.py")
chromium = importlib.util.module_from_spec(_cspec)
_cspec.loader.exec_module(chromium)

REPORT = """(() => ({W: document.documentElement.clientWidth,
  images: Array.from(document.images, (img) => ({src: img.getAttribute("data-cid"), alt: img.alt,
    shown: img.getBoundingClientRect().width, natural: img.naturalWidth, complete: img.complete}))}))()"""


def drawn_svgs(db: Path) -> dict[str, str]:
    """Every SVG the judge's outbox carries, by the digest ``pictures.inline`` names it with."""
    found = {}
    for row in Store(db).db.execute("SELECT body_html FROM outbox WHERE body_html IS NOT NULL").fetchall():
        for svg in re.findall(r"<svg\b[^>]*>.*?</svg>", row[0], re.S | re.I):
            found[hashlib.sha256(svg.encode("utf-8")).hexdigest()[:24]] = svg
    return found


def on_a_phone(message, folder: Path, name: str) -> tuple[dict, Path]:
    """The message's HTML part as a 390 x 844 phone shows it: what Chromium reports, a screenshot."""
    if not chromium.executable():
        bp.chromium()  # fails, saying how to install it
    html, images = bp.html_with_pictures(message)
    html = re.sub(r'src="cid:([^"]+)"', r'src="cid:\1" data-cid="\1"', html)
    page = folder / f"{name}.html"
    page.write_text(bp.as_page(html, images), encoding="utf-8")
    shot = folder / f"{name}-390.png"
    with chromium.Chromium() as browser:
        browser.set_size(390, 844, mobile=True)
        browser.open(page.as_uri())
        report = browser.evaluate(REPORT)
        browser.screenshot(shot)
    keep = os.environ.get("PBEM_KEEP_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return report, shot


def smallest_labels(report: dict, svgs: dict[str, str]) -> dict[str, float]:
    """For each board picture: its smallest label as shown, in CSS pixels."""
    sizes = {}
    for img in report["images"]:
        if not img["alt"].startswith("board") and "table" not in img["alt"]:
            continue
        digest = img["src"].split("@")[0].split(".")[-1]
        svg = svgs[digest]
        drawn = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) ', svg).group(1))
        smallest = min(float(s) for s in re.findall(r'font-size="([\d.]+)"', svg))
        sizes[img["alt"]] = smallest * img["shown"] / drawn
    return sizes


def test_tortugas_mail_board_reads_on_a_390_pixel_phone(game, smtp_mailroom, tmp_path):
    port, room = smtp_mailroom
    bp.play_one_step(game)
    assert send_due(game.store, bp.config(port), "2030-01-01T11:00:00Z").ok
    summary = next(m for m in room.inbox("ani@example.org") if "public summary" in m["Subject"])
    report, _shot = on_a_phone(summary, tmp_path, "tortuga-summary")
    assert report["W"] == 390
    sizes = smallest_labels(report, drawn_svgs(game.store.path))
    assert sizes, report
    print(f"\nTortuga mail board on a 390 px phone, smallest label (CSS px): {sizes}")
    assert all(size >= 9 for size in sizes.values()), sizes
    assert all(img["shown"] <= 390 for img in report["images"]), report


def test_1667s_mail_table_reads_on_a_390_pixel_phone(tmp_path, smtp_mailroom):
    port, room = smtp_mailroom
    db = tmp_path / "judge.db"
    players = ("ani", "alex", "frank", "lothar")
    done = CliRunner().invoke(bp.PBEM, ["new", "g1", "--game", "tortuga1667", "--players",
                                        ",".join(f"{p}={p}@example.org" for p in players), "--now",
                                        "--db", str(db)])
    assert done.exit_code == 0, done.output
    store = Store(db)
    assert send_due(store, bp.config(port), store.events("g1")[-1].at).ok
    with_table = [m for m in room.inbox("ani@example.org")
                  if any(p.get_content_type() == "image/png" for p in m.walk())]
    assert with_table, [m["Subject"] for m in room.inbox("ani@example.org")]
    report, _shot = on_a_phone(with_table[-1], tmp_path, "1667-private")
    assert report["W"] == 390
    sizes = smallest_labels(report, drawn_svgs(db))
    assert sizes, report
    print(f"\n1667 mail table on a 390 px phone, smallest label (CSS px): {sizes}")
    assert all(size >= 8 for size in sizes.values()), sizes
