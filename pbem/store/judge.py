"""The email judge's private tables: players' addresses and password hashes, a list address
per game, the messages already ingested, strikes for rate limits, each game's deadline
settings and the reminders sent.

None of this is part of the hash chain or of an export: an address or a password hash is
nobody else's business, and none of it changes what happened in a game. Writes must run
inside ``store.transaction()`` (or ``store.atomic()``), with the events they belong to.
"""

from __future__ import annotations

import json
from typing import NamedTuple


ON_LATE = ("default", "wait")


class Deadlines(NamedTuple):  # NamedTuples, not dataclasses: cheaper to build at start-up
    """What the judge does about a game's deadlines: remind ``remind`` seconds before a
    request is due (0: never), and once it is ``grace`` seconds past due either apply the
    documented default (``on_late`` "default") or only tell the player ("wait")."""

    remind: int = 0
    grace: int = 0
    on_late: str = "default"

    def as_dict(self) -> dict:
        return {"remind_seconds": self.remind, "grace_seconds": self.grace, "on_late": self.on_late}


class MailPlayer(NamedTuple):
    game: str
    player: str
    address: str
    password_hash: str | None
    tz: str | None
    plain: bool = False  # mail as plain text only, without the HTML part and its pictures


def _player(row) -> MailPlayer:
    return MailPlayer(*row[:5], plain=bool(row[5]))


def _rows(store, sql: str, params=()) -> list[tuple]:
    return store.conn.execute(sql, params).fetchall()


def _kept(store, key: tuple, read):
    """``read()``, once per moment (one incoming mail, one action: ``pbem.mail.moment``),
    which reads a game's players and settings several times. Kept in ``store.memo``, which
    the moment empties when it starts and ends, the store empties on any rollback, and every
    write to these tables empties (``_changed``); outside a moment, read every time."""
    if not getattr(store, "memo_on", False):
        return read()
    memo = store.memo
    if key not in memo:
        memo[key] = read()
    return memo[key]


def _changed(store) -> None:
    """A write to the players' or games' mail settings: what a moment kept is read again."""
    memo = getattr(store, "memo", None)
    if memo is not None:
        memo.clear()


def set_address(store, game: str, player: str, address: str, password_hash: str | None = None,
                tz: str | None = None, keep_password: bool = True) -> None:
    """Set ``player``'s address (and time zone: None keeps the old one, "" removes it);
    the password hash is kept unless a new one is given or ``keep_password`` is false."""
    store.require_transaction("set_address()")
    _changed(store)
    old = mail_player(store, game, player)
    if old is not None and password_hash is None and keep_password:
        password_hash = old.password_hash
    if old is not None and tz is None:
        tz = old.tz
    store.conn.execute(
        "insert or replace into mail_players (game, player, address, password_hash, tz, plain) values (?, ?, ?, ?, ?, ?)",
        (game, player, address, password_hash, tz or None, int(old.plain) if old is not None else 0))


def set_plain(store, game: str, player: str | None, plain: bool) -> None:
    """Mail ``player`` (None: the game's list address) plain text only, or text and HTML."""
    store.require_transaction("set_plain()")
    _changed(store)
    if player is None:
        store.conn.execute("update mail_games set plain = ? where game = ?", (int(plain), game))
    else:
        store.conn.execute("update mail_players set plain = ? where game = ? and player = ?", (int(plain), game, player))


def list_plain(store, game: str) -> bool:
    rows = _rows(store, "select plain from mail_games where game = ?", (game,))
    return bool(rows and rows[0][0])


def plain_addresses(store) -> set[tuple[str, str]]:
    """(game, address) of every player and list address that takes plain text only."""
    return {(row[0], row[1]) for row in _rows(
        store, "select game, address from mail_players where plain = 1 union "
               "select game, list_address from mail_games where plain = 1 and list_address is not null")}


def mail_player(store, game: str, player: str) -> MailPlayer | None:
    rows = _rows(store, "select game, player, address, password_hash, tz, plain from mail_players "
                        "where game = ? and player = ?", (game, player))
    return _player(rows[0]) if rows else None


def mail_players(store, game: str) -> dict[str, MailPlayer]:
    return dict(_kept(store, ("mail_players", game), lambda: {row[1]: _player(row) for row in _rows(
        store, "select game, player, address, password_hash, tz, plain from mail_players where game = ?", (game,))}))


