"""Private messages are rendered when they are sent, from the model kept when they were
queued (issue 17): the player reads their view as of the mail that caused the message, not
as of the send; no row shows another player's secret meanwhile; rows queued by an older
judge (already rendered) still go out as they are."""

from __future__ import annotations

import json
import re

import pytest

from pbem.mail import addresses
from pbem.mail.letters import render_row
from pbem.mail.send import render_pending
from pbem.protocol import commands, reports
from pbem.render import summary
from pbem.store import outbox


def next_move(game):
    """The first player owed and a valid mail body for their move (seal or open decision)."""
    session = game.session()
    if session.finished:
        return None
    owed = reports.waiting(session)
    if not owed:
        return None
    entry = owed[0]
    player = entry["player"]
    kind = session.sealed.kind if entry["sealed"] else entry["kind"]
    choice = session.rules.default(session.state, player, kind)
    return player, f"password {game.passwords[player]}\n" + (f"seal {choice}" if entry["sealed"] else choice)


def private_rows(game, after: int) -> list[dict]:
    return [r for r in game.outbox(rendered=False) if r["id"] > after and r["render"]
            and any("private" in part for part in json.loads(r["render"])["parts"])]


def test_a_private_message_shows_the_view_of_its_moment_whenever_it_is_sent(game):
    """Each private message, rendered at once and again many moves later, is the same text
    and HTML; and that text holds exactly what ``pbem private`` showed right after the mail
    that caused it (the player's view then)."""
    seen, checked = 0, []
    for _ in range(40):
        move = next_move(game)
        if move is None:
            break
        assert game.send(*move).outcome == "applied"
        session = game.session()
        for row in private_rows(game, seen):
            player = row["recipient"].split("@")[0]
            now = render_row(game.store, "g1", row["render"], {})
            view = summary.render_private(session, player, "text", by_mail=True)[1]
            assert view in now[0], player
            assert re.search(r"<svg\b", now[1])  # the HTML part draws the board
            checked.append((row["render"], now))
        seen = max([r["id"] for r in game.outbox(rendered=False)], default=seen)
    assert len(checked) > 20
    assert game.session().seq > 40  # the game moved well past the first messages
    for render, now in checked:
        assert render_row(game.store, "g1", render, {}) == now


def send_until_private(game) -> list[dict]:
    """Moves until one queues a private message; the rows waiting to be rendered with one."""
    seen = max(r["id"] for r in game.outbox(rendered=False))
    for _ in range(12):
        game.send(*next_move(game))
        waiting = private_rows(game, seen)
        if waiting:
            return waiting
    raise AssertionError("no private message was queued")


def test_the_bodies_are_filled_in_before_sending_and_the_model_leaves_the_row(game):
    waiting = send_until_private(game)
    assert all(r["body_text"] == "" and r["body_html"] is None for r in waiting)
    render_pending(game.store)
    rows = {r["id"]: r for r in game.outbox()}
    for row in waiting:
        done = rows[row["id"]]
        assert done["render"] is None and "private message for" in done["body_text"]
        assert "<svg" in done["body_html"]


def test_a_plain_text_player_gets_no_board_in_html_and_a_late_player_is_told(game):
    """The HTML part of the private message is left out for a player set to --plain (as
    when it was rendered at once); a default applied is said on top of the text."""
    addresses.set_plain(game.store, "g1", "alex", True)
    waiting = send_until_private(game)
    for row in waiting:
        player = row["recipient"].split("@")[0]
        [spec] = [part["private"] for part in json.loads(row["render"])["parts"] if "private" in part]
        assert spec["html"] is (player != "alex")
    from pbem.mail.moment import LATE
    text, _html, _files = render_row(game.store, "g1", json.dumps(
        {"parts": [{"private": spec, "late": True}]}), {})
    assert text.startswith(LATE) and text[len(LATE):] == render_row(
        game.store, "g1", json.dumps({"parts": [{"private": spec}]}), {})[0]


