"""A 3-player Tortuga game by mail with a fixed server seed, for counting what players get.

Shared by test_mail_count.py (the message count per player, the issue's measure) and
test_players_by_mail.py (players who write as people do). The server seed is fixed, so the
dice are the same at every run; the players pick with a seeded random source. Players find
what they owe in any message that carries their private message (its heading), whatever
the subject: the judge may send it alone or with the answer and the summary.
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections import Counter
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from pbem.mail import ingest as pipeline
from pbem.mail.config import MailConfig
from pbem.mail.send import send_due
from pbem.store import Store

_spec = importlib.util.spec_from_file_location("game_by_mail", Path(__file__).with_name("test_game_by_mail.py"))
by_mail = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(by_mail)

JUDGE, LIST = by_mail.JUDGE, by_mail.LIST
SEED = bytes.fromhex("5eed" * 16)


private_part = by_mail.private_part


def finding(base):  # the players of test_game_by_mail find their private message in any message
    return base


def fixed_seed(monkeypatch) -> None:
    """The game's server seed is SEED (only ``pbem new`` draws it)."""
    import secrets
    from types import SimpleNamespace

    from pbem.protocol import commands
    monkeypatch.setattr(commands, "secrets", SimpleNamespace(token_bytes=lambda n: SEED[:n],
                                                              token_hex=secrets.token_hex))


def play(tmp_path, room, port, players: dict, *, rounds: int | None = None, game: str = "tortuga",
         new_args: tuple = (), rnd_seed: int = 20300101, settings: tuple = ()):
    """Create g1 with ``players`` (name -> player class), play by mail until the final
    result (or until round ``rounds`` is over); return (store, players, results, pbem)."""
    db = tmp_path / "judge.db"

    def pbem(*args: str, input: bytes | None = None) -> str:
        result = CliRunner().invoke(by_mail.PBEM, [*args, "--db", str(db)], input=input)
        assert result.exit_code == 0, f"pbem {' '.join(args)}: {result.output}"
        return result.stdout

    pbem("new", "g1", "--game", game, "--players", ",".join(f"{p}={by_mail.address(p)}" for p in players),
         "--list", LIST, "--now", *new_args)
    if settings:
        pbem("mail", "settings", "g1", *settings)
    store = Store(db)
    clock = by_mail.Clock(store.events("g1")[-1].at)
    config = MailConfig(judge_address=JUDGE, smtp_host="127.0.0.1", smtp_port=port, security="plain")

    def deliver() -> None:
        report = send_due(store, config, clock.now())
        assert report.ok, report.as_dict()

    rnd = random.Random(rnd_seed)
    actors = {name: cls(name, room, rnd) for name, cls in players.items()}
    results = []
    deliver()
    from pbem.protocol import loading, reports
    while not any("final result" in m["Subject"] for m in room.inbox(LIST)):
        if rounds is not None:
            session = loading.load(store, "g1")
            if session.state is not None and session.state.round > rounds:
                break
        moved = False
        for player in actors.values():
            raw = player.turn(clock.tick())
            if raw is not None:
                results.append(pipeline.ingest(store, raw, clock.now(), (JUDGE,)))
                deliver()
                moved = True
        if not moved:
            waiting = reports.status(loading.load(store, "g1"), store.head("g1"))["waiting"]
            raise AssertionError(f"the game waits for {waiting}, but no player's mail asks them for anything")
        assert len(results) < 2000, "the game does not end"
    # what is still held for a player's next message goes alone once its time has come: counted too
    clock.moment += timedelta(hours=1)
    deliver()
    return store, actors, results, pbem


def counts(room, names) -> dict[str, int]:
    return {name: len(room.inbox(by_mail.address(name))) for name in names}


def refused(results) -> list:
    return [(r.player, line) for r in results for line in r.lines if not line["ok"]]


__all__ = ["Counter", "by_mail", "counts", "finding", "fixed_seed", "play", "private_part", "refused"]
