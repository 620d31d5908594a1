"""The authenticate stage of an incoming message: may it change the game?

In a game without signatures, a message that changes something carries the seat's mail
password; five wrong ones from an address within an hour, and mail from it that lacks the
right password is no longer answered. In a game that takes only signed blocks, nothing but
a signed block can show who sent it (a From: header is easy to forge): the other lines
that would change something are refused, each with why. Reading (``status``, ``private``,
``help``) needs no password.
"""

from __future__ import annotations

from ..protocol.times import shift
from ..store import judge as tables
from .outcome import Stop
from .passwords import check_password

PASSWORD_STRIKES = 5  # wrong passwords from one address within an hour, before it is ignored
READING = ("status", "private", "help")  # the commands that change nothing


def authenticate(store, msg, reading, row, signed_game: bool, blocks, now: str, result) -> None:
    """Let ``reading``'s commands through, or stop the message; in a signed game, take out
    (and refuse in ``result``) the commands that only a signed block may give."""
    acting = [c for c in reading.commands if c.verb not in READING]
    if signed_game:
        # nothing but a signed block can show who sent it: a From: header is easy to forge
        for command in acting:
            result.lines.append({"line": command.line[:200], "ok": False, "text": _unsigned(command.verb, row)})
        reading.commands = [c for c in reading.commands if c not in acting]
    elif acting or blocks:
        _check_password(store, msg, reading, row, now)
    elif locked_out(store, msg.sender, now):
        raise Stop("not answered: too many wrong passwords from this address in the last hour")


def _unsigned(verb: str, row) -> str:
    """Why a plain command is refused in a signed game, and what does the same with a signature."""
    if verb == "extend":
        return ("this game takes an extension only as a signed block (pbem extend GAME 24h --context TOKEN "
                "--sign-with YOUR.key); paste the block into your mail")
    if verb == "back":  # the stand-in may leave the seat nothing to sign: the moderator's pbem back then
        return ("this game takes moves only as signed blocks, so a plain 'back' cannot show that it comes from "
                "you: any signed move of yours takes the seat back (pbem seal / pbem decide --key YOUR.key, the "
                f"block pasted into your mail), or ask the moderator to end the stand-in (pbem back {row.game} "
                f"{row.player})")
    return ("this game takes moves only as signed blocks (pbem seal / pbem decide --key YOUR.key); paste the "
            "block into your mail")


def _check_password(store, msg, reading, row, now: str) -> None:
    if not reading.password:
        if locked_out(store, msg.sender, now):
            raise Stop("not answered: too many wrong passwords from this address in the last hour")
        raise Stop("refused: no password", "Nothing was done: the password is missing. Add a line 'password "
                                           "YOUR-MAIL-PASSWORD' (from your first private message of this game) "
                                           "to every message that changes something.")
    if not check_password(reading.password, row.password_hash):
        locked = locked_out(store, msg.sender, now)  # five answered already: a guesser is not
        tables.strike(store, msg.sender, "password", now)
        if locked:
            raise Stop("not answered: too many wrong passwords from this address in the last hour")
        raise Stop("refused: wrong password", "Nothing was done: the password is not the one of this game. "
                                              "It is in your first private message; ask the moderator for a new "
                                              "one (pbem address ... --new-password) if it is lost.")


def locked_out(store, address: str, now: str) -> bool:
    """Five wrong passwords from one address within an hour: the judge stops answering
    mail from it that lacks the right password (mail with it is still acted on: a forger
    must not be able to lock a player out of their own game)."""
    return tables.strikes_since(store, address, "password", shift(now, -3600)) >= PASSWORD_STRIKES
