"""Reading a message's command lines: one command a line, keywords in any case.

    game NAME                 which game (else the subject's [NAME], else the sender's only game)
    password WORD             the player's mail password
    commit HASH               a commitment made with pbem seal
    reveal CHOICE SALT        its reveal (SALT: hex; without one, a line that starts with
                              "reveal" is a game's choice, e.g. Tortuga 1667's reveal 3)
                              (spaces inside a hash or salt are left out: a flowed mail may
                              break it at a soft line break)
    seal CHOICE               the judge seals the choice on receipt (the log says so)
    client-seed TEXT          a client seed, before the game starts
    extend DURATION           more time for what the player owes now (e.g. extend 24h), within
                              the game's allowance
    back                      the player is back: the stand-in stops playing their seat
    status | private | help   ask for the status, your private message again, or help
    anything else             an open decision in the game's syntax, e.g. skull:raid

Armoured blocks are found in the whole text separately (they authenticate themselves), so
their lines are skipped here.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_COMMANDS = 200  # command lines (chat read past does not count: pbem.mail.ingest)
ROUTING = ("game", "password")
KEYWORDS = ("commit", "reveal", "seal", "client-seed", "extend", "back", "status", "private", "help")
BLOCK_BEGIN = "-----BEGIN PBEM SUBMISSION-----"
BLOCK_END = "-----END PBEM SUBMISSION-----"
RECEIPT_BEGIN = "-----BEGIN PBEM RECEIPT-----"  # a receipt pasted back is never read as commands
RECEIPT_END = "-----END PBEM RECEIPT-----"


@dataclass(frozen=True)
class Command:
    verb: str  # a keyword, or "choice" for an open decision
    args: tuple[str, ...]
    line: str  # as written, for the answer


@dataclass
class Reading:
    commands: list[Command]
    game: str | None = None
    password: str | None = None


def read_lines(lines: list[str], limit: int | None = None) -> Reading:
    """Sort ``lines`` (the unquoted text of a message) into routing and commands; with a
    ``limit``, stop once there are more commands than that (the message is refused then)."""
    reading = Reading(commands=[])
    in_block = False
    for raw in lines:
        if limit is not None and len(reading.commands) > limit:
            break
        line = raw.strip()
        if not line:
            continue
        if line.startswith(BLOCK_BEGIN) or line.startswith(RECEIPT_BEGIN):
            in_block = BLOCK_END if line.startswith(BLOCK_BEGIN) else RECEIPT_END
            continue
        if in_block:
            in_block = False if line.startswith(in_block) else in_block
            continue
        word, _, rest = line.partition(" ")
        verb = word.lower().rstrip(":")
        rest = rest.strip()
        if verb == "game" and rest and " " not in rest:
            reading.game = rest
        elif verb in ("password", "pw"):
            reading.password = rest
        elif verb == "commit" and rest:
            reading.commands.append(Command(verb, (_hex_joined(rest) or rest,), line))
        elif verb in ("seal", "client-seed") and rest:
            reading.commands.append(Command(verb, (rest,), line))
        elif verb == "reveal" and _split_reveal(rest) is not None:
            reading.commands.append(Command("reveal", _split_reveal(rest), line))
        elif verb == "extend" and rest and (" " not in rest or rest[0] in "0123456789+-"):  # "1 day": answered
            reading.commands.append(Command(verb, (rest,), line))
        elif verb in ("status", "private", "help", "back") and not rest:
            reading.commands.append(Command(verb, (), line))
        else:
            reading.commands.append(Command("choice", (line,), line))
    return reading


def _hex_joined(text: str) -> str | None:
    """A hash broken by spaces or a line break (a flowed mail's soft break, with delsp=no,
    leaves a space inside it), joined again; None if it is not one."""
    compact = "".join(text.split())
    return compact if _salt_like(compact) else None


def _split_reveal(rest: str) -> tuple[str, str] | None:
    """(choice, salt) of 'reveal CHOICE SALT', the salt's pieces joined again when spaces
    split it (up to its 64 hex digits); None when the last word is not hex of a salt."""
    words = rest.split()
    salt, keep = "", len(words)
    while keep > 1 and len(salt) < 64 and all(c in _HEX for c in words[keep - 1]):
        salt, keep = words[keep - 1] + salt, keep - 1
    if keep < 1 or not _salt_like(salt):
        return None
    return " ".join(words[:keep]), salt


_HEX = frozenset("0123456789abcdefABCDEF")


def _salt_like(word: str) -> bool:
    """A salt is 64 hex characters; a word of 16 or more hex characters is taken as one
    (so a salt cut short is answered as a bad salt, not as a game's choice)."""
    return len(word) >= 16 and all(c in "0123456789abcdefABCDEF" for c in word)
