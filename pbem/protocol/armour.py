"""ASCII armour: submission blocks that survive email and forum posts.

This module is a contract (see ``docs/protocol.md``). A block is::

    -----BEGIN PBEM SUBMISSION-----
    <base64 (standard alphabet, padded) of canonical_json(payload), wrapped at 64 columns>
    =<first 8 hex characters of sha256(canonical_json(payload))>
    -----END PBEM SUBMISSION-----

``payload`` is a JSON object; what it holds (typically ``{"body": {...}, "sig": "..."}``) is
not this module's business.

Reading is tolerant of what mail clients and forums do to text: CRLF or CR line ends,
quoting with ``>`` at any depth (with or without spaces), leading indentation, trailing
spaces, blank lines inserted into the block, the base64 re-wrapped at any width, and text
before and after the block or around its marker lines. All whitespace between the markers is
ignored; the checksum is the last ``=`` and 8 hex characters before the END marker, which is
unambiguous because base64 padding only ever ends the data.

Reading is strict about content: the base64 must be canonical, the checksum must match, and
the decoded bytes must be exactly the canonical JSON of a JSON object, so every payload has
one armoured form.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from .canonical import canonical_json, sha256_hex

SUBMISSION = "SUBMISSION"
RECEIPT = "RECEIPT"  # the judge's signed receipts (docs/protocol.md §12): same armour, own label
BEGIN_LINE = "-----BEGIN PBEM SUBMISSION-----"
END_LINE = "-----END PBEM SUBMISSION-----"
LINE_WIDTH = 64
CHECKSUM_CHARS = 8

# Quote markers and indentation at the start of every line; never part of base64.
_LINE_PREFIX = re.compile(r"^(?:[^\S\n]|>)+", re.MULTILINE)
# A marker is matched only from the first dash of a run, taking the run whole: trying every
# dash of a long run as a start would take time quadratic in the run's length.
_MARKERS = {label: re.compile(
    r"(?<!-)-{3,}+[^\S\n]*(BEGIN|END)[^\S\n]+PBEM[^\S\n]+%s[^\S\n]*-{3,}" % label, re.IGNORECASE
) for label in (SUBMISSION, RECEIPT)}
_CHECKSUM = re.compile(r"(.*)=([0-9a-fA-F]{%d})" % CHECKSUM_CHARS, re.DOTALL)
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_PASTE_WHOLE = "paste the whole block"


class ArmourError(ValueError):
    """A submission block that cannot be read back, or a payload that cannot be armoured."""


def checksum(data: bytes) -> str:
    """The block checksum: the first 8 hex characters of sha256(data)."""
    return sha256_hex(data)[:CHECKSUM_CHARS]


def armour(payload: dict, label: str = SUBMISSION) -> str:
    """The submission block (or, with ``label`` RECEIPT, the receipt block) for ``payload``
    (a JSON object), ending with a newline."""
    if not isinstance(payload, dict):
        kind = type(payload).__name__
        raise ArmourError(f"only a JSON object (dict) can be armoured, got {kind}")
    return armoured(canonical_json(payload), label)


def armoured(data: bytes, label: str = SUBMISSION) -> str:
    """``armour`` of a payload given as its canonical JSON bytes."""
    encoded = base64.b64encode(data).decode("ascii")
    lines = [encoded[i : i + LINE_WIDTH] for i in range(0, len(encoded), LINE_WIDTH)]
    begin, end = f"-----BEGIN PBEM {label}-----", f"-----END PBEM {label}-----"
    return "\n".join([begin, *lines, "=" + checksum(data), end]) + "\n"


def extract_blocks(text: str, label: str = SUBMISSION) -> list[dict]:
    """The payloads of every submission block (or receipt block, with ``label`` RECEIPT)
    in ``text``, in order ([] when there is none); blocks of the other label are ignored.

    Raises ArmourError naming the block (counted from 1) that is cut off or damaged.
    """
    if not isinstance(text, str):
        raise ArmourError(f"expected the text of a message (str), got {type(text).__name__}")
    text = _LINE_PREFIX.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    noun = "submission block" if label == SUBMISSION else "receipt block"
    payloads: list[dict] = []
    number = 0
    body_start: int | None = None
    for marker in _MARKERS[label].finditer(text):
        if marker.group(1).upper() == "BEGIN":
            if body_start is not None:
                raise ArmourError(
                    f"{noun} {number} is cut off: no END line before the next "
                    f"BEGIN line; {_PASTE_WHOLE}"
                )
            number += 1
            body_start = marker.end()
        else:
            if body_start is None:
                raise ArmourError(
                    f"{noun} {number + 1} is cut off: END line without a BEGIN "
                    f"line; {_PASTE_WHOLE}"
                )
            payloads.append(_decode_block(text[body_start : marker.start()], f"{noun} {number}"))
            body_start = None
    if body_start is not None:
        raise ArmourError(f"{noun} {number} is cut off: no END line; {_PASTE_WHOLE}")
    return payloads


def _decode_block(inner: str, block: str) -> dict:
    match = _CHECKSUM.fullmatch("".join(inner.split()))
    if match is None:
        raise ArmourError(
            f"{block} has no checksum line ('=' and {CHECKSUM_CHARS} hex characters just "
            f"before the END line); {_PASTE_WHOLE}"
        )
    encoded, stated = match.group(1), match.group(2).lower()
    data = _decode_base64(encoded, block)
    if checksum(data) != stated:
        raise ArmourError(
            f"{block} is damaged: checksum {stated} does not match "
            f"(contents changed or truncated)"
        )
    try:
        payload = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
        canonical = canonical_json(payload) if isinstance(payload, dict) else None
    except UnicodeDecodeError as exc:
        raise ArmourError(f"{block} does not hold UTF-8 text (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise ArmourError(f"{block} does not hold JSON: {exc.msg} at character {exc.pos}") from exc
    except (ValueError, RecursionError) as exc:  # NaN, huge integers, floats, deep nesting
        raise ArmourError(f"{block} does not hold canonical JSON: {_first_line(exc)}") from exc
    if not isinstance(payload, dict):
        raise ArmourError(f"{block} holds a JSON {_json_kind(payload)}, expected a JSON object")
    if canonical != data:
        raise ArmourError(
            f"{block} does not hold canonical JSON (sorted keys, no spaces); "
            f"armour it with pbem"
        )
    return payload


def _decode_base64(encoded: str, block: str) -> bytes:
    for position, char in enumerate(encoded, start=1):
        if char not in _BASE64_CHARS:
            raise ArmourError(
                f"{block} is damaged: {char!r} (base64 character {position}) is not base64; "
                f"base64 uses A-Z, a-z, 0-9, '+', '/' and '='"
            )
    if len(encoded) % 4:
        raise ArmourError(
            f"{block} is damaged: {len(encoded)} base64 characters is not a multiple of 4 "
            f"(characters lost or truncated)"
        )
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ArmourError(
            f"{block} is damaged: '=' padding in the middle of the base64 (lines out of order?)"
        ) from exc
    if base64.b64encode(data).decode("ascii") != encoded:
        raise ArmourError(f"{block} is damaged: the last base64 characters were changed")
    return data


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed in canonical JSON")


def _first_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
