"""One message per player per moment (issue 16): the order of its parts, the list, and the
per-game setting that leaves the round summaries to the list."""

from __future__ import annotations

import json

import pytest

from pbem.mail import deadlines
from pbem.protocol import commands


def default_select(game, player):
    session = game.session()
    return session.rules.default(session.state, player, "select")


def parts(row) -> list[str]:
    """What a queued row carries, in order: "text" parts, "spec" (summary) parts and
    "private" parts (a private message's model, rendered when it is sent)."""
    if row["render"] is None:
        return ["text"]
    return [next(iter(part)) for part in json.loads(row["render"])["parts"]]


def seal_all(game):
    for player in ("ani", "alex", "frank", "lothar"):
        game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")


def test_one_message_per_player_per_mail_answer_first(game):
    before = len(game.outbox(rendered=False))
    seal_all(game)
    rows = game.outbox(rendered=False)[before:]
    last = [r for r in rows if r["queued_at"] == rows[-1]["queued_at"]]  # what lothar's mail caused
    assert sorted(r["recipient"] for r in last) == sorted(
        ["ani@example.org", "alex@example.org", "frank@example.org", "lothar@example.org", "table@lists.example.org"])
    by = {r["recipient"]: r for r in last}
    assert by["lothar@example.org"]["kind"] == "answer" and parts(by["lothar@example.org"]) == ["text", "spec", "private"]
    # the answers to the others' seals (they only confirmed) waited for this message: first in it
    assert by["ani@example.org"]["kind"] == "answer" and parts(by["ani@example.org"]) == ["text", "spec", "private"]
    assert parts(by["table@lists.example.org"]) == ["spec"]
    assert len(rows) == len(last)  # nothing else: no answer went alone


def test_summaries_left_to_the_list(game):
    deadlines.set_player_summaries(game.store, "g1", False)
    before = len(game.outbox(rendered=False))
    seal_all(game)
    rows = game.outbox(rendered=False)[before:]
    last = {r["recipient"]: r for r in rows if r["queued_at"] == rows[-1]["queued_at"]}
    lothar = last["lothar@example.org"]  # the answer, then the private message, no summary
    assert parts(lothar) == ["text", "private"] and lothar["kind"] == "answer"
    ani = last["ani@example.org"]  # her held answer, then her private message
    assert ani["kind"] == "answer" and parts(ani) == ["text", "private"]
    rendered = {r["id"]: r for r in game.outbox(rendered=True)}
    body = rendered[lothar["id"]]["body_text"]
    assert body.index("The judge's answer for lothar") < body.index("private message for lothar")
    assert "Chain head: event" not in body
    body = rendered[ani["id"]]["body_text"]
    assert body.index("The judge's answer for ani") < body.index("private message for ani")
    assert parts(last["table@lists.example.org"]) == ["spec"]
    # the final result still goes to everyone, with the export
    commands.reveal_seed(game.store, "g1", force=True, at="2030-01-01T11:00:00Z")
    result = [r for r in game.outbox(rendered=False) if r["kind"] == "result"]
    assert sorted(r["recipient"] for r in result) == sorted(
        ["ani@example.org", "alex@example.org", "frank@example.org", "lothar@example.org", "table@lists.example.org"])


def test_the_setting_is_kept_when_the_list_address_changes(game):
    from pbem.mail import addresses
    deadlines.set_player_summaries(game.store, "g1", False)
    addresses.set_list(game.store, "g1", "other@lists.example.org")
    assert deadlines.settings(game.store, "g1")["player_summaries"] is False


# ---------------------------------------------------------------------- answers held for the next message

def held_rows(game):
    return [r for r in game.outbox(rendered=False) if r["held_until"] and r["state"] == "queued"]


def due_to(game, address, now):
    from pbem.store import outbox
    return [r for r in outbox.due(game.store, now) if r.recipient == address and r.kind == "answer"]


def test_an_answer_that_only_confirms_waits_for_the_next_message_then_goes_alone(game, helpers):
    result = game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    assert result.outcome == "applied" and result.answered
    [row] = held_rows(game)
    assert row["kind"] == "answer" and row["recipient"] == "ani@example.org" and "sealed on receipt" in row["body_text"]
    sent_at = helpers.at(game.minute)
    assert row["held_until"] == row["next_try_at"] == helpers.at(game.minute + 10)
    assert "-----BEGIN PBEM RECEIPT-----" in row["body_text"]  # the receipt waits with it, unchanged
    assert not due_to(game, "ani@example.org", helpers.at(game.minute + 9)) and sent_at
    assert [r.message_id for r in due_to(game, "ani@example.org", helpers.at(game.minute + 10))] == [row["message_id"]]
    # past its time, a later message does not take it: it goes alone, as it would have
    game.minute += 10
    game.send("ani", "status")
    assert [r["message_id"] for r in held_rows(game)] == [row["message_id"]]


