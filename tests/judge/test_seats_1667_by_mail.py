"""A Tortuga 1667 game played by mail to its end in which one seat changes hands (issue 29):
the new person plays on with the password of their welcome, the former player is told and
then refused, and every refusal on the way (a bad choice, a wrong password, an extension
past the bound, the former player's mail) is answered in one line and changes nothing."""

from __future__ import annotations

import re

from pbem.games.tortuga1667 import bots
from pbem.mail import addresses, away, judge
from pbem.mail import ingest as pipeline
from pbem.protocol import away as absence, loading
from pbem.store import Store
from pbem.store.audit import audit_store

PLAYERS = ["ani", "alex", "frank", "lothar", "mary"]
JUDGE = "judge@example.org"


def at(minutes: int) -> str:
    from datetime import datetime, timedelta
    return (datetime(2030, 1, 1, 10) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def mail(sender: str, body: str, n: int) -> bytes:
    from email.message import EmailMessage
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, JUDGE, "[g1] move"
    msg["Message-ID"] = f"<m{n}@players.example.org>"
    msg.set_content(body + "\n")
    return msg.as_bytes()


def passwords(store, since: int = 0) -> dict:
    found = {}
    for recipient, body in store.conn.execute("select recipient, body_text from outbox where id > ?", (since,)):
        hit = re.search(r"Your mail password for this game: (\S+)", body or "")
        if hit:
            found[recipient] = hit.group(1)
    return found


def test_a_1667_game_by_mail_with_a_seat_replaced_and_one_line_refusals(tmp_path):
    store = Store(tmp_path / "judge.db")
    address = {p: f"{p}@example.org" for p in PLAYERS}
    addresses.create_game(store, "g1", "tortuga1667", PLAYERS, {"variant": "standard"}, address,
                          "table@lists.example.org", at=at(0), start=True, deadline_seconds=2 * 86400)
    judge.attach(store, JUDGE)
    keys = passwords(store)
    bot = bots.RandomBot(11, reveal_bias=0.1)
    refusals: list[str] = []
    n = 0

    def send(sender: str, body: str) -> object:
        nonlocal n
        n += 1
        before = store.head("g1")
        result = pipeline.ingest(store, mail(sender, body, n), at(n), (JUDGE,))
        for line in result.lines:
            if not line["ok"]:
                refusals.append(line["text"])
                assert "\n" not in line["text"], line["text"]
        if result.outcome != "applied" or not any(line["ok"] for line in result.lines):
            assert store.head("g1") == before, (body, result.outcome)
        return result

    replaced = False
    for _ in range(3000):
        session = loading.load(store, "g1")
        if session.finished or not session.owed():
            break
        player, kind, sealed, _clock = session.owed()[0]
        who = address[player]
        if n == 12 and not replaced:
            # refusals before the seat changes hands, each one line and changing nothing
            assert not send(who, f"password {keys[who]}\nbogus words").lines[0]["ok"]
            assert send(who, "password wrong-one\nseal attack").outcome.startswith("refused")
            absence.extend(store, "g1", player, until=at(n + 365 * 1440), at=at(n))
            assert "more than a year" in send(who, f"password {keys[who]}\nextend 24h").lines[0]["text"]
            since = store.conn.execute("select max(id) from outbox").fetchone()[0]
            away.replace(store, "g1", "lothar", "maria@example.org", at=at(n), reason="lothar left")
            keys["maria@example.org"] = passwords(store, since)["maria@example.org"]
            address["lothar"] = "maria@example.org"
            ousted = store.conn.execute("select subject from outbox where id > ? and recipient = ?",
                                        (since, "lothar@example.org")).fetchall()
            assert ousted == [("[g1] your seat lothar has passed on",)]
            old = send("lothar@example.org", f"password {keys['lothar@example.org']}\nstatus")
            assert old.outcome == "refused: former player"
            replaced = True
            continue
        request = next(r for r in session.requests_of(player) if r.sealed == sealed)
        choice = bot.choose(session.state, player, request.kind)
        body = f"password {keys[who]}\n" + (f"seal {choice}" if sealed else choice)
        result = send(who, body)
        assert result.outcome == "applied", (player, body, result.lines)
    session = loading.load(store, "g1")
    assert replaced and session.finished and session.seed_revealed
    assert any(e.kind in ("commit", "decide") and e.data.get("player") == "lothar" and e.seq >
               next(x.seq for x in store.events("g1") if x.kind == "replaced") for e in store.events("g1"))
    assert len(refusals) >= 2
    report = audit_store(store, "g1")
    assert report["ok"] and report["discretion"]["replacements"] == 1
