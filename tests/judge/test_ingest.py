"""The email judge's pipeline: routing, passwords, commands, answers, once-only, loops."""

from __future__ import annotations

import json

import re

import pytest


def default_select(game, player):
    session = game.session()
    return session.rules.default(session.state, player, "select")


def test_new_game_mails_each_player_a_password_kept_only_hashed(game):
    assert set(game.passwords) == {"ani", "alex", "frank", "lothar"}
    stored = game.store.conn.execute("select group_concat(password_hash) from mail_players").fetchone()[0]
    for password in game.passwords.values():
        assert password not in stored
    welcome = [r for r in game.outbox("private") if r["recipient"] == "ani@example.org"]
    assert len(welcome) == 1 and "Your roll" in welcome[0]["body_text"]
    assert game.passwords["alex"] not in welcome[0]["body_text"]


def test_seal_by_mail_is_recorded_as_sealed_by_the_judge_and_answered(game):
    choice = default_select(game, "ani")
    result = game.send("ani", f"password {game.passwords['ani']}\nseal {choice}\n")
    assert result.outcome == "applied" and result.answered
    commit = game.log()[-1]
    assert commit["kind"] == "commit" and commit["data"]["by"] == "moderator"
    answer = game.outbox("answer")[-1]
    assert answer["recipient"] == "ani@example.org" and answer["in_reply_to"]
    assert "sealed on receipt" in answer["body_text"]
    assert choice not in game.outbox("summary")  # nothing public was queued yet


