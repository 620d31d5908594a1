"""Fixtures for the page tests: one headless system Chromium for the whole module, games
played by bots through the real protocol (a signed one too), altered copies of exports
re-chained so that only the alteration is wrong, and ``pbem audit`` to compare with.

Helpers are handed out by fixtures (``pages``), not imported: every test directory has its
own ``conftest`` module.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from pbem.cli.program import app
from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.signing import generate_keypair
from pbem.render.demo import new_bot_game, play_bots
from pbem.store import Store, export_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "games"
VERIFY = ROOT / "pbem" / "pages" / "verify.html"
AT = "2024-05-01T12:00:00Z"


def _load_chromium_module():
    spec = importlib.util.spec_from_file_location("pbem_test_chromium", Path(__file__).with_name("chromium.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


chromium = _load_chromium_module()


@pytest.fixture(scope="module")
def browser():
    if not chromium.executable():
        pytest.fail("chromium is not installed, and the page tests drive it: apt-get install -y chromium "
                    "(./dev and .ci/run install it)")
    with chromium.Chromium() as b:
        yield b


def rows_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def rechain(rows: list[dict]) -> str:
    """The export of ``rows`` with every prev_hash and hash recomputed: a forger's copy whose
    chain is intact, so only what was altered in it can give it away."""
    prev, out = GENESIS_HASH, []
    for row in rows:
        event = {k: row[k] for k in ("game", "seq", "kind", "at", "data")}
        digest = event_hash(prev, event)
        out.append(json.dumps({**event, "prev_hash": prev, "hash": digest}, sort_keys=True,
                              separators=(",", ":"), ensure_ascii=False) + "\n")
        prev = digest
    return "".join(out)


def export_of(store, game: str) -> str:
    return "".join(export_lines(store.events(game)))


def demo_export(tmp_path: Path, game_type: str, players: int, bot_seed: str = "pages") -> str:
    """A fresh bot game of ``game_type`` played to its end through the protocol."""
    from pbem.render.demo import NAMES
    store = Store(tmp_path / f"{game_type}.db", create=True)
    new_bot_game(store, "fresh", NAMES[:players], game_type=game_type, at=AT)
    play_bots(store, "fresh", bot_seed, at=AT)
    return export_of(store, "fresh")


def signed_export(tmp_path: Path, moves: int | None = 40, game_type: str = "tortuga") -> str:
    """A signed game (every commit, reveal and decision signed by its player), played by
    bots for ``moves`` submissions (in play: the seed is not revealed), or to its end."""
    store = Store(tmp_path / f"signed-{game_type}.db", create=True)
    names = ["ani", "alex", "frank"] if game_type == "tortuga" else ["ani", "bo", "cy", "dee", "eve"]
    keys = {p: generate_keypair() for p in names}
    commands.create_game(store, "signed", game_type, names, {}, require_signatures=True,
                         keys={p: pub for p, (_, pub) in keys.items()}, start=True, at=AT)
    session = loading.load(store, "signed")
    bots = {p: session.rules.bot(f"signed/{p}", "random") for p in names}
    count = 0
    while not session.finished and (moves is None or count < moves):
        count += 1
        step = session.sealed
        if step is not None and step.owes_commit():
            held = {}
            for player in step.owes_commit():
                sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
                held[player] = offline.signed_blocks(sealed, keys[player][0])
                session = loading.load(store, "signed")
                submissions.submit(store, "signed", held[player]["commit"], at=AT)
            for blocks in held.values():
                submissions.submit(store, "signed", blocks["reveal"], at=AT)
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            if request.kind == "action":  # call a vote whenever one is legal: anonymous steps to check
                for word in ("attack", "mutiny", "brawl"):
                    try:
                        choice = session.rules.check(session.state, request.player, word)
                        break
                    except Exception:  # noqa: BLE001 - not legal now: the bot's own choice stands
                        continue
            block = offline.signed_decision(session, request.player, choice, keys[request.player][0])
            submissions.submit(store, "signed", block, at=AT)
        session = loading.load(store, "signed")
    return export_of(store, "signed")


def _run_audit(args: list[str]):
    """``pbem ARGS`` in-process; or, with $PBEM_COMPARE_AUDIT set to a command (e.g. another
    checkout's ``/path/.venv/bin/python -m pbem.cli.app``), that pbem, to compare the page
    with an audit from another branch."""
    import os
    import shlex
    import subprocess
    other = os.environ.get("PBEM_COMPARE_AUDIT")
    if not other:
        return CliRunner().invoke(app, args)
    done = subprocess.run([*shlex.split(other), *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONSAFEPATH": "1"})
    return SimpleNamespace(stdout=done.stdout, stderr=done.stderr, exit_code=done.returncode)


def audit_has_verdicts() -> bool:
    """Whether this pbem's audit prints the verdict lines of docs/protocol.md §13."""
    result = _run_audit(["audit", "--help"])
    return "--seed-hash" in result.stdout


def audit_line(path: Path, *options: str) -> tuple[str | None, int]:
    """``pbem audit --file PATH``'s verdict line and exit status (None for a usage error).

    Until the audit prints the verdicts of docs/protocol.md §13 itself, its report is
    turned into that line here; once it does, its own line is used word for word."""
    result = _run_audit(["audit", "--file", str(path), *options, "--json"])
    report = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    if "verdict_line" in report:
        return report["verdict_line"], result.exit_code
    if result.exit_code == 2 or not report:
        return None, result.exit_code
    if not report.get("ok"):
        return f"FAIL: {report['problem']}", result.exit_code
    return ("OK" if report.get("seed_revealed") else "INCOMPLETE"), result.exit_code


class Page:
    """The verifier page open in the browser; ``verify`` gives it an export the way a user
    does (through its file input) and returns what it shows."""

    def __init__(self, browser, tmp_path: Path):
        self.browser, self.tmp = browser, tmp_path
        browser.open(VERIFY.as_uri())

    def verify(self, text: str, name: str = "game.jsonl", seed_hash: str = "", judge_key: str = "", head: str = "",
               heads: str = "", receipts: str = "", heads_files: list[Path] = (),
               receipts_files: list[Path] = ()) -> dict:
        """``heads_files`` and ``receipts_files`` go through the page's file inputs (an mbox of
        summaries, a saved mail holding receipts)."""
        path = self.tmp / name
        path.write_text(text, encoding="utf-8")
        b = self.browser
        b.evaluate(f"""(() => {{
            delete document.body.dataset.verdict;
            document.getElementById('export-file').value = '';  // the same file again is a change too
            document.getElementById('heads-file').value = '';
            document.getElementById('receipts-file').value = '';
            document.getElementById('seed-hash').value = {json.dumps(seed_hash)};
            document.getElementById('judge-key').value = {json.dumps(judge_key)};
            document.getElementById('head').value = {json.dumps(head)};
            document.getElementById('heads').value = {json.dumps(heads)};
            document.getElementById('receipts').value = {json.dumps(receipts)};
        }})()""")
        if heads_files:
            b.set_files("#heads-file", list(heads_files))
        if receipts_files:
            b.set_files("#receipts-file", list(receipts_files))
        b.set_files("#export-file", [path])
        return b.evaluate("""(async () => {
            for (let i = 0; i < 6000 && !document.body.dataset.verdict; i++) await new Promise(r => setTimeout(r, 10));
            if (!document.body.dataset.verdict) throw new Error('the page gave no verdict');
            return {verdict: document.body.dataset.verdict, shown: document.getElementById('verdict').textContent,
                    line: document.getElementById('reason').textContent,
                    details: document.getElementById('details').innerText};
        })()""")


@pytest.fixture
def pages(browser, tmp_path):
    return SimpleNamespace(page=lambda: Page(browser, tmp_path), rows_of=rows_of, rechain=rechain,
                           demo_export=lambda kind, n: demo_export(tmp_path, kind, n),
                           signed_export=lambda moves=40, game_type="tortuga": signed_export(tmp_path, moves, game_type),
                           audit_line=audit_line, run_audit=_run_audit, audit_has_verdicts=audit_has_verdicts, EXAMPLES=EXAMPLES, VERIFY=VERIFY, tmp=tmp_path,
                           browser=browser, tortuga_in_play=lambda: tortuga_in_play(tmp_path),
                           t1667_in_play=lambda: t1667_in_play(tmp_path), replays=replays,
                           ok_verdict=lambda kind: "OK" if replays(kind) else "UNCHECKED")


def replays(name: str) -> bool:
    """Whether the page has the rules of the game an example or a game type names: both games
    since pbem/pages/js/tortuga1667.js is in the page (without that file, 1667 logs would be
    UNCHECKED, and the tests would expect that verdict instead)."""
    return "1667" not in name or (ROOT / "pbem" / "pages" / "js" / "tortuga1667.js").exists()


# ------------------------------------------------------------------ games in play, with secrets

def secrets_of(store, game: str) -> list[str]:
    """Everything of ``game`` kept outside the log: the server seed, moderator-made salts,
    held votes (every 64-hex value inside them too, and each whole value)."""
    import re
    values = [row[0] for row in store.conn.execute("select value from secrets where game = ?", (game,))]
    found = set(values)
    for value in values:
        found.update(re.findall(r"[0-9a-f]{64}", value))
    return sorted(found)


def tortuga_in_play(tmp_path: Path):
    """A Tortuga game in round 2 with a sealed step open: one choice sealed by the moderator
    (its salt in the store), one committed by its player and not yet revealed, addresses set."""
    from pbem.store import judge as mail_tables
    store = Store(tmp_path / "inplay.db", create=True)
    new_bot_game(store, "inplay", ["ani", "alex", "frank"], at=AT)
    play_bots(store, "inplay", "secrecy", at=AT, until=lambda s: s.state.round >= 2 and s.sealed is not None
              and not s.sealed.commits)
    session = loading.load(store, "inplay")
    kind = session.sealed.kind
    commands.commit_for_player(store, "inplay", "ani", session.rules.default(session.state, "ani", kind), at=AT)
    sealed = commands.seal(loading.load(store, "inplay"), "alex", session.rules.default(session.state, "alex", kind))
    commands.commit(store, "inplay", "alex", sealed["commitment"], (sealed["round"], sealed["step"]), at=AT)
    with store.transaction():
        for player in ("ani", "alex", "frank"):
            mail_tables.set_address(store, "inplay", player, f"{player}.secret-address@example.org")
    return store, "inplay", [sealed["salt"], *secrets_of(store, "inplay")]


def t1667_in_play(tmp_path: Path):
    """A Tortuga 1667 game in play with an anonymous vote half revealed: some votes held by
    the judge, not yet batched; loyalties and hands hidden."""
    store = Store(tmp_path / "inplay1667.db", create=True)
    names = ["ani", "bo", "cy", "dee", "eve"]
    new_bot_game(store, "vote", names, game_type="tortuga1667", at=AT)
    play_bots(store, "vote", "secrecy", at=AT,
              until=lambda s: s.sealed is not None and s.sealed.anonymous and not s.sealed.commits)
    session = loading.load(store, "vote")
    assert session.sealed is not None, "the bots finished the game without a vote"
    bots = {p: session.rules.bot(f"v/{p}") for p in names}
    held = []
    for player in session.sealed.owes_commit():
        sealed = commands.seal(session, player, bots[player].choose(session.state, player, session.sealed.kind))
        session = commands.commit(store, "vote", player, sealed["commitment"], (sealed["round"], sealed["step"]), at=AT)
        held.append(sealed)
    for sealed in held[:-1]:  # the last voter has not revealed: no batch yet
        commands.reveal(store, "vote", sealed["player"], sealed["choice"], sealed["salt"], at=AT)
    session = loading.load(store, "vote")
    private = {p: session.rules.view(session.state, p) for p in names}
    return store, "vote", [s["salt"] for s in held] + secrets_of(store, "vote"), private
