"""Running the page's JavaScript in node for the Tortuga 1667 tests (the 1667 engineer's
own copy of the small node helper; the lead unifies it with tests/pages/node.py).

The page's scripts are plain scripts that add to ``globalThis.PBEM``; node loads them in
order into one ``vm`` context, as the page inlines them in one file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "pbem" / "pages" / "js"
HERE = Path(__file__).resolve().parent
# what tortuga1667.js needs, in load order (the shim stands in for base.js until the merge)
SCRIPTS = [HERE / "js1667_shim.js", JS / "text.js", JS / "tortuga1667.js"]

_RUN = r"""
const fs = require("fs"), vm = require("vm");
const [scripts, code, input] = JSON.parse(fs.readFileSync(0, "utf8"));
const context = vm.createContext({});
for (const file of scripts) vm.runInContext(fs.readFileSync(file, "utf8"), context, {filename: file});
context.input = input;
const out = vm.runInContext(code, context);
process.stdout.write(JSON.stringify(out === undefined ? null : out));
"""


def node() -> str:
    path = shutil.which("node") or ("/usr/bin/node" if Path("/usr/bin/node").exists() else None)
    if path is None:
        raise RuntimeError("node is not installed (./dev test installs nodejs)")
    return path


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
