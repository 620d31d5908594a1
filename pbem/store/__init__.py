"""Storage: the append-only, hash-chained event log of every game, in one SQLite file.

Everything here raises ``StoreError`` (or its subclass ``ChainError`` for a broken chain);
the command line alone turns those into messages and exit codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .chain import verify_chain
from .errors import ChainError, StoreError
from .event import Event
from .export import export_lines, read_export
from .faults import maybe_crash

if TYPE_CHECKING:
    from .store import Store

__all__ = [
    "ChainError",
    "Event",
    "Store",
    "StoreError",
    "export_lines",
    "maybe_crash",
    "read_export",
    "verify_chain",
]


def __getattr__(name: str) -> Any:
    # sqlite-utils takes a large share of start-up time; auditing an exported file
    # (read_export + verify_chain) needs none of it, so Store is imported on first use.
    if name == "Store":
        from .store import Store

        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"Store"})
