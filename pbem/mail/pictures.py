"""The board as a picture in mail: every inline ``<svg>`` of an HTML body becomes a PNG.

Mail clients do not show inline SVG (Gmail and Outlook drop it), but they all show a PNG
that travels inside the message and is named by ``cid:`` (RFC 2392). ``inline(html, domain)``
renders each ``<svg>...</svg>`` of the body to PNG and puts an ``<img src="cid:...">`` in its
place; ``send.compose`` attaches the pictures next to the HTML (``multipart/related``).

The renderer is resvg, through its Python binding ``resvg-py`` (the optional extra
``pbem[mail]``; why resvg and not CairoSVG: docs/email.md, "What a player receives"). When it
is missing, ``inline`` leaves the body as it is (the text part and the HTML part still go,
the board drawn only for the clients that show SVG) and ``problem()`` says why, for the
moderator (``pbem mail send`` prints it).

Fonts: resvg asks for "sans-serif" by the name Arial, which a Debian machine with only its
default fonts (DejaVu) does not have, and then draws no text at all. So the family is named
explicitly: the first of ``FAMILIES`` installed, looked up by its font files.

The same SVG always gives the same PNG and the same Content-ID (a hash of the SVG), so a
message sent again after a crash is the same message. Renders are cached per process: one
summary to ten players is drawn once.
"""

from __future__ import annotations

import functools
import hashlib
import html as htmllib
import re
from dataclasses import dataclass
from pathlib import Path

EXTRA = "pbem[mail]"
# resvg draws at the SVG's size, shown at its size or smaller: Tortuga's board is 300 pixels
# wide, shown whole at its size on a phone 390 pixels wide (its smallest words 9 pixels), and
# a picture at twice the size weighs twice as much (docs/email.md, "How heavy a message is")
ZOOM = 1
BOARDS = 1  # board pictures in one message: the latest
_SVG = re.compile(r"<svg\b[^>]*>.*?</svg>", re.S | re.I)
_ATTRIBUTE = r'\b{}\s*=\s*"([^"]*)"'

# (family, its regular font file as installed by some system), in order of preference.
# DejaVu Sans first: Debian's default font (fonts-dejavu-core), there on any Debian machine
# with fonts at all.
_FONT_FOLDERS = ("/usr/share/fonts", "/usr/local/share/fonts", "/Library/Fonts",
                 "/System/Library/Fonts", "C:/Windows/Fonts")
FAMILIES = (("DejaVu Sans", ("DejaVuSans.ttf",)),
            ("Liberation Sans", ("LiberationSans-Regular.ttf",)),
            ("Noto Sans", ("NotoSans-Regular.ttf",)),
            ("Arial", ("Arial.ttf", "arial.ttf")),
            ("Helvetica", ("Helvetica.ttc",)))


@dataclass(frozen=True)
class Picture:
    """One PNG for one ``cid:`` in the body."""

    cid: str  # the Content-ID, in <>
    png: bytes
    name: str  # a file name for clients that list it: board-1.png


@dataclass(frozen=True)
class Fonts:
    """Which fonts resvg may use: the family it draws "sans-serif" with, and where fonts
    are found (the system's, or only ``folders``)."""

    family: str | None
    folders: tuple[str, ...] = ()
    system: bool = True


def problem() -> str | None:
    """Why mail goes without board pictures (None when it goes with them)."""
    try:
        import resvg_py  # noqa: F401
    except ImportError:
        return (f"the board pictures are left out of the judge's mail: the PNG renderer resvg-py is not "
                f"installed; install it with: pip install '{EXTRA}'")
    if default_fonts().family is None:
        return ("the board pictures carry no text: no font found (" + ", ".join(f for f, _ in FAMILIES)
                + "); install one, e.g. on Debian: apt-get install fonts-dejavu-core")
    return None


