"""Inside one transaction a game's session is carried from write to write; a write that
fails (its savepoint undone) must not leave its half-applied events in that session."""

from __future__ import annotations

import pytest

from pbem.protocol import commands
from pbem.protocol.errors import Refused
from pbem.store import Store

AT = "2030-01-01T10:00:00Z"
PLAYERS = ["ani", "alex", "frank"]


def test_a_failed_write_in_a_transaction_leaves_no_trace_in_the_next_read(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, start=True, at=AT)
    session = commands.load(store, "g")
    sealed = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    made = commands.signed_blocks(sealed, None)
    blocks = [made["commit"], made["reveal"]]  # the reveal is refused: others have not committed
    with store.transaction():
        before = commands.load(store, "g")
        head = store.head("g")
        with pytest.raises(Refused, match="reveals open once every commitment is in"):
            commands.submit(store, "g", blocks[0] + "\n" + blocks[1], at=AT)
        assert store.head("g") == head
        after = commands.load(store, "g")
        assert after.seq == head[0] and "ani" not in after.sealed.commits
        commands.commit(store, "g", "ani", commands.seal(after, "ani", after.rules.default(after.state, "ani", "select"))["commitment"], at=AT)
        assert commands.load(store, "g").seq == head[0] + 1
    assert commands.load(store, "g").sealed.commits.keys() == {"ani"}
    assert before is not None