def players_at(store, address: str) -> list[MailPlayer]:
    """Every (game, player) registered with ``address`` (compared lower-cased)."""
    rows = _rows(store, "select game, player, address, password_hash, tz, plain from mail_players where address = ?",
                 (address.lower(),))
    return [_player(row) for row in rows]


def roles_at(store, address: str) -> list[tuple[str, str]]:
    """Every (game, "list" or "moderator") whose list or moderator address is ``address``
    (compared lower-cased)."""
    return [(row[0], row[1]) for row in _rows(
        store, "select game, 'list' from mail_games where lower(list_address) = ? union all "
               "select game, 'moderator' from mail_games where lower(moderator_address) = ? order by 1, 2",
        (address.lower(), address.lower()))]


def set_list_address(store, game: str, address: str | None) -> None:
    store.require_transaction("set_list_address()")
    _changed(store)
    store.conn.execute("insert into mail_games (game, list_address) values (?, ?) "
                       "on conflict (game) do update set list_address = excluded.list_address", (game, address))


def set_player_summaries(store, game: str, on: bool) -> None:
    """Whether players get the public summaries too when the game has a list address."""
    store.require_transaction("set_player_summaries()")
    _changed(store)
    store.conn.execute("insert into mail_games (game, player_summaries) values (?, ?) "
                       "on conflict (game) do update set player_summaries = excluded.player_summaries",
                       (game, int(bool(on))))


def player_summaries(store, game: str) -> bool:
    """True (the default) when players get every public summary in their mail; False when
    the game's list carries them and players get only the final result."""
    rows = _kept(store, ("player_summaries", game),
                 lambda: _rows(store, "select player_summaries from mail_games where game = ?", (game,)))
    return bool(rows[0][0]) if rows else True


# How long an answer that only confirms waits for the player's next message to carry it,
# unless the game says otherwise (pbem mail settings GAME --hold-answers 10m).
HOLD_ANSWERS_SECONDS = 600


def set_hold_answers(store, game: str, seconds: int) -> None:
    store.require_transaction("set_hold_answers()")
    _changed(store)
    store.conn.execute("insert into mail_games (game, hold_answers_seconds) values (?, ?) "
                       "on conflict (game) do update set hold_answers_seconds = excluded.hold_answers_seconds",
                       (game, int(seconds)))


def hold_answers(store, game: str) -> int:
    """Seconds an answer that only confirms may wait to travel with the player's next
    message (0: every answer goes at once)."""
    rows = _kept(store, ("hold_answers", game),
                 lambda: _rows(store, "select hold_answers_seconds from mail_games where game = ?", (game,)))
    return HOLD_ANSWERS_SECONDS if not rows or rows[0][0] is None else int(rows[0][0])


def list_address(store, game: str) -> str | None:
    rows = _kept(store, ("list_address", game),
                 lambda: _rows(store, "select list_address from mail_games where game = ?", (game,)))
    return rows[0][0] if rows else None


def uses_mail(store, game: str) -> bool:
    """Whether the judge mails anyone in ``game`` (a player's address or a list)."""
    return _kept(store, ("uses_mail", game), lambda: bool(_rows(
        store, "select 1 from mail_players where game = ? union all "
               "select 1 from mail_games where game = ? and list_address is not null limit 1", (game, game))))


def seen(store, keys) -> bool:
    keys = list(keys)
    marks = ",".join("?" * len(keys))
    return bool(_rows(store, f"select 1 from mail_seen where key in ({marks}) limit 1", keys))


def mark_seen(store, keys, game: str | None, sender: str, at: str, outcome: str) -> None:
    store.require_transaction("mark_seen()")
    keys = list(keys)
    if keys:  # one statement for all: rows in the order given, each ignored if already there
        store.conn.execute("insert or ignore into mail_seen (key, game, sender, at, outcome) values "
                           + ", ".join(["(?, ?, ?, ?, ?)"] * len(keys)),
                           [value for key in keys for value in (key, game, sender, at, outcome)])


def strike(store, address: str, kind: str, at: str) -> None:
    store.require_transaction("strike()")
    store.conn.execute("insert into mail_strikes (address, kind, at) values (?, ?, ?)", (address.lower(), kind, at))


def strikes_since(store, address: str, kind: str, since: str) -> int:
    return _rows(store, "select count(*) from mail_strikes where address = ? and kind = ? and at >= ?",
                 (address.lower(), kind, since))[0][0]


def deadlines(store, game: str) -> Deadlines:
    rows = _rows(store, "select remind_seconds, grace_seconds, on_late from mail_deadlines where game = ?", (game,))
    return Deadlines(*rows[0]) if rows else Deadlines()


