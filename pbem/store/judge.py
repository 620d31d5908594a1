"""The email judge's private tables: players' addresses and password hashes, a list address
per game, the messages already ingested, and strikes for rate limits.

None of this is part of the hash chain or of an export: an address or a password hash is
nobody else's business, and none of it changes what happened in a game. Writes must run
inside ``store.transaction()`` (or ``store.atomic()``), with the events they belong to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MailPlayer:
    game: str
    player: str
    address: str
    password_hash: str | None
    tz: str | None


def _rows(store, sql: str, params=()) -> list[tuple]:
    return store.conn.execute(sql, params).fetchall()


def set_address(store, game: str, player: str, address: str, password_hash: str | None = None,
                tz: str | None = None, keep_password: bool = True) -> None:
    """Set ``player``'s address (and time zone); the password hash is kept unless a new
    one is given or ``keep_password`` is false."""
    store._require_transaction("set_address()")
    old = mail_player(store, game, player)
    if old is not None and password_hash is None and keep_password:
        password_hash = old.password_hash
    if old is not None and tz is None:
        tz = old.tz
    store.conn.execute(
        "insert or replace into mail_players (game, player, address, password_hash, tz) values (?, ?, ?, ?, ?)",
        (game, player, address, password_hash, tz))


def mail_player(store, game: str, player: str) -> MailPlayer | None:
    rows = _rows(store, "select game, player, address, password_hash, tz from mail_players "
                        "where game = ? and player = ?", (game, player))
    return MailPlayer(*rows[0]) if rows else None


def mail_players(store, game: str) -> dict[str, MailPlayer]:
    rows = _rows(store, "select game, player, address, password_hash, tz from mail_players where game = ?",
                 (game,))
    return {row[1]: MailPlayer(*row) for row in rows}


def players_at(store, address: str) -> list[MailPlayer]:
    """Every (game, player) registered with ``address`` (compared lower-cased)."""
    rows = _rows(store, "select game, player, address, password_hash, tz from mail_players where address = ?",
                 (address.lower(),))
    return [MailPlayer(*row) for row in rows]


def set_list_address(store, game: str, address: str | None) -> None:
    store._require_transaction("set_list_address()")
    store.conn.execute("insert or replace into mail_games (game, list_address) values (?, ?)", (game, address))


def list_address(store, game: str) -> str | None:
    rows = _rows(store, "select list_address from mail_games where game = ?", (game,))
    return rows[0][0] if rows else None


def uses_mail(store, game: str) -> bool:
    """Whether the judge mails anyone in ``game`` (a player's address or a list)."""
    return bool(_rows(store, "select 1 from mail_players where game = ? union all "
                             "select 1 from mail_games where game = ? and list_address is not null limit 1",
                      (game, game)))


def seen(store, keys) -> bool:
    keys = list(keys)
    marks = ",".join("?" * len(keys))
    return bool(_rows(store, f"select 1 from mail_seen where key in ({marks}) limit 1", keys))


def mark_seen(store, keys, game: str | None, sender: str, at: str, outcome: str) -> None:
    store._require_transaction("mark_seen()")
    for key in keys:
        store.conn.execute("insert or ignore into mail_seen (key, game, sender, at, outcome) values (?, ?, ?, ?, ?)",
                           (key, game, sender, at, outcome))


def strike(store, address: str, kind: str, at: str) -> None:
    store._require_transaction("strike()")
    store.conn.execute("insert into mail_strikes (address, kind, at) values (?, ?, ?)", (address.lower(), kind, at))


def strikes_since(store, address: str, kind: str, since: str) -> int:
    return _rows(store, "select count(*) from mail_strikes where address = ? and kind = ? and at >= ?",
                 (address.lower(), kind, since))[0][0]
