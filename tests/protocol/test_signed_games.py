"""In a game that requires signatures, nothing enters the log on the moderator's word alone."""

import pytest

from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair
from pbem.store import Store

AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


def test_moderator_cannot_seal_for_a_player_in_a_signed_game(tmp_path):
    store = Store(tmp_path / "g.db")
    keys = {p: generate_keypair() for p in ("ani", "alex")}
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={p: pub for p, (_, pub) in keys.items()}, start=True, at=AT)
    session = loading.load(store, "g")
    choice = session.rules.default(session.state, "ani", "select")
    head = store.head("g")
    with pytest.raises(Refused, match="requires signed submissions.*pbem seal --context TOKEN CHOICE --key FILE"):
        commands.commit_for_player(store, "g", "ani", choice, at=AT)
    assert store.head("g") == head
    # the player's own signed commitment is accepted
    sealed = commands.seal(session, "ani", choice)
    submissions.submit(store, "g", offline.signed_blocks(sealed, keys["ani"][0])["commit"], at=AT)
    assert store.head("g")[0] == head[0] + 1
