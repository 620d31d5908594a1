"""Whole games by mail with players who write as people do (issue 16, "Done when"): they greet,
sign off, top-post, send HTML only or flowed text, and have signatures and phone footers. The
judge refuses nothing that was not a command, acts on nothing hidden, and each player gets
one message per moment.

- ani greets the judge, seals by mail, signs off with her name under a phone footer;
- alex seals at home and writes format=flowed (delsp=no) text, which breaks his 64-hex
  commitments and salts at a soft line break; he has a signature under '-- ';
- frank top-posts in HTML only: a greeting, the blocks pbem seal prints in a <pre>, a hidden
  <div style="display:none"> left by his mail program's template with a command in it, and
  the judge's message quoted in a <blockquote>;
- in 1667, lothar writes HTML only, and mary answers like ani.
"""

from __future__ import annotations

import html
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("mailplay", Path(__file__).with_name("mailplay.py"))
mailplay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mailplay)
by_mail = mailplay.by_mail

_spec = importlib.util.spec_from_file_location("by_mail_1667", Path(__file__).with_name("test_1667_by_mail.py"))
by_mail_1667 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(by_mail_1667)

_spec = importlib.util.spec_from_file_location("mail_count", Path(__file__).with_name("test_mail_count.py"))
mail_count = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mail_count)

HIDDEN = "seal A"


class Greeter(by_mail.Ani):
    def write(self, private, lines, now):
        msg = self.envelope(private, now)
        msg.set_content(f"Hi judge!\n\nHere is my move.\n" + "\n".join(lines)
                        + f"\n\nThanks,\n{self.name.title()}\n\nSent from my iPhone\n")
        return msg.as_bytes()


class Flowed(by_mail.Alex):
    """format=flowed, delsp=no: long lines broken after a space that stays in the text."""

    def write(self, private, lines, now):
        msg = self.envelope(private, now)
        flowed = []
        for line in ["Hello,", *lines, "", "Best regards"]:
            while len(line) > 40:  # a soft break: the line ends in a space, the next goes on
                cut = line.rfind(" ", 0, 40)
                cut = 40 if cut <= 0 else cut + 1
                flowed.append(line[:cut] if line[cut - 1] == " " else line[:cut] + " ")
                line = line[cut:]
            flowed.append(line)
        flowed += ["-- ", self.name.title(), "https://alex.example.org/"]
        head = "".join(f"{name}: {value}\r\n" for name, value in msg.items())
        body = "\r\n".join(flowed) + "\r\n"
        return (head + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8; format=flowed; delsp=no\r\n"
                "Content-Transfer-Encoding: 7bit\r\n\r\n" + body).encode()


class HtmlTopPoster(by_mail.Frank):
    def write(self, private, lines, now):
        msg = self.envelope(private, now)
        quoted = "<br>".join(html.escape(line) for line in by_mail.text_of(private).splitlines())
        block = html.escape("\n".join(lines))
        body = (f'<html><head><style>p{{margin:0}}</style><title>{HIDDEN}</title></head><body>'
                f'<div>Hello there,</div><div>my move is below.</div><pre>{block}</pre>'
                f'<div style="display:none;max-height:0">{HIDDEN}</div><!-- {HIDDEN} -->'
                f'<div>Cheers,<br>{self.name.title()}</div><br>'
                f'<div class="gmail_quote">On {private["Date"]}, The Judge &lt;{by_mail.JUDGE}&gt; wrote:<br>'
                f'<blockquote style="margin:0 0 0 .8ex">{quoted}</blockquote></div></body></html>')
        msg.set_content(body, subtype="html", cte="quoted-printable")
        return msg.as_bytes()


def check(results, actors):
    refused = mailplay.refused(results)
    assert not refused, refused[:5]
    assert {r.outcome for r in results} == {"applied"}, {r.outcome for r in results}
    assert all(r.answered for r in results)
    # frank seals with blocks only: a line "seal A" from him was read from hidden HTML
    assert not [r for r in results if r.player == "frank" for line in r.lines if line["line"] == HIDDEN]
    for name, player in actors.items():
        assert player.did["decision"] >= 1, (name, player.did)


def test_a_whole_tortuga_game_with_players_who_write_as_people_do(tmp_path, smtp_mailroom, monkeypatch):
    port, room = smtp_mailroom
    mailplay.fixed_seed(monkeypatch)
    players = {"ani": Greeter, "alex": Flowed, "frank": HtmlTopPoster}
    store, actors, results, pbem = mailplay.play(tmp_path, room, port, players,
                                                 settings=("--player-summaries", "no"))
    assert any("final result" in m["Subject"] for m in room.inbox(by_mail.LIST))
    check(results, actors)
    assert actors["alex"].did["reveal"] == actors["alex"].did["seal"] >= 5
    got = mailplay.counts(room, players)
    print("messages per player:", got)
    for name, count in got.items():  # the same target as test_mail_count.py (half), for the whole game
        assert count <= mail_count.BASELINE[name] * 0.5, (name, count)
    audited(pbem, tmp_path)


def audited(pbem, tmp_path) -> None:
    import json
    exported = tmp_path / "g1.jsonl"
    pbem("export", "g1", "-o", str(exported))
    audit = json.loads(pbem("audit", "--file", str(exported), "--json"))
    assert audit["ok"] and audit["seed_revealed"], audit
    kinds = [json.loads(line)["kind"] for line in exported.read_text().splitlines() if line.strip()]
    assert "nmr" not in kinds and "default" not in kinds, "a default was applied: someone was never asked"


def test_a_whole_1667_game_with_players_who_write_as_people_do(tmp_path, smtp_mailroom, monkeypatch):
    port, room = smtp_mailroom
    mailplay.fixed_seed(monkeypatch)
    kinds = {"ani": Greeter, "alex": Flowed, "frank": HtmlTopPoster, "lothar": by_mail.Lothar, "mary": Greeter}
    players = {name: by_mail_1667.player_class(cls) for name, cls in kinds.items()}
    store, actors, results, pbem = mailplay.play(tmp_path, room, port, players, game="tortuga1667",
                                                 rnd_seed=16670101)
    check(results, actors)
    sent = {name: sum(1 for r in results if r.player == name) for name in players}
    for name, player in actors.items():
        inbox = player.inbox
        answers = [m for m in inbox if m["In-Reply-To"]]
        # each mail answered once: alone, or (an answer that only confirms) inside the next message
        answered = [ref for m in answers for ref in set(m["References"].split()) if ref in player.sent]
        assert sorted(answered) == sorted(player.sent), name
        text = "\n".join(by_mail.text_of(m) for m in answers)
        assert text.count(f"The judge's answer for {name} in game g1:") == sent[name], name
        # every other message is one moment's (another player's mail): never two for one moment
        others = len(results) - sent[name]
        assert len(inbox) - len(answers) <= others + 2, (name, len(inbox), others)
    audited(pbem, tmp_path)
