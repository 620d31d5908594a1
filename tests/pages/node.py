"""Run the page's JavaScript (pbem/pages/js/*.js) in node, for the tests.

The sources are loaded in the page's order (``pbem.pages.build.SOURCES``) into one
context with node's ``vm`` module, exactly as the page inlines them; then ``script`` runs
there with ``INPUT`` bound to the JSON given, and whatever it assigns to ``OUTPUT`` comes
back as JSON. One node process per call: a test passes many cases in one input.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from pbem.pages.build import sources

NODE = shutil.which("node") or "/usr/bin/node"

_RUNNER = r"""
const fs = require("fs"), vm = require("vm");
const [files, script, inputPath] = JSON.parse(process.argv[1]);
const context = vm.createContext({ TextEncoder, console, atob, btoa });
for (const f of files) vm.runInContext(fs.readFileSync(f, "utf8"), context, { filename: f });
context.INPUT = JSON.parse(fs.readFileSync(inputPath === "-" ? 0 : inputPath, "utf8"));
vm.runInContext(script, context, { filename: "test-script.js" });
process.stdout.write(JSON.stringify(context.OUTPUT === undefined ? null : context.OUTPUT));
"""


def available() -> bool:
    return Path(NODE).exists()


def run(script: str, data=None, timeout: float = 600):
    """``OUTPUT`` of ``script`` run after the page's sources, with ``INPUT`` = ``data``."""
    files = [str(p) for p in sources()]
    done = subprocess.run([NODE, "-e", _RUNNER, json.dumps([files, script, "-"])],
                          input=json.dumps(data).encode(), capture_output=True, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"node failed ({done.returncode}): {done.stderr.decode(errors='replace')[-4000:]}")
    return json.loads(done.stdout)
