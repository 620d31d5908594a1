"""What becomes of one incoming message, shared by the stages of its pipeline
(``pbem.mail.ingest``): the ``Result``, ``Stop`` (the end of the pipeline, with an answer
or none), and the few words every stage uses to say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.outbox import MESSAGE_ID_PATTERN


@dataclass
class Result:
    """What became of one message (also the ``--json`` form of ``pbem mail ingest``)."""

    key: str
    outcome: str  # applied | refused | duplicate | not answered: ... | ...
    sender: str = ""
    game: str | None = None
    player: str | None = None
    address: str | None = None  # where the answer went: the player's registered address
    answered: bool = False
    lines: list = field(default_factory=list)  # {"line", "ok", "text"}
    bounced: list = field(default_factory=list)  # what a bounce reported, one phrase an address
    early: list = field(default_factory=list)  # (player, round, step) of each reveal held early

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Stop(Exception):
    """End the pipeline with an answer (or none) and an outcome. ``confirms``: the answer
    only confirms moves (see ``pbem.mail.answer.CONFIRMED``), so it may wait for the
    player's next message."""

    def __init__(self, outcome: str, answer: str | None = None, confirms: bool = False):
        super().__init__(outcome)
        self.outcome, self.answer, self.confirms = outcome, answer, confirms


def one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:500] or type(exc).__name__


def shortened(text: str) -> str:
    """A line of the sender's, as an answer quotes it: 40 characters at most."""
    return text if len(text) <= 40 else text[:39] + "…"


def reply_id(msg) -> str | None:
    """The Message-ID an answer to ``msg`` replies to, when it is well formed."""
    return msg.message_id if msg.message_id and MESSAGE_ID_PATTERN.fullmatch(msg.message_id) else None
