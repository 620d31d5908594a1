"""How much mail a player gets: the issue's measure (issue 16), one 3-player Tortuga game by
mail, the same dice every run (a fixed server seed), six rounds (or to the end, if sooner).

BASELINE is what each player received for those six rounds before one message per player
per moment (measured on the code of commit 7b740ee, this very test, with the players below).
Now whatever one mail causes for a player goes to them as one message, and an answer that
only confirms a move waits (``--hold-answers``, 10 minutes by default) to travel inside the
player's next message. A minute passes per mail here, as in the other games by mail, and
what is still held when the six rounds are over is sent (and counted) after that.

Measured (messages per player, ani / alex / frank; baseline 92 / 146 / 140):
- default settings (summaries to the players too, answers held 10m): 42 / 64 / 62 (46%, 44%, 44%)
- ``--player-summaries no``: 39 / 63 / 61 (42%, 43%, 44%)
- ``--player-summaries no --hold-answers 0`` (every mail answered at once): 67 / 109 / 84
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mailplay", Path(__file__).with_name("mailplay.py"))
mailplay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mailplay)

ROUNDS = 6
# messages per player for 6 rounds, measured before issue 16 (see the module docstring)
BASELINE = {"ani": 92, "alex": 146, "frank": 140}


@pytest.mark.parametrize("settings", [(), ("--player-summaries", "no")], ids=["default", "no-player-summaries"])
def test_a_player_gets_at_most_half_the_mail_of_before(tmp_path, smtp_mailroom, monkeypatch, settings):
    port, room = smtp_mailroom
    mailplay.fixed_seed(monkeypatch)
    kinds = {"ani": mailplay.by_mail.Ani, "alex": mailplay.by_mail.Alex, "frank": mailplay.by_mail.Frank}
    players = {name: mailplay.finding(cls) for name, cls in kinds.items()}
    store, actors, results, _ = mailplay.play(tmp_path, room, port, players, rounds=ROUNDS, settings=settings)
    assert not mailplay.refused(results)
    got = mailplay.counts(room, players)
    print("messages per player:", got, "mails sent by players:", len(results))
    for name, count in got.items():
        assert count <= BASELINE[name] * 0.5, (name, count, BASELINE[name])
    # fewer messages, not less said: every mail of every player is answered, whole, in a
    # message threaded under it, and nothing waits in the outbox
    assert not store.conn.execute("select count(*) from outbox where state != 'sent'").fetchone()[0]
    for name, actor in actors.items():
        inbox = mailplay.by_mail.Player.inbox.fget(actor)
        answered = [ref for m in inbox for ref in set((m["References"] or "").split()) if ref in actor.sent]
        assert sorted(answered) == sorted(actor.sent), name
        text = "\n".join(mailplay.by_mail.text_of(m) for m in inbox)
        assert len(re.findall(rf"^The judge's answer for {name} in game g1:$", text, re.M)) == len(actor.sent)
        assert text.count("-----BEGIN PBEM RECEIPT-----") == text.count("-----END PBEM RECEIPT-----") >= len(actor.sent)
