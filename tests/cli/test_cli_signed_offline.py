"""A player in a signed game needs nothing but their private message and their key: they
seal and sign sealed choices, and sign open decisions, offline."""

import json

from pbem.cli.program import app
from pbem.protocol import loading
from pbem.render.demo import play_bots
from pbem.store import Store
from typer.testing import CliRunner

runner = CliRunner()


def run(*args):
    result = runner.invoke(app, list(args))
    return result


def test_open_decision_signed_offline_and_submitted(tmp_path, monkeypatch):
    db = tmp_path / "g.db"
    monkeypatch.setenv("PBEM_DB", str(db))
    keys = {}
    for p in ("ani", "alex"):
        out = json.loads(run("keygen", "-o", str(tmp_path / f"{p}.key"), "--json").stdout)
        keys[p] = out["public_key"]
    assert run("new", "g", "--players", "ani,alex", "--require-signatures", "--now",
               "--key", f"ani={keys['ani']}", "--key", f"alex={keys['alex']}").exit_code == 0
    store = Store(db)
    # play with signed blocks until some player owes an open decision
    while True:
        session = loading.load(store, "g")
        open_requests = [r for r in session.pending() if not r.sealed]
        if open_requests:
            break
        for p in session.sealed.owes_commit():
            private = json.loads(run("private", "g", p, "--json").stdout)
            choice = private["requests"][0]["default"]
            sealed = json.loads(run("seal", "--context", private["context"], choice, "--key",
                                    str(tmp_path / f"{p}.key"), "--json").stdout)
            (tmp_path / f"{p}.commit").write_text(sealed["commit_block"])
            (tmp_path / f"{p}.reveal").write_text("> " + sealed["reveal_block"].replace("\n", "\n> "))
            assert run("submit", "g", str(tmp_path / f"{p}.commit")).exit_code == 0
        for p in ("ani", "alex"):
            if (tmp_path / f"{p}.reveal").exists():
                assert run("submit", "g", str(tmp_path / f"{p}.reveal")).exit_code == 0
                (tmp_path / f"{p}.reveal").unlink()
    request = open_requests[0]
    private = json.loads(run("private", "g", request.player, "--json").stdout)
    # the token of an open decision has the same name as a seal token (issue 7)
    assert private["context"] and private["context_kind"] == "decide" and private["require_signatures"]
    assert private["context"] in run("private", "g", request.player).stdout
    text = run("private", "g", request.player).stdout
    assert "pbem decide --context" in text and "--key YOUR.key" in text
    # a sealed-choice command refuses the decision token, with a pointer to the right one
    refused = run("seal", "--context", private["context"], request.default)
    assert refused.exit_code == 1 and "pbem decide --context" in refused.stderr
    head = store.head("g")
    made = run("decide", "--context", private["context"], request.default, "--key",
               str(tmp_path / f"{request.player}.key"), "--json")
    assert made.exit_code == 0, made.stderr
    assert store.head("g") == head  # making the block recorded nothing
    (tmp_path / "decision.txt").write_text(json.loads(made.stdout)["block"])
    assert run("submit", "g", str(tmp_path / "decision.txt")).exit_code == 0
    assert store.head("g")[0] > head[0]
    # the same block again is a repeat: it changes nothing
    after = store.head("g")
    again = run("submit", "g", str(tmp_path / "decision.txt"))
    assert again.exit_code == 0 and "already recorded; nothing changed" in again.stdout
    assert store.head("g") == after
