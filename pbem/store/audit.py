"""Audit: check a game's log as an outsider would, from the store or an exported file.

Checks, in order: the hash chain (gapless, linked, every hash recomputed; optionally up to a
published head); then a replay of every event under the protocol's rules, which checks
commitment forms, that every reveal matches its commitment, signatures against registered
keys, and, once the seed is known (revealed in the log, or the moderator's own), every roll
and draw, every default and every applied choice. The held reveals of anonymous steps come
from the log's disclosure (an export) or the store's private entries (the moderator's own).
"""

from __future__ import annotations

from ..protocol.errors import AuditFailure, Refused
from ..protocol.session import Session
from ..text import quote


def _seed_in(events) -> bytes | None:
    """The seed the log reveals, when it is the one ``created`` committed to. A seed that is
    not is no seed to replay with: the replay then fails at its ``seed_revealed`` event, the
    event that is wrong (docs/protocol.md §2), not at ``created``."""
    import hashlib
    committed = events[0]["data"].get("seed_hash") if events and isinstance(events[0].get("data"), dict) else None
    for ev in events:
        if ev["kind"] == "seed_revealed":
            try:
                seed = bytes.fromhex(ev["data"]["seed"])
            except (TypeError, ValueError, KeyError):
                return None
            return seed if hashlib.sha256(seed).hexdigest() == committed else None
    return None


def _audit(game: str, rows: list[dict], seed: bytes | None, published=None,
           keep: list | None = None, chain_checked: bool = False, held=None, after_each=None) -> dict:
    from .chain import verify_chain
    from .errors import ChainError
    from .verdict import PublishedMismatch, check_published
    report = {"game": game, "events": len(rows), "ok": False, "problem": None, "bad_seq": None,
              "chain": False, "replay": None, "head": None}
    try:
        if not chain_checked:  # the store has already checked its rows
            verify_chain(rows)
        report["chain"] = True
        if rows:
            report["head"] = {"seq": rows[-1]["seq"], "hash": rows[-1]["hash"]}
        check_published(published, game, rows, report)  # what the public and the players kept
        seed = seed or _seed_in(rows)
        session = Session.replay(game, rows, seed, audit=True, held=held, after_each=after_each)
        if keep is not None:
            keep.append(session)
        report["replay"] = "full" if session.state is not None else (
            "public (seed not revealed: rolls and draws not checked)")
        report["seed_revealed"] = session.seed_revealed
        held = _held_count(session, rows)
        if held:
            report["held_reveals"] = held
        from ..protocol.discretion import tally
        discretion = tally(rows, _ended_early(session))
        if discretion:
            report["discretion"] = discretion
        from ..protocol.discretion import keys_at_start
        start_keys = keys_at_start(rows)
        if start_keys:
            from ..protocol.signing import fingerprint
            report["keys_at_start"] = {p: fingerprint(k) for p, k in start_keys.items()}
        report["finished"] = session.finished
        if session.finished:
            result = session.rules.result(session.state)
            report["scores"] = {p: s["total"] for p, s in result["scores"].items()}
        report["ok"] = True
    except PublishedMismatch as exc:
        report.update(problem=exc.reason, bad_seq=exc.seq)
    except ChainError as exc:
        report.update(problem=str(exc) if str(exc).startswith("event") else f"event {exc.seq}: {exc}", bad_seq=exc.seq)
    except AuditFailure as exc:
        report.update(problem=str(exc), bad_seq=exc.seq)
    except (KeyError, TypeError, ValueError) as exc:  # malformed event data
        report.update(problem=f"malformed event data: {exc}")
    return report


def _ended_early(session) -> dict | None:
    """The round at which the judge revealed the seed before the game was over, if it did."""
    if not session.seed_revealed or session.finished:
        return None
    from ..games import round_word
    return {"round": getattr(session.state, "round", None), "round_word": round_word(session.meta.get("game_type"))}


def _held_count(session, rows) -> dict | None:
    """How many reveals the log shows as held, and whether they are disclosed."""
    count = sum(1 for r in rows if r["kind"] == "reveal_held")
    return {"count": count, "disclosed": session.disclosed} if count else None


def audit_store(store, game: str, published=None) -> dict:
    """Audit a game of the store (the moderator's own: with the private seed); the report
    carries its verdict (docs/protocol.md §13)."""
    from .verdict import verdict
    count = store.count(game)
    if not count:
        raise Refused(f"no game {quote(game)} in this database")
    # the body column is what was hashed: check the stored rows against it first (a damaged
    # body could not even be read as an event)
    from .damage import chain_rows
    from .errors import ChainError
    rows = chain_rows(store.conn, game)  # one pass when the chain is sound
    if rows is None:
        try:
            store.verify(game)  # what is wrong, in the chain check's words
        except ChainError as exc:
            return verdict({"game": game, "events": count, "ok": False, "chain": False, "replay": None,
                            "problem": str(exc) if str(exc).startswith("event") else f"event {exc.seq}: {exc}",
                            "bad_seq": exc.seq, "head": None}, None)
        rows = [e.export_dict() for e in store.events(game)]
    secret = store.get_secret(game, "server_seed")
    seed = bytes.fromhex(secret) if secret else None
    report = _audit_store_rows(store, game, rows, seed, published)
    return verdict(report, rows, private_seed=seed is not None)


