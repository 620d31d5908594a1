"""One source of instructions (issue 30): what a private message tells a player to send is
written once (pbem.render.asks) and said alike by every format, and following it, as
written, works.

A whole game of each kind is played by mail by players who read only the HTML part of the
judge's mail (almost every player does) and send only what its "Send" and "Run" lines name:
a Gmail-like player (text and HTML, the judge's mail quoted below), an Outlook-like player
who seals on their own machine (HTML under an unquoted "-----Original Message-----"), and
an HTML-only webmail player. No line of theirs may be refused.

Along the way, every request kind met (sealed, home reveal, open choice; 1667's anonymous
vote and its decisions) is rendered in every format for both ways of playing (mail and
the command line): each format names the same commands, and the command line's example,
run as written (on a copy of the game), is accepted.
"""

from __future__ import annotations

import html as htmllib
import importlib.util
import json
import random
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.mail import ingest as pipeline
from pbem.mail import pictures
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.protocol import loading
from pbem.render import asks, summary
from pbem.store import Store

_spec = importlib.util.spec_from_file_location("game_by_mail", Path(__file__).with_name("test_game_by_mail.py"))
by_mail = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(by_mail)

JUDGE, LIST = by_mail.JUDGE, by_mail.LIST
FORMATS = ("text", "markdown", "bbcode", "html")
CODE = {"html": re.compile(r"<code>(.*?)</code>", re.S), "markdown": re.compile(r"(`+) ?(.*?) ?\1")}


# ---------------------------------------------------------------------- reading the HTML part

def html_part(message) -> str | None:
    body = message.get_body(("html",))
    return body.get_content() if body is not None else None


def items_of(html: str, name: str) -> list[list[tuple[str, list[str]]]]:
    """For each "You owe" of ``name``'s private message in ``html``: its list items, each as
    (its words, its code spans), unescaped."""
    start = html.find(f"private message for {name}")
    if start < 0:
        return []
    owed = []
    for chunk in re.split(r"You owe:", html[start:])[1:]:
        chunk = chunk.split("</ul>")[0]
        entries = []
        for li in re.findall(r"<li>(.*?)</li>", chunk, re.S):
            codes = [htmllib.unescape(c) for c in CODE["html"].findall(li)]
            entries.append((htmllib.unescape(re.sub(r"<[^>]+>", "", li)), codes))
        owed.append(entries)
    return owed


def choices(words: str, codes: list[str]) -> tuple[list[str], str]:
    """(the choices listed after "one of:", the example after "e.g.") of a Send/Run item."""
    example = codes[-1]
    listed = codes[1:-1] if "exactly one of:" in words else []
    return listed, example


class HtmlReader(by_mail.Player):
    """Reads the HTML part of the judge's mail and does what its items say."""

    at_home = False

    def latest_private(self):
        inbox = self.inbox
        for message in inbox[self._read:]:
            html = html_part(message)
            if html is not None and f"private message for {self.name}" in html:
                self._latest = message
        self._read = len(inbox)
        return self._latest

    def choose(self, words: str, listed: list[str], example: str) -> str:
        pool = listed
        if not pool:  # 1667: "CHOICE as legal now: ..." (too many to list)
            pool = re.findall(r"\b(?:reveal \d|attack|mutiny|brawl)\b", words)
            if not pool or self.rnd.random() < 0.3:
                return example
        votes = [o for o in pool if o in ("attack", "mutiny", "brawl")]
        if votes and self.rnd.random() < 0.7:  # 1667: votes end the game sooner
            return self.rnd.choice(votes)
        reveals = [o for o in pool if re.fullmatch(r"reveal \d", o)]
        if reveals and self.rnd.random() < 0.3:
            return self.rnd.choice(reveals)
        return self.rnd.choice(pool)

    def turn(self, now: str):
        private = self.latest_private()
        if private is None or private["Message-ID"] in self.handled:
            return None
        self.handled.add(private["Message-ID"])
        lines = []
        for entries in items_of(html_part(private), self.name):
            sends = [(w, c) for w, c in entries if (w.startswith("Send ") or w.startswith("Or seal")) and c]
            line = self.follow(sends)
            if line:
                lines.append(line)
        if not lines:
            return None
        return self.write(private, [f"password {self.password}", *lines], now)

    def follow(self, sends) -> str | None:
        for words, codes in sends:
            if codes[0] == "reveal CHOICE SALT":
                assert self.kept, f"{self.name} is asked to reveal a choice never sealed at home"
                self.did["reveal"] += 1
                return f"reveal {self.kept['choice']} {self.kept['salt']}"
        for words, codes in sends:
            if words.startswith("Send ") and "CHOICE" in codes[0]:
                choice = self.choose(words, *choices(words, codes))
                home = next((c for w, c in sends if w.startswith("Or seal")), None)
                if self.at_home and home:
                    run = shlex.split(home[0].replace("CHOICE", shlex.quote(choice)))
                    assert run[:2] == ["pbem", "seal"], run
                    self.seal_here(choice, run[run.index("--context") + 1])
                    self.did["seal"] += 1
                    return home[1].replace("HASH", self.kept["commitment"])
                self.did["seal" if codes[0].startswith("seal") else "decision"] += 1
                return codes[0].replace("CHOICE", choice)
        return None


