"""Storage: the append-only, hash-chained event log of every game, in one SQLite file.

Everything here raises ``StoreError`` (or its subclass ``ChainError`` for a broken chain);
the command line alone turns those into messages and exit codes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import ChainError, StoreError

if TYPE_CHECKING:
    from .chain import verify_chain
    from .event import Event
    from .export import export_lines, read_export
    from .faults import maybe_crash
    from .store import Store

# Everything but the errors is imported on first use: `pbem status` reads one row and
# should not pay for sqlite-utils, the chain checker or the export reader at start-up.
_LAZY = {"Store": "store", "Event": "event", "verify_chain": "chain", "export_lines": "export",
         "read_export": "export", "maybe_crash": "faults"}

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
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
