"""The html summary, boards drawn as inline SVG, renders in a real browser (headless
Chromium) to a readable picture. Chromium is required: CI installs it (.ci/run)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from pbem.render import summary

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    found = shutil.which("chromium") or (Path("/usr/bin/chromium").exists() and "/usr/bin/chromium")
    if not found:
        pytest.fail("chromium is not installed, and this test needs it to take a screenshot of an html "
                    "summary: install it (Debian/Ubuntu: apt-get install -y chromium); CI installs it in .ci/run")
    return found


def png_facts(data: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values of the decoded image data."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8:offset + 8 + length])
        offset += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return width, height, len(set(pixels))


def test_html_summary_screenshot(games, tmp_path):
    record = games.example("four-players")
    _model, html = summary.render_public(record, 1, "html")
    page = tmp_path / "summary.html"
    page.write_text(html, encoding="utf-8")
    shot = tmp_path / "summary.png"
    command = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
               f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert shot.exists(), f"chromium made no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    data = shot.read_bytes()
    assert len(data) > 50_000, f"the screenshot is suspiciously small ({len(data)} bytes)"
    width, height, distinct = png_facts(data)
    assert (width, height) == (1200, 1600)
    assert distinct > 64, "the screenshot looks blank"
