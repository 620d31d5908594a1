"""How the logs in this folder were made: run with a pbem from before the policy stand-in-v2
(commit eff49d7), e.g. ``PYTHONPATH=/path/to/old/pbem python make_v1.py tortuga1667 OUT``.

Bots play every seat; two seats are absent and handed to the stand-in after one forced
default each (``stand_in_after`` 1). The game is played to its end and exported to OUT.jsonl.
pbem itself never uses v1 for a new game: these logs are kept so that the audit and the
verifier page are tested on the logs that games made before v2 left behind
(tests/protocol/test_standin_v2.py, tests/pages/test_verify_verdicts.py)."""
import os
import sys

from pbem.protocol import commands, loading
from pbem.store import Store
from pbem.store.export import export_lines

gt, out = sys.argv[1], sys.argv[2]
players = ["ani", "bo", "cy", "dee", "eve"] if gt == "tortuga1667" else ["ani", "alex", "frank", "lothar"]
if os.path.exists(out + ".db"):
    os.remove(out + ".db")
store = Store(out + ".db")
commands.create_game(store, "v1", gt, players, {}, deadline_seconds=86400, start=True, at="2030-01-01T10:00:00Z",
                     stand_in_after=1)
absent = {players[-1], players[1]}
n = 0
while not loading.load(store, "v1").finished:
    s = loading.load(store, "v1")
    n += 1
    hour = f"2030-01-{2 + n // 20:02d}T{n % 20:02d}:00:00Z"
    player, what, sealed, _ = s.owed()[0]
    if player in absent and player not in s.standing_in:
        commands.nmr(store, "v1", player, force=True, at=hour)
        continue
    request = next(r for r in s.requests_of(player) if r.sealed == sealed)
    choice = s.rules.bot(f"bot/{player}", "random").choose(s.state, player, request.kind, request=request)
    if sealed:
        commands.commit_for_player(store, "v1", player, choice, at=hour)
    else:
        commands.decide(store, "v1", player, choice, at=hour)
with open(out + ".jsonl", "w", encoding="utf-8") as f:
    f.write("".join(export_lines(store.events("v1"))))
print(out, store.head("v1")[0], sum(1 for e in store.events("v1") if e.data.get("by") == "stand-in"))
