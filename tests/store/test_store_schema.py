"""Migrations: a blank database ends with the full schema, recorded once by name."""

from __future__ import annotations

import sqlite3

import pytest

from pbem.store import Store, StoreError
from pbem.store.migrations import MIGRATIONS

AT = "2024-05-01T12:00:00Z"  # the store is given its times in tests, never the clock
EXPECTED_NAMES = ["m001_events_and_secrets", "m002_indexes", "m003_outbox", "m004_judge",
                  "m005_snapshot_digest", "m006_imap",
                  "m007_deadlines", "m008_outbox_redact", "m010_mail_moments", "m010b_plain_mail",
                  "m011_snapshot_rounds", "m012_undeliverable", "m013_page_folders",
                  "m014_former_players", "m015_held_answers", "m017_game_heads",
                  "m018_outbox_held", "m021_game_listing", "m022_light_snapshots",
                  "m023_seats_listing", "m024_outbox_expires",
                  "m025_chain_checkpoints"]


def columns(db, table):
    return [(column.name, column.type) for column in db[table].columns]


def test_blank_database_migrates_to_full_schema(db_path):
    with Store(db_path) as store:
        db = store.db
        assert set(db.table_names()) == {"_migrations", "events", "secrets", "snapshots", "outbox",
                                         "mail_players", "mail_games", "mail_seen", "mail_strikes",
                                         "imap_folders", "imap_unmarked", "mail_deadlines", "mail_reminders",
                                         "mail_failures", "page_folders",
                                         "mail_former", "game_heads"}
        assert columns(db, "game_heads") == [("game", "TEXT"), ("seq", "INTEGER"), ("snap", "INTEGER"),
                                             ("finished", "INTEGER"), ("due", "TEXT"), ("line", "TEXT"),
                                             ("listing", "TEXT"), ("checked", "INTEGER"), ("checked_hash", "TEXT"),
                                             ("checked_schema", "INTEGER"), ("recheck", "INTEGER")]
        assert db["game_heads"].pks == ["game"]
        assert {index.name for index in db["game_heads"].indexes if index.origin == "c"} == {
            "game_heads_stale", "game_heads_playing", "game_heads_finished", "game_heads_due"}
        assert {name for (name,) in db.execute("select name from sqlite_master where type = 'trigger'")} == {
            "game_heads_append", "game_heads_update", "game_heads_delete", "game_heads_unsnap", "game_heads_resnap",
                "chain_checks_insert", "chain_checks_update", "chain_checks_delete"}
        assert columns(db, "events") == [
            ("game", "TEXT"),
            ("seq", "INTEGER"),
            ("kind", "TEXT"),
            ("at", "TEXT"),
            ("body", "TEXT"),
            ("prev_hash", "TEXT"),
            ("hash", "TEXT"),
        ]
        assert db["events"].pks == ["game", "seq"]
        assert columns(db, "secrets") == [("game", "TEXT"), ("name", "TEXT"), ("value", "TEXT")]
        assert db["secrets"].pks == ["game", "name"]
        assert columns(db, "snapshots") == [("game", "TEXT"), ("seq", "INTEGER"), ("state", "TEXT"),
                                            ("digest", "TEXT"), ("round", "INTEGER"), ("due", "TEXT"),
                                            ("full", "INTEGER")]
        assert db["snapshots"].pks == ["game", "seq"]
        assert columns(db, "_migrations") == [("name", "TEXT"), ("applied_at", "TEXT")]
        assert [index.columns for index in db["events"].indexes if index.origin == "c"] == [
            ["game", "kind"]
        ]
        assert columns(db, "outbox") == [
            ("id", "INTEGER"),
            ("game", "TEXT"),
            ("kind", "TEXT"),
            ("recipient", "TEXT"),
            ("message_id", "TEXT"),
            ("subject", "TEXT"),
            ("in_reply_to", "TEXT"),
            ("refs", "TEXT"),
            ("auto_submitted", "TEXT"),
            ("body_text", "TEXT"),
            ("body_html", "TEXT"),
            ("queued_at", "TEXT"),
            ("state", "TEXT"),
            ("attempts", "INTEGER"),
            ("next_try_at", "TEXT"),
            ("last_error", "TEXT"),
            ("sent_at", "TEXT"),
            ("render", "TEXT"),
            ("redact", "TEXT"),
            ("attachments", "TEXT"),
            ("claimed_at", "TEXT"),
            ("deferred_since", "TEXT"),
            ("failed_at", "TEXT"),
            ("held_until", "TEXT"),
            ("expires_at", "TEXT"),
        ]
        assert db["outbox"].pks == ["id"]
        outbox = {column.name: column for column in db["outbox"].columns}
        nullable = {"id", "in_reply_to", "body_html", "last_error", "sent_at", "render", "redact", "attachments",
                    "claimed_at", "deferred_since", "failed_at", "held_until", "expires_at"}
        assert {name for name, column in outbox.items() if not column.notnull} == nullable
        assert outbox["refs"].default_value == "''" and outbox["attempts"].default_value == "0"
        assert [(index.columns, index.unique) for index in db["outbox"].indexes] == [
            (["game", "held_until"], 0),
            (["game", "state"], 0),
            (["state", "next_try_at"], 0),
            (["message_id"], 1),
        ]
        assert columns(db, "mail_players") == [("game", "TEXT"), ("player", "TEXT"), ("address", "TEXT"),
                                               ("password_hash", "TEXT"), ("tz", "TEXT"), ("plain", "INTEGER")]
        assert db["mail_players"].pks == ["game", "player"]
        assert columns(db, "mail_games") == [("game", "TEXT"), ("list_address", "TEXT"), ("player_summaries", "INTEGER"),
                                             ("plain", "INTEGER"), ("moderator_address", "TEXT"),
                                             ("hold_answers_seconds", "INTEGER")]
        assert {c.name: c.default_value for c in db["mail_games"].columns}["plain"] == "0"
        assert db["mail_seen"].pks == ["key"]
        assert columns(db, "mail_strikes") == [("id", "INTEGER"), ("address", "TEXT"), ("kind", "TEXT"), ("at", "TEXT")]
        assert columns(db, "imap_folders") == [("account", "TEXT"), ("folder", "TEXT"), ("uidvalidity", "INTEGER"),
                                               ("last_uid", "INTEGER"), ("checked_at", "TEXT")]
        assert db["imap_folders"].pks == ["account", "folder"]
        assert all(column.notnull for column in db["imap_folders"].columns)
        assert columns(db, "imap_unmarked") == [("account", "TEXT"), ("folder", "TEXT"), ("uid", "INTEGER")]
        assert db["imap_unmarked"].pks == ["account", "folder", "uid"]
        assert columns(db, "mail_deadlines") == [("game", "TEXT"), ("remind_seconds", "INTEGER"),
                                                 ("grace_seconds", "INTEGER"), ("on_late", "TEXT")]
        assert db["mail_deadlines"].pks == ["game"]
        deadlines = {column.name: column for column in db["mail_deadlines"].columns}
        assert deadlines["on_late"].default_value == "'default'" and deadlines["remind_seconds"].default_value == "0"
        assert columns(db, "mail_reminders") == [("game", "TEXT"), ("player", "TEXT"), ("round", "INTEGER"),
                                                 ("step", "INTEGER"), ("kind", "TEXT"), ("stage", "TEXT"),
                                                 ("at", "TEXT"), ("message_id", "TEXT")]
        assert db["mail_reminders"].pks == ["game", "player", "round", "step", "kind", "stage"]
        assert [name for name, _ in columns(db, "mail_failures")] == [
            "address", "score", "since", "last_at", "last_scored_at", "last_answer", "failed_messages",
            "dead_since", "told_at", "told_dead_at"]
        assert db["mail_failures"].pks == ["address"]
        assert all(column.notnull for column in db["mail_reminders"].columns)
        assert columns(db, "mail_former") == [("game", "TEXT"), ("player", "TEXT"), ("address", "TEXT"),
                                              ("until", "TEXT"), ("seq", "INTEGER")]
        assert db["mail_former"].pks == ["game", "address"]
        rows = list(db.query("select name, applied_at from _migrations order by rowid"))
        assert [row["name"] for row in rows] == EXPECTED_NAMES
        assert all(len(row["applied_at"]) == 20 and row["applied_at"].endswith("Z") for row in rows)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 15000


