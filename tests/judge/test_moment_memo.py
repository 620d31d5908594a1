"""What a moment reads once (``pbem.store.judge._kept``, ``store.memo``): a game's mail
players and settings, its held answers, the mail's events. Each is read again after any
write to what it came from, after any rollback, and in the next moment; outside a moment
nothing is kept."""

from __future__ import annotations

import pytest

from pbem.mail import judge
from pbem.mail.moment import moment
from pbem.store import judge as tables
from pbem.store import outbox


class Statements:
    """The SQL statements the store's connection runs while counting."""

    def __init__(self, store):
        self.store, self.seen = store, []

    def __enter__(self):
        self.store.conn.set_trace_callback(self.seen.append)
        return self

    def __exit__(self, *exc):
        self.store.conn.set_trace_callback(None)

    def count(self, text: str) -> int:
        return sum(text in sql for sql in self.seen)


def test_a_moment_reads_the_players_and_settings_once(game):
    store = game.store
    with store.transaction(), Statements(store) as sql:
        with moment(store, game.passwords and "2030-01-01T11:00:00Z"):
            for _ in range(3):
                assert set(tables.mail_players(store, "g1")) == {"ani", "alex", "frank", "lothar"}
                assert tables.uses_mail(store, "g1")
                assert tables.hold_answers(store, "g1") == tables.HOLD_ANSWERS_SECONDS
                assert tables.list_address(store, "g1") == "table@lists.example.org"
                assert tables.player_summaries(store, "g1") is True
    assert sql.count("from mail_players where game") == 2  # mail_players once, uses_mail once
    assert sql.count("select hold_answers_seconds") == 1
    assert sql.count("select list_address") == 1
    assert sql.count("select player_summaries") == 1


def test_nothing_is_kept_outside_a_moment(game):
    store = game.store
    with store.transaction(), Statements(store) as sql:
        tables.mail_players(store, "g1")
        tables.mail_players(store, "g1")
        store.conn.execute("update mail_players set tz = 'Europe/Berlin' where player = 'ani'")
        assert tables.mail_players(store, "g1")["ani"].tz == "Europe/Berlin"  # raw SQL outside a moment is seen
    assert sql.count("from mail_players where game") == 3
    assert store.memo == {}


def test_a_caller_cannot_change_what_is_kept(game):
    store = game.store
    with store.transaction(), moment(store, "2030-01-01T11:00:00Z"):
        tables.mail_players(store, "g1").pop("ani")
        assert "ani" in tables.mail_players(store, "g1")


def settings(store):
    return (tables.mail_players(store, "g1"), tables.uses_mail(store, "g1"), tables.list_address(store, "g1"),
            tables.player_summaries(store, "g1"), tables.hold_answers(store, "g1"))


def unkept(store):
    """What the tables say, read with nothing kept."""
    store.memo_on = False
    try:
        return settings(store)
    finally:
        store.memo_on = True


@pytest.mark.parametrize("write", [
    lambda s: tables.set_address(s, "g1", "ani", "ani2@example.org"),
    lambda s: tables.set_plain(s, "g1", "ani", True),
    lambda s: tables.set_list_address(s, "g1", "other@lists.example.org"),
    lambda s: tables.set_player_summaries(s, "g1", False),
    lambda s: tables.set_hold_answers(s, "g1", 0),
])
def test_a_write_in_the_moment_is_seen(game, write):
    store = game.store
    with store.transaction(), moment(store, "2030-01-01T11:00:00Z"):
        before = settings(store)
        write(store)
        after = settings(store)
        assert after == unkept(store) and after != before


def test_a_rolled_back_savepoint_is_forgotten(game):
    """Read inside a savepoint that changed the players, then rolled back: the moment reads
    them again, as they are."""
    store = game.store
    with store.transaction(), moment(store, "2030-01-01T11:00:00Z"):
        assert tables.mail_players(store, "g1")["ani"].address == "ani@example.org"
        with pytest.raises(RuntimeError):
            with store.atomic():
                tables.set_address(store, "g1", "ani", "ani2@example.org")
                assert tables.mail_players(store, "g1")["ani"].address == "ani2@example.org"
                assert tables.hold_answers(store, "g1") == tables.HOLD_ANSWERS_SECONDS
                tables.set_hold_answers(store, "g1", 0)
                assert tables.hold_answers(store, "g1") == 0
                raise RuntimeError("undo")
        assert tables.mail_players(store, "g1")["ani"].address == "ani@example.org"
        assert tables.hold_answers(store, "g1") == tables.HOLD_ANSWERS_SECONDS


