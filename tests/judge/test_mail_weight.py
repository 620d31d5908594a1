"""How heavy the judge's mail is (issue 30): the same 3-player Tortuga game by mail as
tests/judge/test_mail_count.py (a fixed server seed, six rounds), every message the players
and the list receive weighed as the bytes their server got.

The measure (printed; run with ``-s`` to see it):
    .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/judge/test_mail_weight.py
Measured (docs/email.md, "How heavy a message is"): 190 messages; before issue 30 (commit
eff49d7) median 50.9 KB, largest 488.5 KB, 18.9 MB in all, 433 PNGs; now median 29.4 KB,
largest 125.7 KB, 6.2 MB, 245 PNGs.
"""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

_spec = importlib.util.spec_from_file_location("mailplay", Path(__file__).with_name("mailplay.py"))
mailplay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mailplay)

ROUNDS = 6
MEDIAN_BYTES, LARGEST_BYTES = 40 * 1024, 150 * 1024


def weigh(room) -> dict:
    sizes = sorted(len(r.raw) for r in room.received)
    pictures = sum(1 for r in room.received for part in r.message.walk() if part.get_content_type() == "image/png")
    return {"messages": len(sizes), "median": statistics.median(sizes), "largest": sizes[-1],
            "total": sum(sizes), "pngs": pictures}


def test_the_judges_mail_is_light(tmp_path, smtp_mailroom, monkeypatch):
    port, room = smtp_mailroom
    mailplay.fixed_seed(monkeypatch)
    kinds = {"ani": mailplay.by_mail.Ani, "alex": mailplay.by_mail.Alex, "frank": mailplay.by_mail.Frank}
    players = {name: mailplay.finding(cls) for name, cls in kinds.items()}
    _store, _actors, results, _ = mailplay.play(tmp_path, room, port, players, rounds=ROUNDS)
    assert not mailplay.refused(results)
    got = weigh(room)
    print(f"\nmail weight: {got['messages']} messages, median {got['median'] / 1024:.1f} KB, largest "
          f"{got['largest'] / 1024:.1f} KB, {got['total'] / 1024:.0f} KB in all, {got['pngs']} PNGs")
    assert got["median"] <= MEDIAN_BYTES and got["largest"] <= LARGEST_BYTES, got
