"""Every script of the verifier page parses (a merge that leaves conflict markers in it, or
any other syntax error, would leave a page that verifies nothing): node checks each one."""

from __future__ import annotations

import re
import subprocess

import pytest

from pbem.pages.build import PAGE

from . import node


@pytest.mark.skipif(not node.available(), reason="node is not installed")
def test_every_script_of_the_page_parses(tmp_path):
    text = PAGE.read_text(encoding="utf-8")
    assert not re.search(r"^(<{7}|={7}|>{7})( |$)", text, re.M), "the page holds merge conflict markers"
    scripts = re.findall(r"<script[^>]*>\n(.*?)</script>", text, re.S)
    assert len(scripts) >= 3
    for number, script in enumerate(scripts, start=1):
        path = tmp_path / f"script{number}.js"
        path.write_text(script, encoding="utf-8")
        done = subprocess.run([node.NODE, "--check", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"script {number} of the page does not parse: {done.stderr[:500]}"
