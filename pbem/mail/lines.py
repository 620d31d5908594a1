"""Reading a message's command lines: one command a line, keywords in any case.

    game NAME                 which game (else the subject's [NAME], else the sender's only game)
    password WORD             the player's mail password
    commit HASH               a commitment made with pbem seal
    reveal CHOICE SALT        its reveal (SALT: hex; without one, a line that starts with
                              "reveal" is a game's choice, e.g. Tortuga 1667's reveal 3)
    seal CHOICE               the judge seals the choice on receipt (the log says so)
    client-seed TEXT          a client seed, before the game starts
    extend DURATION           more time for what the player owes now (e.g. extend 24h), within
                              the game's allowance
    status | private | help   ask for the status, your private message again, or help
    anything else             an open decision in the game's syntax, e.g. skull:raid

Armoured blocks are found in the whole text separately (they authenticate themselves), so
their lines are skipped here.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_COMMANDS = 200
ROUTING = ("game", "password")
KEYWORDS = ("commit", "reveal", "seal", "client-seed", "extend", "status", "private", "help")
BLOCK_BEGIN = "-----BEGIN PBEM SUBMISSION-----"
BLOCK_END = "-----END PBEM SUBMISSION-----"


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


def read_lines(lines: list[str]) -> Reading:
    """Sort ``lines`` (the unquoted text of a message) into routing and commands."""
    reading = Reading(commands=[])
    in_block = False
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith(BLOCK_BEGIN):
            in_block = True
            continue
        if in_block:
            in_block = not line.startswith(BLOCK_END)
            continue
        word, _, rest = line.partition(" ")
        verb = word.lower().rstrip(":")
        rest = rest.strip()
        if verb == "game" and rest and " " not in rest:
            reading.game = rest
        elif verb in ("password", "pw"):
            reading.password = rest
        elif verb in ("commit", "seal", "client-seed") and rest:
            reading.commands.append(Command(verb, (rest,), line))
        elif verb == "reveal" and _salt_like(rest.rpartition(" ")[2]) and " " in rest:
            choice, _, salt = rest.rpartition(" ")
            reading.commands.append(Command("reveal", (choice.strip(), salt), line))
        elif verb == "extend" and rest and " " not in rest:
            reading.commands.append(Command(verb, (rest,), line))
        elif verb in ("status", "private", "help") and not rest:
            reading.commands.append(Command(verb, (), line))
        else:
            reading.commands.append(Command("choice", (line,), line))
    return reading


def _salt_like(word: str) -> bool:
    """A salt is 64 hex characters; a word of 16 or more hex characters is taken as one
    (so a salt cut short is answered as a bad salt, not as a game's choice)."""
    return len(word) >= 16 and all(c in "0123456789abcdefABCDEF" for c in word)
