"""Whole games by mail in which players go away and leave: a Tortuga game and a Tortuga
1667 game, against a real SMTP server, with the clock as a parameter.

In each game:
- before the first move, ani asks for an extension by mail ('extend 24h': granted) and
  alex asks for too much ('extend 3d': refused, the log unchanged);
- at a set moment lothar stops answering, and the moderator pauses the game for three
  days: no reminder and no default goes out meanwhile, moves that arrive are taken, and on
  resume lothar's open deadline has moved on by exactly the pause;
- lothar is defaulted at his deadlines, three times; then the stand-in plays his seat
  (``--stand-in-after 3``), each move logged ``by: stand-in``; after three of them the
  moderator gives the seat to maria (``replace``), whose welcome carries her password and
  the seat's private message, and who plays the game to its end;
- lothar's next mail, with his old password, is refused and changes nothing;
- the export audits OK and its verdict names the pause, the extension and the replacement.
"""

from __future__ import annotations

import importlib.util
import json
import re
from datetime import timedelta
from pathlib import Path

from pbem.mail import deadlines, judge
from pbem.mail import ingest as pipeline
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.protocol import away as absence, loading, reports
from pbem.store import Store


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"test_{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


by_mail = _load("game_by_mail")
by_mail_1667 = _load("1667_by_mail")
JUDGE, LIST, FMT = by_mail.JUDGE, by_mail.LIST, by_mail.FMT
DAY = 86400
NEW_ADDRESS = "maria@example.org"
DEFAULTS_BEFORE_STAND_IN = 3
STAND_IN_MOVES_BEFORE_REPLACING = 3


def mail_from(player: str, body: str) -> bytes:
    from email.message import EmailMessage
    from email.utils import make_msgid
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = by_mail.address(player), JUDGE, "[g1] a word"
    msg["Message-ID"] = make_msgid(player, "mail.example.org")
    msg.set_content(body + "\n")
    return msg.as_bytes()


def newcomer(base, seat: str, room, rnd):
    """The new player of ``seat``: reads maria's mailbox (her welcome first) and writes from it."""
    class Newcomer(base):
        @property
        def inbox(self):
            return self.room.inbox(NEW_ADDRESS)

        def envelope(self, private, now):
            msg = super().envelope(private, now)
            msg.replace_header("From", f"Maria <{NEW_ADDRESS}>")
            return msg
    return Newcomer(seat, room, rnd)


def replace_lothar(store, clock, room, rnd, game_type, players, active, facts) -> bool:
    from pbem.mail import away
    away.replace(store, "g1", "lothar", NEW_ADDRESS, at=clock.tick(), reason="lothar left the game")
    assert "lothar" not in loading.load(store, "g1").standing_in
    base = by_mail_1667.player_class(by_mail.Ani) if game_type == "tortuga1667" else by_mail.Ani
    active["lothar"] = facts["maria"] = newcomer(base, "lothar", room, rnd)
    # 5. lothar's next mail, with his old password, is refused and changes nothing
    head = store.head("g1")
    old = pipeline.ingest(store, mail_from("lothar", f"password {players['lothar'].password}\nstatus"),
                          clock.tick(), (JUDGE,))
    assert old.outcome == "refused: former player", old.outcome
    assert store.head("g1") == head
    facts["old_answer"] = True
    return True


