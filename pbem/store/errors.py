"""Typed errors of the storage layer; only the command line turns them into messages."""

from __future__ import annotations


class StoreError(Exception):
    """The log cannot do what was asked (misuse, malformed export, unreadable row)."""


class ChainError(StoreError):
    """The hash chain is broken. ``seq`` is the first bad event number.

    ``str(error)`` is one line that names the event, for example
    ``event 7: hash does not match its contents (stored ab12cd34…, computed 9f00e1a2…)``.
    """

    def __init__(self, seq: int, reason: str):
        super().__init__(reason)
        self.seq = seq
        self.reason = reason
