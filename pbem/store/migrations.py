"""Schema migrations: numbered, named functions applied in order, each in one transaction.

A migration's name is recorded in ``_migrations`` in the same transaction as its changes,
so a crash leaves it either fully applied and recorded or not applied at all. Never edit
or renumber a migration that has shipped: add a new one at the end of ``MIGRATIONS``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:  # sqlite-utils is imported only when a migration has to run
    from sqlite_utils import Database

from .errors import StoreError
from .event import utc_now

MIGRATIONS_TABLE = "_migrations"


def m001_events_and_secrets(db: Database) -> None:
    text_columns = ("game", "kind", "at", "body", "prev_hash", "hash")
    db["events"].create(
        {
            "game": str,
            "seq": int,
            "kind": str,
            "at": str,
            # The event object's canonical JSON: the exact text the hash is computed over,
            # kept as text so an audit re-hashes what was written, not a re-encoding.
            "body": str,
            "prev_hash": str,
            "hash": str,
        },
        pk=("game", "seq"),
        not_null=set(text_columns) | {"seq"},
    )
    # Private values (server seed, salts kept for players): never part of an export.
    db["secrets"].create(
        {"game": str, "name": str, "value": str},
        pk=("game", "name"),
        not_null={"game", "name", "value"},
    )
    # A cache of replayed state; it can always be rebuilt from events, and audit does so.
    db["snapshots"].create(
        {"game": str, "seq": int, "state": str},
        pk=("game", "seq"),
        not_null={"game", "seq", "state"},
    )


def m002_indexes(db: Database) -> None:
    # Replay and status look up a game's events of one kind (commitments of a step, say).
    db["events"].create_index(["game", "kind"], index_name="events_game_kind")


def m003_outbox(db: Database) -> None:
    # The transactional outbox: every message the judge will send is a row written in the
    # same transaction as the events that caused it; sending marks it sent. It holds
    # players' private messages, so, like ``secrets``, it is never part of an export.
    # Written as SQL: sqlite-utils cannot declare a column UNIQUE inside CREATE TABLE.
    db.execute(
        """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            game TEXT NOT NULL,
            kind TEXT NOT NULL,
            recipient TEXT NOT NULL,
            message_id TEXT NOT NULL UNIQUE,
            subject TEXT NOT NULL,
            in_reply_to TEXT,
            refs TEXT NOT NULL DEFAULT '',
            auto_submitted TEXT NOT NULL,
            body_text TEXT NOT NULL,
            body_html TEXT,
            queued_at TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_try_at TEXT NOT NULL,
            last_error TEXT,
            sent_at TEXT
        )
        """
    )
    # The sender asks for queued rows that are due: state = 'queued' and next_try_at <= now.
    db.execute("CREATE INDEX outbox_state_next_try ON outbox (state, next_try_at)")

def m004_judge(db: Database) -> None:
    # The email judge's private bookkeeping: never exported, never part of the chain.
    # A public summary is queued as what to render (the log up to a head); its bodies are
    # rendered before it is sent (pbem.mail.letters), and then this is null.
    db.execute("ALTER TABLE outbox ADD COLUMN render TEXT")
    # Players' addresses and mail passwords (a salted hash, never the password).
    db["mail_players"].create(
        {"game": str, "player": str, "address": str, "password_hash": str, "tz": str},
        pk=("game", "player"),
        not_null={"game", "player", "address"},
    )
    db["mail_players"].create_index(["address"], index_name="mail_players_address")
    # Per game: where public summaries also go (a forum's or a list's address).
    db["mail_games"].create({"game": str, "list_address": str}, pk="game", not_null={"game"})
    # Every message ingested, by Message-ID and by a hash of its bytes: a message is
    # acted on once however often it arrives.
    db["mail_seen"].create(
        {"key": str, "game": str, "sender": str, "at": str, "outcome": str},
        pk="key",
        not_null={"key", "sender", "at", "outcome"},
    )
    # Wrong passwords and answers to unknown senders, per address, for rate limits.
    db["mail_strikes"].create(
        {"id": int, "address": str, "kind": str, "at": str},
        pk="id",
        not_null={"address", "kind", "at"},
    )
    db["mail_strikes"].create_index(["address", "kind", "at"], index_name="mail_strikes_address")


def m005_snapshot_digest(db: Database) -> None:
    # Binds a snapshot to its text and to the hash of the event it was taken after, so a
    # changed snapshot is found before anything is written on top of it. Older snapshots
    # keep a null digest and are ignored (the state is rebuilt from the events).
    db["snapshots"].add_column("digest", str)


def m006_imap(db: Database) -> None:
    # Where 'pbem mail fetch' stands in each IMAP folder it reads: the folder's UIDVALIDITY
    # and the highest UID ingested, written in the same transaction as the ingest, so a
    # message is never fetched and applied twice however a run ends.
    db["imap_folders"].create(
        {"account": str, "folder": str, "uidvalidity": int, "last_uid": int, "checked_at": str},
        pk=("account", "folder"),
        not_null={"account", "folder", "uidvalidity", "last_uid", "checked_at"},
    )
    # Messages ingested but not yet flagged \Seen (or moved) on the server: the run stopped
    # between the commit and the flag. The next run flags them without ingesting them again.
    db["imap_unmarked"].create(
        {"account": str, "folder": str, "uid": int},
        pk=("account", "folder", "uid"),
        not_null={"account", "folder", "uid"},
    )


def m007_deadlines(db: Database) -> None:
    # Per game: what the judge does about deadlines (pbem mail settings). A game without a
    # row has no reminders, no grace, and late players get the documented default.
    db.execute(
        """
        CREATE TABLE mail_deadlines (
            game TEXT PRIMARY KEY NOT NULL,
            remind_seconds INTEGER NOT NULL DEFAULT 0,
            grace_seconds INTEGER NOT NULL DEFAULT 0,
            on_late TEXT NOT NULL DEFAULT 'default'
        )
        """
    )
    # What pbem mail tick has sent about one request (player, round, step, kind): a
    # reminder before it is due, a notice once it is late in a game that waits. Written in
    # the same transaction as the outbox row, so each is sent once.
    db.execute(
        """
        CREATE TABLE mail_reminders (
            game TEXT NOT NULL,
            player TEXT NOT NULL,
            round INTEGER NOT NULL,
            step INTEGER NOT NULL,
            kind TEXT NOT NULL,
            stage TEXT NOT NULL,
            at TEXT NOT NULL,
            message_id TEXT NOT NULL,
            PRIMARY KEY (game, player, round, step, kind, stage)
        )
        """
    )


def m008_outbox_redact(db: Database) -> None:
    # What to cut out of a message's bodies once it is sent (a welcome's mail password), so
    # the database keeps no password in clear longer than the message waits in the outbox.
    db.execute("ALTER TABLE outbox ADD COLUMN redact TEXT")


def m010_mail_moments(db: Database) -> None:
    # One message per player per moment (issue 16): a message may carry files (the final
    # result carries the export), as JSON [{"filename", "content_type", "text"}]; and per
    # game, whether players also get the summaries the list carries (1: yes, 0: no).
    db.execute("ALTER TABLE outbox ADD COLUMN attachments TEXT")
    db.execute("ALTER TABLE mail_games ADD COLUMN player_summaries INTEGER NOT NULL DEFAULT 1")


def m010b_plain_mail(db: Database) -> None:
    # Who wants the judge's mail as plain text only (pbem address ... --plain): a player,
    # or a game's list address. The others get an HTML part with the board as a picture.
    db["mail_players"].add_column("plain", int, not_null_default=0)
    db["mail_games"].add_column("plain", int, not_null_default=0)


def m011_snapshot_rounds(db: Database) -> None:
    # The round of the state a snapshot holds (null before play starts). Besides the newest
    # snapshot, the last one of each finished round is kept: a summary of round N is then
    # replayed from the snapshot before N began, not from the first event (pbem.render.record).
    db["snapshots"].add_column("round", int)
    # The earliest deadline owed in that state (null: none), so 'pbem mail tick' passes over
    # the games with nothing due without reading them.
    db["snapshots"].add_column("due", str)
    # 'pbem status' and the sender count one game's queued mail: by game, not by scanning.
    db.execute("CREATE INDEX outbox_game_state ON outbox (game, state)")


def m012_undeliverable(db: Database) -> None:
    # Mail that cannot be delivered (pbem.mail.failures). An outbox row may end 'failed'
    # (a permanent refusal, or temporary ones past the retry limit) or 'dropped' (a reminder
    # whose request was settled before it went). claimed_at: handed to SMTP (never dropped
    # then); deferred_since: the first temporary refusal of this message, for the limit.
    db.execute("ALTER TABLE outbox ADD COLUMN claimed_at TEXT")
    db.execute("ALTER TABLE outbox ADD COLUMN deferred_since TEXT")
    db.execute("ALTER TABLE outbox ADD COLUMN failed_at TEXT")
    # Per game: the moderator's address, told when a player's mail cannot be delivered.
    db.execute("ALTER TABLE mail_games ADD COLUMN moderator_address TEXT")
    # Per address: its bounce score in the manner of Mailman 3, since when it fails, the
    # last answer of a mail server about it, and when it was marked "mail not delivered".
    db.execute(
        """
        CREATE TABLE mail_failures (
            address TEXT PRIMARY KEY NOT NULL,
            score REAL NOT NULL DEFAULT 0,
            since TEXT NOT NULL,
            last_at TEXT NOT NULL,
            last_scored_at TEXT,
            last_answer TEXT NOT NULL,
            failed_messages INTEGER NOT NULL DEFAULT 0,
            dead_since TEXT,
            told_at TEXT,
            told_dead_at TEXT
        )
        """
    )


def m013_page_folders(db: Database) -> None:
    # Per game: the folder where the judge keeps the game's viewer (GAME.html, pbem page
    # --folder), written again after every committed write. The moderator's own setting:
    # never exported.
    db["page_folders"].create({"game": str, "folder": str}, pk="game", not_null={"game", "folder"})


def m014_former_players(db: Database) -> None:
    # The addresses of people who left a seat (pbem replace), kept privately so that their
    # later mail is answered with why it is refused instead of as a stranger's. Never
    # exported; the log records only that the seat changed hands (a 'replaced' event).
    db.execute(
        """
        CREATE TABLE mail_former (
            game TEXT NOT NULL,
            player TEXT NOT NULL,
            address TEXT NOT NULL,
            until TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (game, address)
        )
        """
    )


def m015_held_answers(db: Database) -> None:
    # An answer that only confirms may wait a short while in the outbox (held_until, its
    # first send time) to travel inside the player's next message (issue 16); per game, how
    # long (seconds; null: the default, pbem.store.judge.HOLD_ANSWERS_SECONDS; 0: never).
    db.execute("ALTER TABLE outbox ADD COLUMN held_until TEXT")
    db.execute("ALTER TABLE mail_games ADD COLUMN hold_answers_seconds INTEGER")


def m017_game_heads(db: Database) -> None:
    # One row per game, so that 'pbem games' and 'pbem mail tick' read only the games that
    # matter (in play; something due) instead of every game. ``seq`` is the game's last
    # event, kept by the trigger below whatever writes the event; ``snap`` is the event the
    # cached columns were taken after (Store.put_snapshot, in the same transaction). When
    # they differ the cache says nothing (an event without a snapshot, a changed log): the
    # game is read the long way, and the partial index finds those games without a scan.
    # ``line``: the status report's listing fields as JSON (audit checks it with the rest).
    db.execute(
        """
        CREATE TABLE game_heads (
            game TEXT PRIMARY KEY,
            seq INTEGER,
            snap INTEGER,
            finished INTEGER NOT NULL DEFAULT 0,
            due TEXT,
            line TEXT
        )
        """
    )
    db.execute("CREATE INDEX game_heads_stale ON game_heads (game) WHERE snap IS NOT seq")
    db.execute("CREATE INDEX game_heads_playing ON game_heads (game) WHERE finished = 0")
    db.execute("CREATE INDEX game_heads_finished ON game_heads (game) WHERE finished = 1 AND snap IS seq")
    db.execute("CREATE INDEX game_heads_due ON game_heads (due) WHERE due IS NOT NULL")
    # 'pbem mail tick' looks ahead by the longest reminder time: found by the index
    db.execute("CREATE INDEX mail_deadlines_remind ON mail_deadlines (remind_seconds)")
    db.execute("""CREATE TRIGGER game_heads_append AFTER INSERT ON events BEGIN
        INSERT INTO game_heads (game, seq) VALUES (new.game, new.seq)
        ON CONFLICT (game) DO UPDATE SET seq = excluded.seq; END""")
    # pbem never changes or deletes an event; whoever does leaves the cache saying nothing
    for what in ("UPDATE", "DELETE"):
        db.execute(f"""CREATE TRIGGER game_heads_{what.lower()} AFTER {what} ON events BEGIN
            UPDATE game_heads SET seq = NULL WHERE game = old.game; END""")
    # the cached columns come from the snapshot at the head: without it they say nothing
    db.execute("""CREATE TRIGGER game_heads_unsnap AFTER DELETE ON snapshots BEGIN
        UPDATE game_heads SET snap = NULL WHERE game = old.game AND snap = old.seq; END""")
    db.execute("""CREATE TRIGGER game_heads_resnap AFTER UPDATE ON snapshots BEGIN
        UPDATE game_heads SET snap = NULL WHERE game = old.game AND snap = old.seq; END""")
    # the games already here: their heads, and the cache from a snapshot taken at the head
    db.execute("INSERT INTO game_heads (game, seq) SELECT game, max(seq) FROM events GROUP BY game")
    from ..protocol.snapshot import head_columns_of
    rows = db.execute("SELECT s.game, s.seq, s.state FROM snapshots s JOIN game_heads h "
                      "ON h.game = s.game AND h.seq = s.seq WHERE s.digest IS NOT NULL").fetchall()
    for game, seq, text in rows:
        columns = head_columns_of(text)
        if columns is not None:
            db.execute("UPDATE game_heads SET snap = ?, finished = ?, due = ?, line = ? WHERE game = ?",
                       [seq, *columns[:3], game])  # the listing text is m021's


def m018_outbox_held(db: Database) -> None:
    # The answers held for a player's next message are looked up at every moment that mails
    # them (pbem.store.outbox.held): by game and time, not by walking every queued row of
    # the game (a judge whose mail waits, e.g. a long ingest before a send, has many).
    db.execute("CREATE INDEX outbox_held ON outbox (game, held_until) WHERE held_until IS NOT NULL")


def m021_game_listing(db: Database) -> None:
    # ``listing``: what 'pbem games' says of the game after its name when nobody is overdue
    # (pbem.protocol.snapshot.listing), kept ready with the rest of the head row so that
    # listing 200 games in play costs a query and a line each; audit checks it with the rest
    db.execute("ALTER TABLE game_heads ADD COLUMN listing TEXT")
    # the finished games are counted from their index alone (no row read for each)
    db.execute("DROP INDEX game_heads_finished")
    db.execute("CREATE INDEX game_heads_finished ON game_heads (game, finished, snap, seq) "
               "WHERE finished = 1 AND snap IS seq")
    import json
    from ..protocol.snapshot import listing_of_line
    rows = db.execute("SELECT game, line FROM game_heads WHERE line IS NOT NULL").fetchall()
    for game, line in rows:
        try:
            fields = json.loads(line)
            text = listing_of_line(fields) if isinstance(fields, dict) else None
        except (ValueError, TypeError, KeyError, AttributeError):
            text = None  # a line changed by hand: the listing is read the long way (audit says why)
        db.execute("UPDATE game_heads SET listing = ? WHERE game = ?", [text, game])


def m022_light_snapshots(db: Database) -> None:
    # A light snapshot holds only the status report at its event (what 'pbem status' and the
    # head row need); a full one holds the whole replayed state as well. pbem writes the
    # status at every event and the state every few events (pbem.protocol.commands): a
    # game is loaded from its newest full snapshot and the events after it. Every snapshot
    # written before this migration is full.
    db.execute("ALTER TABLE snapshots ADD COLUMN full INTEGER NOT NULL DEFAULT 1")


def m023_seats_listing(db: Database) -> None:
    # 'pbem games' lists a paused game as paused and the seats the stand-in plays (the head
    # row's ``line`` and ``listing`` of a game in play hold them now): the head rows of the
    # games in play, cached without them, are left saying nothing until their next write
    db.execute("UPDATE game_heads SET snap = NULL WHERE finished = 0")


def m024_outbox_expires(db: Database) -> None:
    # A message that says nothing true after a given time (a reminder of a deadline): once
    # that time has come it is dropped, not sent, whatever held it back (a server that
    # answered 4xx, a sender that did not run); pbem.store.outbox.claim checks it.
    db.execute("ALTER TABLE outbox ADD COLUMN expires_at TEXT")


def m025_chain_checkpoints(db: Database) -> None:
    # The checkpoint of each game's chain (pbem.store.damage), kept in the game's head row,
    # which every write updates anyway (no page more to commit): ``checked`` and
    # ``checked_hash``, the last event the check before a write passed, so a new process
    # checks the events after it, not the whole log. pbem never changes, deletes or
    # re-inserts an event: whoever does through SQLite sets ``recheck``, and the next write
    # checks the chain from its first event again (the checkpoint's event must still carry
    # its hash, so a cut or a rewritten log is refused). ``checked_schema`` is the
    # schema_version the checkpoint was written under: a dropped trigger changes it.
    for column in ("checked INTEGER", "checked_hash TEXT", "checked_schema INTEGER",
                   "recheck INTEGER NOT NULL DEFAULT 0"):
        db.execute(f"ALTER TABLE game_heads ADD COLUMN {column}")
    db.execute("""CREATE TRIGGER chain_checks_insert AFTER INSERT ON events
        WHEN new.seq <= (SELECT checked FROM game_heads WHERE game = new.game) BEGIN
        UPDATE game_heads SET recheck = 1 WHERE game = new.game; END""")
    db.execute("""CREATE TRIGGER chain_checks_update AFTER UPDATE ON events BEGIN
        UPDATE game_heads SET recheck = 1 WHERE game IN (old.game, new.game); END""")
    db.execute("""CREATE TRIGGER chain_checks_delete AFTER DELETE ON events BEGIN
        UPDATE game_heads SET recheck = 1 WHERE game = old.game; END""")


MIGRATIONS: list[Callable[[Database], None]] = [
    m001_events_and_secrets,
    m002_indexes,
    m003_outbox,
    m004_judge,
    m005_snapshot_digest,
    m006_imap,
    m007_deadlines,
    m008_outbox_redact,
    m010_mail_moments,
    m010b_plain_mail,
    m011_snapshot_rounds,
    m012_undeliverable,
    m013_page_folders,
    m014_former_players,
    m015_held_answers,
    m017_game_heads,
    m018_outbox_held,  # after m021 on a database main migrated first: they touch different tables
    m021_game_listing,
    m022_light_snapshots,
    m023_seats_listing,
    m024_outbox_expires,
    m025_chain_checkpoints,
]


def is_current(conn: sqlite3.Connection) -> bool:
    """True when every known migration is recorded (checked without sqlite-utils)."""
    try:
        names = [row[0] for row in conn.execute(f"select name from {MIGRATIONS_TABLE} order by rowid")]
    except sqlite3.OperationalError:  # no bookkeeping table yet: a new database
        return False
    # in any order: parallel branches' migrations may have been applied in another order
    return sorted(names) == sorted(migration.__name__ for migration in MIGRATIONS)


def applied_migrations(db: Database) -> list[str]:
    if not db[MIGRATIONS_TABLE].exists():
        return []
    return [row["name"] for row in db.query(f"select name from {MIGRATIONS_TABLE} order by rowid")]


@contextlib.contextmanager
def _immediate(db: Database) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.conn.in_transaction:
            db.execute("ROLLBACK")
        raise


def migrate(db: Database) -> list[str]:
    """Apply pending migrations; return the names applied now.

    The connection must be in autocommit mode. Each migration runs under ``BEGIN
    IMMEDIATE`` and re-checks whether it is still pending once it holds the write lock, so
    two processes opening a new database at the same moment do not both apply it.
    """
    # Even creating the bookkeeping table takes the write lock first: a bare CREATE racing
    # another process's first open can fail at once with "database is locked".
    with _immediate(db):
        db[MIGRATIONS_TABLE].create(
            {"name": str, "applied_at": str},
            pk="name",
            not_null={"name", "applied_at"},
            if_not_exists=True,
        )
        known = [migration.__name__ for migration in MIGRATIONS]
        unknown = [name for name in applied_migrations(db) if name not in known]
    if unknown:
        raise StoreError(
            f"this database was migrated by a newer pbem (unknown migration {unknown[0]}); "
            "upgrade pbem to open it"
        )
    applied_now = []
    for migration in MIGRATIONS:
        name = migration.__name__
        with _immediate(db):
            if name not in applied_migrations(db):
                migration(db)
                db[MIGRATIONS_TABLE].insert({"name": name, "applied_at": utc_now()})
                applied_now.append(name)
    return applied_now
