"""A replacement's welcome says exactly what the seat owes (issue 29): when the former
player sealed the seat's choice on their own machine and left with its salt, the new player
is told that nobody can reveal it, that they may seal afresh while commitments are still
coming in, that the default applies at the deadline, and the command with which the
moderator applies it at once (``pbem nmr GAME SEAT --force``). For a sealed Tortuga choice
and a sealed (anonymous) 1667 vote; the game then goes on and audits OK."""

from __future__ import annotations

import pytest

from pbem.games.tortuga1667 import bots
from pbem.mail import addresses, away, judge
from pbem.protocol import commands, loading
from pbem.protocol.errors import Refused
from pbem.store import Store
from pbem.store.audit import audit_store

ORPHANED = ("no reveal: the seat's former player sealed this choice on their own machine and left with its "
            "salt (replaced)")


def at(minutes: int) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def welcome_of(store, since: int, address: str = "maria@example.org") -> str:
    from pbem.mail.send import render_pending
    render_pending(store)
    rows = store.conn.execute("select recipient, body_text from outbox where id > ? order by id", (since,)).fetchall()
    [text] = [body for recipient, body in rows if recipient == address]
    return text


def last_id(store) -> int:
    return store.conn.execute("select coalesce(max(id), 0) from outbox").fetchone()[0]


def test_a_sealed_tortuga_choice_left_with_its_salt(game):
    judge.attach(game.store)
    sealed = commands.seal(game.session(), "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=at(1))
    since = last_id(game.store)
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=at(2))
    text = welcome_of(game.store, since)
    default = game.session().rules.default(game.session().state, "lothar", "select")
    assert ("You owe: select, sealed: the seat's former player sealed a choice for this step on their own machine "
            "and left with its salt, so nobody can reveal it. You may seal a new choice now: it replaces theirs "
            "while commitments are still coming in. If you do not, once every commitment is in the default "
            f"({default}) applies to this seat at the deadline, or at once if the moderator applies it "
            "(pbem nmr g1 lothar --force)") in text
    assert "then send your reveal" not in text
    # without --force the moderator is told what to do; with it, the default applies now
    before = game.frozen()
    with pytest.raises(Refused, match="or now with: pbem nmr g1 lothar --force"):
        commands.nmr(game.store, "g1", "lothar", at=at(3))
    assert game.frozen() == before
    commands.nmr(game.store, "g1", "lothar", force=True, at=at(3))
    for player in ("ani", "alex", "frank"):
        game.send(player, f"password {game.passwords[player]}\nseal A")
    default_event = next(e for e in game.log() if e["kind"] == "default" and e["data"]["player"] == "lothar")
    assert default_event["data"]["reason"] == ORPHANED
    open_step = game.session().sealed
    assert open_step is None or (open_step.round, open_step.step) != (1, 1)  # the step resolved
    report = audit_store(game.store, "g1")
    assert report["ok"] and report["discretion"]["forced_defaults"] == 1


def test_a_new_player_may_seal_afresh_in_place_of_the_orphaned_choice(game):
    judge.attach(game.store)
    sealed = commands.seal(game.session(), "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=at(1))
    since = last_id(game.store)
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=at(2))
    password = welcome_of(game.store, since).split("Your mail password for this game: ")[1].split()[0]
    assert game.send("maria@example.org", f"password {password}\nseal C").outcome == "applied"
    assert not game.session().orphaned
    for player in ("ani", "alex", "frank"):
        game.send(player, f"password {game.passwords[player]}\nseal A")
    reveals = {e["data"]["player"]: e["data"]["choice"] for e in game.log() if e["kind"] == "reveal"}
    assert reveals["lothar"] == "C"