def test_migration_list_is_numbered_in_order():
    names = [migration.__name__ for migration in MIGRATIONS]
    assert names == EXPECTED_NAMES
    import re
    # m001_..., m002_...: numbered in order; a letter after the number (m010b_) marks a
    # migration made beside another of the same number on a parallel branch
    found = [re.fullmatch(r"m(\d{3})([a-z]?)_[a-z0-9_]+", name) for name in names]
    assert all(found), names
    keys = [(int(m.group(1)), m.group(2)) for m in found]
    assert keys == sorted(set(keys)) and keys[0] == (1, "")


def test_reopening_does_not_rerun_migrations(db_path):
    with Store(db_path) as store:
        first = list(store.db.query("select name, applied_at from _migrations"))
        with store.transaction():
            store.append("g", "new", {}, at=AT)
    # Backdate the records: a re-run would either fail on the primary key or add rows.
    conn = sqlite3.connect(db_path)
    conn.execute("update _migrations set applied_at = '2000-01-01T00:00:00Z'")
    conn.commit()
    conn.close()
    with Store(db_path, busy_timeout_ms=2000) as store:
        again = list(store.db.query("select name, applied_at from _migrations"))
        assert [row["name"] for row in again] == [row["name"] for row in first]
        assert {row["applied_at"] for row in again} == {"2000-01-01T00:00:00Z"}
        assert store.count("g") == 1
        assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 2000


def test_a_database_of_the_previous_version_gains_the_outbox(db_path):
    """A games file written before the outbox existed opens, keeps its log, and migrates."""
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.executescript(
        "create table _migrations (name text primary key not null, applied_at text not null);"
        "insert into _migrations values ('m001_events_and_secrets', '2024-01-01T00:00:00Z');"
        "insert into _migrations values ('m002_indexes', '2024-01-01T00:00:00Z');"
        "create table events (game text not null, seq integer not null, kind text not null,"
        " at text not null, body text not null, prev_hash text not null, hash text not null,"
        " primary key (game, seq));"
        "create table secrets (game text not null, name text not null, value text not null,"
        " primary key (game, name));"
        "create table snapshots (game text not null, seq integer not null, state text not null,"
        " primary key (game, seq));"
    )
    conn.close()
    with Store(db_path) as store:
        assert store.db["outbox"].exists()
        names = [row["name"] for row in store.db.query("select name from _migrations order by rowid")]
        assert names == EXPECTED_NAMES


def test_database_from_a_newer_version_is_refused(db_path):
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("insert into _migrations values ('m999_future', '2030-01-01T00:00:00Z')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="unknown migration m999_future"):
        Store(db_path)