def _audit_store_rows(store, game: str, rows: list[dict], seed, published) -> dict:
    replayed: list = []
    from ..protocol.loading import held_source
    held = held_source(store, game)
    snapshots = store.all_snapshots(game) if seed is not None else []
    fresh = _SnapshotCheck(snapshots, rows, store.head_row(game) if seed is not None else None)
    report = _audit(game, rows, seed, published, replayed, chain_checked=True, held=held,
                    after_each=fresh if fresh.wanted else None)
    if report["ok"] and (snapshots or fresh.wanted):
        # each snapshot is a cache of the replay: it must agree with the replay at its event
        problem = fresh.first_problem()
        if problem is not None:
            bad, reason = problem
            report.update(ok=False, bad_seq=bad, problem=f"event {bad}: {reason}")
            return report
        if snapshots:
            report["snapshot"] = snapshots[-1].seq
    return report


class _SnapshotCheck:
    """Called after every replayed event: keeps the expected snapshot at each event a
    snapshot was taken after, then tells the first snapshot that differs (or cannot be
    read, or fails its own digest). A full snapshot must equal the replayed state and
    status report; a light one, the status report alone."""

    def __init__(self, snapshots: list, rows: list[dict], head_row: tuple | None = None):
        from ..protocol.snapshot import UnreadableSnapshot, light_status, read_snapshot
        self.rows = rows
        self.problems: dict[int, str] = {}
        self.cached: dict[int, dict] = {}
        self.full: dict[int, bool] = {}
        for snap in snapshots:
            if snap.problem is not None:
                self.problems.setdefault(snap.problem[0], snap.problem[1])
                continue
            try:
                data = read_snapshot(snap.text)
                if data is not None and not snap.full:
                    light_status(snap.text)  # holds the status report and nothing else
            except UnreadableSnapshot as exc:
                self.problems[snap.seq] = f"the cached snapshot cannot be read: {exc}"
                continue
            if data is not None:  # another layout version is never read: nothing to compare
                self.cached[snap.seq] = data
                self.full[snap.seq] = snap.full
        self.wanted = set(self.cached)
        self.differs: list[int] = []
        # the game's head row (game_heads) caches a few fields of the status at the head
        self.head_row = head_row if head_row is not None and head_row[0] == len(rows) else None
        if self.head_row is not None:
            self.wanted.add(self.head_row[0])
        self.head_differs = False

    def __call__(self, session, seq) -> None:
        if seq not in self.wanted:
            return
        import json
        from ..protocol.cache import snapshot_data
        expected = snapshot_data(session, (seq, self.rows[seq - 1]["hash"]) if seq else (0, ""),
                                 full=self.full.get(seq, False))
        if seq in self.cached and self.cached[seq] != json.loads(json.dumps(expected)):
            self.differs.append(seq)
        if self.head_row is not None and seq == self.head_row[0]:
            from ..protocol.snapshot import head_columns
            self.head_differs = tuple(self.head_row[1:]) != head_columns(json.loads(json.dumps(expected["status"])))

    def first_problem(self) -> tuple[int, str] | None:
        found = dict(self.problems)
        for seq in self.differs:
            found.setdefault(seq, "the cached snapshot differs from a fresh replay of the log")
        if self.head_differs:
            found.setdefault(self.head_row[0], "the game's cached head row (what 'pbem games' lists) differs "
                                               "from a fresh replay of the log")
        return min(found.items()) if found else None


def audit_file(text: str, published=None) -> dict:
    """Audit an exported log as an outsider, with what the public and the players kept;
    the report carries its verdict (docs/protocol.md §13)."""
    from .errors import StoreError
    from .export import read_export
    from .verdict import verdict
    try:
        rows = read_export(text)
    except StoreError as exc:
        return verdict(_unreadable_file(text, exc), None)
    if not rows:
        return verdict({"game": None, "events": 0, "ok": False, "chain": False, "replay": None,
                        "problem": "the file holds no events", "bad_seq": None, "head": None}, None)
    return verdict(_audit(rows[0]["game"], rows, None, published), rows)


def _unreadable_file(text: str, exc: Exception) -> dict:
    """A line of the file cannot be read as an event: when every line before it reads and
    chains from the start, that line holds the first bad event, so name its number."""
    import re
    from .chain import verify_chain
    from .errors import ChainError, StoreError
    from .export import read_export
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


def report_text(report: dict) -> str:
    """The verdict line, then (unless it failed) what was checked."""
    if not report["ok"]:
        return report["verdict_line"]
    lines = [report["verdict_line"],
             f"checked: game {report['game']}, {report['events']} events, chain intact up to "
             f"event {report['head']['seq']} {report['head']['hash']}",
             f"replay: {report['replay']}"]
    held = report.get("held_reveals")
    if held:
        lines.append(f"held reveals (anonymous steps): {held['count']}, "
                     + ("each checked against its commitment and its step's digest (disclosed)" if held["disclosed"]
                        else "order checked; their contents are disclosed and checked at the end"))
    if report.get("discretion"):
        from ..protocol.discretion import tally_text
        lines.append(f"the judge's discretion, each logged with who asked and why: {tally_text(report['discretion'])}")
    if report.get("keys_at_start"):
        lines.append("seat keys at the start (each player compares their own key's fingerprint, as pbem keygen "
                     "printed it): " + ", ".join(f"{p} {f}" for p, f in report["keys_at_start"].items()))
    if report.get("scores"):
        lines.append("final scores: " + ", ".join(f"{p} {s}" for p, s in report["scores"].items()))
    return "\n".join(lines)
