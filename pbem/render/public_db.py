"""The public record as a SQLite database, ready to browse with Datasette
(``pbem export GAME --format sqlite -o public.db``).

It holds the public record and nothing else: the events exactly as ``pbem export`` has
them (and so the seed only once ``seed_revealed`` is in the log), tables read from those
events, and the rounds or turns and votes as the public summaries show them (each built
through the game's public view). Never the store's ``secrets`` (seed, moderator-made salts,
held votes), its snapshots, outbox, mail tables, addresses or passwords.

Tables: ``game`` (one row), ``players``, ``events``, ``commitments``, ``reveals`` (public
reveals, held reveals as they are announced, and disclosed ones), ``rounds`` (a round of
Tortuga or a turn of Tortuga 1667: its number and the chain head its summary published),
``votes`` (Tortuga 1667: shown cards and outcome; who played which card once disclosed),
``results`` (once the game is over). Views: ``decisions``, ``defaults``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..protocol.errors import Refused

SCHEMA = """
CREATE TABLE game (game TEXT PRIMARY KEY, game_type TEXT, players TEXT, seed_hash TEXT, judge_key TEXT,
                   require_signatures INTEGER, deadline_seconds INTEGER, events INTEGER, head_seq INTEGER,
                   head_hash TEXT, seed_revealed TEXT, finished INTEGER);
CREATE TABLE players (seat INTEGER PRIMARY KEY, player TEXT NOT NULL, public_key TEXT, client_seed TEXT);
CREATE TABLE events (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, player TEXT, round INTEGER,
                     step INTEGER, data TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX events_kind ON events (kind);
CREATE TABLE commitments (seq INTEGER PRIMARY KEY REFERENCES events(seq), player TEXT, round INTEGER,
                          step INTEGER, commitment TEXT, made_by TEXT, signed INTEGER);
CREATE TABLE reveals (id INTEGER PRIMARY KEY, seq INTEGER REFERENCES events(seq), how TEXT, player TEXT,
                      round INTEGER, step INTEGER, choice TEXT, salt TEXT, applied TEXT, illegal TEXT,
                      illegal_code TEXT, made_by TEXT);
CREATE TABLE rounds (number INTEGER PRIMARY KEY, unit TEXT, complete INTEGER, head_seq INTEGER, head_hash TEXT);
CREATE TABLE votes (vote INTEGER PRIMARY KEY, turn INTEGER, kind TEXT, caller TEXT, voters TEXT,
                    cards_shown TEXT, outcome TEXT, played TEXT);
CREATE TABLE results (player TEXT PRIMARY KEY, total INTEGER, winner INTEGER);
CREATE VIEW decisions AS SELECT seq, at, player, round, step, json_extract(data, '$.applied') AS applied
    FROM events WHERE kind = 'decide';
CREATE VIEW defaults AS SELECT seq, at, player, round, step, json_extract(data, '$.kind') AS request,
    json_extract(data, '$.reason') AS reason, json_extract(data, '$.choice') AS choice
    FROM events WHERE kind = 'default';
"""


def write_store_game(store, game: str, path: Path) -> int:
    """Write the public database of a game in the moderator's database; the number of events."""
    from . import record
    rec = record.from_store(store, game)
    return write(rec, [e.export_dict() for e in store.events(game)], path)


def write(rec, rows: list[dict], path: Path) -> int:
    if not rows:
        raise Refused(f"no events for game {rec.game_id}")
    path = Path(path)
    temp = path.with_name(f".{path.name}.partial")
    if temp.exists():
        temp.unlink()
    conn = sqlite3.connect(temp)
    try:
        with conn:
            conn.executescript(SCHEMA)
            _fill(conn, rec, rows)
        conn.close()
        temp.replace(path)
    except BaseException:
        conn.close()
        if temp.exists():
            temp.unlink()
        raise
    return len(rows)


def _fill(conn, rec, rows: list[dict]) -> None:
    created = rows[0]["data"]
    revealed = next((r["data"]["seed"] for r in rows if r["kind"] == "seed_revealed"), None)
    conn.execute("INSERT INTO game VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                 (rec.game_id, created.get("game_type"), json.dumps(created.get("players")), created.get("seed_hash"),
                  created.get("judge_key"), int(bool(created.get("require_signatures"))), created.get("deadline_seconds"),
                  len(rows), rows[-1]["seq"], rows[-1]["hash"], revealed, int(rec.finished)))
    keys, seeds = dict(created.get("keys") or {}), {}
    for row in rows:
        d = row["data"]
        if row["kind"] == "key":
            keys[d["player"]] = d["public_key"]
        elif row["kind"] == "client_seed":
            seeds[d["player"]] = d["seed"]
    conn.executemany("INSERT INTO players VALUES (?,?,?,?)",
                     [(i + 1, p, keys.get(p), seeds.get(p)) for i, p in enumerate(created.get("players", []))])
    for row in rows:
        d = row["data"]
        conn.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)",
                     (row["seq"], row["at"], row["kind"], d.get("player"), d.get("round"), d.get("step"),
                      json.dumps(d, ensure_ascii=False, sort_keys=True), row["prev_hash"], row["hash"]))
        if row["kind"] == "commit":
            conn.execute("INSERT INTO commitments VALUES (?,?,?,?,?,?,?)",
                         (row["seq"], d["player"], d["round"], d["step"], d["commitment"], d.get("by", "player"),
                          int("signature" in d)))
        elif row["kind"] == "reveal":
            conn.execute("INSERT INTO reveals (seq, how, player, round, step, choice, salt, applied, illegal, illegal_code, "
                         "made_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         (row["seq"], "public", d["player"], d["round"], d["step"], d["choice"], d["salt"],
                          d.get("applied"), d.get("illegal"), d.get("illegal_code"), d.get("by")))
        elif row["kind"] == "reveal_held":  # who revealed, and when: what stays with the judge
            conn.execute("INSERT INTO reveals (seq, how, player, round, step, made_by) VALUES (?,?,?,?,?,?)",
                         (row["seq"], "held", d["player"], d["round"], d["step"], d.get("by")))
        elif row["kind"] == "disclosed":
            for entry in d["steps"]:
                for player, r in entry["reveals"].items():
                    conn.execute("INSERT INTO reveals (seq, how, player, round, step, choice, salt, applied, illegal, "
                                 "illegal_code, made_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                 (row["seq"], "disclosed default" if r.get("default") else "disclosed", player,
                                  entry["round"], entry["step"], r.get("choice"), r.get("salt"), r.get("applied"),
                                  r.get("illegal"), r.get("illegal_code"), r.get("by")))
    unit = "turn" if rec.meta.get("game_type") == "tortuga1667" else "round"
    conn.executemany("INSERT INTO rounds VALUES (?,?,?,?,?)",
                     [(r.number, unit, int(r.complete), r.head[0] if r.head else None, r.head[1] if r.head else None)
                      for r in rec.rounds])
    if rec.meta.get("game_type") == "tortuga1667":
        from .viewer import votes
        for number, v in enumerate(votes(rec), start=1):
            conn.execute("INSERT INTO votes VALUES (?,?,?,?,?,?,?,?)",
                         (number, v["turn"], v["kind"], v["caller"], json.dumps(v["voters"]), json.dumps(v["cards"]),
                          v["outcome"], json.dumps(v["played"]) if v["played"] is not None else None))
    if rec.finished:
        result = rec.session.rules.result(rec.session.state)
        winners = set(result.get("winners") or [])
        conn.executemany("INSERT INTO results VALUES (?,?,?)",
                         [(p, s.get("total"), int(p in winners)) for p, s in result["scores"].items()])
