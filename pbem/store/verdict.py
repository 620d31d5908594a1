"""What an audit proves with what the public and the players kept, and its verdict line.

The checks of docs/protocol.md §13 that need no rules: the published seed hash, the
published chain heads (each must be a prefix of the log) and the players' receipts (§12).
They run after the chain check and before the replay; the first failure is the verdict's
reason. ``verdict`` turns a finished report into OK / INCOMPLETE / FAIL and its one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol.errors import BadAuditInput
from ..protocol.receipts import contradiction, dropped, short

OK, INCOMPLETE, FAIL = "OK", "INCOMPLETE", "FAIL"
EXIT_CODES = {OK: 0, FAIL: 1, INCOMPLETE: 3}


@dataclass
class Published:
    """What the auditor was given besides the log."""

    seed_hash: str | None = None
    judge_key: str | None = None  # the judge key published at pbem new, from --judge-key
    heads: list = field(default_factory=list)  # (seq, hash or its first 8+ hex characters), from --head
    head_files: list = field(default_factory=list)  # (name, bytes), from --heads
    receipts: list = field(default_factory=list)  # receipt bodies, already checked for form and signature


class PublishedMismatch(Exception):
    def __init__(self, seq: int | None, reason: str):
        super().__init__(reason)
        self.seq, self.reason = seq, reason


def check_published(published: Published | None, game: str, rows: list[dict], report: dict) -> None:
    """Seed hash, judge key, heads, receipts, in that order; raise PublishedMismatch at the
    first contradiction, BadAuditInput for what cannot be used (a receipt not signed by the
    judge key: bad evidence, never a FAIL). Counts go into ``report``."""
    published = published or Published()
    created = rows[0]["data"] if rows and rows[0]["kind"] == "created" else {}
    report["seed_hash_checked"] = published.seed_hash is not None
    if published.seed_hash is not None:
        logged = created.get("seed_hash") if isinstance(created.get("seed_hash"), str) else ""
        if logged != published.seed_hash:
            raise PublishedMismatch(1, f"the seed hash in created is {short(logged)}, not the published "
                                       f"{short(published.seed_hash)}: the game was dealt from another seed")
    judge_key = created.get("judge_key") if isinstance(created.get("judge_key"), str) else None
    report["judge_key_checked"] = published.judge_key is not None
    if published.judge_key is not None and not _same_key(judge_key, published.judge_key):
        logged = f"judge key {_fingerprint(judge_key)}" if judge_key is not None else "no judge key"
        raise PublishedMismatch(1, f"created names {logged}, not the published judge key "
                                   f"{_fingerprint(published.judge_key)}: the log is not the game the judge announced")
    heads = list(published.heads)
    for name, raw in published.head_files:
        from ..protocol.heads import NoHeads, heads_in_file
        try:
            heads += heads_in_file(raw, game)
        except NoHeads as exc:
            raise BadAuditInput(f"{name}: {exc}") from None
    hashes = [row["hash"] for row in rows]
    distinct = list(dict.fromkeys(heads))
    for seq, digest in distinct:
        _check_head(seq, digest, hashes)
    report["heads_checked"] = len(distinct)
    timed = 0
    for name, raw in published.head_files:  # each mail's own time, witnessed by the servers it passed
        from ..protocol.heads import witnessed_mails
        for mail in witnessed_mails(raw, game, name.replace("\\", "/").rsplit("/", 1)[-1]):  # the file's own name
            _check_time(mail, rows)
            timed += 1
    if timed:
        report["mails_timed"] = timed
    report["receipts_possible"] = judge_key is not None
    for number, body in enumerate(published.receipts, start=1):
        if body["game"] != game:
            raise BadAuditInput(f"receipt {number} is for game {body['game']}, not {game}")
        _check_signer(number, body, judge_key, published.judge_key)
        # signed by the log's judge key (the same key bytes), so only the events can disagree
        reason = contradiction(number, body, body["judge_key"], hashes)
        if reason is not None:
            raise PublishedMismatch(body["seq"], reason)
        lie = dropped(number, body, rows)  # a reveal held early, then its player defaulted
        if lie is not None:
            raise PublishedMismatch(*lie)
    report["receipts_checked"] = len(published.receipts)


def _check_signer(number: int, body: dict, logged: str | None, published: str | None) -> None:
    """A receipt signed by another key than the judge's is bad evidence, not a lie of the
    log: with --judge-key it proves nothing; without, the audit cannot tell a forged
    receipt from a forged log (docs/protocol.md §12)."""
    signer = _fingerprint(body["judge_key"])
    if published is not None:
        if not _same_key(body["judge_key"], published):
            raise BadAuditInput(f"receipt {number} is signed by judge key {signer}, not the published judge key "
                                f"{_fingerprint(published)}: it proves nothing about this log")
    elif not _same_key(body["judge_key"], logged):
        names = f"judge key {_fingerprint(logged)}" if logged is not None else "no judge key"
        raise BadAuditInput(f"receipt {number} is signed by judge key {signer}, but this log's created names "
                            f"{names}: without --judge-key the audit cannot tell a forged receipt from a forged "
                            f"log; give the judge key published at pbem new")


def _same_key(one: str | None, other: str | None) -> bool:
    """Whether two public key texts name the same 32 key bytes."""
    from ..protocol.signing import KeyFormatError, parse_public_key
    try:
        return one is not None and other is not None and parse_public_key(one) == parse_public_key(other)
    except KeyFormatError:
        return False


def _fingerprint(text: str) -> str:
    from ..protocol.signing import KeyFormatError, fingerprint
    try:
        return fingerprint(text)
    except KeyFormatError:
        return "(not a key)"


def _check_head(seq: int, digest: str, hashes: list[str]) -> None:
    from ..protocol.canonical import GENESIS_HASH
    if seq == 0:
        if not GENESIS_HASH.startswith(digest):
            raise PublishedMismatch(0, f"published head event 0 {short(digest)} is not a prefix of this log: "
                                       f"its event 0 is {short(GENESIS_HASH)}")
        return
    if seq > len(hashes):
        raise PublishedMismatch(len(hashes) + 1, f"published head event {seq} {short(digest)} is not a prefix of "
                                                 f"this log: the log stops at event {len(hashes)}")
    if not hashes[seq - 1].startswith(digest):
        raise PublishedMismatch(seq, f"published head event {seq} {short(digest)} is not a prefix of this log: "
                                     f"its event {seq} is {short(hashes[seq - 1])}")


def _check_time(mail: dict, rows: list[dict]) -> None:
    """No event a mail covers is stamped later than the mail was witnessed, beyond the
    tolerance for clock skew (docs/protocol.md §15): else the judge's clock ran ahead."""
    from ..protocol.heads import TOLERANCE
    from ..protocol.times import shift
    latest = shift(mail["at"], TOLERANCE)
    for row in rows[:mail["covers"]]:
        at = row.get("at")
        if isinstance(at, str) and at > latest:
            raise PublishedMismatch(row["seq"], f"event {row['seq']} ({row['kind']}) is stamped {at}, but "
                                                f"{mail['mail']} carried head event {mail['covers']} at {mail['at']} "
                                                f"({mail['by']}), more than {TOLERANCE // 60} minutes before: the "
                                                f"judge's clock ran ahead")


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else f"{n} {many}"