def test_the_same_message_twice_is_acted_on_once_and_answered_once(game, helpers):
    raw = helpers.mail("ani@example.org", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    from pbem.mail import ingest
    first = ingest.ingest(game.store, raw, helpers.at(5))
    before = game.frozen()
    again = ingest.ingest(game.store, raw, helpers.at(6))
    assert first.outcome == "applied" and again.outcome == "duplicate" and not again.answered
    assert game.frozen() == before


def test_the_same_bytes_without_message_id_are_acted_on_once(game, helpers):
    raw = helpers.mail("ani@example.org", "status", message_id=None)
    from pbem.mail import ingest
    assert ingest.ingest(game.store, raw, helpers.at(5)).answered
    assert ingest.ingest(game.store, raw, helpers.at(6)).outcome == "duplicate"


def test_a_missing_password_changes_nothing_and_says_how(game):
    before = game.frozen()[0]
    result = game.send("ani", f"seal {default_select(game, 'ani')}")
    assert result.outcome == "refused: no password"
    assert game.frozen()[0] == before
    assert "password YOUR-MAIL-PASSWORD" in game.outbox("answer")[-1]["body_text"]


def test_wrong_passwords_are_counted_and_then_ignored_for_an_hour(game):
    for _ in range(5):
        assert game.send("ani", "password wrong-wrong-wrong\nseal A").outcome == "refused: wrong password"
    answers = len(game.outbox("answer"))
    for body in ("password wrong-wrong-wrong\nseal A", "status"):
        result = game.send("ani", body)
        assert result.outcome.startswith("not answered: too many wrong passwords") and not result.answered
    assert len(game.outbox("answer")) == answers
    game.minute += 61
    assert game.send("ani", "status").answered


def test_a_forger_cannot_lock_a_player_out_of_their_own_game(game):
    """Strikes count against the From: address, which anyone can forge: mail with the right
    password is still acted on, so forged mail cannot make the player miss a move."""
    for _ in range(6):
        game.send("ani", "password guessed-by-mallory\nseal A")
    result = game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    assert result.outcome == "applied" and result.answered
    assert game.log()[-1]["kind"] == "commit"


def test_another_players_password_does_not_work(game):
    result = game.send("ani", f"password {game.passwords['alex']}\nseal A")
    assert result.outcome == "refused: wrong password"


def test_unknown_senders_get_one_short_answer_a_day_and_change_nothing(game):
    before = game.frozen()[0]
    assert game.send("mallory@example.net", "seal A").answered
    assert not game.send("mallory@example.net", "seal B").answered
    game.minute += 24 * 60
    assert game.send("mallory@example.net", "seal C").answered
    assert game.frozen()[0] == before


@pytest.mark.parametrize("headers", [
    {"Auto-Submitted": "auto-replied"},
    {"Precedence": "bulk"},
    {"List-Id": "<table.lists.example.org>"},
])
def test_automatic_and_list_mail_is_never_answered(game, headers):
    before = game.frozen()
    result = game.send("ani", "status", headers=headers)
    assert result.outcome.startswith("not answered") and not result.answered
    assert game.frozen() == before


def test_mail_from_the_judge_itself_is_never_answered(game):
    result = game.send("judge@example.org", "status")
    assert result.outcome.startswith("not answered") and not result.answered


def test_quoted_lines_are_never_commands(game):
    body = (f"password {game.passwords['ani']}\nstatus\n\nOn Mon, the judge wrote:\n"
            f"> seal {default_select(game, 'ani')}\n> skull:raid\n")
    before = game.frozen()[0]
    result = game.send("ani", body)
    assert [line["line"] for line in result.lines] == ["status"]
    assert game.frozen()[0] == before


def test_nothing_below_the_signature_is_read(game):
    result = game.send("ani", f"status\n-- \nseal {default_select(game, 'ani')}\n")
    assert [line["line"] for line in result.lines] == ["status"]


def test_a_refused_command_is_answered_with_the_cli_reason_and_others_still_apply(game):
    password = game.passwords["ani"]
    result = game.send("ani", f"password {password}\nreveal A {'00' * 32}\nseal {default_select(game, 'ani')}")
    assert [line["ok"] for line in result.lines] == [False, True]
    assert "ani has no commitment in step 1.1 yet; send commit HASH first" in result.lines[0]["text"]
    assert result.outcome == "partly applied"
    assert "REFUSED: ani has no commitment" in game.outbox("answer")[-1]["body_text"]
    assert game.log()[-1]["kind"] == "commit"


def test_routing_by_subject_tag_or_game_line_and_asking_when_unclear(make_judge, tmp_path):
    game = make_judge()
    from pbem.mail import addresses
    from pbem.protocol import commands
    commands.create_game(game.store, "g2", "tortuga", ["ani", "bob"], {}, start=True, at=game.store.events("g1")[-1].at)
    addresses.register(game.store, "g2", "ani", "ani@example.org", at="2030-01-01T10:00:00Z")
    assert game.send("ani", "status", subject="hello").outcome == "refused: which game?"
    assert game.send("ani", "status", subject="Re: [g2] your move").game == "g2"
    assert game.send("ani", "game g1\nstatus", subject="hello").game == "g1"


def test_too_many_command_lines_are_refused_with_an_answer(game):
    before = game.frozen()[0]
    result = game.send("ani", f"password {game.passwords['ani']}\n" + "status\n" * 201)
    assert result.outcome == "refused: too many lines" and result.answered
    assert game.frozen()[0] == before


@pytest.mark.parametrize("chat", [199, 201, 5000])
def test_chat_is_not_a_command_a_long_mail_with_commands_inside_is_applied(game, chat):
    """Lines that are no command (chat) do not count against the 200 command lines (issue 30)."""
    words = "we should talk about the weather over there before anyone moves again"
    body = f"password {game.passwords['ani']}\n" + f"{words}\n" * (chat // 2) + f"seal {default_select(game, 'ani')}\n"
    body += f"{words}\n" * (chat - chat // 2) + "status\n"
    result = game.send("ani", body)
    assert result.outcome == "applied", result.outcome
    assert [line["ok"] for line in result.lines] == [True, True]
    assert game.log()[-1]["kind"] == "commit"


def test_a_mail_past_the_byte_limit_is_refused_whatever_it_holds(game):
    from pbem.mail.limits import MAX_BYTES
    before = game.frozen()[0]
    body = f"password {game.passwords['ani']}\n" + "chat chat chat chat chat chat chat chat\n" * (MAX_BYTES // 40 + 10)
    result = game.send("ani", body + "status\n")
    assert result.outcome.startswith("refused: past a limit"), result.outcome
    assert game.frozen()[0] == before


def test_help_status_and_private_need_no_password(game):
    result = game.send("ani", "help\nstatus\nprivate")
    assert [line["ok"] for line in result.lines] == [True, True, True]
    # one message: the answer, then the private message asked for
    answer = game.outbox()[-1]
    assert answer["kind"] == "answer" and answer["recipient"] == "ani@example.org"
    assert answer["body_text"].index("The judge's answer") < answer["body_text"].index("private message for ani")


def test_answers_go_to_the_registered_address_never_to_reply_to(game):
    game.send("ani", "status", headers={"Reply-To": "mallory@example.net"})
    assert game.outbox("answer")[-1]["recipient"] == "ani@example.org"


def test_a_resolved_step_queues_the_summary_for_everyone_and_the_list(game):
    for player in ("ani", "alex", "frank", "lothar"):
        game.send(player, f"password {game.passwords[player]}\nseal {default_select(game, player)}")
    # the last sealer's answer carries the summary; everyone else gets it, with their private
    # message, and the three who sealed before get the answer to their mail first (held for it)
    assert [r["recipient"] for r in game.outbox("summary", rendered=False)] == ["table@lists.example.org"]
    carried = {r["recipient"]: r for r in game.outbox("answer", rendered=False) if r["render"]}
    assert sorted(carried) == sorted(f"{p}@example.org" for p in ("ani", "alex", "frank", "lothar"))
    assert all([list(part)[0] for part in json.loads(r["render"])["parts"]][:2] == ["text", "spec"]
               for r in carried.values())
    last = game.outbox("answer", rendered=False)[-1]
    assert last["recipient"] == "lothar@example.org"
    # the private message is kept as its model (lothar's view now), rendered when it is sent
    assert [list(part) for part in json.loads(last["render"])["parts"]] == [["text"], ["spec"], ["private"]]
    # rendered: the text in that order, and an HTML part that says all of it, the board drawn
    from pbem.mail.letters import render_row
    text, html, files = render_row(game.store, "g1", last["render"], {})
    assert text.index("The judge's answer for lothar") < text.index("Chain head:") < text.index(
        "private message for lothar")
    assert html.index("answer for lothar") < html.index("<svg") < html.index("private message for lothar")
    assert files is None


def test_one_transaction_a_failing_answer_leaves_nothing_and_never_stops_the_mail(game, monkeypatch):
    """A message the judge fails on (here its answer cannot be queued) leaves no event and
    no mail, is recorded as seen by its bytes only, and the messages after it are read."""
    from pbem.mail import answer
    before = game.frozen()
    real = answer.queue

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")
    monkeypatch.setattr(answer, "queue", boom)
    result = game.send("ani", f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}")
    assert result.outcome == "failed: disk full" and not result.answered
    assert game.frozen() == before
    seen = game.store.conn.execute("select key, outcome from mail_seen").fetchall()
    assert seen == [(result.key, "failed: disk full")] and result.key.startswith("sha256:")
    monkeypatch.setattr(answer, "queue", real)
    assert game.send("alex", "status").answered


def test_a_message_id_the_outbox_refuses_is_left_out_of_the_answer_not_fatal(game, helpers):
    """Message-IDs without '@', References that are not ids, control characters in a subject:
    the answer threads on what is well formed, and the batch goes on."""
    from pbem.mail import ingest
    raws = [helpers.mail("ani@example.org", "status", message_id="<12345.local>", subject="[g1] hi\x07"),
            helpers.mail("alex@example.org", "status", headers={"References": "<abc>"}),
            helpers.mail("mallory@example.net", "status", message_id="<x y>")]
    results = ingest.ingest_many(game.store, raws, lambda: helpers.at(9))
    assert [r.answered for r in results] == [True, True, True]
    answers = game.outbox("answer")[-3:]
    assert answers[0]["in_reply_to"] is None and "\x07" not in answers[0]["subject"]


def test_a_mail_with_several_decisions_gets_one_private_message_as_things_stand_after_it(make_judge, helpers):
    """A player who answers two requests in one mail must not be sent a private message
    written between the two, which would ask again for the second."""
    import secrets
    seeds = [bytes(range(32))]  # a fixed server seed (the first draw): the same game every run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(secrets, "token_bytes", lambda n, draw=secrets.token_bytes: seeds.pop() if seeds else draw(n))
        game = make_judge()
    session = _play_until(game, helpers.at, lambda s: any(len(_open_requests(s, p)) >= 2 for p in s.players))
    player = next(p for p in session.players if len(_open_requests(session, p)) >= 2)
    choices = [r.default for r in _open_requests(session, player)]
    rows = len(game.outbox())
    result = game.send(player, "\n".join([f"password {game.passwords[player]}", *choices]))
    assert result.outcome == "applied", result.lines
    queued = game.outbox()[rows:]
    after = game.session()
    for name in after.players:
        privates = [r for r in queued if r["kind"] == "private" and r["recipient"] == f"{name}@example.org"]
        assert len(privates) <= 1, f"{name} got {len(privates)} private messages for one mail"
        owed = [r.kind for r in after.requests_of(name)]
        for row in privates:
            asked = re.findall(r"^You owe: (\w+)", row["body_text"], re.M)
            assert asked == owed, f"{name}'s private message asks for {asked}; {name} owes {owed}"


def _open_requests(session, player):
    return [r for r in session.requests_of(player) if not r.sealed]


def _play_until(game, at, wanted, limit: int = 2000):
    """Bots play g1 through the library (greedy and random seats) until ``wanted(session)``."""
    from pbem.protocol import commands
    session = game.session()
    bots = {p: session.rules.bot(f"mail/{p}", "greedy" if i % 2 == 0 else "random")
            for i, p in enumerate(session.players)}
    for _ in range(limit):
        session = game.session()
        if wanted(session):
            return session
        assert not session.finished, "the game ended before the wanted state"
        game.minute += 1
        now = at(game.minute)
        if session.sealed is not None:
            held = [commands.seal(session, p, bots[p].choose(session.state, p, "select"))
                    for p in session.sealed.owes_commit()]
            for sealed in held:
                commands.commit(game.store, "g1", sealed["player"], sealed["commitment"], at=now)
            for sealed in held:
                commands.reveal(game.store, "g1", sealed["player"], sealed["choice"], sealed["salt"], at=now)
        else:
            request = session.pending()[0]
            commands.decide(game.store, "g1", request.player,
                            bots[request.player].choose(session.state, request.player, request.kind), at=now)
    raise AssertionError("the wanted state was not reached")


def test_a_bare_choice_while_a_sealed_one_is_owed_says_how_to_seal_it(game):
    before = game.frozen()[0]
    result = game.send("ani", f"password {game.passwords['ani']}\nB,C\nCheers, Ani")
    assert [line["ok"] for line in result.lines] == [False]  # the sign-off and the name are not read
    assert result.lines[0]["text"].startswith("not a command; you owe a sealed choice: send 'seal B,C'")
    assert game.frozen()[0] == before


def test_an_earlier_decision_sent_again_when_it_is_illegal_now_is_refused_not_already_recorded(game):
    """A bare choice by mail repeats only a decision of the step it is sent in: a player who
    sends last step's decision again, where it is not allowed now, is told what is legal
    (not "already recorded", after which they would wait, and be defaulted)."""
    from pbem.games.base import ChoiceError
    from pbem.protocol import reports
    decided: dict[str, set] = {}
    for _ in range(400):
        session = game.session()
        if session.finished:
            break
        for request in session.pending():
            if request.sealed:
                continue
            for earlier in sorted(decided.get(request.player, ())):
                try:
                    session.rules.check(session.state, request.player, earlier)
                except ChoiceError as exc:
                    if "owes no" in str(exc):
                        continue
                    result = game.send(request.player, f"password {game.passwords[request.player]}\n{earlier}")
                    assert not result.lines[0]["ok"], result.lines
                    assert "legal:" in result.lines[0]["text"] or "not allowed" in result.lines[0]["text"]
                    return
        owed = reports.waiting(session)[0]
        player = owed["player"]
        kind = session.sealed.kind if owed["sealed"] else owed["kind"]
        choice = session.rules.default(session.state, player, kind)
        verb = "seal " if owed["sealed"] else ""
        assert game.send(player, f"password {game.passwords[player]}\n{verb}{choice}").outcome == "applied"
        if not owed["sealed"]:
            decided.setdefault(player, set()).add(choice)
    pytest.fail("no game state reached where an earlier decision is illegal")


def test_a_list_copy_does_not_make_the_players_own_copy_a_duplicate(game, helpers):
    """The same message (one Message-ID) reaches the judge twice when the player copies the
    game's list: the list's copy is not answered, and the player's own copy is acted on."""
    from pbem.mail import ingest
    body = f"password {game.passwords['ani']}\nseal {default_select(game, 'ani')}"
    listed = helpers.mail("ani@example.org", body, message_id="<move1@example.org>",
                          headers={"List-Id": "<g1.lists.example.org>"})
    direct = helpers.mail("ani@example.org", body, message_id="<move1@example.org>")
    assert ingest.ingest(game.store, listed, helpers.at(5)).outcome.startswith("not answered")
    assert ingest.ingest(game.store, direct, helpers.at(6)).outcome == "applied"
    assert game.log()[-1]["kind"] == "commit"


def test_in_a_signed_game_only_signed_blocks_act(make_judge):
    """No password in a game with signatures, so nothing but a signed block may change it:
    a forged From: cannot set a client seed or anything else."""
    from pbem.protocol.signing import generate_keypair
    keys = {p: generate_keypair()[1] for p in ("ani", "alex", "frank", "lothar")}
    game = make_judge(start=False, signed_keys=keys)
    before = game.frozen()[0]
    result = game.send("ani", "client-seed chosen by a forger\nseal A\nstatus")
    assert [line["ok"] for line in result.lines] == [False, False, True]
    assert "only as signed blocks" in result.lines[0]["text"]
    assert game.frozen()[0] == before


def test_an_answers_references_hold_the_judges_message_it_answers_and_the_players_mail(game, helpers):
    """Issue 30: a long thread is cut from its old end, never losing the judge's message the
    mail named (its In-Reply-To) nor the mail itself; held answers joined keep both of each."""
    judges = [r["message_id"] for r in game.outbox("private") if r["recipient"] == "ani@example.org"]
    named = judges[-1]
    old = " ".join(f"<old{i}@players.example.org>" for i in range(40))
    first = helpers.mail("ani@example.org", "status", message_id="<first@players.example.org>",
                         headers={"In-Reply-To": named, "References": f"{named} {old}"})
    from pbem.mail import ingest
    assert ingest.ingest(game.store, first, helpers.at(5), ("judge@example.org",)).answered
    [answer] = [r for r in game.outbox("answer") if r["recipient"] == "ani@example.org"]
    refs = answer["refs"].split()
    assert named in refs and refs[-1] == "<first@players.example.org>" and len(refs) <= 20, refs
    assert answer["in_reply_to"] == "<first@players.example.org>"


def test_a_refused_command_among_chat_is_refused_not_partly_applied(game):
    """The note that names the lines not read as commands is no command: a mail whose only
    command was refused is 'refused' (pbem mail ingest says so), not 'partly applied'."""
    password = game.passwords["ani"]
    before = game.frozen()[0]
    result = game.send("ani", f"password {password}\nI'm back!\nback")
    assert [line["ok"] for line in result.lines if not line.get("note")] == [False]
    assert any(line.get("note") and "Not read as commands" in line["text"] for line in result.lines)
    assert result.outcome == "refused"
    assert game.frozen()[0] == before