def test_the_next_moment_reads_again(game):
    store = game.store
    with store.transaction():
        with moment(store, "2030-01-01T11:00:00Z"):
            tables.mail_players(store, "g1")
        assert store.memo == {}
        store.conn.execute("update mail_players set tz = 'Europe/Berlin' where player = 'ani'")
        with moment(store, "2030-01-01T11:01:00Z"):
            assert tables.mail_players(store, "g1")["ani"].tz == "Europe/Berlin"


def test_a_failed_moment_leaves_nothing_kept(game):
    store = game.store
    with store.transaction():
        with pytest.raises(RuntimeError):
            with moment(store, "2030-01-01T11:00:00Z"):
                tables.mail_players(store, "g1")
                raise RuntimeError("a bug")
        assert store.memo == {} and not store.memo_on


def test_held_answers_read_once_are_those_read_one_by_one(game, helpers):
    """The held answers of every recipient at once are the same rows as asked one by one."""
    from pbem.mail import deadlines
    select = lambda p: game.session().rules.default(game.session().state, p, "select")  # noqa: E731
    for player in ("ani", "alex"):  # their answers only confirm: held for their next message
        game.send(player, f"password {game.passwords[player]}\nseal {select(player)}")
    at = helpers.at(game.minute)
    together = outbox.held_by_recipient(game.store, "g1", at)
    assert set(together) == {"ani@example.org", "alex@example.org"}
    for player in ("ani", "alex", "frank", "lothar"):
        address = f"{player}@example.org"
        assert together.get(address, []) == outbox.held(game.store, "g1", address.upper(), at)
    assert outbox.held_by_recipient(game.store, "g1", "2031-01-01T00:00:00Z") == {}
    assert deadlines  # the module the settings live in is importable alongside


def test_the_mails_events_are_read_again_unless_they_end_at_the_head(game):
    """one_mail takes the write hook's events only when the last of them is the head (by
    its hash); anything else is read from the log."""
    store = game.store
    head = store.head("g1")
    events = store.events("g1")
    with store.transaction(), moment(store, "2030-01-01T11:00:00Z"):
        store.memo[("events", "g1", 0)] = events
        assert judge.events_after(store, "g1", 0, head) is events
        store.memo[("events", "g1", 0)] = events[:-1]  # stops short of the head
        assert judge.events_after(store, "g1", 0, head) == events
        forged = events[:-1] + [events[-1]._replace(hash="0" * 64)]
        store.memo[("events", "g1", 0)] = forged  # ends at the head's seq, not its hash
        assert judge.events_after(store, "g1", 0, head) == events
    assert judge.events_after(store, "g1", 0, head) == events  # outside a moment: read


def test_the_memo_is_dropped_when_the_store_forgets(game):
    store = game.store
    with store.transaction(), moment(store, "2030-01-01T11:00:00Z"):
        tables.mail_players(store, "g1")
        assert store.memo
        store._forget()
        assert store.memo == {}


def test_receipts_from_the_events_handed_over_are_those_read_from_the_log(game):
    """The answer's receipts, made from the events and head one_mail hands over, are the
    ones ``issue`` makes reading the log itself (Ed25519 is deterministic)."""
    from pbem.protocol.receipts import issue
    select = game.session().rules.default(game.session().state, "ani", "select")
    before = game.store.head("g1")[0]
    result = game.send("ani", f"password {game.passwords['ani']}\nseal {select}")
    assert result.outcome == "applied"
    read = issue(game.store, "g1", before, {"ani"})
    assert read and read == issue(game.store, "g1", before, {"ani"}, events=game.store.events("g1", after=before),
                                  head=game.store.head("g1"))
    answer = [r for r in game.outbox(rendered=False) if r["kind"] == "answer"][-1]["body_text"]
    assert read[0].strip() in answer
