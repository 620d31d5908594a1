"""Which lines of a message are the sender's own new text, the only lines read as commands.

A reply that quotes the judge's last message must never replay it, so quoted lines (``>``),
the attribution line that introduces a quote ("On ... wrote:"), everything after the
signature separator, and everything after a forwarded or original message marker are left
out. So is what people and their mail programs add below what they mean: a sign-off
("Thanks,", "Cheers, Ani") near the end with at most a name or two short lines after it, a
client's footer ("Sent from my iPhone", "Get Outlook for Android") and a disclaimer. The markers are heuristics for what the common clients write, in a few languages.
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
# What mail programs put below what the sender wrote, and where reading stops.
_FOOTER = re.compile(
    r"""(?:sent|sent\s+(?:from|with|via|using)|get\s+outlook\s+for|von\s+meinem|gesendet\s+von|envoy[ée]\s+de
         |enviado\s+desde|inviato\s+da|verzonden\s+vanaf|skickat\s+fr[åa]n)\b.{0,60}
         (?:iphone|ipad|android|mobile|phone|samsung|galaxy|pixel|outlook|mail|windows|blackberry|proton\w*|tablet
         |handy|smartphone|gesendet|device|appareil)\b.{0,30}
       | (?:confidentiality\s+notice|disclaimer|legal\s+notice|important\s+notice)\b.*
       | this\s+(?:e-?mail|message|communication)\b.{0,80}\b(?:confidential|intended\s+(?:solely|only)|privileged)\b.*
       | the\s+information\s+(?:contained\s+)?in\s+this\s+(?:e-?mail|message)\b.*
       | virus-free\.?\s.*|this\s+e-?mail\s+has\s+been\s+(?:checked|scanned)\s+for\s+viruses.*""",
    re.IGNORECASE | re.VERBOSE,
)
# A sign-off: what follows it (a name, a line or two) is not read either.
_SIGN_OFF = re.compile(
    r"""(?:many\s+|best\s+|warm\s+|kind\s+)?(?:thanks|thank\s+you|thx|ty|cheers|regards|best|best\s+wishes
         |greetings|bye|ciao|cordialement|merci|saludos|yours|take\s+care|talk\s+soon|see\s+you
         |(?:viele\s+|liebe\s+|beste\s+|herzliche\s+)?gr(?:ü|ue)(?:ß|ss)e|lg|mfg|vg)
       (?:\s+(?:again|a\s+lot|so\s+much|all|everyone|folks))?[\s,.!:;)-]*(?:[^\W\d_][\w .'-]{0,30})?[.!]?""",
    re.IGNORECASE | re.VERBOSE,
)
_KEYWORD = re.compile(r"(?:password|pw|seal|commit|reveal|client-seed|status|private|help|game)\b", re.IGNORECASE)


def command_lines(text: str) -> list[str]:
    """The lines a judge may read as commands: the sender's new, unquoted text above the
    signature or a forwarded message, each stripped, empty lines left out, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[tuple[int, str]] = []  # (line number, stripped line)
    last_text = -1  # number of the last line that was neither blank nor quoted
    for number, raw in enumerate(lines):
        line = raw.strip()
        if line == "--" or _FORWARD.fullmatch(line) or _FOOTER.fullmatch(line):
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
    return [line for _, line in _before_sign_off(kept)]


def _before_sign_off(kept: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Cut at a sign-off ("Thanks,", "Cheers, Ani", "Viele Grüße") that only a name or a
    short line or two follow, none of them a command word."""
    for at in range(max(0, len(kept) - 3), len(kept)):
        rest = kept[at + 1:]
        if (_SIGN_OFF.fullmatch(kept[at][1]) and all(len(line) <= 40 for _, line in rest)
                and not any(_KEYWORD.match(line) for _, line in rest)):
            return kept[:at]
    return kept


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
