"""The game's viewer (``pbem page``) in Chromium: one self-contained file that makes no
request, every round or turn with its board and summary behind previous/next buttons and
the arrow keys, the log with every hash, 1667's votes, a phone's width; the judge keeps it
in a folder; and a game in play's page holds none of its secrets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.render import viewer
from pbem.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "games"


def page_of(name: str) -> str:
    return viewer.from_export((EXAMPLES / f"{name}.jsonl").read_text(encoding="utf-8"))


def assert_self_contained(html: str) -> None:
    assert "default-src 'none'" in html  # the policy forbids every request, should one slip in
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I), "a link to elsewhere"
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", html, re.I) and "@import" not in html
    assert "<link" not in html and "<iframe" not in html


@pytest.mark.parametrize("name", ["two-players", "four-players-long", "tortuga1667-nine-players"])
def test_the_page_is_one_file_that_asks_for_nothing(name):
    assert_self_contained(page_of(name))


def test_pbem_page_writes_the_viewer(tmp_path):
    out = tmp_path / "nine.html"
    runner = CliRunner()
    result = runner.invoke(app, ["page", "--file", str(EXAMPLES / "tortuga1667-nine-players.jsonl"), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["bytes"] == len(out.read_bytes())
    again = runner.invoke(app, ["page", "--file", str(EXAMPLES / "two-players.jsonl"), "-o", str(out)])
    assert again.exit_code == 1 and "exists" in again.stderr and "--force" in again.stderr
    assert "tortuga1667-nine-players" in out.read_text(encoding="utf-8")  # unchanged
    neither = runner.invoke(app, ["page"])
    assert neither.exit_code == 2 and "give a GAME or --file FILE" in neither.stderr


def test_the_log_holds_every_event_and_hash_of_the_export():
    text = (EXAMPLES / "four-players.jsonl").read_text(encoding="utf-8")
    html = viewer.from_export(text)
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        assert row["hash"] in html
    assert html.count('<tr class="head">') >= 5  # the heads the five round summaries published
    assert rows[0]["data"]["seed_hash"] in html


def open_page(browser, tmp_path, html: str, name: str, width=1280, height=900, mobile=False):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    browser.set_size(width, height, mobile=mobile)
    browser.open(path.as_uri())
    return path


def key(browser, name: str, code: int) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=name, code=name, windowsVirtualKeyCode=code)


def test_previous_next_and_the_arrow_keys(browser, tmp_path):
    html = page_of("tortuga1667-nine-players")
    open_page(browser, tmp_path, html, "nine.html")
    visible = "Array.from(document.querySelectorAll('section.turn')).filter(s => !s.hidden).map(s => s.id)"
    turns = browser.evaluate("document.querySelectorAll('section.turn').length")
    assert turns == 38
    assert browser.evaluate(visible) == ["turn-38"]  # opens at where the game stands
    assert browser.evaluate("document.getElementById('next').disabled") is True
    key(browser, "ArrowLeft", 37)
    key(browser, "ArrowLeft", 37)
    assert browser.evaluate(visible) == ["turn-36"]
    browser.evaluate("document.getElementById('next').click()")
    assert browser.evaluate(visible) == ["turn-37"]
    browser.evaluate("(() => { const p = document.getElementById('pick'); p.value = 'turn-1'; "
                     "p.dispatchEvent(new Event('change')); })()")
    assert browser.evaluate(visible) == ["turn-1"]
    assert browser.evaluate("document.getElementById('prev').disabled") is True
    key(browser, "ArrowRight", 39)
    assert browser.evaluate(visible) == ["turn-2"] and browser.evaluate("location.hash") == "#turn-2"
    # each turn shows its board and its summary
    assert browser.evaluate("Array.from(document.querySelectorAll('section.turn')).every("
                            "s => s.querySelector('svg') && s.querySelector('ul'))") is True
    # a link to a turn opens it, and so does moving to another turn's address (the back button)
    browser.open("about:blank")
    browser.open((tmp_path / "nine.html").as_uri() + "#turn-5")
    assert browser.evaluate(visible) == ["turn-5"]
    browser.evaluate("location.hash = '#turn-7'")
    assert browser.evaluate("new Promise(r => setTimeout(() => r(document.body.dataset.shown), 200))") == "turn-7"


def test_a_tortuga_page_has_a_board_for_every_round(browser, tmp_path):
    open_page(browser, tmp_path, page_of("four-players-long"), "long.html")
    rounds = browser.evaluate("Array.from(document.querySelectorAll('section.round')).map(s => "
                              "[s.id, !!s.querySelector('svg.board')])")
    assert [r[0] for r in rounds] == [f"round-{n}" for n in range(1, len(rounds) + 1)] and all(r[1] for r in rounds)
    key(browser, "ArrowLeft", 37)
    assert browser.evaluate("document.body.dataset.shown") == f"round-{len(rounds) - 1}"


def test_1667_votes_and_who_voted_what_once_disclosed():
    html = page_of("tortuga1667-nine-players")
    section = html[html.index('<section id="votes">'):html.index('<section id="log">')]
    assert section.count('<div class="vote">') == 4
    assert "Cards shown" in section and "Who played what" in section
    assert "Grace: cannon, British flag, no skull" in section  # vote 1, disclosed at the end


@pytest.mark.parametrize("name", ["two-players", "tortuga1667-nine-players"])
def test_it_reads_on_a_390_pixel_phone(browser, tmp_path, name):
    open_page(browser, tmp_path, page_of(name), f"{name}-phone.html", width=390, height=844, mobile=True)
    width = browser.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone: it scrolls sideways"
    assert browser.evaluate("getComputedStyle(document.querySelector('nav.rounds')).position") == "sticky"


def test_screenshots_desktop_and_phone(browser, tmp_path):
    """Pictures of both kinds of game at both sizes (docs/ keeps copies; see
    benchmarks/bench_pages.py --screenshots)."""
    for name in ("four-players", "tortuga1667-nine-players"):
        for width, height, mobile in ((1280, 900, False), (390, 844, True)):
            open_page(browser, tmp_path, page_of(name), f"{name}.html", width, height, mobile)
            data = browser.screenshot(tmp_path / f"{name}-{width}.png", full_page=False)
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, f"{name} at {width} px looks blank"


# ------------------------------------------------------------------ the judge's folder

def test_the_judge_keeps_the_page_in_a_folder(tmp_path, monkeypatch):
    db = tmp_path / "judge.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    runner = CliRunner()
    assert runner.invoke(app, ["new", "g", "--players", "ani,alex,frank", "--now"]).exit_code == 0
    www = tmp_path / "www"
    missing = runner.invoke(app, ["page", "g", "--folder", str(www)])
    assert missing.exit_code == 1 and "not a folder" in missing.stderr
    www.mkdir()
    assert runner.invoke(app, ["page", "g", "--folder", str(www)]).exit_code == 0
    page = www / "g.html"
    before = page.read_text(encoding="utf-8")
    assert runner.invoke(app, ["nmr", "g", "ani", "--force"]).exit_code == 0
    after = page.read_text(encoding="utf-8")
    assert after != before and "nmr" in after  # written again after the committed event
    refused = runner.invoke(app, ["nmr", "g", "ani", "--force"])  # refused: nothing written
    assert refused.exit_code == 1 and page.read_text(encoding="utf-8") == after
    assert runner.invoke(app, ["page", "g", "--no-folder"]).exit_code == 0
    assert runner.invoke(app, ["nmr", "g", "alex", "--force"]).exit_code == 0
    assert page.read_text(encoding="utf-8") == after  # no longer kept


def test_a_folder_page_that_cannot_be_written_is_a_warning_and_the_command_stands(tmp_path, monkeypatch):
    db = tmp_path / "judge.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    runner = CliRunner()
    assert runner.invoke(app, ["new", "g", "--players", "ani,alex,frank", "--now"]).exit_code == 0
    www = tmp_path / "www"
    www.mkdir()
    assert runner.invoke(app, ["page", "g", "--folder", str(www)]).exit_code == 0
    (www / "g.html").unlink()
    www.rmdir()  # the folder went away after it was set
    before = len(Store(db).events("g"))
    late = runner.invoke(app, ["nmr", "g", "ani", "--force"])
    assert late.exit_code == 0, late.stderr  # the default is committed all the same
    assert len(Store(db).events("g")) == before + 1
    warnings = [line for line in late.stderr.splitlines() if line.startswith("pbem: warning:")]
    assert len(warnings) == 1, late.stderr
    assert f"the viewer of g was not written to {www}" in warnings[0]
    assert "pbem: warning" not in late.stdout
    quiet = runner.invoke(app, ["status", "g"])  # nothing written, nothing to warn about
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr


# ------------------------------------------------------------------ secrecy

def test_a_tortuga_page_in_play_holds_no_secret(pages):
    store, game, secrets = pages.tortuga_in_play()
    html = viewer.from_store(store, game)
    assert_self_contained(html)
    assert secrets and all(len(s) >= 32 for s in secrets)
    for secret in secrets:
        assert secret not in html, "a seed or unrevealed salt is on the page"
    assert "secret-address@example.org" not in html
    assert "In play: round 2" in html


def test_a_1667_page_in_play_holds_no_secret(pages):
    store, game, secrets, private = pages.t1667_in_play()
    html = viewer.from_store(store, game)
    for secret in secrets:
        assert secret not in html, "a seed, a salt or a held vote is on the page"
    assert "Your loyalty" not in html and "secret until the game ends" not in html
    assert "Who played what" not in html  # nothing disclosed yet
    # the private view's hand is not listed, card by card, with its numbers
    for view in private.values():
        for card in view["hand"]:
            assert f'{card["n"]}: {card["card"]}' not in html


# ------------------------------------------------------------------ the judge's discretion in the log

def test_the_log_says_what_each_pause_extension_replacement_and_stand_in_move_was(tmp_path):
    """§16's events each get their own line in the viewer's log, from their public data."""
    from pbem.protocol import away, commands, loading
    from pbem.store import Store
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", "tortuga", ["ani", "alex", "frank"], {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    away.pause(store, "g1", "summer holidays", at="2030-01-01T11:00:00Z")
    away.resume(store, "g1", reason="back again", at="2030-01-01T12:00:00Z")
    away.extend(store, "g1", "frank", seconds=3600, by="player", reason="frank is travelling", at="2030-01-01T13:00:00Z")
    away.replace(store, "g1", "alex", reason="alex left the game", at="2030-01-01T14:00:00Z")
    commands.nmr(store, "g1", "ani", force=True, at="2030-01-01T15:00:00Z")  # one default: the stand-in takes ani's seat
    for _ in range(100):  # the others play on until the stand-in has moved for ani
        if any(e.data.get("by") == "stand-in" for e in store.events("g1")):
            break
        session = loading.load(store, "g1")
        player, _what, sealed, _ = session.owed()[0]
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind)
        play = commands.commit_for_player if sealed else commands.decide
        play(store, "g1", player, choice, at="2030-01-01T16:00:00Z")
    lines: dict[str, list[str]] = {}
    rows = [e.export_dict() for e in store.events("g1")]
    for row in rows:
        lines.setdefault(row["kind"], []).append(viewer.brief(row["kind"], row["data"], row["at"]))
    assert lines["paused"] == ["game paused by the moderator: summer holidays (no deadline runs)"]
    assert lines["resumed"] == ["game resumed by the moderator: back again"]
    assert lines["extended"] == ["1 deadline moved by the player frank: frank is travelling "
                                 "(frank's select 1.1 until 2030-01-02T12:00:00Z)"]  # an hour for the pause, one extended
    assert lines["replaced"] == ["seat alex given to another person by the moderator: alex left the game"]
    late = {"by": "moderator", "reason": "overdue", "requests": [
        {"player": "frank", "round": 1, "step": 1, "kind": "select", "from": "2030-01-02T12:00:00Z",
         "until": "2030-01-09T00:00:00Z"}]}
    assert viewer.brief("extended", late, "2030-01-05T00:00:00Z").endswith(", after the deadline had passed")
    assert not viewer.brief("extended", late, "2030-01-02T11:00:00Z").endswith("had passed")
    stood_in = [viewer.brief(r["kind"], r["data"]) for r in rows if r["data"].get("by") == "stand-in"]
    assert stood_in and all(line.endswith("(by the stand-in)") for line in stood_in)
    assert "(forced)" in lines["nmr"][0]
    html = viewer.from_store(store, "g1")
    for line in lines["paused"] + lines["extended"] + stood_in:
        assert line.replace("'", "&#39;") in html


PHONE_CHECK = """(() => {
  const W = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width && (r.width > W + 0.5 || r.right > W + 0.5 || r.left < -0.5))
      wide.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") || ""} ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  const shown = document.querySelector("#summaries section:not([hidden]) svg") ;
  const keys = document.querySelector(".top");
  const texts = Array.from(document.querySelectorAll("#summaries section:not([hidden]) svg.board text")).map((t) => {
    const svg = t.ownerSVGElement;
    return parseFloat(getComputedStyle(t).fontSize) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  });
  const seed = Array.from(document.querySelectorAll(".top dd code, table.log td.hash code"));
  return {W, wide, board: shown ? shown.getBoundingClientRect().top : null, keys: keys.getBoundingClientRect().top,
          smallest: texts.length ? Math.min(...texts) : null,
          copyWhole: seed.length > 0 && seed.every((c) => getComputedStyle(c).userSelect === "all")};
})()"""


@pytest.mark.parametrize("name", ["two-players", "four-players-long", "tortuga1667-five-players",
                                  "tortuga1667-nine-players"])
def test_no_element_is_wider_than_a_390_pixel_phone(browser, tmp_path, name):
    """On a 390 x 844 phone, a finished game's viewer: no element wider than the screen (the
    log's hashes and the revealed seed wrap), the board before the keys, every hash, seed and
    key selected whole by one tap, and Tortuga's board words at least 9 px high."""
    open_page(browser, tmp_path, page_of(name), f"{name}-narrow.html", width=390, height=844, mobile=True)
    found = browser.evaluate(PHONE_CHECK)
    assert found["W"] == 390
    assert not found["wide"], f"{len(found['wide'])} elements wider than the screen, e.g. {found['wide'][:5]}"
    assert found["board"] is not None and found["board"] < found["keys"], found
    assert found["copyWhole"]
    if not name.startswith("tortuga1667"):
        assert found["smallest"] >= 9, f"Tortuga's board has {found['smallest']:.1f} px text at 390 px"
    tallest = browser.evaluate("Math.max(...Array.from(document.querySelectorAll('table.log tr'), "
                               "(r) => r.getBoundingClientRect().height))")
    assert tallest < 160, f"a row of the log is {tallest:.0f} px tall on a phone"
