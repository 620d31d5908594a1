"""Audit: check a game's log as an outsider would, from the store or an exported file.

Checks, in order: the hash chain (gapless, linked, every hash recomputed; optionally up to a
published head); then a replay of every event under the protocol's rules, which checks
commitment forms, that every reveal matches its commitment, signatures against registered
keys, and, once the seed is known (revealed in the log, or the moderator's own), every roll
and draw, every default and every applied choice.
"""

from __future__ import annotations

import hashlib

from .errors import AuditFailure, Refused
from .session import Session


def _seed_in(events) -> bytes | None:
    for ev in events:
        if ev["kind"] == "seed_revealed":
            return bytes.fromhex(ev["data"]["seed"])
    return None


def _audit(game: str, rows: list[dict], seed: bytes | None, expected_head,
           keep: list | None = None, chain_checked: bool = False) -> dict:
    from ..store import ChainError, verify_chain
    report = {"game": game, "events": len(rows), "ok": False, "problem": None, "bad_seq": None,
              "chain": False, "replay": None, "head": None}
    try:
        if not chain_checked:  # the store has already checked its rows
            verify_chain(rows, expected_head)
        report["chain"] = True
        if rows:
            report["head"] = {"seq": rows[-1]["seq"], "hash": rows[-1]["hash"]}
        seed = seed or _seed_in(rows)
        session = Session.replay(game, rows, seed, audit=True)
        if keep is not None:
            keep.append(session)
        report["replay"] = "full" if session.state is not None else (
            "public (seed not revealed: rolls and draws not checked)")
        report["seed_revealed"] = session.seed_revealed
        report["finished"] = session.finished
        if session.finished:
            result = session.rules.result(session.state)
            report["scores"] = {p: s["total"] for p, s in result["scores"].items()}
        report["ok"] = True
    except ChainError as exc:
        report.update(problem=str(exc) if str(exc).startswith("event") else f"event {exc.seq}: {exc}", bad_seq=exc.seq)
    except AuditFailure as exc:
        report.update(problem=str(exc), bad_seq=exc.seq)
    except (KeyError, TypeError, ValueError) as exc:  # malformed event data
        report.update(problem=f"malformed event data: {exc}")
    return report


def audit_store(store, game: str, expected_head=None) -> dict:
    count = store.count(game)
    if not count:
        raise Refused(f"no game {game!r} in this database")
    # the body column is what was hashed: check the stored rows against it first (a damaged
    # body could not even be read as an event)
    from ..store import ChainError
    try:
        store.verify(game, expected_head)
    except ChainError as exc:
        return {"game": game, "events": count, "ok": False, "chain": False, "replay": None,
                "problem": str(exc) if str(exc).startswith("event") else f"event {exc.seq}: {exc}",
                "bad_seq": exc.seq, "head": None}
    rows = [e.export_dict() for e in store.events(game)]
    secret = store.get_secret(game, "server_seed")
    seed = bytes.fromhex(secret) if secret else None
    replayed: list = []
    report = _audit(game, rows, seed, expected_head, replayed, chain_checked=True)
    snapshot = store.latest_snapshot(game)
    if report["ok"] and snapshot is not None and seed is not None:
        # the snapshot is a cache of the replay: it must agree with a fresh one
        import json
        seq, text = snapshot
        if seq > len(rows):  # the moderator's own cache saw events that are gone now
            report.update(ok=False, bad_seq=len(rows) + 1,
                          problem=f"event {len(rows) + 1}: missing (the log ends at event {len(rows)}, "
                                  f"but its snapshot was taken at event {seq})")
            return report
        from .commands import snapshot_data
        fresh = replayed[0] if seq == len(rows) else Session.replay(game, rows[:seq], seed)
        expected = snapshot_data(fresh, (seq, rows[seq - 1]["hash"]))
        if json.loads(text) != json.loads(json.dumps(expected)):
            report.update(ok=False, bad_seq=seq,
                          problem=f"event {seq}: the cached snapshot differs from a fresh replay of the log")
        report["snapshot"] = seq
    return report


def audit_file(text: str, expected_head=None) -> dict:
    from ..store import StoreError, read_export
    try:
        rows = read_export(text)
    except StoreError as exc:
        return _unreadable_file(text, exc, expected_head)
    if not rows:
        return {"game": None, "events": 0, "ok": False, "chain": False, "replay": None,
                "problem": "the file holds no events", "bad_seq": None, "head": None}
    return _audit(rows[0]["game"], rows, None, expected_head)


def _unreadable_file(text: str, exc: Exception, expected_head) -> dict:
    """A line of the file cannot be read as an event: when every line before it reads and
    chains from the start, that line holds the first bad event, so name its number."""
    import re
    from ..store import ChainError, StoreError, read_export, verify_chain
    report = {"game": None, "events": 0, "ok": False, "chain": False, "replay": None,
              "problem": str(exc), "bad_seq": None, "head": None}
    found = re.match(r"line (\d+) ", str(exc))
    if found:
        number = int(found.group(1))
        try:
            before = read_export("".join(line + "\n" for line in text.split("\n")[:number - 1]))
            verify_chain(before)
        except ChainError as earlier:
            report.update(problem=str(earlier), bad_seq=earlier.seq)
            return report
        except StoreError:
            return report
        report.update(problem=f"event {number}: {exc}", bad_seq=number, events=len(before),
                      game=before[0]["game"] if before else None)
    return report


def replay_file(text: str) -> tuple[Session, tuple[int, str]]:
    """Replay an exported game (its seed must be revealed) with every event's effects."""
    from ..store import read_export, verify_chain
    rows = read_export(text)
    if not rows:
        raise Refused("the file holds no events")
    verify_chain(rows)
    seed = _seed_in(rows)
    if seed is None:
        raise Refused("this export has no revealed seed, so rolls cannot be replayed; "
                      "ask the moderator for an export after 'pbem reveal-seed' (or audit it with 'pbem audit --file')")
    session = Session.replay(rows[0]["game"], rows, seed, collect=True, audit=True)
    return session, (rows[-1]["seq"], rows[-1]["hash"])


def report_text(report: dict) -> str:
    if not report["ok"]:
        where = f"game {report['game']}" if report.get("game") else "this log"
        return f"AUDIT FAILED for {where}: {report['problem']}"
    lines = [f"audit OK: game {report['game']}, {report['events']} events, chain intact up to "
             f"event {report['head']['seq']} {report['head']['hash']}",
             f"replay: {report['replay']}"]
    if report.get("scores"):
        lines.append("final scores: " + ", ".join(f"{p} {s}" for p, s in report["scores"].items()))
    return "\n".join(lines)


def seed_matches(seed_hex: str, seed_hash: str) -> bool:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == seed_hash