def set_deadlines(store, game: str, settings: Deadlines) -> None:
    store.require_transaction("set_deadlines()")
    store.conn.execute("insert or replace into mail_deadlines (game, remind_seconds, grace_seconds, on_late) "
                       "values (?, ?, ?, ?)", (game, settings.remind, settings.grace, settings.on_late))


def mail_games(store) -> list[str]:
    """Every game the judge mails anyone in (a player's address or a list address)."""
    return [row[0] for row in _rows(store, "select game from mail_players union "
                                           "select game from mail_games where list_address is not null order by 1")]


def mail_games_to_tick(store, now: str) -> list[str]:
    """The games of ``mail_games`` that may have a deadline to act on at ``now``: the
    game's head row (``game_heads``, a cache written with the snapshot, see
    ``Store.put_snapshot``) says a request is due by ``now`` plus the game's reminder time,
    or the row says nothing about the head, so the game must be read. Both are found
    through indexes: a finished game, or one with nothing due yet, is not even looked at."""
    return [row[0] for row in _rows(store, """
        with lead(seconds) as (select coalesce(max(remind_seconds), 0) from mail_deadlines),
        near(game) as (select game from game_heads
                       where due <= strftime('%Y-%m-%dT%H:%M:%SZ', :now, '+' || (select seconds from lead) || ' seconds')
                       union select game from game_heads where snap is not seq)
        select n.game from near n
        join game_heads h on h.game = n.game
        left join mail_deadlines d on d.game = n.game
        where (exists (select 1 from mail_players p where p.game = n.game)
               or exists (select 1 from mail_games g where g.game = n.game and g.list_address is not null))
          and (h.snap is not h.seq or
               datetime(h.due, '-' || coalesce(d.remind_seconds, 0) || ' seconds') <= datetime(:now))
        order by 1""", {"now": now})]


def reminded(store, game: str, key: tuple, stage: str) -> bool:
    """Whether the ``stage`` notice about request ``key`` (player, round, step, kind) was queued."""
    return bool(_rows(store, "select 1 from mail_reminders where game = ? and player = ? and round = ? and step = ? "
                             "and kind = ? and stage = ?", (game, *key, stage)))


def mark_reminded(store, game: str, key: tuple, stage: str, at: str, message_id: str) -> bool:
    """Record the notice; False (and nothing written) when it was recorded already."""
    store.require_transaction("mark_reminded()")
    cursor = store.conn.execute("insert or ignore into mail_reminders (game, player, round, step, kind, stage, at, "
                                "message_id) values (?, ?, ?, ?, ?, ?, ?, ?)", (game, *key, stage, at, message_id))
    return cursor.rowcount == 1


def reminder_records(store, game: str, key: tuple) -> list[tuple[str, str]]:
    """(stage, message_id) of each notice recorded for request ``key`` (player, round,
    step, kind as ``pbem.mail.reminders.owed`` keys it)."""
    return [(row[0], row[1]) for row in _rows(
        store, "select stage, message_id from mail_reminders where game = ? and player = ? and round = ? "
               "and step = ? and kind = ? order by stage", (game, *key))]


def forget_reminded(store, game: str, key: tuple, stages) -> int:
    """Forget the ``stages`` notices of request ``key``, so that they can go again (its
    deadline moved). Returns how many records went."""
    store.require_transaction("forget_reminded()")
    stages = list(stages)
    if not stages:
        return 0
    marks = ",".join("?" * len(stages))
    return store.conn.execute(f"delete from mail_reminders where game = ? and player = ? and round = ? and step = ? "
                              f"and kind = ? and stage in ({marks})", (game, *key, *stages)).rowcount


def mail_state(store, game: str) -> dict | None:
    """For ``pbem status``: the messages of ``game`` waiting to go out (``queued``), how many
    of them failed at least once (``failing``) and the newest error; None for a game the
    judge mails no one in and with nothing queued. One query, over the outbox's queued rows
    (its (state, next_try_at) index) and the game's addresses."""
    queued = "from outbox where state = 'queued' and game = :g"
    row = store.conn.execute(
        f"select (select count(*) {queued}), (select count(*) {queued} and last_error is not null), "
        f"(select last_error {queued} and last_error is not null order by id desc limit 1), "
        "exists (select 1 from mail_players where game = :g) "
        "or exists (select 1 from mail_games where game = :g and list_address is not null)", {"g": game}).fetchone()
    if not row[0] and not row[3]:
        return None
    return {"queued": row[0], "failing": row[1], "last_error": row[2], "failed": failed_count(store, game)}


