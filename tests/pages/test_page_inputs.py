"""What the verifier page does with what it is given, in Chromium: a viewer made by ``pbem
page`` (it carries its export, exactly what ``pbem export`` writes, and the page checks the
game inside it), and bad input (not an export, empty, 100 MB, another game than the heads
or receipts name, a truncated line): one line saying what is wrong, never OK, no hang."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app

LINK = re.compile(r'<a id="pbem-export" download="([^"]*)" href="data:application/x-ndjson;base64,([A-Za-z0-9+/=]*)"')


def wait_verdict(browser) -> dict:
    return browser.evaluate("""(async () => {
        for (let i = 0; i < 6000 && !document.body.dataset.verdict; i++) await new Promise(r => setTimeout(r, 10));
        if (!document.body.dataset.verdict) throw new Error('the page gave no verdict');
        return {verdict: document.body.dataset.verdict, shown: document.getElementById('verdict').textContent,
                line: document.getElementById('reason').textContent,
                name: document.getElementById('export-name').textContent};
    })()""")


def choose(pages, path, drop: bool = False) -> dict:
    """Give the page a file, as a user does: through its file input, or dropped on it."""
    b = pages.browser
    b.open(pages.VERIFY.as_uri())
    b.evaluate("delete document.body.dataset.verdict")
    if drop:
        b.drop_files("#drop", [path])
    else:
        b.set_files("#export-file", [path])
    return wait_verdict(b)


def one_line_not_ok(shown: dict) -> None:
    assert shown["verdict"] != "OK" and shown["shown"] != "OK", shown
    assert shown["line"] and "\n" not in shown["line"], shown


# ------------------------------------------------------------------ the viewer carries its proof

@pytest.mark.parametrize("name", ["three-players", "tortuga1667-nine-players"])
def test_the_viewer_carries_the_export_and_the_page_checks_it(pages, name):
    export = pages.EXAMPLES / f"{name}.jsonl"
    out = pages.tmp / f"{name}.html"
    result = CliRunner().invoke(app, ["page", "--file", str(export), "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    found = LINK.search(html)
    assert found, "the viewer has no download link of its export"
    game = json.loads(export.read_text(encoding="utf-8").splitlines()[0])["game"]
    assert found.group(1) == f"{game}.jsonl"
    # exactly what pbem export writes (the examples are pbem export's files)
    assert base64.b64decode(found.group(2)) == export.read_bytes()
    assert "exactly what <code>pbem export</code> writes" in html
    shown = choose(pages, out, drop=True)
    assert shown["verdict"] == "OK", shown
    assert shown["line"].startswith("OK: complete"), shown
    assert "the export inside it is checked" in shown["name"]
    # the download link works: the browser saves the very bytes
    pages.browser.open(out.as_uri())
    href = pages.browser.evaluate("document.getElementById('pbem-export').href")
    assert base64.b64decode(href.split(",", 1)[1]) == export.read_bytes()


def test_a_viewer_of_a_game_in_the_database_carries_its_export(pages, tmp_path):
    from pbem.render import viewer
    from pbem.render.demo import new_bot_game, play_bots
    from pbem.store import Store, export_lines
    store = Store(tmp_path / "g.db", create=True)
    new_bot_game(store, "g1", ["ani", "bo", "cy", "dee"], game_type="tortuga1667", at="2024-05-01T12:00:00Z")
    play_bots(store, "g1", "viewer", at="2024-05-01T12:00:00Z", until=lambda s: s.state is not None and s.state.round >= 3)
    html = viewer.from_store(store, "g1")
    exported = "".join(export_lines(store.events("g1")))
    assert base64.b64decode(LINK.search(html).group(2)).decode("utf-8") == exported
    path = tmp_path / "g1.html"
    path.write_text(html, encoding="utf-8")
    shown = choose(pages, path)
    assert shown["verdict"] == "INCOMPLETE", shown  # in play: the seed is not out yet


def test_a_viewer_whose_export_was_altered_fails(pages):
    export = pages.EXAMPLES / "three-players.jsonl"
    out = pages.tmp / "viewer.html"
    assert CliRunner().invoke(app, ["page", "--file", str(export), "-o", str(out)]).exit_code == 0
    rows = pages.rows_of(export.read_text(encoding="utf-8"))
    reveal = next(r for r in rows if r["kind"] == "reveal")
    reveal["data"]["choice"] = reveal["data"]["applied"] = "none"
    forged = base64.b64encode(pages.rechain(rows).encode("utf-8")).decode()
    html = LINK.sub(lambda m: m.group(0).replace(m.group(2), forged), out.read_text(encoding="utf-8"))
    out.write_text(html, encoding="utf-8")
    shown = choose(pages, out)
    assert shown["verdict"] == "FAIL" and shown["line"].startswith(f"FAIL: event {reveal['seq']}: "), shown


def test_an_html_page_without_an_export_is_no_verdict(pages):
    path = pages.tmp / "other.html"
    path.write_text("<!DOCTYPE html><html><body><p>my game</p></body></html>\n", encoding="utf-8")
    shown = choose(pages, path)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and "is an HTML page without a game's export in it" in shown["line"], shown


# ------------------------------------------------------------------ bad input

def test_a_file_that_is_not_an_export(pages):
    path = pages.tmp / "notes.txt"
    path.write_text("Dear judge,\nhere is my move: B,C\n", encoding="utf-8")
    shown = choose(pages, path)
    one_line_not_ok(shown)
    assert shown["line"] == "FAIL: event 1: line 1 is not valid JSON (Expecting value)", shown
    line, _ = pages.audit_line(path)
    assert shown["line"] == line


def test_a_binary_file(pages):
    path = pages.tmp / "picture.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    shown = choose(pages, path)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and "is not text (its bytes are not UTF-8)" in shown["line"], shown


def test_an_empty_file(pages):
    path = pages.tmp / "empty.jsonl"
    path.write_bytes(b"")
    shown = choose(pages, path)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and shown["line"].startswith("empty.jsonl is empty: give the file pbem export wrote")


def test_a_100_mb_file(pages):
    path = pages.tmp / "huge.jsonl"
    line = (pages.EXAMPLES / "two-players.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n"
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(100 * 1024 * 1024 // len(line) + 1):
            handle.write(line)
    assert path.stat().st_size >= 100 * 1024 * 1024
    shown = choose(pages, path)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and shown["line"].startswith("huge.jsonl is 100.0 MB, more than the 32.0 MB this page reads"), shown


def test_a_truncated_line(pages):
    text = (pages.EXAMPLES / "three-players.jsonl").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    for cut in (lines[:-1] + [lines[-1][:50]], lines[:100] + [lines[100][:70] + "\n"] + lines[101:]):
        path = pages.tmp / "cut.jsonl"
        path.write_text("".join(cut), encoding="utf-8")
        shown = choose(pages, path)
        one_line_not_ok(shown)
        assert shown["verdict"] == "FAIL" and "is not valid JSON" in shown["line"], shown
        line, _ = pages.audit_line(path)
        assert shown["line"] == line


def test_heads_of_another_game(pages):
    """A summary of another game given with an export: its heads are no prefix of the log
    (FAIL, as the audit says), never OK."""
    page = pages.page()
    text = (pages.EXAMPLES / "three-players.jsonl").read_text(encoding="utf-8")
    summary = pages.EXAMPLES / "four-players.summary.md"
    shown = page.verify(text, name="three-players.jsonl", heads_files=[summary])
    one_line_not_ok(shown)
    assert shown["verdict"] == "FAIL" and "is not a prefix of this log" in shown["line"], shown
    line, _ = pages.audit_line(pages.tmp / "three-players.jsonl", "--heads", str(summary))
    assert shown["line"] == line


def test_receipts_of_another_game(pages):
    """A receipt the judge signed for another game: no verdict, but a line saying so."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from pbem.protocol.canonical import canonical_json
    from pbem.protocol.signing import generate_keypair, parse_secret_key
    page = pages.page()
    secret, public = generate_keypair()
    rows = pages.rows_of((pages.EXAMPLES / "three-players.jsonl").read_text(encoding="utf-8"))
    rows[0]["data"]["judge_key"] = public
    rows = pages.rows_of(pages.rechain(rows))
    body = {"v": 1, "kind": "receipt", "game": "another-game", "player": "ani", "seq": 6, "event": rows[5]["kind"],
            "hash": rows[5]["hash"], "head_seq": 7, "head_hash": rows[6]["hash"], "judge_key": public}
    sig = Ed25519PrivateKey.from_private_bytes(parse_secret_key(secret)).sign(b"pbem-receipt-v1\x00" + canonical_json(body))
    data = canonical_json({"receipt": body, "sig": base64.b64encode(sig).decode()})
    encoded = base64.b64encode(data).decode()
    given = "\n".join(["-----BEGIN PBEM RECEIPT-----", *[encoded[i:i + 64] for i in range(0, len(encoded), 64)],
                       "=" + hashlib.sha256(data).hexdigest()[:8], "-----END PBEM RECEIPT-----"]) + "\n"
    shown = page.verify(pages.rechain(rows), name="judged.jsonl", receipts=given)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and shown["line"] == f"receipt 1 is for game another-game, not {rows[0]['game']}", shown
    (pages.tmp / "receipt.txt").write_text(given, encoding="utf-8")
    result = pages.run_audit(["audit", "--file", str(pages.tmp / "judged.jsonl"), "--receipt", str(pages.tmp / "receipt.txt")])
    assert result.exit_code == 2 and shown["line"] in result.stderr, result.stderr


