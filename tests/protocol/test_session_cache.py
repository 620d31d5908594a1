"""Inside one transaction a game's session is carried from write to write; a write that
fails (its savepoint undone) must not leave its half-applied events in that session."""

from __future__ import annotations

import pytest

from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.errors import Refused
from pbem.store import Store

AT = "2030-01-01T10:00:00Z"
PLAYERS = ["ani", "alex", "frank"]


def test_a_failed_write_in_a_transaction_leaves_no_trace_in_the_next_read(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, start=True, at=AT)
    session = loading.load(store, "g")
    sealed = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    other = commands.seal(session, "ani", sealed["choice"])  # the same choice, another salt
    made = offline.signed_blocks(sealed, None)
    blocks = [made["commit"], offline.signed_blocks(other, None)["reveal"]]  # the reveal opens another commitment
    with store.transaction():
        before = loading.load(store, "g")
        head = store.head("g")
        with pytest.raises(Refused, match="does not match ani's commitment"):
            submissions.submit(store, "g", blocks[0] + "\n" + blocks[1], at=AT)
        assert store.head("g") == head
        after = loading.load(store, "g")
        assert after.seq == head[0] and "ani" not in after.sealed.commits
        commands.commit(store, "g", "ani", commands.seal(after, "ani", after.rules.default(after.state, "ani", "select"))["commitment"], at=AT)
        assert loading.load(store, "g").seq == head[0] + 1
    assert loading.load(store, "g").sealed.commits.keys() == {"ani"}
    assert before is not None
