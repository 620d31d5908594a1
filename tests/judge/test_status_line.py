"""The answer's status line reads only part of ``reports.status``: ``statusline.status`` makes
that part alone, the same values at every point of bot-played games of both games (before
the start, paused, finished), and the public view a moment keeps is the one of its state."""

from __future__ import annotations

import pytest

from pbem.mail import letters, statusline
from pbem.mail.moment import moment
from pbem.protocol import commands, loading, reports
from pbem.store import Store

AT = "2024-05-01T12:00:00Z"
FIELDS = ("type", "started", "round", "step", "phase", "chain_head", "waiting", "paused")


def same_as_status(store, session) -> None:
    head = store.head(session.game_id)
    full = reports.status(session, head)
    expected = {name: full[name] for name in FIELDS if name in full}
    assert statusline.status(store, session, head) == expected
    assert statusline.status_text(store, session.game_id, session) == statusline.status_text(
        store, session.game_id, session, head=head)


@pytest.mark.parametrize("game_type,players", [("tortuga", ["ani", "alex", "frank", "lo"]),
                                               ("tortuga1667", ["a", "b", "c", "d", "e"])])
def test_the_status_line_reads_what_status_says(tmp_path, game_type, players):
    from pbem.render.demo import play_bots
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", game_type, players, {}, at=AT, deadline_seconds=86400)
    same_as_status(store, loading.load(store, "g"))  # before the start
    commands.start_game(store, "g", at=AT)
    count = 0

    def check(session) -> bool:
        nonlocal count
        same_as_status(store, session)
        with store.transaction(), moment(store, AT):  # the view kept for the moment is the state's
            first = letters.public_view(store, session)
            assert letters.public_view(store, session) is first
            assert first == session.rules.view(session.state, None)
            same_as_status(store, session)
        count += 1
        return False
    play_bots(store, "g", f"m3/{game_type}", until=check, at=AT)
    session = loading.load(store, "g")
    assert session.finished and count > 30
    same_as_status(store, session)


def test_a_paused_game(game):
    from pbem.protocol import away
    away.pause(game.store, "g1", reason="holiday", at="2030-01-01T10:30:00Z")
    session = game.session()
    assert session.paused
    same_as_status(game.store, session)
    assert "PAUSED since" in statusline.status_text(game.store, "g1", session)


def test_a_view_of_another_state_is_not_taken(game):
    store = game.store
    session = game.session()
    with store.transaction(), moment(store, AT):
        store.memo[("public_view", "g1", session.seq)] = (object(), {"phase": "forged"})
        assert letters.public_view(store, session) == session.rules.view(session.state, None)


def test_the_status_line_names_the_seats_the_stand_in_plays(make_judge):
    """A player's 'status' by mail says which seats the stand-in plays, as pbem status and
    pbem games do for the moderator."""
    game = make_judge(deadline_seconds=86400, stand_in_after=1)
    commands.nmr(game.store, "g1", "lothar", force=True, at="2030-01-01T10:01:00Z")
    session = game.session()
    assert "lothar" in session.standing_in
    line = statusline.status_text(game.store, "g1", session)
    assert "; the stand-in plays lothar;" in line, line
    answer = game.send("ani", "status")
    assert "the stand-in plays lothar" in answer.lines[0]["text"]
