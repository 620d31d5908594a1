"""One message per player per moment (issue 16): the order of its parts, the list, and the
per-game setting that leaves the round summaries to the list."""

from __future__ import annotations

import json

from pbem.mail import deadlines
from pbem.protocol import commands


def default_select(game, player):
    session = game.session()
    return session.rules.default(session.state, player, "select")


def parts(row) -> list[str]:
    """What a queued row carries, in order: "text" parts and "spec" (summary) parts."""
    if row["render"] is None:
        return ["text"]
    return [next(iter(part)) for part in json.loads(row["render"])["parts"]]


def seal_all(game):
    for player in ("ani", "alex", "frank", "lothar"):
        game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")


def test_one_message_per_player_per_mail_answer_first(game):
    before = len(game.outbox())
    seal_all(game)
    rows = game.outbox()[before:]
    last = [r for r in rows if r["queued_at"] == rows[-1]["queued_at"]]  # what lothar's mail caused
    assert sorted(r["recipient"] for r in last) == sorted(
        ["ani@example.org", "alex@example.org", "frank@example.org", "lothar@example.org", "table@lists.example.org"])
    by = {r["recipient"]: r for r in last}
    assert by["lothar@example.org"]["kind"] == "answer" and parts(by["lothar@example.org"]) == ["text", "spec", "text"]
    assert parts(by["ani@example.org"]) == ["spec", "text"]
    assert parts(by["table@lists.example.org"]) == ["spec"]


def test_summaries_left_to_the_list(game):
    deadlines.set_player_summaries(game.store, "g1", False)
    before = len(game.outbox())
    seal_all(game)
    rows = game.outbox()[before:]
    last = {r["recipient"]: r for r in rows if r["queued_at"] == rows[-1]["queued_at"]}
    lothar = last["lothar@example.org"]  # the answer, then the private message, no summary
    assert parts(lothar) == ["text"] and lothar["kind"] == "answer"
    body = lothar["body_text"]
    assert body.index("The judge's answer for lothar") < body.index("private message for lothar")
    assert "Chain head: event" not in body
    assert last["ani@example.org"]["kind"] == "private" and parts(last["ani@example.org"]) == ["text"]
    assert parts(last["table@lists.example.org"]) == ["spec"]
    # the final result still goes to everyone, with the export
    commands.reveal_seed(game.store, "g1", force=True, at="2030-01-01T11:00:00Z")
    result = [r for r in game.outbox() if r["kind"] == "result"]
    assert sorted(r["recipient"] for r in result) == sorted(
        ["ani@example.org", "alex@example.org", "frank@example.org", "lothar@example.org", "table@lists.example.org"])


def test_the_setting_is_kept_when_the_list_address_changes(game):
    from pbem.mail import judge
    deadlines.set_player_summaries(game.store, "g1", False)
    judge.set_list(game.store, "g1", "other@lists.example.org")
    assert deadlines.settings(game.store, "g1")["player_summaries"] is False
