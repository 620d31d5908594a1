"""Build pbem/pages/verify.html's rules replay from its sources: ``python -m pbem.pages.build``.

The page is one self-contained file (docs/protocol.md §17). Its rules replay is written as
plain scripts in ``pbem/pages/js/`` (each ``(function (P) {...})(globalThis.PBEM)``), and
this module inlines them, in the fixed order of ``ORDER``, into the one script block between
the markers below. Nothing else of the page changes. ``--check`` exits 1 when the page is
not what the sources make (a test runs it), so the checked-in page is always current.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "verify.html"
JS = HERE / "js"
# base first (P.ChoiceError, hashing, draws), then each game, then the protocol replay
ORDER = ("base.js", "tortuga.js", "tortuga1667.js", "replay.js")
BEGIN = "<script id=\"pbem-rules\">\n"
END = "</script>\n<!-- end of pbem-rules -->\n"


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


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = built(page)
    if "--check" in argv:
        if new != page:
            print("pbem/pages/verify.html is not current: run python -m pbem.pages.build", file=sys.stderr)
            return 1
        return 0
    if new != page:
        PAGE.write_bytes(new.encode("utf-8"))
    print(f"{PAGE}: {len(new.encode('utf-8'))} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