class GmailLike(HtmlReader):
    """multipart/alternative: the lines as text and as HTML, the judge's mail quoted below."""

    def write(self, private, lines, now):
        msg = self.envelope(private, now)
        quoted = "\n".join("> " + line for line in by_mail.text_of(private).splitlines())
        msg.set_content("\n".join(lines) + f"\n\nOn {private['Date']}, The Judge <{JUDGE}> wrote:\n{quoted}\n")
        mine = "".join(f"<div>{htmllib.escape(line)}</div>" for line in lines)
        msg.add_alternative(f'<div dir="ltr">{mine}</div><br><div class="gmail_quote"><blockquote class="gmail_quote">'
                            f"{html_part(private)}</blockquote></div>", subtype="html")
        return msg.as_bytes()


class OutlookLike(HtmlReader):
    """Seals on their own machine; Outlook's HTML: the judge's mail unquoted, below
    "-----Original Message-----"."""

    at_home = True

    def write(self, private, lines, now):
        msg = self.envelope(private, now)
        mine = "".join(f"<p class=MsoNormal>{htmllib.escape(line)}<o:p></o:p></p>" for line in lines)
        body = (f'<html><body lang=EN-GB><div class=WordSection1>{mine}<p class=MsoNormal><o:p>&nbsp;</o:p></p>'
                f"<p class=MsoNormal>-----Original Message-----<br>From: The Judge &lt;{JUDGE}&gt;<br>"
                f"Subject: {htmllib.escape(private['Subject'])}<o:p></o:p></p>{html_part(private)}</div></body></html>")
        msg.set_content(body, subtype="html", cte="quoted-printable")
        return msg.as_bytes()


class HtmlOnly(HtmlReader, by_mail.Lothar):
    """A webmail that sends HTML only (test_game_by_mail's Lothar), reading HTML only."""


# ---------------------------------------------------------------------- every format, both ways

def send_lines(doc: str, fmt: str) -> list[str]:
    """The Send/Run items of a rendered private message, as plain words (markup removed)."""
    if fmt == "html":
        found = [re.sub(r"<[^>]+>", "", li) for li in re.findall(r"<li>(.*?)</li>", doc, re.S)]
        found = [htmllib.unescape(f) for f in found]
    else:
        found = [line.strip() for line in doc.splitlines()]
        found = [re.sub(r"^(?:- |\[\*\])\s*", "", line) for line in found]
        if fmt == "markdown":
            found = [CODE["markdown"].sub(lambda m: m.group(2), line).replace("\\", "") for line in found]
    return [f.strip() for f in found if re.match(r"(Send|Run|Or seal|Or send|then) ", f.strip())]


class Walk:
    """Every request kind met, rendered in every format both ways; the command line's
    example run (once per kind) on a copy of the game."""

    def __init__(self, db: Path, tmp: Path):
        self.db, self.tmp, self.seen = db, tmp, set()

    def check(self, store, game: str, players, kept: dict) -> None:
        session = loading.load(store, game)
        for player in session.players:
            for by in (True, False):
                docs = {fmt: summary.render_private(session, player, fmt, by_mail=by) for fmt in FORMATS}
                model = docs["html"][0]
                wanted = [" ".join("".join(s["text"] if "text" in s else s["code"] for s in item).split())
                          for q in model["requests"] for item in q["send"]]
                html_codes = [htmllib.unescape(c) for c in CODE["html"].findall(
                    "".join(re.findall(r"<li>(?:Send|Run|Or seal|Or send|then) .*?</li>", docs["html"][1], re.S)))]
                assert [c for c in html_codes] == [c for c in asks.commands(model)], (player, by)
                lines = {fmt: [" ".join(line.split()) for line in send_lines(doc, fmt)] for fmt, (_m, doc) in docs.items()}
                assert len({tuple(v) for v in lines.values()}) == 1, (player, by, lines)
                assert lines["text"] == wanted, (player, by, lines["text"], wanted)
                for q in model["requests"]:
                    kind = (q["kind"], q["sealed"], q.get("owe"), bool(q.get("committed")), by)
                    if not by and q["send"] and kind not in self.seen:
                        self.seen.add(kind)
                        self.run_cli(game, player, q, kept.get(player))

    def run_cli(self, game: str, player: str, q: dict, kept) -> None:
        """The command line's example for ``q``, as written, on a copy of the game."""
        copy = self.tmp / f"copy{len(self.seen)}.db"
        shutil.copy(self.db, copy)
        for suffix in ("-wal", "-shm"):
            if Path(str(self.db) + suffix).exists():
                shutil.copy(str(self.db) + suffix, str(copy) + suffix)
        first = q["send"][0]
        codes = [s["code"] for s in first if "code" in s]
        if codes[0].endswith("CHOICE SALT"):
            if kept is None:
                return
            command = codes[0].replace("CHOICE SALT", f"{shlex.quote(kept['choice'])} {kept['salt']}")
        else:
            command = codes[-1]  # the example, filled in
        out = invoke(shlex.split(command)[1:], copy)
        if shlex.split(command)[1] == "seal":
            commit = [s["code"] for s in q["send"][1] if "code" in s][0]
            hand_in = commit.replace("HASH", json.loads(out)["commitment"])
            invoke(shlex.split(hand_in)[1:], copy)