def test_held_answers_join_in_order_and_the_next_message_carries_them_first(game):
    ani = game.passwords["ani"]
    first = game.send("ani", f"password {ani}\nseal {default_select(game, 'ani')}")
    second = game.send("ani", f"password {ani}\nseal {default_select(game, 'ani')}")  # a repeat: still a confirmation
    [row] = held_rows(game)
    assert row["body_text"].count("The judge's answer for ani") == 2
    assert "already recorded; nothing changed" in row["body_text"].split("The judge's answer for ani")[2]
    mail_ids = [f"<{r[0]}>" for r in game.store.conn.execute("select key from mail_seen where key not like 'sha256:%' "
                                                             "order by rowid")]
    assert len(mail_ids) == 2
    assert row["in_reply_to"] == mail_ids[-1] and set(mail_ids) <= set(row["refs"].split())
    assert first.answered and second.answered
    for player in ("alex", "frank", "lothar"):  # the step resolves: ani's next message carries both answers
        game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")
    assert not held_rows(game)
    [carrier] = [r for r in game.outbox(rendered=False) if r["recipient"] == "ani@example.org" and r["render"]]
    assert carrier["kind"] == "answer" and parts(carrier) == ["text", "spec", "private"]
    assert carrier["in_reply_to"] == mail_ids[-1] and set(mail_ids) <= set(carrier["refs"].split())
    text = json.loads(carrier["render"])["parts"][0]["text"]
    assert text == row["body_text"]  # every word of the answers, receipts included


@pytest.mark.parametrize("body", ["seal Z,Z,Z", "status", "help", "hello there"])
def test_an_answer_that_refuses_or_answers_a_question_goes_at_once(game, body):
    before = len(game.outbox(rendered=False))
    result = game.send("ani", f"password {game.passwords['ani']}\n{body}")
    assert result.answered
    [row] = game.outbox(rendered=False)[before:]
    assert row["kind"] == "answer" and row["held_until"] is None and row["next_try_at"] == row["queued_at"]


def test_a_partly_applied_mail_is_answered_at_once(game):
    before = len(game.outbox(rendered=False))
    game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}\nseal Z,Z,Z")
    [row] = game.outbox(rendered=False)[before:]
    assert "REFUSED" in row["body_text"] and row["held_until"] is None


def test_a_stranger_is_answered_at_once(game):
    before = len(game.outbox(rendered=False))
    assert game.send("mallory@example.net", "seal A").answered
    [row] = game.outbox(rendered=False)[before:]
    assert row["held_until"] is None


def test_hold_answers_0_answers_every_mail_at_once(game):
    deadlines.set_hold_answers(game.store, "g1", 0)
    before = len(game.outbox(rendered=False))
    game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    [row] = game.outbox(rendered=False)[before:]
    assert row["kind"] == "answer" and row["held_until"] is None


def test_a_crash_while_carrying_leaves_the_held_answer(game, monkeypatch):
    """Carrying is part of the moment's transaction: a failure after the held row was taken
    leaves it held, and the mail that failed is undone."""
    from pbem.mail import moment
    game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    held = held_rows(game)
    real = moment.queue_message

    def boom(store, outbox, game_, kind, address, *args):
        if address == "ani@example.org":
            raise RuntimeError("disk full")
        return real(store, outbox, game_, kind, address, *args)
    monkeypatch.setattr(moment, "queue_message", boom)
    head = game.store.head("g1")
    for player in ("alex", "frank", "lothar"):
        result = game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")
    assert result.outcome == "failed: disk full" and game.store.head("g1")[0] > head[0]
    assert [r for r in held_rows(game) if r["recipient"] == "ani@example.org"] == held


def test_a_carried_answer_keeps_the_subject_of_what_is_new(game, helpers):
    game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    [held] = held_rows(game)
    commands.reveal_seed(game.store, "g1", force=True, at=helpers.at(game.minute + 1))
    [result] = [r for r in game.outbox(rendered=False) if r["recipient"] == "ani@example.org" and r["render"]]
    assert result["subject"] == "[g1] final result and server seed" and result["kind"] == "answer"
    assert result["in_reply_to"] == held["in_reply_to"] and parts(result)[:2] == ["text", "spec"]
    assert not held_rows(game)
