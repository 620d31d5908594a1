"""Typed errors of the adjudication layer; the command line turns them into exit codes."""


class ProtocolError(Exception):
    """Base class: ``str(error)`` is one line saying what was wrong and what would be right."""


class Refused(ProtocolError):
    """A submission or command was refused; nothing was written."""


class UnknownGame(Refused):
    pass


class UnknownPlayer(Refused):
    pass


class Damaged(Refused):
    """The stored game fails a check (its chain, snapshot or seed): nothing is built on it.
    ``seq`` is the first bad event."""

    def __init__(self, game: str, seq: int, reason: str):
        super().__init__(f"game {game} is damaged: event {seq}: {reason}; nothing was changed; "
                         f"run 'pbem audit {game}' for the full check")
        self.seq = seq
        self.reason = reason


class AuditFailure(ProtocolError):
    """The log does not check out; ``seq`` is the first bad event (0 when not tied to one)."""

    def __init__(self, seq: int, reason: str):
        super().__init__(f"event {seq}: {reason}" if seq else reason)
        self.seq = seq
        self.reason = reason


class BadAuditInput(ProtocolError):
    """What the auditor gave cannot be used (a heads file without heads, an unusable
    receipt): a usage error, not a verdict about the log."""
