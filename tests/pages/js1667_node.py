"""Running the page's JavaScript in node for the Tortuga 1667 tests: an expression's value
(``evaluate``) and the draw-tape replay (``replay``, tests/pages/js1667_replay.js).

The scripts and node itself are tests/pages/node.py's: the page's sources in the build's
order (``pbem.pages.build.sources``), loaded into one ``vm`` context as the page inlines them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import node as _node
from pbem.pages.build import JS, sources

HERE = Path(__file__).resolve().parent
SCRIPTS = sources()  # the page's, in load order

_RUN = r"""
const fs = require("fs"), vm = require("vm");
const [scripts, code, input] = JSON.parse(fs.readFileSync(0, "utf8"));
const context = vm.createContext({ TextEncoder, console, atob, btoa });
for (const file of scripts) vm.runInContext(fs.readFileSync(file, "utf8"), context, {filename: file});
context.input = input;
const out = vm.runInContext(code, context);
process.stdout.write(JSON.stringify(out === undefined ? null : out));
"""


def node() -> str:
    if not _node.available():
        raise RuntimeError("node is not installed (./dev test installs nodejs)")
    return _node.NODE


def evaluate(code: str, data=None, scripts=None, timeout: float = 120):
    """The JSON value of the JavaScript expression ``code``, evaluated after ``scripts`` (the
    page's, by default) with ``input`` bound to ``data``."""
    files = [str(p) for p in (SCRIPTS if scripts is None else scripts)]
    done = subprocess.run([node(), "-e", _RUN], input=json.dumps([files, code, data]), capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"node failed: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout)


def replay(corpus: Path, scripts=None, timeout: float = 1200) -> dict:
    """tests/pages/js1667_replay.js over a corpus file: {"counts", "coverage", "mismatches"}."""
    files = [str(p) for p in (SCRIPTS if scripts is None else scripts)]
    done = subprocess.run([node(), str(HERE / "js1667_replay.js"), str(corpus), *files], capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"node failed: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout)