def play(tmp_path, room, port, game_type: str, kinds: dict, seed: int, drop_after: int,
         stand_in_moves: int = STAND_IN_MOVES_BEFORE_REPLACING) -> dict:
    import random
    from click.testing import CliRunner
    db = tmp_path / "judge.db"

    def pbem(*args: str) -> str:
        result = CliRunner().invoke(by_mail.PBEM, [*args, "--db", str(db)])
        assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        return result.stdout

    pbem("new", "g1", "--game", game_type, "--players", ",".join(f"{p}={by_mail.address(p)}" for p in kinds),
         "--list", LIST, "--now", "--deadline", "48h", "--remind", "12h",
         "--stand-in-after", str(DEFAULTS_BEFORE_STAND_IN))
    store = Store(db)
    judge.attach(store, JUDGE)  # the moderator's own commands queue their mail, as the command line's do
    clock = by_mail.Clock(store.events("g1")[-1].at)
    config = MailConfig(judge_address=JUDGE, smtp_host="127.0.0.1", smtp_port=port, security="plain")

    def deliver() -> None:
        assert send_due(store, config, clock.now()).ok

    def session():
        return loading.load(store, "g1")

    def waiting() -> list[dict]:
        return reports.waiting(session())

    rnd = random.Random(seed)
    players = {name: cls(name, room, rnd) for name, cls in kinds.items()}
    deliver()
    facts = {"defaults": 0, "moves_while_paused": 0}

    # 1. Extensions by mail: the first player who owes something asks for a day more and gets
    # it; asking again is beyond the game's allowance (once per game), and so is another's 3d.
    due = {w["player"]: w["due"] for w in waiting()}
    asker = waiting()[0]["player"]
    asked = pipeline.ingest(store, mail_from(asker, f"password {players[asker].password}\nextend 24h"),
                            clock.tick(), (JUDGE,))
    assert asked.lines[0]["ok"] and "extension granted" in asked.lines[0]["text"], asked.lines
    after = {w["player"]: w["due"] for w in waiting()}
    assert after[asker] == (by_mail.Clock(due[asker]).moment + timedelta(days=1)).strftime(FMT)
    assert {p: d for p, d in after.items() if p != asker} == {p: d for p, d in due.items() if p != asker}
    head = store.head("g1")
    again = pipeline.ingest(store, mail_from(asker, f"password {players[asker].password}\nextend 1h"),
                            clock.tick(), (JUDGE,))
    assert not again.lines[0]["ok"] and "used the extensions this game allows" in again.lines[0]["text"]
    other = next((p for p in due if p != asker), None)
    if other is not None:
        refused = pipeline.ingest(store, mail_from(other, f"password {players[other].password}\nextend 3d"),
                                  clock.tick(), (JUDGE,))
        assert not refused.lines[0]["ok"] and "at most 24h" in refused.lines[0]["text"], refused.lines
    assert store.head("g1") == head
    deliver()

    active = dict(players)
    mails = 0
    paused_at = None
    replaced = False
    while not any("final result" in m["Subject"] for m in room.inbox(LIST)):
        moved = False
        for player in list(active.values()):
            raw = player.turn(clock.tick())
            if raw is None:
                continue
            result = pipeline.ingest(store, raw, clock.now(), (JUDGE,))
            assert result.outcome == "applied", (player.name, result.lines, [(m["Subject"], m["Date"]) for m in player.inbox[-4:]], by_mail.text_of(player.latest_private())[:1500])
            mails += 1
            moved = True
            if paused_at is not None:
                facts["moves_while_paused"] += 1
            deliver()
        stand_in = [e for e in store.events("g1") if e.data.get("by") == "stand-in" and e.kind in ("commit", "decide")]
        if len(stand_in) >= stand_in_moves and not replaced:
            # 4. a new person takes lothar's seat from the stand-in
            assert facts["defaults"] >= DEFAULTS_BEFORE_STAND_IN
            replaced = replace_lothar(store, clock, room, rnd, game_type, players, active, facts)
            deliver()
            continue
        if mails >= drop_after and "lothar" in active and not replaced:
            # 2. lothar stops answering; the moderator pauses the game for three days.
            del active["lothar"]
            facts["paused_with"] = {(w["player"], w["kind"]): w["due"] for w in waiting()}
            absence.pause(store, "g1", "lothar is away, and the table agreed to wait three days", at=clock.tick())
            paused_at = clock.moment
            assert all(w.get("paused") and "due" not in w for w in waiting())
            deliver()
            continue
        if moved:
            continue
        if paused_at is not None:
            # everyone else has moved; nobody is reminded or defaulted while the game is paused
            outbox_before = store.conn.execute("select count(*) from outbox").fetchone()[0]
            for hours in (12, 24, 47, 60, 71):
                moment = (paused_at + timedelta(hours=hours)).strftime(FMT)
                assert deadlines.tick(store, moment) == [], moment
            assert store.conn.execute("select count(*) from outbox").fetchone()[0] == outbox_before
            clock.moment = paused_at + timedelta(days=3)
            absence.resume(store, "g1", at=clock.now())
            resumed = {(w["player"], w["kind"]): w["due"] for w in waiting()}
            assert resumed
            for key, due in resumed.items():
                old = facts["paused_with"].get(key)
                if old is not None:  # open all through the pause: moved on by exactly 3 days
                    assert due == (by_mail.Clock(old).moment + timedelta(days=3)).strftime(FMT), key
                else:  # opened during the pause: its clock starts now
                    assert due == (clock.moment + timedelta(hours=48)).strftime(FMT), key
                facts["moved_on"] = facts.get("moved_on", 0) + 1
            paused_at = None
            deliver()
            continue
        # the game waits for lothar: his deadline comes, and the judge applies the default
        owed = waiting()
        assert owed and {w["player"] for w in owed} == {"lothar"}, owed
        clock.moment = by_mail.Clock(min(w["due"] for w in owed)).moment
        actions = deadlines.tick(store, clock.now())
        defaulted = [a.player for a in actions if a.action == "defaulted"]
        assert defaulted and set(defaulted) == {"lothar"}, actions
        facts["defaults"] += len(defaulted)
        deliver()
        if facts["defaults"] >= DEFAULTS_BEFORE_STAND_IN:
            assert "lothar" in session().standing_in  # 3. the stand-in plays the seat from now on
        assert mails < 2500, "the game does not end"

    assert replaced and facts["moved_on"] >= 1
    answer = room.inbox(by_mail.address("lothar"))[-1]
    assert "is played by someone else" in by_mail.text_of(answer)
    exported = tmp_path / "g1.jsonl"
    pbem("export", "g1", "-o", str(exported))
    audit = json.loads(pbem("audit", "--file", str(exported), "--json"))
    assert audit["ok"] and audit["seed_revealed"], audit
    stand_in = audit["discretion"].pop("stand_in_moves")
    assert stand_in >= stand_in_moves
    assert audit["discretion"] == {"no_client_seed": True, "pauses": 1, "extensions": 1, "replacements": 1}, \
        audit["discretion"]
    verdict = pbem("audit", "--file", str(exported))
    moves = f"{stand_in} stand-in move" + ("s" if stand_in != 1 else "")
    assert f"1 pause, 1 extension (0 by the moderator), 1 replacement, {moves}" in verdict, verdict
    events = [json.loads(line) for line in exported.read_text().splitlines() if line.strip()]
    text = exported.read_text()
    assert NEW_ADDRESS not in text and "example.org" not in text  # no person's address in the public record
    facts.update(events=events, store=store, room=room, players=players)
    return facts


