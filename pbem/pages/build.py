"""Build pbem/pages/verify.html's rules replay from its sources: ``python -m pbem.pages.build``.

The page is one self-contained file (docs/protocol.md §17). Its rules replay is written as
plain scripts in ``pbem/pages/js/`` (each ``(function (P) {...})(globalThis.PBEM)``), and
this module inlines them, in the fixed order of ``ORDER``, into the one script block between
the markers below. Nothing else of the page changes. It then writes the page's SHA-256 into
the line of docs/protocol.md §17 that prints it (when the docs are at hand: a source
checkout). ``--check`` exits 1 when the page or that line is not what the sources make (a
test runs it), so the checked-in page is always current.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "verify.html"
JS = HERE / "js"
# base first (P.ChoiceError, hashing, draws), then text (P.text, the 1667 rules' words), then
# each game, then the protocol replay
ORDER = ("base.js", "text.js", "tortuga.js", "tortuga1667.js", "replay.js")
BEGIN = "<script id=\"pbem-rules\">\n"
END = "</script>\n<!-- end of pbem-rules -->\n"
DOC = HERE.parents[1] / "docs" / "protocol.md"
SHA_LINE = re.compile(r"(SHA-256 of pbem/pages/verify\.html: )([0-9a-f]{64})")


def sources() -> list[Path]:
    """The sources that exist, in the page's order (tortuga1667.js may not exist yet)."""
    return [JS / name for name in ORDER if (JS / name).exists()]


def block() -> str:
    parts = [f"// ---- pbem/pages/js/{p.name}\n{p.read_text(encoding='utf-8').rstrip()}\n" for p in sources()]
    body = "".join(parts).replace("</script", "<\\/script")
    return BEGIN + body + END


def built(page: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + block() + page[end:]


def documented(doc: str, page: str) -> str:
    """docs/protocol.md with the page's SHA-256 in §17's line."""
    digest = hashlib.sha256(page.encode("utf-8")).hexdigest()
    return SHA_LINE.sub(lambda m: m.group(1) + digest, doc)


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = built(page)
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else None
    new_doc = documented(doc, new) if doc is not None else None
    if "--check" in argv:
        if new != page or new_doc != doc:
            print("pbem/pages/verify.html (or its SHA-256 in docs/protocol.md) is not current: "
                  "run python -m pbem.pages.build", file=sys.stderr)
            return 1
        return 0
    if new != page:
        PAGE.write_bytes(new.encode("utf-8"))
    if new_doc != doc:
        DOC.write_bytes(new_doc.encode("utf-8"))
    print(f"{PAGE}: {len(new.encode('utf-8'))} bytes, SHA-256 {hashlib.sha256(new.encode('utf-8')).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
