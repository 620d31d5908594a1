"""Which lines of a message are the sender's own new text, the only lines read as commands.

A reply that quotes the judge's last message must never replay it, so quoted lines (``>``),
the attribution line that introduces a quote ("On ... wrote:"), everything after the
signature separator, and everything after a forwarded or original message marker are left
out. The markers are heuristics for what the common clients write, in a few languages.
"""

from __future__ import annotations

import re

_FORWARD = re.compile(
    r"""-{2,}\s*(?:
        original\s+message | forwarded\s+message | message\s+original | message\s+transf[ée]r[ée]
      | urspr[üu]ngliche\s+nachricht | weitergeleitete\s+nachricht
      | mensaje\s+original | mensaje\s+reenviado | messaggio\s+originale | messaggio\s+inoltrato
      | oorspronkelijk\s+bericht | doorgestuurd\s+bericht | originalmeddelande | vidarebefordrat\s+meddelande
    )\s*-{2,}
    | (?:begin\s+forwarded\s+message | anfang\s+der\s+weitergeleiteten\s+nachricht
      | d[ée]but\s+du\s+message\s+r[ée]exp[ée]di[ée] | inicio\s+del\s+mensaje\s+reenviado)\s*:""",
    re.IGNORECASE | re.VERBOSE,
)
# Outlook quotes nothing: it puts a header block ("From: ... / Sent: ...") above the old mail.
_HEADER_FROM = re.compile(r"\*?(?:from|von|de|da|van|fr[åa]n|fra|od)\s?:\*?\s", re.IGNORECASE)
_HEADER_SENT = re.compile(
    r"\*?(?:sent|date|gesendet|datum|envoy[ée]|enviado|fecha|inviato|data|verzonden|skickat|sendt|wys[łl]ano)\s?:",
    re.IGNORECASE,
)
# The start of a two-line attribution, when a client wrapped "On <date>, <name> wrote:".
_ATTRIBUTION_START = re.compile(
    r"(?:on|am|el|le|il|op|em|den|dne|w\s+dniu|p[åa])\s", re.IGNORECASE
)
_RULE = re.compile(r"_{5,}|-{5,}")


def command_lines(text: str) -> list[str]:
    """The lines a judge may read as commands: the sender's new, unquoted text above the
    signature or a forwarded message, each stripped, empty lines left out, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[tuple[int, str]] = []  # (line number, stripped line)
    last_text = -1  # number of the last line that was neither blank nor quoted
    for number, raw in enumerate(lines):
        line = raw.strip()
        if line == "--" or _FORWARD.fullmatch(line):
            break
        if _HEADER_FROM.match(line) and _sent_follows(lines, number):
            if kept and _RULE.fullmatch(kept[-1][1]):
                kept.pop()
            break
        if line.startswith(">"):
            if last_text >= 0:  # the first quoted line after the sender's own text
                _drop_attribution(kept)
            last_text = -1
            continue
        if line:
            kept.append((number, line))
            last_text = number
    return [line for _, line in kept]


def _drop_attribution(kept: list[tuple[int, str]]) -> None:
    """Drop the line ending in ':' right before a quote (and its first half, when wrapped)."""
    number, line = kept[-1]
    if not line.endswith(":"):
        return
    kept.pop()
    if (kept and kept[-1][0] == number - 1 and not _ATTRIBUTION_START.match(line)
            and _ATTRIBUTION_START.match(kept[-1][1])):
        kept.pop()


def _sent_follows(lines: list[str], number: int) -> bool:
    following = [line.strip() for line in lines[number + 1 : number + 6] if line.strip()][:3]
    return any(_HEADER_SENT.match(line) for line in following)
