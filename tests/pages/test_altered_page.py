"""The verifier page and ``pbem audit --file`` on altered, re-chained copies of exports of
both games (tests/pages/altered.py): on each, the same verdict and the same first event.

The copies are checked in batches in one page session (the page's own check, the one its
file picker calls, ``pbemVerify.check.verify``), so that hundreds take a minute, not an
hour. ``PBEM_ALTERED`` sets how many (default 80, drawn from all; ``all`` for every copy
the script makes, over 300)."""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import altered  # noqa: E402

from pbem.store.audit import audit_file  # noqa: E402

BATCH = 25


def first_event(line: str | None):
    found = re.match(r"(?:FAIL: )?event (\d+)", line or "")
    return int(found.group(1)) if found else None


def page_lines(browser, exports: list[str]) -> list[dict]:
    """The page's verdict and line for each export, checked one after another in the page."""
    out = []
    for start in range(0, len(exports), BATCH):
        batch = exports[start:start + BATCH]
        out += browser.evaluate(f"""(async () => {{
            const out = [];
            for (const text of {json.dumps(batch, ensure_ascii=False)}) {{
                const report = await pbemVerify.check.verify(text, {{ fileName: "altered.jsonl" }});
                out.push({{ verdict: report.verdict, line: report.line }});
            }}
            return out;
        }})()""")
    return out


def test_the_page_and_the_audit_agree_on_altered_copies(pages):
    copies = altered.make()
    wanted = os.environ.get("PBEM_ALTERED", "80")
    if wanted != "all":
        copies = random.Random(1).sample(copies, min(int(wanted), len(copies)))
    kinds = {c["what"].split("-")[0] for c in copies}
    browser = pages.browser
    browser.open(pages.VERIFY.as_uri())
    shown = page_lines(browser, [c["export"] for c in copies])
    differ, same_words = [], 0
    for c, page in zip(copies, shown):
        report = audit_file(c["export"])
        audit = report["verdict_line"]
        verdict = audit.split(":")[0]
        if page["verdict"] != verdict or first_event(page["line"]) != first_event(audit):
            differ.append({"copy": f"{c['name']}/{c['what']}", "page": page["line"][:300], "audit": audit[:300]})
        same_words += page["line"] == audit
    # the batch is the page's own check: through the file input, as a user gives it, the same
    page = pages.page()
    for c, batch in list(zip(copies, shown))[:3]:
        assert page.verify(c["export"], name="altered.jsonl")["line"] == batch["line"]
    print(f"{len(copies)} altered copies, {len(differ)} differ in verdict or first event, "
          f"{same_words} lines word for word the audit's")
    Path("/tmp/page/differ.json").write_text(json.dumps(differ, ensure_ascii=False, indent=1)) if os.environ.get("PBEM_ALTERED_DUMP") else None
    assert not differ, json.dumps(differ[:8], ensure_ascii=False, indent=1)
    if wanted == "all":
        assert len(copies) >= 300 and len(kinds) > 10
