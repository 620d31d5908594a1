"""The pages: the verifier's time in Chromium on the nine-player 1667 example (target <=
0.5 s) and on a 14,000-event log (target <= 3 s), each measured from choosing the file (the
page's file input given it, as a user picks it) to the verdict shown, on a first run: a
fresh Chromium with a fresh profile for every measurement, nothing warm. Also the page's
size (target <= 1 MB), the size of the nine-player game's viewer (target <= 1 MB, the export
inside it included), and the time of `pbem page` for it (target <= 1 s, a fresh process,
start-up included).

The 14,000-event log is the long four-player example (379 events, every rules event of
Tortuga) with the judge's pauses and resumes between its events up to 14,000, re-chained:
a log `pbem audit --file` says OK to, whose every event the page replays.

Run: python benchmarks/bench_pages.py [--repeat 5] [--screenshots docs/]

With --screenshots DIR it also writes the pictures the README shows: the viewer of a
Tortuga game and of the nine-player 1667 game, desktop (1280 px) and phone (390 px).
Chromium is the system one (/usr/bin/chromium), driven as the tests drive it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NINE = ROOT / "examples" / "games" / "tortuga1667-nine-players.jsonl"
FOUR = ROOT / "examples" / "games" / "four-players.jsonl"
LONG = ROOT / "examples" / "games" / "four-players-long.jsonl"
# the page replays 1667's rules once pbem/pages/js/tortuga1667.js exists; until then its verdict is UNCHECKED
NINE_VERDICT = "OK" if (ROOT / "pbem" / "pages" / "js" / "tortuga1667.js").exists() else "UNCHECKED"


def chromium_module():
    spec = importlib.util.spec_from_file_location("pbem_bench_chromium", ROOT / "tests" / "pages" / "chromium.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def verifier_seconds(browser, repeat: int, source: Path = NINE, verdict: str = NINE_VERDICT) -> list[float]:
    """Time inside the page: from the export's text to the verdict, as performance.now() sees it."""
    browser.open((ROOT / "pbem" / "pages" / "verify.html").as_uri())
    text = json.dumps(source.read_text(encoding="utf-8"))
    times = []
    for _ in range(repeat):
        took = browser.evaluate(f"""(async () => {{ const t = performance.now();
            const r = await pbemVerify.check.verify({text}); if (r.verdict !== "{verdict}") throw new Error(r.line);
            return (performance.now() - t) / 1000; }})()""")
        times.append(took)
    return times