def test_one_quoter(pages):
    """The page's old quoter is base.js's: Python's repr, cut to 80 characters."""
    page = pages.page()
    values = ["it's", "a\nb", "x" * 100, None, "Šárka\u200b", 7, True, [1, "a"], {"k": None}]
    got = pages.browser.evaluate(f"{json.dumps(values)}.map((v) => pbemVerify.pyRepr(v))")
    from pbem.text import quote
    assert got == [quote(v) for v in values]
    assert page


# ------------------------------------------------------------------ the published judge key

def _judged(pages):
    from pbem.protocol.signing import generate_keypair
    secret, public = generate_keypair()
    rows = pages.rows_of((pages.EXAMPLES / "three-players.jsonl").read_text(encoding="utf-8"))
    rows[0]["data"]["judge_key"] = public
    return secret, public, pages.rechain(rows)


def test_the_published_judge_key_is_compared_as_the_audit_does(pages):
    from pbem.protocol.signing import generate_keypair
    page = pages.page()
    _secret, public, text = _judged(pages)
    path = pages.tmp / "judged.jsonl"
    shown = page.verify(text, name="judged.jsonl", judge_key=public)
    line, _ = pages.audit_line(path, "--judge-key", public)
    assert shown["verdict"] == "OK" and "judge key matches the published one" in shown["line"], shown
    assert shown["line"] == line
    other = generate_keypair()[1]
    shown = page.verify(text, name="judged.jsonl", judge_key=other)
    line, _ = pages.audit_line(path, "--judge-key", other)
    assert shown["verdict"] == "FAIL" and shown["line"] == line, (shown, line)
    assert "the log is not the game the judge announced" in line
    shown = page.verify(text, name="judged.jsonl", judge_key="pbem-ed25519-public:nonsense")
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and shown["line"].startswith("give the judge key as printed by pbem new"), shown