def _proven(report: dict) -> str:
    seed = ("seed hash matches the published one" if report.get("seed_hash_checked")
            else "seed hash not compared (none given)")
    seed += (", judge key matches the published one" if report.get("judge_key_checked")
             else ", judge key not compared (none given)")
    n = report.get("heads_checked", 0)
    heads = ("no published heads given" if not n
             else _plural(n, "1 published head is a prefix", "published heads are prefixes"))
    if report.get("mails_timed"):
        heads += (", no event stamped after a mail that carried it ("
                  + _plural(report["mails_timed"], "1 mail timed", "mails timed") + ")")
    receipts = (_plural(report.get("receipts_checked", 0), "1 receipt checked", "receipts checked")
                if report.get("receipts_possible") else "receipts not possible (no judge key in created)")
    return f"{seed}, {heads}, {receipts}"


def _discretion(report: dict) -> str:
    """The forced and discretionary acts of the log (protocol.discretion.tally)."""
    if not report.get("discretion"):
        return ""
    from ..protocol.discretion import tally_text
    return f"; the judge's discretion: {tally_text(report['discretion'])}"


def verdict(report: dict, rows: list[dict] | None, private_seed: bool = False) -> dict:
    """Add ``verdict`` and ``verdict_line`` to a finished report (and return it)."""
    if not report["ok"]:
        report.update(verdict=FAIL, verdict_line=f"{FAIL}: {report['problem']}")
        return report
    rows = rows or []
    if rows and rows[-1]["kind"] == "seed_revealed":
        report.update(verdict=OK, verdict_line=f"{OK}: complete, {_proven(report)}{_discretion(report)}")
        return report
    started = next((row["seq"] for row in rows if row["kind"] == "started"), None)
    held = sum(1 for row in rows if row["kind"] == "reveal_held")
    if started is None:
        unchecked = "no draws yet"
    elif private_seed:
        unchecked = f"draws from event {started} on were checked with the moderator's private seed only"
    else:
        also = f" and {_plural(held, '1 held reveal', 'held reveals')}" if held else ""
        unchecked = f"draws from event {started} on{also} are unchecked"
    last = rows[-1]["seq"] if rows else 0
    report.update(verdict=INCOMPLETE, verdict_line=(
        f"{INCOMPLETE}: the log stops at event {last} before the seed is revealed; {unchecked}; {_proven(report)}"
        f"{_discretion(report)}"))
    return report