# The server seed decides the dice and the deal, so (with the players' seeded picks) the whole
# course of each game: a fixed one makes every run the same game. (The game starts at the
# wall clock's time, `pbem new --now`; every later time is the test's clock, relative to it.)

def test_a_tortuga_game_with_a_pause_extensions_and_a_replacement(tmp_path, smtp_mailroom, fixed_seed):
    fixed_seed("away tortuga")
    port, room = smtp_mailroom
    kinds = {"ani": by_mail.Ani, "alex": by_mail.Alex, "frank": by_mail.Frank, "lothar": by_mail.Lothar}
    facts = play(tmp_path, room, port, "tortuga", kinds, 20300101, drop_after=30)
    assert facts["moves_while_paused"] >= 1  # the others sealed their choices while the game was paused
    check_maria(facts)


def test_a_1667_game_with_a_pause_extensions_and_a_replacement(tmp_path, smtp_mailroom, fixed_seed):
    fixed_seed("away 1667")
    port, room = smtp_mailroom
    kinds = {"ani": by_mail.Ani, "alex": by_mail.Alex, "frank": by_mail.Frank, "lothar": by_mail.Lothar,
             "mary": by_mail.Ani}
    kinds = {name: by_mail_1667.player_class(cls) for name, cls in kinds.items()}
    # a 1667 game can end a few turns after it: maria takes the seat after the stand-in's first move
    facts = play(tmp_path, room, port, "tortuga1667", kinds, 16670101, drop_after=25, stand_in_moves=1)
    check_maria(facts)


def check_maria(facts) -> None:
    """maria played lothar's seat to the end; the log names the seat, never a person."""
    maria = facts["maria"]
    assert maria.did["decision"] + maria.did["seal"] >= 1, maria.did
    replaced = [e for e in facts["events"] if e["kind"] == "replaced"]
    assert [(e["data"]["seat"], e["data"]["by"]) for e in replaced] == [("lothar", "moderator")]
    welcome = maria.inbox[0]
    assert welcome["Subject"].startswith("[g1] welcome, lothar")
    assert re.search(r"Your mail password for this game: (\S+)", by_mail.text_of(welcome))
    # maria's moves came in under the seat's name, after the replacement
    after = [e for e in facts["events"] if e["seq"] > replaced[0]["seq"] and e["data"].get("player") == "lothar"
             and e["kind"] in ("commit", "decide", "reveal_held", "reveal")]
    assert after
