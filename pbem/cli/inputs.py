"""Reading a file or standard input with limits.

Every command that reads what a user names (a submission, an export, a face table, a key)
reads it here: in chunks, never more than the limit for that kind of input, refusing a
line longer than its limit as soon as it is seen and a device that would never end. So
``pbem submit g /dev/zero`` or ``pbem audit --file /dev/zero`` ends at once with one line.
"""


import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

KiB = 1024
MiB = 1024 * KiB
CHUNK = 64 * KiB


class InputRefused(ValueError):
    """An input that is too large, has an over-long line, is not text, or is no file."""


@dataclass(frozen=True)
class Limits:
    what: str  # "a submission": what the input is, for messages
    size: int  # the most bytes the whole input may hold
    line: int  # the most bytes one line may hold
    strict: bool  # refuse bytes that are not UTF-8 (else replace them)
    hint: str  # what the right input looks like


# mail may be in any charset; a forum page saved from a browser may have lines of many KiB
SUBMISSION = Limits("a submission", 10 * MiB, 1 * MiB, strict=False,
                    hint="give the mail or post that holds the submission blocks")
FACES = Limits("a face table", 10 * MiB, 64 * KiB, strict=True,
               hint="a face table is five lines like 'A: 1 2 3 4 5' (see docs/rules.md)")
EXPORT = Limits("an export", 256 * MiB, 1 * MiB, strict=True,
                hint="give a log written by pbem export (JSON Lines)")
HEADS = Limits("a file of published heads", 256 * MiB, 256 * MiB, strict=False,
               hint="give a saved summary, an mbox of the list's summaries or a saved forum thread")
RECEIPTS = Limits("a receipts file", 10 * MiB, 10 * MiB, strict=False,
                  hint="give the text (or saved mail) holding the judge's receipt blocks")
KEY = Limits("a key file", 64 * KiB, 64 * KiB, strict=True,
             hint="give the secret key file written by pbem keygen")


def size_text(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n // KiB} KiB" if n % KiB == 0 else f"{n} bytes"


def read_text(source: str | Path, limits: Limits, stdin_ok: bool = False) -> str:
    """The text of a file, or of standard input when ``source`` is ``-`` and ``stdin_ok``."""
    name, data = read_bytes(source, limits, stdin_ok)
    return decode(data, name, limits)


def read_bytes(source: str | Path, limits: Limits, stdin_ok: bool = False) -> tuple[str, bytearray]:
    """(the input's name for messages, its bytes), within ``limits``."""
    if stdin_ok and str(source) == "-":
        return "standard input", read_limited(sys.stdin.buffer, "standard input", limits)
    path = Path(source)
    name = _display(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputRefused(f"{name}: {exc.strerror or exc}") from None
    _check_kind(info.st_mode, name, stdin_ok)
    if stat.S_ISREG(info.st_mode) and info.st_size > limits.size:
        raise InputRefused(_too_large(name, limits))
    try:
        with open(path, "rb") as handle:
            data = read_limited(handle, name, limits)
    except OSError as exc:
        raise InputRefused(f"{name}: {exc.strerror or exc}") from None
    return name, data


def _check_kind(mode: int, name: str, stdin_ok: bool) -> None:
    """A regular file or a pipe (as from ``<(command)``) may be read; a device like
    /dev/zero never ends and a directory is no input."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    what = ("a directory" if stat.S_ISDIR(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    hint = "give a file, or - to read standard input" if stdin_ok else "give a file"
    raise InputRefused(f"{name} is {what}, not a file; {hint}")


def read_limited(stream, name: str, limits: Limits) -> bytearray:
    """Read ``stream`` to its end in chunks, refusing it as soon as it holds more than
    ``limits.size`` bytes or a line (ended by LF, CR or CRLF) longer than ``limits.line``."""
    data = bytearray()
    open_line = 0  # length of the line that the last chunk left unfinished
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return data  # bytes-like; not copied, an export may be 256 MiB
        data += chunk
        if len(data) > limits.size:
            raise InputRefused(_too_large(name, limits))
        open_line = _longest_line(chunk, open_line, data, name, limits)


def _longest_line(chunk: bytes, open_line: int, data: bytearray, name: str, limits: Limits) -> int:
    """Check the lines a chunk ends; return the length of the line it leaves open."""
    parts = chunk.splitlines()
    ends = chunk.endswith((b"\n", b"\r"))
    if len(parts) == 1 and not ends:  # no line break: the open line goes on
        longest, left_open = open_line + len(chunk), open_line + len(chunk)
    else:
        closed = [len(p) for p in (parts[1:] if ends else parts[1:-1])]
        left_open = 0 if ends else len(parts[-1])
        longest = max(open_line + len(parts[0]), left_open, *closed)
    if longest > limits.line:
        raise InputRefused(f"{name}: line {_first_long_line(data, limits.line)} is longer than "
                           f"{size_text(limits.line)}, the most a line of {limits.what} may be; {limits.hint}")
    return left_open


def _first_long_line(data: bytearray, limit: int) -> int:
    """The number of the first line longer than ``limit`` (counting LF, CR and CRLF)."""
    for number, line in enumerate(data.splitlines(), start=1):
        if len(line) > limit:
            return number
    return number


def decode(data: bytes | bytearray, name: str, limits: Limits) -> str:
    if not limits.strict:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        number = len((data[: exc.start] + b"x").splitlines())  # the line the bad byte is on
        raise InputRefused(f"{name}: line {number} is not UTF-8 text (byte {exc.start + 1}); "
                           f"{limits.hint}") from None


def _too_large(name: str, limits: Limits) -> str:
    return f"{name} is larger than {size_text(limits.size)}, the most {limits.what} may be; {limits.hint}"


def _display(path: Path) -> str:
    from ..text import shorten
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in shorten(str(path), 200))