def test_a_receipt_from_another_key_than_the_published_one_proves_nothing(pages):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from pbem.protocol.canonical import canonical_json
    from pbem.protocol.signing import generate_keypair, parse_secret_key
    page = pages.page()
    _secret, public, text = _judged(pages)
    rows = pages.rows_of(text)
    forger, forger_public = generate_keypair()
    body = {"v": 1, "kind": "receipt", "game": rows[0]["game"], "player": "ani", "seq": 6, "event": rows[5]["kind"],
            "hash": "ab" * 32, "head_seq": 7, "head_hash": rows[6]["hash"], "judge_key": forger_public}
    sig = Ed25519PrivateKey.from_private_bytes(parse_secret_key(forger)).sign(b"pbem-receipt-v1\x00" + canonical_json(body))
    data = canonical_json({"receipt": body, "sig": base64.b64encode(sig).decode()})
    encoded = base64.b64encode(data).decode()
    given = "\n".join(["-----BEGIN PBEM RECEIPT-----", *[encoded[i:i + 64] for i in range(0, len(encoded), 64)],
                       "=" + hashlib.sha256(data).hexdigest()[:8], "-----END PBEM RECEIPT-----"]) + "\n"
    shown = page.verify(text, name="judged.jsonl", judge_key=public, receipts=given)
    one_line_not_ok(shown)
    assert shown["verdict"] == "USAGE" and shown["line"].endswith(": it proves nothing about this log"), shown
    (pages.tmp / "receipt.txt").write_text(given, encoding="utf-8")
    result = pages.run_audit(["audit", "--file", str(pages.tmp / "judged.jsonl"), "--judge-key", public,
                              "--receipt", str(pages.tmp / "receipt.txt")])
    assert result.exit_code == 2 and shown["line"] in result.stderr, result.stderr
