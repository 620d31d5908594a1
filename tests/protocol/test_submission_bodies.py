"""A client-seed, key-change or extension block whose body is not exactly version 1 (a
field missing, one too many, a wrong type) is refused in one line that names the fields,
and nothing is written."""

from __future__ import annotations

import pytest

from pbem.protocol import commands, submissions
from pbem.protocol.armour import armour
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair, sign
from pbem.store import Store

T0 = "2026-04-01T08:00:00Z"
FIELDS = {
    "client_seed": ("client_seed", "player, seed, nonce",
                    {"player": "ani", "seed": "s", "nonce": "n1"}),
    "key": ("key change", "player, public_key, nonce",
            {"player": "ani", "public_key": "k", "nonce": "n2"}),
    "extend": ("extension", "player, round, step, seconds, nonce",
               {"player": "ani", "round": 1, "step": 1, "seconds": 3600, "nonce": "n3"}),
}
SPOILS = {
    "a field missing": lambda body: body.pop("nonce"),
    "a field too many": lambda body: body.update(extra="x"),
    "another version": lambda body: body.update(v=2),
    "a number as text": lambda body: body.update(player=7),
}


@pytest.mark.parametrize("spoil", SPOILS)
@pytest.mark.parametrize("kind", FIELDS)
def test_a_malformed_body_is_refused_naming_its_fields(tmp_path, kind, spoil):
    secret, public = generate_keypair()
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, keys={"ani": public}, at=T0)
    before = [e.hash for e in store.events("g")]
    what, names, data = FIELDS[kind]
    body = {"v": 1, "game": "g", "kind": kind, **data}
    SPOILS[spoil](body)
    block = armour({"body": body, "sig": sign(secret, body)})
    with pytest.raises(Refused) as refused:
        submissions.submit(store, "g", block, at=T0)
    assert str(refused.value) == (f"submission block 1 is not a version 1 {what} (fields v, game, kind, {names})")
    assert [e.hash for e in store.events("g")] == before
