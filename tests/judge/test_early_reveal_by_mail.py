"""A reveal sent early, by mail (docs/protocol.md §3, "A reveal sent early"; docs/email.md,
"The third way"): what the player who sent it reads afterwards, and what nobody else sees."""

from __future__ import annotations

from pbem.protocol import commands


def _sealed_at_home(game, player: str) -> dict:
    session = game.session()
    return commands.seal(session, player, session.rules.default(session.state, player, session.sealed.kind))


def _latest_private(game, player: str) -> str:
    rows = [r for r in game.outbox() if r["recipient"] == f"{player}@example.org"
            and f"private message for {player}" in (r["body_text"] or "")]
    return rows[-1]["body_text"]


def _receipts_to(game, player: str) -> list[dict]:
    """The receipts in the newest answer to ``player``."""
    from pbem.protocol.receipts import read_receipts
    answers = [r["body_text"] for r in game.outbox() if r["kind"] == "answer" and r["recipient"] == f"{player}@example.org"]
    return read_receipts(answers[-1])


def test_a_player_whose_reveal_is_held_is_not_told_to_send_it(game):
    made = _sealed_at_home(game, "alex")
    result = game.send("alex", f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
                               f"reveal {made['choice']} {made['salt']}\n")
    assert [line["ok"] for line in result.lines] == [True, True]
    from pbem.mail.reminders import owed
    assert not [key for key in owed(game.session()) if key[0] == "alex"]  # so no reminder either
    game.send("alex", "private")
    text = _latest_private(game, "alex")
    you_owe = next(line for line in text.splitlines() if line.startswith("You owe: "))
    assert "send your reveal" not in you_owe and "nothing more is needed from you" in you_owe, you_owe
    assert "reveal CHOICE SALT" not in text.split("You owe: ")[1].split("-----")[0]
    # nobody but alex's own answer ever carried the salt
    assert [(r["kind"], r["recipient"]) for r in game.outbox() if made["salt"] in (r["body_text"] or "")] == \
        [("answer", "alex@example.org")]


def test_a_player_whose_new_commitment_replaced_the_one_the_held_reveal_opens_still_owes_a_reveal(game):
    made = _sealed_at_home(game, "alex")
    game.send("alex", f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
                      f"reveal {made['choice']} {made['salt']}\n")
    again = _sealed_at_home(game, "alex")
    answer = game.send("alex", f"password {game.passwords['alex']}\ncommit {again['commitment']}\n")
    assert "the reveal you sent early opened the earlier one and no longer counts" in answer.lines[0]["text"]
    game.send("alex", "private")
    you_owe = next(line for line in _latest_private(game, "alex").splitlines() if line.startswith("You owe: "))
    assert "then send your reveal" in you_owe, you_owe


def test_the_reveal_line_above_the_commit_line_is_held_too(game):
    """A phone user pastes the two lines the other way round: the reveal, refused on its own
    (no commitment yet), is tried again once the mail's commitment is in, and held."""
    made = _sealed_at_home(game, "alex")
    result = game.send("alex", f"password {game.passwords['alex']}\nreveal {made['choice']} {made['salt']}\n"
                               f"commit {made['commitment']}\n")
    assert [(line["ok"], line["text"].split(":")[0]) for line in result.lines] == \
        [(True, "reveal held"), (True, "commitment recorded")], result.lines
    assert game.store.secret_names("g1").count("early/1/1/alex") == 1
    assert [r["event"] for r in _receipts_to(game, "alex")] == ["commit", "early_reveal"]  # its receipt too


def test_a_reveal_above_a_commit_line_that_is_refused_stays_refused(game):
    made = _sealed_at_home(game, "alex")
    result = game.send("alex", f"password {game.passwords['alex']}\nreveal {made['choice']} {made['salt']}\n"
                               f"commit {'ab' * 31}\n")
    assert [line["ok"] for line in result.lines] == [False, False]
    assert "alex has no commitment in step 1.1 yet" in result.lines[0]["text"]
    assert not [n for n in game.store.secret_names("g1") if n.startswith("early/")]


def test_a_signed_player_s_reveal_block_above_the_commit_block_is_held_too(make_judge):
    from pbem.protocol import offline
    from pbem.protocol.signing import generate_keypair
    pairs = {p: generate_keypair() for p in ("ani", "alex", "frank", "lothar")}
    game = make_judge(signed_keys={p: public for p, (_, public) in pairs.items()})
    made = _sealed_at_home(game, "alex")
    blocks = offline.signed_blocks(made, pairs["alex"][0])
    result = game.send("alex", f"{blocks['reveal']}\n{blocks['commit']}\n")
    assert [line["ok"] for line in result.lines] == [True, True], result.lines
    assert game.store.secret_names("g1").count("early/1/1/alex") == 1
    assert [e["kind"] for e in game.log()][-1] == "commit"


def _everyone_else_seals(game, but: str) -> None:
    for player in ("ani", "alex", "frank", "lothar"):
        if player != but:
            session = game.session()
            choice = session.rules.default(session.state, player, session.sealed.kind)
            assert all(line["ok"] for line in game.send(player, f"password {game.passwords[player]}\nseal {choice}").lines)