def invoke(args: list[str], db: Path) -> str:
    from pbem.cli.program import app
    import typer.main
    with_db = [*args, "--json"] if args[0] == "seal" and "--context" in args else [*args, "--db", str(db), "--json"]
    result = CliRunner().invoke(typer.main.get_command(app), with_db, env={"PBEM_DB": str(db)})
    assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
    return result.stdout


# ---------------------------------------------------------------------- the games

GAMES = {"tortuga": ("gmail", "outlook", "html"), "tortuga1667": ("gmail", "outlook", "html", "html2")}
KINDS = {"gmail": GmailLike, "outlook": OutlookLike, "html": HtmlOnly, "html2": HtmlOnly}


@pytest.mark.parametrize("game_type", list(GAMES))
def test_players_who_read_only_the_html_part_play_a_whole_game_with_no_refused_line(
        game_type, tmp_path, smtp_mailroom, fixed_seed, monkeypatch):
    fixed_seed(f"html instructions {game_type}")
    monkeypatch.setattr(pictures, "available", lambda: False)  # the words are tested here, not the pictures
    port, room = smtp_mailroom
    db = tmp_path / "judge.db"
    result = CliRunner().invoke(by_mail.PBEM, ["new", "g1", "--game", game_type, "--players",
                                               ",".join(f"{p}={by_mail.address(p)}" for p in GAMES[game_type]),
                                               "--list", LIST, "--now", "--db", str(db)])
    assert result.exit_code == 0, result.output
    store = Store(db)
    clock = by_mail.Clock(store.events("g1")[-1].at)
    config = MailConfig(judge_address=JUDGE, smtp_host="127.0.0.1", smtp_port=port, security="plain")
    rnd = random.Random(30)
    players = {name: KINDS[name](name, room, rnd) for name in GAMES[game_type]}
    walk = Walk(db, tmp_path)

    def deliver() -> None:
        report = send_due(store, config, clock.now())
        assert report.ok, report.as_dict()

    deliver()
    results = []
    while not any("final result" in m["Subject"] for m in room.inbox(LIST)):
        moved = False
        for player in players.values():
            raw = player.turn(clock.tick())
            if raw is not None:
                results.append(pipeline.ingest(store, raw, clock.now(), (JUDGE,)))
                deliver()
                moved = True
                walk.check(store, "g1", players, {n: p.kept for n, p in players.items()})
        assert moved, "the game waits, but no player's HTML part asks them for anything"
        assert len(results) < 1500, "the game does not end"
    refused = [(r.player, line) for r in results for line in r.lines if not line["ok"]]
    assert not refused, refused[:5]
    assert all(r.outcome == "applied" for r in results)
    print(f"\n{game_type}: {len(results)} player mails, kinds {sorted(walk.seen)}, did "
          f"{ {n: dict(p.did) for n, p in players.items()} }")
    kinds = {(kind, sealed, owe) for kind, sealed, owe, _c, _by in walk.seen}
    if game_type == "tortuga":
        assert {("select", True, "commit"), ("select", True, "reveal")} <= kinds, kinds
        assert any(not sealed for _k, sealed, _o in kinds), kinds
    else:
        assert ("vote", True, "commit") in kinds and any(not sealed for _k, sealed, _o in kinds), kinds
    assert players["outlook"].did["reveal"] >= 1 and all(p.did["decision"] for p in players.values())


def test_a_1667_subject_names_the_turn_as_the_body_does(make_judge):
    from pbem.mail import addresses, letters
    judge = make_judge()
    from pbem.protocol import commands
    commands.create_game(judge.store, "t1", "tortuga1667", ["ani", "alex", "bob", "cy"], {}, start=True,
                         at="2030-01-01T10:00:00Z")
    for p in ("ani", "alex", "bob", "cy"):
        addresses.register(judge.store, "t1", p, f"{p}@example.org", at="2030-01-01T10:00:00Z")
    session = loading.load(judge.store, "t1")
    where = letters.place(session, judge.store)
    model, text = summary.render_private(session, "ani", "text", by_mail=True)
    assert where.startswith("turn ") and f"Turn {where.split()[1]}" in text, (where, text[:300])

