"""In a game by mail that takes only signed moves, a player's extension and a change of their
key are signed blocks, each answered with the judge's receipt (docs/protocol.md §14, §16);
the line ``extend 24h`` is refused there and changes nothing."""

from __future__ import annotations

from pbem.protocol import offline
from pbem.protocol.receipts import read_receipts
from pbem.protocol.signing import generate_keypair
from pbem.protocol.token import context_token, read_token
from pbem.store.audit import audit_store

from .conftest import PLAYERS


def _answers_to(game, player: str) -> list[str]:
    return [r["body_text"] for r in game.outbox("answer") if r["recipient"] == f"{player}@example.org"]


def test_a_signed_extension_and_key_change_by_mail(make_judge):
    keys = {p: generate_keypair() for p in PLAYERS}
    game = make_judge(signed_keys={p: k[1] for p, k in keys.items()}, deadline_seconds=86400)
    before = game.log()
    game.send("ani", "extend 24h")
    assert game.log() == before
    assert "this game takes an extension only as a signed block" in _answers_to(game, "ani")[-1]
    token = read_token(context_token(game.session(), "ani"))  # the one in ani's private message
    block = offline.extension_block("g1", "ani", (token["round"], token["step"]), 3600, keys["ani"][0])
    game.send("ani", f"Could I have an hour more?\n\n{block}")
    answer = _answers_to(game, "ani")[-1]
    assert "extend of ani recorded" in answer
    (receipt,) = read_receipts(answer)
    assert receipt["event"] == "extended" and receipt["player"] == "ani"
    event = game.log()[-1]
    assert event["kind"] == "extended" and event["data"]["by"] == "player" and event["data"]["seconds"] == 3600
    new_secret, new_public = generate_keypair()
    game.send("ani", offline.key_change_block("g1", "ani", new_public, keys["ani"][0]))
    receipt = read_receipts(_answers_to(game, "ani")[-1])[-1]  # the answer held before travels with it
    assert receipt["event"] == "key" and game.session().keys["ani"] == new_public
    report = audit_store(game.store, "g1")
    assert report["verdict"] == "INCOMPLETE", report
    # the player's own key change is named too (docs/protocol.md §15)
    assert report["discretion"] == {"no_client_seed": True, "extensions": 1, "signed_key_changes": {"ani": 1}}