def test_the_same_mail_twice_in_another_spelling_and_then_a_seal_by_mail(game):
    """The phone sends the mail again (a new Message-ID), the reveal typed 'c, d'; then the
    player changes their mind and has the judge seal another choice: the judge's seal is
    what is revealed, the held reveal is not recorded."""
    made = _sealed_at_home(game, "alex")
    body = (f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
            f"reveal {made['choice'].lower().replace(',', ', ')} {made['salt']}\n")
    first, again = game.send("alex", body), game.send("alex", body)
    assert [line["text"].split(":")[0] for line in first.lines] == ["commitment recorded", "reveal held"]
    assert [line["text"].split(":")[0] for line in again.lines] == ["already recorded; nothing changed", "reveal held"]
    assert [e["kind"] for e in game.log()].count("commit") == 1
    session = game.session()
    other = next(o for o in session.requests_of("alex")[0].options if o != made["choice"])
    sealed = game.send("alex", f"password {game.passwords['alex']}\nseal {other}")
    assert "replaces your earlier choice" in sealed.lines[0]["text"]
    _everyone_else_seals(game, "alex")
    reveal = next(e["data"] for e in game.log() if e["kind"] == "reveal" and e["data"]["player"] == "alex")
    assert (reveal["choice"], reveal["by"]) == (other, "moderator")


def test_a_reveal_sent_early_during_a_pause_is_held_and_recorded(game):
    from pbem.protocol import away
    away.pause(game.store, "g1", "holiday", at="2030-01-01T10:00:30Z")
    made = _sealed_at_home(game, "alex")
    result = game.send("alex", f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
                               f"reveal {made['choice']} {made['salt']}\n")
    assert [line["ok"] for line in result.lines] == [True, True]
    _everyone_else_seals(game, "alex")
    reveal = next(e["data"] for e in game.log() if e["kind"] == "reveal" and e["data"]["player"] == "alex")
    assert (reveal["choice"], reveal["by"], reveal["salt"]) == (made["choice"], "player", made["salt"])


def test_an_early_reveal_in_a_1667_anonymous_vote_stays_with_the_judge_to_the_end(tmp_path):
    import json
    import re

    from pbem.mail import addresses
    from pbem.mail import ingest as pipeline
    from pbem.mail.send import render_pending
    from pbem.protocol import loading
    from pbem.store import Store
    from tests.judge.conftest import at, mail
    from tests.protocol.test_early_reveal import choose
    players = ["ani", "alex", "frank", "lothar", "mary"]
    store = Store(tmp_path / "j.db")
    addresses.create_game(store, "g1", "tortuga1667", players, {}, {p: f"{p}@example.org" for p in players},
                          "table@lists.example.org", at=at(0), start=True)
    passwords = {r[0].split("@")[0]: re.search(r"password for this game: (\S+)", r[1]).group(1)
                 for r in store.conn.execute("select recipient, body_text from outbox")
                 if r[1] and "password for this game" in r[1]}
    for _ in range(3000):  # the bots play (through the protocol) until an anonymous vote opens
        session = loading.load(store, "g1")
        step = session.sealed
        if step is not None and step.anonymous and not step.commits:
            break
        player, _what, sealed, _ = session.owed()[0]
        if sealed:
            commands.commit_for_player(store, "g1", player, choose(session, player, step.kind), at=at(1))
        else:
            request = next(r for r in session.requests_of(player) if not r.sealed)
            commands.decide(store, "g1", player, choose(session, player, request.kind), at=at(1))
    else:
        raise AssertionError("no anonymous vote")
    voter, *others = step.waiting
    made = commands.seal(session, voter, choose(session, voter, step.kind))
    result = pipeline.ingest(store, mail(f"{voter}@example.org", f"password {passwords[voter]}\ncommit "
                                         f"{made['commitment']}\nreveal {made['choice']} {made['salt']}\n"),
                             at(5), ("judge@example.org",))
    assert result.lines[1]["ok"] and "anonymous" in result.lines[1]["text"], result.lines
    for minute, other in enumerate(others, start=6):
        session = loading.load(store, "g1")
        pipeline.ingest(store, mail(f"{other}@example.org", f"password {passwords[other]}\nseal "
                                    f"{choose(session, other, step.kind)}"), at(minute), ("judge@example.org",))
    held = [e for e in store.events("g1") if e.kind == "reveal_held" and e.data["player"] == voter]
    assert len(held) == 1 and "choice" not in held[0].data and "salt" not in held[0].data
    assert made["salt"] not in "".join(json.dumps(e.data) for e in store.events("g1"))
    render_pending(store)
    carried = [r for r in store.conn.execute("select recipient, body_text from outbox")
               if made["salt"] in (r[1] or "")]
    assert [r[0] for r in carried] == [f"{voter}@example.org"]  # the answer to the voter's own mail, nothing else
    from pbem.protocol.receipts import read_receipts
    assert [r["event"] for r in read_receipts(carried[0][1])] == ["commit", "early_reveal"]  # the held vote's receipt
