"""The public form of a log: JSON Lines, one canonical export dict per line.

An export holds events only, never the ``secrets`` table: the server seed reaches the
public log only as an event, when it is revealed.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

from pbem.protocol.canonical import canonical_text
from pbem.text import quote

from .chain import export_row_problem
from .errors import StoreError
from .event import Event


def export_lines(events: Iterable[Event]) -> Iterator[str]:
    """One canonical JSON line per event, each ending in ``\\n``, so that
    ``"".join(export_lines(events))`` is the export file and ``read_export`` reads it back."""
    for event in events:
        yield canonical_text(event.export_dict()) + "\n"


class _Refused(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Two parsers may keep different copies of a repeated key; an audited file has none.
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise _Refused(f"repeats the key {quote(repeated[0])}")
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise _Refused(f"uses {name}, which is not JSON")


def read_export(text: str) -> list[dict[str, Any]]:
    """Parse an export strictly into export dicts (it does not check the chain: pass the
    result to ``verify_chain``). Raises ``StoreError`` naming the first bad line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise StoreError(f"line {number} is empty")
        try:
            row = json.loads(
                line, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants
            )
        except _Refused as exc:
            raise StoreError(f"line {number} {exc}") from None
        except json.JSONDecodeError as exc:
            hint = "truncated file?" if number == len(lines) else exc.msg
            raise StoreError(f"line {number} is not valid JSON ({hint})") from None
        except (ValueError, RecursionError):  # an integer of thousands of digits, deep nesting
            raise StoreError(f"line {number} is not an event (a number too long or nesting too deep)") from None
        problem = export_row_problem(row)
        if problem:
            raise StoreError(f"line {number} {problem}")
        rows.append(row)
    return rows
