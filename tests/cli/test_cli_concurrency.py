"""Several processes writing to one game at once lose nothing and corrupt nothing: every
accepted command's event is in the log, the chain verifies and the audit passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

# A real pbem process that imports everything, then waits at a barrier (a file appearing)
# so that all the processes of a test hit the database at the same moment. It runs the
# command line's own main() once per argument list given as JSON on the command line.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    from pbem.cli.program import main
    go, runs = sys.argv[1], json.loads(sys.argv[2])
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.002)
    codes = []
    for argv in runs:
        sys.argv = ["pbem", *argv]
        try:
            main()
            codes.append(0)
        except SystemExit as exc:
            codes.append(exc.code or 0)
    print(json.dumps(codes))
""")


def _start_all(pbem_db, tmp_path, helpers, runs_per_process: list[list[list[str]]]) -> list[list[int]]:
    go = tmp_path / f"go-{time.monotonic_ns()}"
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(helpers.REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(go), json.dumps(runs)], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for runs in runs_per_process]
    for child in children:  # every child has finished importing
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
    go.touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _chain_ok(cli, game: str) -> dict:
    report = cli.json("audit", game)
    assert report["ok"] and report["chain"], report
    log = cli.log(game)
    assert [row["seq"] for row in log] == list(range(1, len(log) + 1))
    return report


def test_many_client_seeds_from_two_processes(cli, new_game, pbem_db, tmp_path, helpers):
    new_game("g", start=False)
    n = 25
    runs = {p: [["client-seed", "g", p, f"{p} #{i}"] for i in range(n)] for p in ("ani", "alex")}
    codes = _start_all(pbem_db, tmp_path, helpers, [runs["ani"], runs["alex"]])
    assert codes == [[0] * n, [0] * n]
    log = cli.log("g")
    for player in ("ani", "alex"):
        seeds = [r["data"]["seed"] for r in log if r["kind"] == "client_seed" and r["data"]["player"] == player]
        assert seeds == [f"{player} #{i}" for i in range(n)]  # all there, in each process's order
    assert len(log) == 1 + 2 * n
    # Whether the two writers interleave is up to the scheduler (on a busy machine one may
    # finish before the other starts); what is asserted is that nothing is lost either way.
    _chain_ok(cli, "g")
    cli.ok("start", "g")
    report = _chain_ok(cli, "g")
    assert report["replay"] == "full"


def test_players_commit_and_reveal_at_once(cli, new_game, pbem_db, tmp_path, helpers):
    new_game("g")
    sealed = {}
    for player in helpers.PLAYERS:
        request = cli.json("private", "g", player)["requests"][0]
        sealed[player] = cli.json("seal", "g", player, request["default"])
    pairs = [("ani", "frank"), ("alex", "lothar")]  # two processes, two players each
    codes = _start_all(pbem_db, tmp_path, helpers,
                       [[["commit", "g", p, sealed[p]["commitment"]] for p in pair] for pair in pairs])
    assert codes == [[0, 0], [0, 0]]
    commits = [r for r in cli.log("g") if r["kind"] == "commit"]
    assert {r["data"]["player"]: r["data"]["commitment"] for r in commits} == \
        {p: s["commitment"] for p, s in sealed.items()}
    codes = _start_all(pbem_db, tmp_path, helpers,
                       [[["reveal", "g", p, sealed[p]["choice"], sealed[p]["salt"]] for p in pair] for pair in pairs])
    assert codes == [[0, 0], [0, 0]]
    reveals = [r for r in cli.log("g") if r["kind"] == "reveal"]
    assert sorted(r["data"]["player"] for r in reveals) == sorted(helpers.PLAYERS)
    status = cli.json("status", "g")
    assert (status["round"], status["step"]) != (1, 1) or not any(w["sealed"] for w in status["waiting"])
    assert _chain_ok(cli, "g")["replay"] == "full"


def test_the_same_signed_block_from_two_processes_is_taken_once(cli, pbem_db, tmp_path, helpers):
    key = tmp_path / "ani.key"
    public = cli.json("keygen", "-o", key)["public_key"]
    other = cli.json("keygen", "-o", tmp_path / "alex.key")["public_key"]
    cli.ok("new", "s", "--players", "ani,alex", "--require-signatures", "--key", f"ani={public}",
           "--key", f"alex={other}", "--now")
    request = cli.json("private", "s", "ani")["requests"][0]
    block = tmp_path / "block.txt"
    block.write_text(cli.json("seal", "s", "ani", request["default"], "--key", key)["commit_block"])
    codes = _start_all(pbem_db, tmp_path, helpers, [[["submit", "s", str(block)]]] * 3)
    assert codes == [[0]] * 3  # the first records it; the others find it already recorded
    assert [r["data"]["player"] for r in cli.log("s") if r["kind"] == "commit"] == ["ani"]
    _chain_ok(cli, "s")

