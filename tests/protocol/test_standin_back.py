"""Taking a seat back from the stand-in (issue 29 item 6): the player's `back`, the moderator's
`pbem back`, each a `stand_in_ended` event that the audit names; the seat's requests then
wait for its player, who plays again. Bad input is refused in one line, the log unchanged."""

from __future__ import annotations

import hashlib
import json
import secrets

import pytest

from pbem.protocol import away, commands, loading
from pbem.protocol.discretion import tally_text
from pbem.protocol.errors import Refused
from pbem.store import Store
from pbem.store.audit import audit_file, audit_store, report_text
from pbem.store.export import export_lines

AT = "2030-01-02T10:00:00Z"


class Seed:
    """``secrets`` as pbem.protocol.commands sees it, but a new game's server seed is fixed:
    with the bots' fixed picks, every run plays the same game."""

    def __init__(self, name: str):
        self.seed = hashlib.sha256(name.encode()).digest()

    def token_bytes(self, n: int) -> bytes:
        return self.seed

    def __getattr__(self, name):
        return getattr(secrets, name)


def make(tmp_path, game_type: str, players: tuple, monkeypatch=None) -> Store:
    if monkeypatch is not None:
        monkeypatch.setattr(commands, "secrets", Seed(f"stand-in back {game_type}"))
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", game_type, list(players), {}, deadline_seconds=86400, start=True,
                         at="2030-01-01T10:00:00Z", stand_in_after=1)
    return store


def bot_move(store: Store, player: str, sealed: bool) -> None:
    session = loading.load(store, "g1")
    request = next(r for r in session.requests_of(player) if r.sealed == sealed)
    choice = session.rules.bot(f"bot/{player}", "random").choose(session.state, player, request.kind, request=request)
    if sealed:
        commands.commit_for_player(store, "g1", player, choice, at=AT)
    else:
        commands.decide(store, "g1", player, choice, at=AT)


def play_until(store: Store, absent: str, done) -> None:
    """Bots play; ``absent`` is defaulted (forced) until the stand-in has the seat; until ``done(session)``."""
    for _ in range(500):
        session = loading.load(store, "g1")
        if done(session) or session.finished:
            return
        player, _what, sealed, _ = session.owed()[0]
        if player == absent:
            commands.nmr(store, "g1", player, force=True, at=AT)
        else:
            bot_move(store, player, sealed)


def moves_by_stand_in(store: Store) -> list:
    return [e.seq for e in store.events("g1") if e.kind in ("commit", "decide") and e.data.get("by") == "stand-in"]


def refused(store: Store, call, match: str) -> None:
    before = [e.export_dict() for e in store.events("g1")]
    with pytest.raises(Refused, match=match) as caught:
        call()
    assert "\n" not in str(caught.value)
    assert [e.export_dict() for e in store.events("g1")] == before


@pytest.mark.parametrize("game_type, players", [
    ("tortuga", ("ani", "alex", "frank", "lothar")),
    ("tortuga1667", ("ani", "alex", "frank", "lothar", "mary")),
])
def test_the_player_takes_the_seat_back_and_plays_again(tmp_path, monkeypatch, game_type, players):
    store = make(tmp_path, game_type, players, monkeypatch)
    refused(store, lambda: away.end_stand_in(store, "g1", "lothar", by="player", at=AT),
            "lothar is not played by the stand-in, so there is nothing to take back")
    play_until(store, "lothar", lambda s: "lothar" in s.standing_in and moves_by_stand_in(store))
    stood = moves_by_stand_in(store)
    assert stood  # the stand-in answered at once: lothar owes nothing now
    assert not [w for w in loading.load(store, "g1").owed() if w[0] == "lothar" and w[1] != "reveal"]
    refused(store, lambda: away.end_stand_in(store, "g1", "lothar", by="judge", at=AT), "by moderator or player")
    refused(store, lambda: away.end_stand_in(store, "g1", "nobody", by="player", at=AT), "nobody")
    session = away.end_stand_in(store, "g1", "lothar", by="player", at=AT)
    last = store.events("g1")[-1]
    assert last.kind == "stand_in_ended" and last.data == {"player": "lothar", "by": "player",
                                                           "reason": "the player is back (by mail)"}
    assert "lothar" not in session.standing_in
    refused(store, lambda: away.end_stand_in(store, "g1", "lothar", by="player", at=AT), "nothing to take back")
    # the stand-in stops there: lothar's next request waits for lothar, who plays it himself
    before = moves_by_stand_in(store)
    play_until(store, None, lambda s: any(w[0] == "lothar" and w[1] != "reveal" for w in s.owed()))
    session = loading.load(store, "g1")
    assert not session.finished  # the fixed seed's game goes on
    assert moves_by_stand_in(store) == before
    owed = next(w for w in session.owed() if w[0] == "lothar" and w[1] != "reveal")
    bot_move(store, "lothar", owed[2])
    mine = store.events("g1")[-1] if not owed[2] else next(e for e in reversed(store.events("g1")) if e.kind == "commit")
    assert mine.data["player"] == "lothar" and mine.data.get("by", "player") in ("player", "moderator")
    report = audit_store(store, "g1")
    assert report["ok"], report
    assert report["discretion"]["seats_taken_back"] == 1 and "seats_taken_back_by_moderator" not in report["discretion"]
    assert "1 seat taken back from the stand-in (0 by the moderator)" in report_text(report)


def test_the_moderator_ends_a_stand_in_and_the_audit_names_it(tmp_path, monkeypatch):
    store = make(tmp_path, "tortuga1667", ("ani", "alex", "frank", "lothar", "mary"), monkeypatch)
    play_until(store, "lothar", lambda s: "lothar" in s.standing_in)
    away.end_stand_in(store, "g1", "lothar", reason="lothar wrote that he is back", at=AT)
    assert store.events("g1")[-1].data == {"player": "lothar", "by": "moderator",
                                           "reason": "lothar wrote that he is back"}
    # lothar is away again: after stand_in_after (1) more default, the stand-in has the seat again
    play_until(store, "lothar", lambda s: "lothar" in s.standing_in)
    assert "lothar" in loading.load(store, "g1").standing_in  # the fixed seed's game goes on that long
    away.end_stand_in(store, "g1", "lothar", by="player", at=AT)
    play_until(store, None, lambda s: False)  # to the end
    rows = [json.loads(line) for line in export_lines(store.events("g1"))]
    report = audit_file("".join(export_lines(store.events("g1"))))
    assert report["ok"] and report["seed_revealed"], report
    ended = [r for r in rows if r["kind"] == "stand_in_ended"]
    counts = report["discretion"]
    assert counts["seats_taken_back"] == len(ended) == 2 and counts["seats_taken_back_by_moderator"] == 1
    assert "2 seats taken back from the stand-in (1 by the moderator)" in tally_text(counts)
    # a log cut before the seed (a seedless audit) takes the events too
    cut = "".join(export_lines([e for e in store.events("g1") if e.seq <= ended[-1]["seq"]]))
    assert audit_file(cut)["ok"]
    # the game is over: no seat is taken back
    refused(store, lambda: away.end_stand_in(store, "g1", "lothar", at=AT), "is over")


def test_a_game_without_a_stand_in_says_so(tmp_path):
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g1", "tortuga", ["ani", "alex"], {}, start=True, at="2030-01-01T10:00:00Z")
    refused(store, lambda: away.end_stand_in(store, "g1", "ani", at=AT), r"\(this game has no stand-in\)")