def test_no_waiting_row_shows_a_secret_of_another_player_and_the_listing_shows_no_view(game, tmp_path):
    """While private messages wait to be rendered, no outbox row holds a mail password or a
    salt the judge keeps for a seal made on receipt; ``mail outbox --json`` shows what a
    summary is rendered from, never a player's view or an answer."""
    salts, checked = set(), 0
    for _ in range(12):
        game.send(*next_move(game))
        salts |= {json.loads(value)["salt"] for (value,) in
                  game.store.conn.execute("select value from secrets where name like 'held/%'")}
        revealed = {e.data["salt"] for e in game.store.events("g1") if e.kind == "reveal"}
        secret = sorted(salts - revealed) + list(game.passwords.values())
        rows = [r for r in game.outbox(rendered=False) if r["state"] == "queued" and r["render"]]
        checked += len(rows)
        for row in rows:
            stored = " ".join(str(v) for v in row.values())
            assert [s for s in secret if s in stored] == [], row["id"]
    assert salts and checked > 10  # the judge did hold salts meanwhile
    listed = [row.as_dict() for row in outbox.pending(game.store)]
    for data in listed:
        if data["render"]:
            parts = json.loads(data["render"])["parts"]
            assert all(set(part) == {"spec"} or part == {"private": True} for part in parts)
    assert any(json.loads(d["render"])["parts"][-1] == {"private": True} for d in listed if d["render"])
    shown = json.dumps(listed)
    assert "Your roll" not in shown and "The judge's answer" not in shown and '"model"' not in shown


def test_a_row_queued_by_an_older_judge_is_sent_as_it_was(game):
    """Rows queued before private messages were kept as models hold their text (and HTML)
    already, alone or in parts: they are sent as they are, with no migration."""
    with game.store.transaction():
        old_parts = outbox.queue(game.store, game="g1", kind="answer", recipient="ani@example.org",
                                 subject="[g1] old", text="", at="2030-01-01T09:00:00Z",
                                 render=json.dumps({"parts": [{"text": "The answer.\n"},
                                                              {"text": "Your private message.\n",
                                                               "html": "<html><body><p>board</p></body></html>"}]}))
        old_plain = outbox.queue(game.store, game="g1", kind="private", recipient="alex@example.org",
                                 subject="[g1] older", text="Rendered when queued.\n", at="2030-01-01T09:00:00Z")
    render_pending(game.store)
    rows = {r["message_id"]: r for r in game.outbox()}
    assert rows[old_plain]["body_text"] == "Rendered when queued.\n" and rows[old_plain]["body_html"] is None
    text = rows[old_parts]["body_text"]
    assert text.index("The answer.") < text.index("Your private message.")
    assert "<p>board</p>" in rows[old_parts]["body_html"] and rows[old_parts]["render"] is None


@pytest.mark.parametrize("game_type,players", [("tortuga", ["ani", "<b>alex</b>", "frank", "lo"]),
                                               ("tortuga1667", ["a", "b", "c", "d", "e"])])
def test_every_private_model_survives_json_and_renders_the_same(tmp_path, game_type, players):
    """The models of private messages are plain data: through JSON (as the outbox keeps
    them) they come back equal and render the same text in every format, at every point of
    a bot-played game. (Should one not, the judge renders that message when it is queued.)"""
    from pbem.render.demo import play_bots
    from pbem.store import Store
    at = "2024-05-01T12:00:00Z"
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", game_type, players, {}, at=at)
    commands.start_game(store, "g", at=at)
    count = 0

    def check(session) -> bool:
        nonlocal count
        if session.seq % 3:
            return False
        for player in session.players:
            kind, model = summary.private_model(session, player, tz="Europe/Berlin", by_mail=True)
            again = json.loads(json.dumps(model))
            assert again == model
            for fmt in ("text", "html"):
                assert summary.render_private_model(kind, again, fmt) == summary.render_private(
                    session, player, fmt, tz="Europe/Berlin", by_mail=True)[1]
            count += 1
        return False
    play_bots(store, "g", f"k3/{game_type}", until=check, at=at)
    assert count > 50