def test_a_sealed_1667_vote_left_with_its_salt(tmp_path):
    store = Store(tmp_path / "judge.db")
    players = ["ani", "alex", "frank", "lothar", "mary"]
    addresses.create_game(store, "g1", "tortuga1667", players, {"variant": "standard"},
                          {p: f"{p}@example.org" for p in players}, "table@lists.example.org", at=at(0), start=True)
    judge.attach(store)
    bot = bots.RandomBot(3)
    seat = None
    for minute in range(1, 2000):
        session = loading.load(store, "g1")
        step = session.sealed
        if step is not None and step.kind == "vote" and step.owes_commit() and len(step.owes_commit()) >= 2:
            seat = step.owes_commit()[0]
            break
        player, kind, sealed, _ = session.owed()[0]
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        votes = [c for c in ("attack", "mutiny", "brawl") if kind == "action" and bots._is_legal(session.state, player, c)]
        choice = votes[0] if votes else bot.choose(session.state, player, request.kind)
        if sealed:
            commands.commit_for_player(store, "g1", player, choice, at=at(minute))
        else:
            commands.decide(store, "g1", player, choice, at=at(minute))
    assert seat is not None, "no vote with two voters to come"
    session = loading.load(store, "g1")
    choice = bot.choose(session.state, seat, "vote")
    sealed = commands.seal(session, seat, choice)
    commands.commit(store, "g1", seat, sealed["commitment"], at=at(2001))
    since = last_id(store)
    away.replace(store, "g1", seat, "maria@example.org", at=at(2002), reason=f"{seat} left")
    text = welcome_of(store, since)
    assert ("vote, sealed: the seat's former player sealed a choice for this step on their own machine and left "
            "with its salt, so nobody can reveal it.") in text
    assert f"or at once if the moderator applies it (pbem nmr g1 {seat} --force)" in text
    assert "then send your reveal" not in text
    commands.nmr(store, "g1", seat, force=True, at=at(2003))
    session = loading.load(store, "g1")
    assert seat in session.sealed.defaulted if session.sealed is not None else True
    # the game goes on to its end; the audit is OK and counts the forced default
    for minute in range(2004, 6000):
        session = loading.load(store, "g1")
        if session.finished or not session.owed():
            break
        player, kind, sealed, _ = session.owed()[0]
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = bot.choose(session.state, player, request.kind)
        if sealed:
            commands.commit_for_player(store, "g1", player, choice, at=at(minute))
        else:
            commands.decide(store, "g1", player, choice, at=at(minute))
    events = [e.export_dict() for e in store.events("g1")]
    orphaned = [e for e in events if e["kind"] in ("default", "reveal_held") and e["data"].get("player") == seat
                and e["data"].get("reason") == ORPHANED]
    assert orphaned, "the seat's vote was defaulted with the reason that says why"
    report = audit_store(store, "g1")
    assert report["ok"] and report["discretion"]["forced_defaults"] >= 1


def test_once_every_commitment_is_in_the_welcome_says_nothing_is_needed_and_when_the_default_comes(game):
    judge.attach(game.store)
    sealed = commands.seal(game.session(), "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=at(1))
    for player in ("ani", "alex", "frank"):
        commands.commit_for_player(game.store, "g1", player, "A", at=at(2))
    since = last_id(game.store)
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=at(3))
    text = welcome_of(game.store, since)
    default = game.session().rules.default(game.session().state, "lothar", "select")
    assert ("You owe: select, sealed: the seat's former player sealed this choice on their own machine and left "
            f"with its salt, so nobody can reveal it and nothing is needed from you: the default ({default}) "
            "applies to this seat at the deadline") in text
    assert "(pbem nmr g1 lothar --force)" in text and "send your reveal" not in text
    commands.nmr(game.store, "g1", "lothar", force=True, at=at(4))
    assert next(e for e in game.log() if e["kind"] == "default")["data"]["reason"] == ORPHANED


def test_the_welcome_shows_how_to_seal_afresh_and_no_late_default_without_a_due_time(game):
    """The new player 'may seal a new choice now': the welcome lists the choices and the
    line to send, as for any commitment owed; it does not add 'If you are late, the default
    applies' with no due time, since nothing is owed until every commitment is in."""
    judge.attach(game.store)
    sealed = commands.seal(game.session(), "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=at(1))
    since = last_id(game.store)
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=at(2))
    text = welcome_of(game.store, since)
    owed = text.split("You owe: ")[1].split("-----")[0]
    assert "Send seal CHOICE, CHOICE exactly one of: " in owed, owed
    assert "If you are late" not in owed, owed
    html = game.store.conn.execute("select body_html from outbox where id > ? and recipient = ?",
                                   (since, "maria@example.org")).fetchone()[0]
    assert "If you are late" not in html.split("You owe")[1] and "seal CHOICE" in html


def test_on_a_phone_the_heading_of_what_is_owed_stays_short(game):
    """In the HTML private message the heading says what is owed ('You owe: select,
    sealed'); the sentence that explains it (long for an orphaned seal) is a paragraph, not a
    heading ten lines tall on a phone."""
    import re
    judge.attach(game.store)
    sealed = commands.seal(game.session(), "lothar", "A")
    commands.commit(game.store, "g1", "lothar", sealed["commitment"], at=at(1))
    since = last_id(game.store)
    away.replace(game.store, "g1", "lothar", "maria@example.org", at=at(2))
    welcome_of(game.store, since)
    html = game.store.conn.execute("select body_html from outbox where id > ? and recipient = ?",
                                   (since, "maria@example.org")).fetchone()[0]
    headings = re.findall(r"<h3>(.*?)</h3>", html, re.S)
    assert "You owe: select, sealed" in headings, headings
    assert "<p>the seat&#39;s former player sealed a choice" in html or \
        "<p>the seat's former player sealed a choice" in html