def inline(html: str, domain: str = "pbem.invalid", fonts: Fonts | None = None,
           boards: int | None = BOARDS) -> tuple[str, list[Picture]]:
    """``html`` with each inline SVG replaced by an ``<img>`` of it, and the pictures.

    Without the renderer, ``html`` comes back unchanged with no picture (see ``problem``).
    Identical SVGs (a chest chip drawn ten times) are one picture. ``boards``: how many
    board pictures (any SVG but a chip) a message carries, the latest ones; the others are
    left out, their captions (the board in words) kept: the latest board is the one to
    play on, and each picture weighs more than the rest of the message (docs/email.md,
    "How heavy a message is"). None: every one."""
    if "<svg" not in html.lower() or not available():
        return html, []
    fonts = fonts or default_fonts()
    pictures: dict[str, Picture] = {}
    if boards is not None:
        big = [m.span() for m in _SVG.finditer(html) if not _is_chip(m.group(0))]
        for start, end in reversed(big[:max(len(big) - boards, 0)]):
            html = html[:start] + html[end:]

    def replace(match: re.Match) -> str:
        svg = match.group(0)
        digest = hashlib.sha256(svg.encode("utf-8")).hexdigest()[:24]
        if digest not in pictures:
            try:
                png = render_png(svg, fonts)
            except ValueError:  # resvg could not read it: leave this one as SVG
                return svg
            pictures[digest] = Picture(f"<board.{digest}@{domain}>", png, f"board-{len(pictures) + 1}.png")
        return _img(svg, pictures[digest].cid)
    return _SVG.sub(replace, html), list(pictures.values())


def _is_chip(svg: str) -> bool:
    found = re.search(_ATTRIBUTE.format("class"), svg[: svg.index(">")])
    return bool(found and "chip" in found.group(1).split())


def render_png(svg: str, fonts: Fonts | None = None) -> bytes:
    """One SVG as PNG bytes at ``ZOOM`` times its size (ValueError if resvg cannot read it)."""
    return _render(_with_namespace(svg), fonts or default_fonts())


@functools.lru_cache(maxsize=128)
def _render(svg: str, fonts: Fonts) -> bytes:
    import resvg_py
    options = {"zoom": ZOOM, "skip_system_fonts": not fonts.system}
    if fonts.folders:
        options["font_dirs"] = list(fonts.folders)
    if fonts.family:
        options["sans_serif_family"] = options["font_family"] = fonts.family
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, **options))


@functools.lru_cache(maxsize=1)
def default_fonts() -> Fonts:
    """The system's fonts, "sans-serif" drawn with the first family of ``FAMILIES`` found."""
    return Fonts(find_family(_FONT_FOLDERS))


def find_family(folders) -> str | None:
    wanted = {name.lower(): family for family, names in FAMILIES for name in names}
    found = set()
    for folder in folders:
        root = Path(folder)
        if root.is_dir():
            found.update(wanted[p.name.lower()] for p in root.rglob("*") if p.name.lower() in wanted)
    return next((family for family, _ in FAMILIES if family in found), None)


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether resvg, which draws the board's picture, is installed (asked once)."""
    try:
        import resvg_py  # noqa: F401
    except ImportError:
        return False
    return True


def _with_namespace(svg: str) -> str:
    # an SVG inside HTML needs no xmlns (the chest chips have none); an SVG file does
    head = svg[: svg.index(">")]
    if "xmlns=" in head:
        return svg
    return svg.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)


def _img(svg: str, cid: str) -> str:
    head = svg[: svg.index(">")]
    found = {name: re.search(_ATTRIBUTE.format(name), head) for name in ("width", "height", "aria-label", "class")}
    value = {name: m.group(1) for name, m in found.items() if m}
    size = "".join(f' {n}="{value[n]}"' for n in ("width", "height") if n in value)
    alt = value.get("aria-label", "board")
    style = "vertical-align:middle" if "chip" in value.get("class", "") else "max-width:100%;height:auto"
    # the attribute values are copied as they stand in the SVG: escaped already by the templates
    classes = f' class="{value["class"]}"' if "class" in value else ""
    return f'<img src="cid:{htmllib.escape(cid.strip("<>"))}"{size} alt="{alt}" style="{style}"{classes}>'
