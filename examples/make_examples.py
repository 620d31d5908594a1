"""Regenerate the example games in examples/games/ and their golden summaries.

    python examples/make_examples.py                # play every example again, then render
    python examples/make_examples.py --golden-only  # only re-render the golden summaries
    python examples/make_examples.py --only two-players   # one example (repeatable)

Each example is played by the bots through the real protocol (sealed steps by seal, commit
and reveal; open choices by decide) in a throw-away database, then exported with
``pbem export`` (the seed is revealed at the end of every game). The bots' choices are
seeded by the example's name, but the server seed comes from ``secrets`` at ``pbem new``,
so a replayed example differs from the committed one: the committed files are the record.

The golden files are exactly what ``pbem replay examples/games/NAME.jsonl --format text``
(``NAME.summary.txt``) and ``--format markdown`` (``NAME.summary.md``) print when run from
the repository root; tests/render/test_render_examples.py diffs them. After a deliberate
change to the templates, run this script with ``--golden-only`` and review the diff.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = Path("examples") / "games"  # relative to ROOT: golden files quote the path

# name: (players in seat order, variant[, game type: tortuga unless named])
EXAMPLES = {
    "two-players": (["ani", "alex"], "standard"),
    "three-players": (["ani", "alex", "frank"], "standard"),
    "four-players": (["ani", "alex", "frank", "lothar"], "standard"),
    "four-players-long": (["Anne Bonny", "Mary_Read", "Calico Jack", "Blackbeard"], "long"),
    "tortuga1667-five-players": (["ani", "alex", "frank", "lothar", "mary"], "standard", "tortuga1667"),
    "tortuga1667-nine-players": (["Anne_Bonny", "Mary_Read", "Calico_Jack", "Blackbeard", "Kidd", "Morgan",
                                  "Grace", "Ching_Shih", "Roberts"], "advanced", "tortuga1667"),
}
GOLDEN = {"text": "summary.txt", "markdown": "summary.md"}
PBEM = [sys.executable, "-c", "from pbem.cli.program import main; main()"]


def pbem(*args: str) -> str:
    """Run the pbem command line from the repository root; its standard output."""
    done = subprocess.run([*PBEM, *args], cwd=ROOT, capture_output=True, text=True, encoding="utf-8")
    if done.returncode != 0:
        raise SystemExit(f"pbem {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def play(name: str) -> None:
    sys.path.insert(0, str(ROOT))
    from pbem.render.demo import new_bot_game, play_bots
    from pbem.store import Store
    players, variant, *game_type = EXAMPLES[name]
    with tempfile.TemporaryDirectory(prefix="pbem-examples-") as folder:
        db = Path(folder) / "examples.db"
        store = Store(db)
        try:
            new_bot_game(store, name, players, variant, game_type=(game_type or ["tortuga"])[0])
            play_bots(store, name, f"examples/{name}")
        finally:
            store.close()
        pbem("--db", str(db), "export", name, "-o", str(ROOT / GAMES / f"{name}.jsonl"), "--force")
    print(f"played {name}: {GAMES / name}.jsonl")


def golden(name: str) -> None:
    game = GAMES / f"{name}.jsonl"
    report = pbem("audit", "--file", str(game))
    if "replay: full" not in report:
        raise SystemExit(f"{game} does not replay in full:\n{report}")
    for fmt, suffix in GOLDEN.items():
        out = ROOT / GAMES / f"{name}.{suffix}"
        out.write_text(pbem("replay", str(game), "--format", fmt), encoding="utf-8", newline="\n")
        print(f"wrote {GAMES / out.name}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--golden-only", action="store_true", help="re-render the golden summaries only")
    parser.add_argument("--only", action="append", choices=sorted(EXAMPLES), help="one example (repeatable)")
    args = parser.parse_args(argv)
    names = args.only or list(EXAMPLES)
    (ROOT / GAMES).mkdir(parents=True, exist_ok=True)
    for name in names:
        if not args.golden_only:
            play(name)
        golden(name)


if __name__ == "__main__":
    main()