def failed_count(store, game: str) -> int:
    """How many messages of ``game`` failed for good (state "failed")."""
    return _rows(store, "select count(*) from outbox where game = ? and state = 'failed'", (game,))[0][0]


# Read the few rows of one state through the (state, next_try_at) index: grouping by game,
# SQLite would otherwise pick the (game, state) index and walk every row the judge ever sent.
_BY_STATE = "indexed by outbox_state_next_try"


def failed_counts(store) -> dict[str, int]:
    """``failed_count`` of every game with a message failed for good, in one query."""
    return dict(_rows(store, f"select game, count(*) from outbox {_BY_STATE} where state = 'failed' group by game"))


def mailed_among(store, games: list[str]) -> set[str]:
    """Those of ``games`` the judge mails anyone in (see ``mail_games``)."""
    among = json.dumps(games)
    return {row[0] for row in _rows(store, "select game from mail_players where game in (select value from json_each(?)) "
                                           "union select game from mail_games where list_address is not null "
                                           "and game in (select value from json_each(?))", (among, among))}


def any_failing_address(store) -> bool:
    """Whether any address the judge mails is known to fail (``pbem.mail.failures``)."""
    return bool(_rows(store, "select exists (select 1 from mail_failures)")[0][0])


def mail_states(store) -> dict[str, dict]:
    """``mail_state`` of every game with anything queued, in one query."""
    rows = _rows(store, "select game, count(*), count(last_error), (select last_error from outbox newest "
                        "where newest.game = outbox.game and newest.state = 'queued' and newest.last_error is not null "
                        f"order by newest.id desc limit 1) from outbox {_BY_STATE} where state = 'queued' group by game")
    return {row[0]: {"queued": row[1], "failing": row[2], "last_error": row[3]} for row in rows}


def last_fetch(store) -> dict | None:
    """When the judge last went through an IMAP folder (``pbem mail fetch``): the newest
    ``{"at", "account", "folder", "last_uid"}``, or None before any fetch."""
    row = store.conn.execute("select checked_at, account, folder, last_uid from imap_folders "
                             "order by checked_at desc limit 1").fetchone()
    return None if row is None else {"at": row[0], "account": row[1], "folder": row[2], "last_uid": row[3]}


class Former(NamedTuple):
    """Someone who answered for ``player`` in ``game`` until ``until`` (event ``seq``)."""

    game: str
    player: str
    address: str
    until: str
    seq: int


def add_former(store, game: str, player: str, address: str, until: str, seq: int) -> None:
    store.require_transaction("add_former()")
    store.conn.execute("insert or replace into mail_former (game, player, address, until, seq) values (?, ?, ?, ?, ?)",
                       (game, player, address.lower(), until, seq))


def forget_former(store, game: str, address: str) -> None:
    """``address`` plays in ``game`` again (a seat given back to them): no longer a former player."""
    store.require_transaction("forget_former()")
    store.conn.execute("delete from mail_former where game = ? and address = ?", (game, address.lower()))


def former_at(store, address: str) -> list[Former]:
    """Every seat ``address`` once answered for and no longer does."""
    rows = _rows(store, "select game, player, address, until, seq from mail_former where address = ? order by until",
                 (address.lower(),))
    return [Former(*row) for row in rows]


def moderator_address(store, game: str) -> str | None:
    """Where the judge tells the moderator of ``game`` what needs them (mail that fails)."""
    rows = _rows(store, "select moderator_address from mail_games where game = ?", (game,))
    return rows[0][0] if rows else None


def set_moderator_address(store, game: str, address: str | None) -> None:
    store.require_transaction("set_moderator_address()")
    _changed(store)
    store.conn.execute("insert into mail_games (game) values (?) on conflict (game) do nothing", (game,))
    store.conn.execute("update mail_games set moderator_address = ? where game = ?", (address, game))


def queued_reminders(store, game: str) -> list[tuple]:
    """(message_id, (player, round, step, kind)) of every reminder of ``game`` still queued
    and not yet handed to the SMTP server."""
    rows = _rows(store, "select r.message_id, r.player, r.round, r.step, r.kind from mail_reminders r "
                        "join outbox o on o.message_id = r.message_id where r.game = ? and o.state = 'queued' "
                        "and o.claimed_at is null", (game,))
    return [(row[0], tuple(row[1:])) for row in rows]
