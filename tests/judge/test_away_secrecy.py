"""A seat that changes hands in Tortuga 1667: the new player's first private message holds
everything the seat knows (its loyalty, its hand, every peek it was shown) and nothing of
another seat's; no public output (the log, the list's mail, the other players' mail) holds
the seat's secrets or the new person's address."""

from __future__ import annotations

import random
import re

from pbem.games.tortuga1667 import bots
from pbem.games.tortuga1667.model import EVENT_NAMES, vote_face
from pbem.mail import addresses, away, letters
from pbem.protocol import commands, loading
from pbem.store import Store

PLAYERS = ("ani", "alex", "frank", "lothar", "mary")
SEAT = "lothar"


def at(minutes: int) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def play_until_the_seat_has_peeked(store, rnd) -> None:
    """Random legal moves (lothar peeks whenever he may) until lothar has seen an event card."""
    bot = bots.RandomBot(7)
    for minute in range(1, 600):
        session = loading.load(store, "g1")
        state = session.state
        if state.seen.get(SEAT) and len(state.hands[SEAT]) and minute > 10:
            return
        assert session.owed(), "the game ended before lothar peeked"
        player, kind, sealed, _ = session.owed()[0]
        if player == SEAT and kind == "action":
            peeks = [c for c in bots.action_candidates(session.rules.view(state, SEAT)) if c.startswith("peek ")
                     and bots._is_legal(state, SEAT, c)]
            if peeks:
                commands.decide(store, "g1", SEAT, rnd.choice(peeks), at=at(minute))
                continue
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = bot.choose(state, player, request.kind)
        if sealed:
            commands.commit_for_player(store, "g1", player, choice, at=at(minute))
        else:
            commands.decide(store, "g1", player, choice, at=at(minute))
    raise AssertionError("lothar never peeked")


def test_the_new_players_first_private_message_holds_the_seat_and_nothing_else(tmp_path):
    store = Store(tmp_path / "judge.db")
    addresses.create_game(store, "g1", "tortuga1667", list(PLAYERS), {"variant": "standard"},
                          {p: f"{p}@example.org" for p in PLAYERS}, "table@lists.example.org", at=at(0), start=True)
    play_until_the_seat_has_peeked(store, random.Random(5))
    session = loading.load(store, "g1")
    state = session.state
    assert state.seen[SEAT], "the test needs a peek"
    last = store.conn.execute("select max(id) from outbox").fetchone()[0]
    away.replace(store, "g1", SEAT, "maria@example.org", at=at(700), reason="lothar left the game")
    rows = [dict(zip(("recipient", "kind", "subject", "body"), r)) for r in store.conn.execute(
        "select recipient, kind, subject, body_text from outbox where id > ? order by id", (last,))]
    welcome = [r for r in rows if r["recipient"] == "maria@example.org"]
    assert len(welcome) == 1 and welcome[0]["subject"].startswith("[g1] welcome, lothar")
    text = welcome[0]["body"]

    # everything the seat knows
    assert re.search(rf"Your loyalty: {state.loyalty[SEAT].capitalize()}\b", text)
    for n, card in enumerate(state.hands[SEAT], 1):
        assert f"{n}: " in text and vote_face(card).split()[0] in text
    hand = text.split("Your vote cards", 1)[1].split("What you have seen", 1)[0]
    assert len(re.findall(r"^\s*- \d+: ", hand, re.M)) == len(state.hands[SEAT])
    seen = text.split("What you have seen", 1)[1].split("The table", 1)[0]
    assert len(re.findall(r"^\s*- turn \d+, slot \d+: ", seen, re.M)) == len(state.seen[SEAT])
    for peek in state.seen[SEAT]:
        assert f"turn {peek['turn']}, slot {peek['slot']}: {EVENT_NAMES[state.events[peek['card']]]}" in seen
    # and it is the seat's own private message, word for word: nobody else's view
    from pbem.render import summary
    assert text.endswith(summary.render_private(session, SEAT, "text", by_mail=True)[1] + letters.how_to_reply(session, SEAT))
    for other in PLAYERS:
        if other != SEAT:
            assert f"private message for {other}" not in text

    # nothing public holds the seat's secrets or the new address
    others = [r for r in rows if r["recipient"] != "maria@example.org"]
    # (the other players, the list, and the former player, told that the seat passed on)
    assert sorted(r["recipient"] for r in others) == sorted(
        [f"{p}@example.org" for p in PLAYERS] + ["table@lists.example.org"])
    secrets = ["Your loyalty", "What you have seen", "maria"] + [
        f"slot {p['slot']}: {EVENT_NAMES[state.events[p['card']]]}" for p in state.seen[SEAT]]
    for row in others:
        assert not [s for s in secrets if s in row["body"]], row["subject"]
    exported = "\n".join(str(e.export_dict()) for e in store.events("g1"))
    assert "maria" not in exported and "example.org" not in exported
    replaced = store.events("g1")[-1]
    assert replaced.kind == "replaced" and replaced.data == {"seat": SEAT, "by": "moderator",
                                                             "reason": "lothar left the game"}
