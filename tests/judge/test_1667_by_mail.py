"""A whole 5-player Tortuga 1667 game played only by mail, against a real SMTP server,
through the very judge that runs Tortuga: nothing in pbem/mail knows which game it serves.

The players are those of test_game_by_mail.py (ani seals by mail, alex seals at home and
mails commit and reveal, frank top-posts armoured blocks, lothar writes HTML only) plus
mary, who answers like ani. Votes are anonymous sealed steps: every reveal goes to the judge
alone, so until the end no message to the list, and no message to another player, may show
who played which vote card; the loyalties, hands and peeks stay in their owners' private
messages. At the end the export discloses every vote and audits clean.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from collections import Counter
from pathlib import Path

from pbem.mail import ingest as pipeline
from pbem.mail import pictures
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.store import Store

_spec = importlib.util.spec_from_file_location("game_by_mail", Path(__file__).with_name("test_game_by_mail.py"))
by_mail = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(by_mail)

JUDGE, LIST = by_mail.JUDGE, by_mail.LIST
PLAYERS = ("ani", "alex", "frank", "lothar", "mary")
MAX_MESSAGES = 2000


def read_private(text: str) -> dict:
    """Tortuga's reading of a private message, plus what 1667's adds: the options are
    may hold commas and spaces (``peek 1,2``), a long list is described ("CHOICE as legal
    now: ...") instead of listed, and a default may have spaces."""
    owed = by_mail.read_private(text)
    for chunk, request in zip(text.split("\nYou owe: ")[1:], owed["requests"]):
        listed = re.search(r"CHOICE exactly one of: ([^;\n]+)", chunk)  # pbem.render.asks
        request["options"] = listed.group(1).split("  |  ") if listed else None
        legal = re.search(r"CHOICE as legal now: ([^;\n]+)", chunk)
        request["reveals"] = re.findall(r"\breveal \d\b", legal.group(1)) if legal else []
        request["votes"] = re.findall(r"\b(?:attack|mutiny|brawl)\b", legal.group(1)) if legal else []
        default = re.search(r"If you are late, the default applies: (.+)$", chunk, re.M)
        request["default"] = default.group(1).strip() if default else None
    return owed


class Reading:
    """1667's reading of a private message, and a player who calls votes when they can and
    reveals event cards often (reveals bring the Armada, and the end), else picks at random
    among the listed options or takes the default peek."""

    def read(self, text: str) -> dict:
        return read_private(text)

    def pick(self, request: dict) -> str:
        listed = request["options"] or ()
        votes = request["votes"] or [o for o in listed if o in ("attack", "mutiny", "brawl")]
        if votes and self.rnd.random() < 0.7:  # votes are what this test is about
            return self.rnd.choice(votes)
        reveals = request["reveals"] or [o for o in listed if re.fullmatch(r"reveal \d", o)]
        if reveals and self.rnd.random() < 0.3:  # keeps the game (and the test) short
            return self.rnd.choice(reveals)
        if request["options"]:
            return self.rnd.choice(request["options"])
        if request["reveals"] and self.rnd.random() < 0.7:
            return self.rnd.choice(request["reveals"])
        assert request["default"], f"{self.name}: a request with neither options nor default: {request}"
        return request["default"]


def player_class(base):
    return type(base.__name__, (Reading, base), {})


def subjects(room, who: str) -> list[str]:
    return [m["Subject"] for m in room.inbox(who)]


def test_a_whole_1667_game_played_only_by_mail(tmp_path, smtp_mailroom, fixed_seed, monkeypatch):
    # a fixed server seed (the players' choices are seeded below): the same game in every
    # run. With a random seed the game took from 50 to 152 messages in, and the test's time
    # with it; this seed was picked among 22 for a short game (61 messages in, 225 out) that
    # still has every kind of vote (attack, mutiny, brawl) and a fever, and peeks (cards seen
    # in private, which must stay there: the game of the seed before had none)
    fixed_seed("1667 by mail 11")
    # The judge runs as on a machine without the PNG renderer (resvg-py, pbem[mail]): the HTML
    # part carries each board as inline SVG instead of a picture, and the checks below read
    # it with the rest. Drawing the 40-odd distinct tables and carrying 100 kB of base64 in
    # every message were two thirds of this test's time; whole 1667 games by mail with the
    # pictures are played in test_players_by_mail and test_away_by_mail, and the pictures
    # are tested in test_board_pictures and test_compose_bytes.
    monkeypatch.setattr(pictures, "available", lambda: False)
    port, room = smtp_mailroom
    db = tmp_path / "judge.db"

    def pbem(*args: str, input: bytes | None = None) -> str:
        from click.testing import CliRunner
        result = CliRunner().invoke(by_mail.PBEM, [*args, "--db", str(db)], input=input)
        assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        return result.stdout

    pbem("new", "g1", "--game", "tortuga1667", "--players",
         ",".join(f"{p}={by_mail.address(p)}" for p in PLAYERS), "--list", LIST, "--now")
    store = Store(db)
    clock = by_mail.Clock(store.events("g1")[-1].at)
    config = MailConfig(judge_address=JUDGE, smtp_host="127.0.0.1", smtp_port=port, security="plain")

    def deliver() -> None:
        report = send_due(store, config, clock.now())
        assert report.ok, report.as_dict()

    rnd = random.Random(16670101)
    kinds = {"ani": by_mail.Ani, "alex": by_mail.Alex, "frank": by_mail.Frank, "lothar": by_mail.Lothar,
             "mary": by_mail.Ani}
    players = {name: player_class(cls)(name, room, rnd) for name, cls in kinds.items()}
    results = []
    deliver()
    while not any("final result" in m["Subject"] for m in room.inbox(LIST)):
        moved = False
        for player in players.values():
            raw = player.turn(clock.tick())
            if raw is not None:
                results.append(pipeline.ingest(store, raw, clock.now(), (JUDGE,)))
                deliver()
                moved = True
        if not moved:
            from pbem.protocol import loading, reports
            waiting = reports.status(loading.load(store, "g1"), store.head("g1"))["waiting"]
            raise AssertionError(f"the game waits for {waiting}, but no player's mail asks them for anything")
        assert len(results) < MAX_MESSAGES, "the game does not end"

    refused = [(r.player, line) for r in results for line in r.lines if not line["ok"]]
    assert not refused, refused[:5]
    assert {r.outcome for r in results} == {"applied"} and all(r.answered for r in results)

    # The export discloses every vote at the end and audits clean with the seed.
    exported = tmp_path / "g1.jsonl"
    pbem("export", "g1", "-o", str(exported))
    audit = json.loads(pbem("audit", "--file", str(exported), "--json"))
    assert audit["ok"] and audit["seed_revealed"], audit
    events = [json.loads(line) for line in exported.read_text().splitlines() if line.strip()]
    counted = Counter(e["kind"] for e in events)
    assert counted["sealed_batch"] >= 1 and counted["disclosed"] == 1 and not counted["reveal"], counted
    assert counted["reveal_held"] == sum(p.did["seal"] for p in players.values())
    held = {(p, s["round"], s["step"]): r for e in events if e["kind"] == "disclosed"
            for s in e["data"]["steps"] for p, r in s["reveals"].items()}
    secrets_ = {salt for salt in (r.get("salt") for r in held.values()) if salt}
    secrets_ |= {p.password for p in players.values()}

    # Until the result, no public mail names a loyalty of a player or shows a salt or password;
    # no player's mail carries another player's salt, password or loyalty card.
    loyalty = json.loads(pbem("status", "g1", "--json"))
    result = next(m for m in room.inbox(LIST) if "final result" in m["Subject"])
    drawn = [m for m in room.inbox(LIST) if any("<svg" in text for text in by_mail.bodies(m))]
    assert len(drawn) == len(room.inbox(LIST)), "the table is drawn (as SVG) in every summary, and read below"
    for message in room.inbox(LIST):
        text = "\n".join(by_mail.bodies(message))
        assert not [s for s in secrets_ if s in text], message["Subject"]
        if message is not result:
            assert not re.search(r"loyalty[^\n]*\b(british|french|dutch)\b", text, re.I), message["Subject"]
    for name, player in players.items():
        theirs = {r.get("salt") for (p, *_), r in held.items() if p == name}
        others = (secrets_ - theirs) - {player.password}
        for message in player.inbox:
            if message in room.inbox(LIST):
                continue
            text = "\n".join(by_mail.bodies(message))
            assert not [s for s in others if s in text], (name, message["Subject"])
    assert loyalty["finished"]
    for name, player in players.items():
        assert player.did["decision"] >= 1, (name, player.did)