def long_log(events: int = 14000) -> str:
    """LONG with pauses and resumes (by the moderator, at the time of the event before them)
    spread between its moves until the log has ``events`` events (and, for an odd count, a
    replacement of a seat by the moderator); re-chained."""
    sys.path.insert(0, str(ROOT / "tests" / "pages"))
    import altered
    rows = [json.loads(line) for line in LONG.read_text(encoding="utf-8").splitlines()]
    start = next(k for k, r in enumerate(rows) if r["kind"] == "started") + 1
    end = len(rows) - 2  # the game's last move, then the seed: no pause after the game is over
    pairs, odd = divmod(events - len(rows), 2)
    out, gaps = rows[:start], end - start
    for k, row in enumerate(rows[start:end]):
        out.append(row)
        for _ in range(pairs // gaps + (1 if k < pairs % gaps else 0)):
            out.append({**row, "kind": "paused", "data": {"by": "moderator", "reason": "the judge is away"}})
            out.append({**row, "kind": "resumed", "data": {"by": "moderator", "reason": "back"}})
        if odd and k == gaps // 2:
            seat = rows[0]["data"]["players"][0]
            out.append({**row, "kind": "replaced", "data": {"seat": seat, "by": "moderator", "reason": "a new player"}})
    out += rows[end:]
    assert len(out) == events, len(out)
    return altered.rechain(out)


def first_run_seconds(chromium, path: Path, verdict: str) -> float:
    """A fresh Chromium (fresh profile) opens the page; the file is chosen through its input;
    seconds (the page's clock) from just before the choosing to the verdict shown."""
    with chromium.Chromium() as browser:
        browser.open((ROOT / "pbem" / "pages" / "verify.html").as_uri())
        start = browser.evaluate("""(() => {
            window.pbemShown = new Promise((done) => new MutationObserver((m, o) => {
                if (document.body.dataset.verdict) { o.disconnect(); done(performance.now()); } })
              .observe(document.body, { attributes: true }));
            return performance.now(); })()""")
        browser.set_files("#export-file", [path])
        end = browser.evaluate("window.pbemShown")
        shown = browser.evaluate("[document.body.dataset.verdict, document.getElementById('reason').textContent]")
        if shown[0] != verdict:
            raise SystemExit(f"{path.name}: the page said {shown}")
        return (end - start) / 1000


def page_seconds(repeat: int, out: Path) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (user + system) of `pbem page`, each in a fresh process."""
    import resource
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pbem.cli.app", "page", "--file", str(NINE), "-o", str(out), "--force"],
                       check=True, capture_output=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def screenshots(browser, folder: Path) -> None:
    from pbem.render import viewer
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for source, name in ((FOUR, "viewer-tortuga"), (NINE, "viewer-1667")):
            page = Path(tmp) / f"{name}.html"
            page.write_text(viewer.from_export(source.read_text(encoding="utf-8")), encoding="utf-8")
            for width, height, mobile, tag in ((1280, 900, False, "desktop"), (390, 844, True, "phone")):
                browser.set_size(width, height, mobile=mobile)
                browser.open(page.as_uri() + ("#turn-5" if name == "viewer-1667" else "#round-3"))
                browser.evaluate("window.scrollTo(0, document.querySelector('nav.rounds').getBoundingClientRect().top - 8)")
                browser.screenshot(folder / f"{name}-{tag}.png", full_page=False)
                print(f"wrote {folder / f'{name}-{tag}.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--screenshots", type=Path, default=None, help="write the README's pictures here")
    args = parser.parse_args()
    chromium = chromium_module()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "nine.html"
        page, page_cpu = page_seconds(args.repeat, out)
        size = out.stat().st_size
        big = Path(tmp) / "fourteen-thousand.jsonl"
        big.write_text(long_log(), encoding="utf-8")
        nine_first = [first_run_seconds(chromium, NINE, NINE_VERDICT) for _ in range(args.repeat)]
        big_first = [first_run_seconds(chromium, big, "OK") for _ in range(args.repeat)]
        with chromium.Chromium() as browser:
            tortuga = verifier_seconds(browser, args.repeat, LONG, "OK")
            if args.screenshots:
                screenshots(browser, args.screenshots)
    print(f"verifier, nine-player 1667 example, first run (fresh Chromium), file chosen to verdict shown ({NINE_VERDICT}): "
          f"median {statistics.median(nine_first):.3f} s (min {min(nine_first):.3f}, max {max(nine_first):.3f}; target <= 0.5 s)")
    print(f"verifier, 14,000-event log, first run (fresh Chromium), file chosen to verdict shown (OK): median "
          f"{statistics.median(big_first):.3f} s (min {min(big_first):.3f}, max {max(big_first):.3f}; target <= 3 s)")
    events = sum(1 for line in LONG.read_text(encoding="utf-8").splitlines() if line.strip())
    per_event = statistics.median(tortuga) / events
    print(f"verifier, {LONG.name} ({events} events, every one a rules event) in Chromium, warm: median "
          f"{statistics.median(tortuga):.3f} s, {per_event * 1000:.3f} ms an event")
    page_size = (ROOT / "pbem" / "pages" / "verify.html").stat().st_size
    print(f"the verifier page: {page_size} bytes (target <= 1 MB)")
    print(f"viewer of that game: {size} bytes ({size / 1e6:.2f} MB; target <= 1 MB)")
    print(f"pbem page for it (a fresh process): median {statistics.median(page):.3f} s "
          f"(min {min(page):.3f}, max {max(page):.3f}; target <= 1 s); CPU time median "
          f"{statistics.median(page_cpu):.3f} s (on a shared machine the wall clock waits for the CPU)")


if __name__ == "__main__":
    main()
