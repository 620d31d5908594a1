"""Benchmark the board pictures of the judge's mail: SVG to PNG, per board.

    python benchmarks/bench_board_picture.py              # resvg-py (pbem[mail]); CairoSVG too if installed
    python benchmarks/bench_board_picture.py --repeat 50
    python benchmarks/bench_board_picture.py --zoom 1     # the trade-off: drawn at the board's own size

Boards: a Tortuga player's board (from examples/games/four-players.jsonl, round 1) and the
Tortuga 1667 table (examples/games/tortuga1667-nine-players.jsonl, last turn), drawn at
twice their size as the mail does (``--zoom``: another size, to weigh sharpness against
time and bytes). Prints, per renderer: its import time, the CPU time per
board (``time.process_time``, steadier than the wall clock on a busy machine; the best of
``--repeat`` runs after one warm-up), the PNG's size, and the size of the installed
packages it needs. CairoSVG is measured only where it is installed (with the system's
cairo library): ``pip install cairosvg`` in a scratch virtual environment.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def boards() -> dict[str, str]:
    from pbem.render import record, summary
    out = {}
    for name, example, round_ in (("tortuga board", "four-players", 1), ("1667 table", "tortuga1667-nine-players", None)):
        rec = record.from_export((ROOT / "examples" / "games" / f"{example}.jsonl").read_text(encoding="utf-8"))
        html = summary.render_public(rec, round_, "html")[1]
        svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
        out[name] = max(svgs, key=len)
    return out


def package_size(names) -> float:
    """MB of the installed files of these distributions."""
    total = 0
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            path = Path(dist.locate_file(file))
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


def renderers(zoom: float):
    def resvg():
        from pbem.mail import pictures
        pictures.ZOOM = zoom
        return lambda svg: pictures._render.__wrapped__(pictures._with_namespace(svg), pictures.default_fonts())

    def cairo():
        import cairosvg
        return lambda svg: cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=zoom)
    return {"resvg-py": ("resvg_py", resvg, ["resvg-py"]),
            "CairoSVG": ("cairosvg", cairo, ["CairoSVG", "cairocffi", "cffi", "pycparser", "cssselect2",
                                              "tinycss2", "webencodings", "defusedxml", "pillow"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--zoom", type=float, default=None, help="drawn at this many times the board's size "
                        "(default: what the mail uses, pbem.mail.pictures.ZOOM)")
    args = parser.parse_args()
    if args.zoom is None:
        from pbem.mail import pictures
        args.zoom = pictures.ZOOM
    print(f"zoom {args.zoom:g}")
    svgs = boards()
    for name, (module, make, dists) in renderers(args.zoom).items():
        started = time.perf_counter()
        try:
            importlib.import_module(module)
        except (ImportError, OSError) as exc:
            print(f"{name}: not installed here ({type(exc).__name__}: {exc})")
            continue
        imported = (time.perf_counter() - started) * 1000
        render = make()
        print(f"{name}: import {imported:.0f} ms; installed packages {package_size(dists):.1f} MB")
        for board, svg in svgs.items():
            png = render(svg)  # warm-up (fonts loaded)
            best = float("inf")
            for _ in range(args.repeat):
                t = time.process_time()
                render(svg)
                best = min(best, time.process_time() - t)
            print(f"  {board}: {best * 1000:.1f} ms CPU per picture, {len(png) / 1000:.0f} kB PNG")


if __name__ == "__main__":
    main()
