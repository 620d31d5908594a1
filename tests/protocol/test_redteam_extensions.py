"""The dishonest judge and a player's signed extension (docs/protocol.md §15, §16): the player
signs "extend what I owe in round R step S"; the judge records it on only one of the two
requests the player owes in that step, and later defaults the other at its old deadline.
The signature covers the round, the step and the seconds, not the requests: the replay
must see that the event moves every request the player owes in that step."""

from __future__ import annotations

import json
from collections import Counter

from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, audit, export_lines
from tests.protocol.test_discretion import rechain

AT = "2030-01-01T10:00:00Z"
PLAYERS = ["ani", "alex", "frank", "lothar"]


def owes_twice(store):
    """Bots play until a player owes two requests in one step: (player, round, step)."""
    for _ in range(200):
        session = loading.load(store, "g1")
        count = Counter((p, key[1], key[2]) for p, _what, _sealed, key in session.owed())
        twice = [k for k, n in count.items() if n > 1]
        if twice:
            return twice[0]
        player, _what, sealed, _ = session.owed()[0]
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind,
                                                                      request=request)
        (commands.commit_for_player if sealed else commands.decide)(store, "g1", player, choice, at=AT)
    raise AssertionError("no player owed two requests in one step")


def test_a_signed_extension_recorded_on_part_of_the_step_fails(tmp_path):
    keys = {p: generate_keypair() for p in PLAYERS}
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", "tortuga", PLAYERS, {}, deadline_seconds=86400, start=True, at=AT,
                         keys={p: keys[p][1] for p in PLAYERS})
    player, round_, step = owes_twice(store)
    block = offline.extension_block("g1", player, (round_, step), 3600, keys[player][0])
    submissions.submit(store, "g1", block, at=AT)
    commands.reveal_seed(store, "g1", force=True, at=AT)  # the whole replay, with the seed
    rows = [json.loads(line) for line in export_lines(store.events("g1"))]
    extended = rows[-2]
    assert extended["kind"] == "extended" and len(extended["data"]["requests"]) >= 2
    assert audit.audit_file(rechain(json.loads(json.dumps(rows))))["verdict"] == "OK"
    requests = extended["data"]["requests"]
    dropped = sorted(r["kind"] for r in requests[1:])[0]
    extended["data"]["requests"] = requests[:1]
    line = audit.audit_file(rechain(rows))["verdict_line"]
    assert line == (f"FAIL: event {extended['seq']}: {player} signed an extension of everything they owe in round "
                    f"{round_} step {step}, but this event leaves their {dropped} where it was"), line
