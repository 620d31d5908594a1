"""What the audit proves against a dishonest judge (docs/protocol.md §12-§14).

Finished Tortuga and Tortuga 1667 games are played by bots through the real commands, with
the judge's discretion used on the way (a choice sealed by the moderator, a forced NMR, a
withheld reveal defaulted by force). The public keeps the seed hash and the head of every
summary mailed; each player keeps the receipts of their submissions. Each lie below is an
altered copy of the export, re-chained so that the chain itself is consistent; each is
caught with its one-line reason by what the public kept, or, for what only a player can see,
by that player's receipts.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from pbem.protocol import commands, loading
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.heads import heads_in_text
from pbem.protocol.receipts import SECRET_NAME, issue, make_body, read_receipts, receipt_block
from pbem.protocol.times import shift
from pbem.store import Store, audit, export_lines
from pbem.store.verdict import Published

T0 = "2026-03-01T10:00:00Z"


class Clock:
    """Time as a parameter: every event one minute after the one before."""

    def __init__(self):
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return shift(T0, 60 * self.n)


def _drive(store, gid: str, clock: Clock, specials: dict) -> dict:
    """Bots play ``gid`` to its end. ``specials`` maps (the n-th sealed step, from 1) to
    (player index among those the step waits for, what): "moderator" (the judge seals a
    choice sent by mail), "nmr" (no commitment, defaulted by force) or "withhold" (commits,
    never reveals, defaulted by force). Returns the summaries mailed and every receipt."""
    from pbem.render import record, summary
    session = loading.load(store, gid)
    bots = {p: session.rules.bot(f"{gid}/{p}", "greedy" if i % 2 == 0 else "random")
            for i, p in enumerate(session.players)}
    mailed, receipts, steps, seen = [], {}, 0, session.state.round

    def submit(player, action):
        before = store.head(gid)[0]
        after = action()
        for block in issue(store, gid, before, [player]):
            receipts.setdefault(player, []).append(block)
        return after

    while not session.finished:
        step = session.sealed
        if step is not None:
            steps += 1
            odd = {step.waiting[i]: what for i, what in specials.get(steps, []) if i < len(step.waiting)}
            held = {}
            for p in step.owes_commit():
                what = odd.get(p)
                if what == "nmr":
                    session = commands.nmr(store, gid, p, force=True, at=clock())
                    continue
                choice = bots[p].choose(session.state, p, step.kind)
                if what == "moderator":
                    session = submit(p, lambda: commands.commit_for_player(store, gid, p, choice, at=clock()))
                    continue
                sealed = commands.seal(session, p, choice)
                held[p] = sealed
                session = submit(p, lambda: commands.commit(store, gid, p, sealed["commitment"],
                                                            (sealed["round"], sealed["step"]), at=clock()))
            for p, sealed in held.items():
                if odd.get(p) != "withhold":
                    session = submit(p, lambda: commands.reveal(store, gid, p, sealed["choice"], sealed["salt"],
                                                                at=clock()))
            for p in held:
                if odd.get(p) == "withhold":
                    session = commands.nmr(store, gid, p, force=True, at=clock())
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            session = submit(request.player, lambda: commands.decide(store, gid, request.player, choice, at=clock()))
        if session.state.round != seen:  # the round's summary goes to the list
            mailed.append(summary.render_public(record.from_store(store, gid), seen, "text")[1])
            seen = session.state.round
    mailed.append(summary.render_public(record.from_store(store, gid), None, "text")[1])
    return {"mailed": mailed, "receipts": receipts}


def _finished(tmp_path_factory, game_type: str, names, specials) -> dict:
    store = Store(tmp_path_factory.mktemp(game_type) / "g.db")
    clock = Clock()
    from unittest import mock
    with mock.patch.object(commands.secrets, "token_bytes", lambda n: bytes(range(7, 7 + n))):
        commands.create_game(store, "g", game_type, list(names), {}, at=clock())  # one seed: one game
    for name in names:
        commands.add_client_seed(store, "g", name, f"{name} was here", at=clock())
    commands.start_game(store, "g", at=clock())
    played = _drive(store, "g", clock, specials)
    rows = [json.loads(line) for line in export_lines(store.events("g"))]
    return {"store": store, "rows": rows, **played,
            "heads": "".join(played["mailed"]), "seed_hash": rows[0]["data"]["seed_hash"]}


# the n-th sealed step: [(the index of a player it waits for, the judge's discretion), ...]
SPECIALS = {1: [(1, "moderator")], 2: [(0, "nmr")], 3: [(1, "withhold")]}
VOTE_SPECIALS = {1: [(0, "moderator"), (1, "nmr"), (2, "withhold")]}  # a game may hold few votes


@pytest.fixture(scope="module")
def tortuga(tmp_path_factory):
    return _finished(tmp_path_factory, "tortuga", ["ani", "alex", "frank"], SPECIALS)


@pytest.fixture(scope="module")
def t1667(tmp_path_factory):
    return _finished(tmp_path_factory, "tortuga1667", ["ani", "bo", "cy", "dee"], VOTE_SPECIALS)


GAMES = ["tortuga", "t1667"]


def rechain(rows) -> str:
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


def copy(game) -> list[dict]:
    return json.loads(json.dumps(game["rows"]))


def public(game, text: str, **more) -> dict:
    """The audit given what the public kept: the seed hash and the mailed summaries."""
    published = Published(seed_hash=game["seed_hash"], head_files=[("summaries", game["heads"].encode())], **more)
    return audit.audit_file(text, published)


def first_head_at_or_after(game, seq: int, altered: list[dict]) -> str:
    for n, digest in heads_in_text(game["heads"]):
        if n >= seq:
            if n > len(altered):
                return f"FAIL: published head event {n} {digest[:8]}… is not a prefix of this log: the log stops at event {len(altered)}"
            return (f"FAIL: published head event {n} {digest[:8]}… is not a prefix of this log: "
                    f"its event {n} is {altered[n - 1]['hash'][:8]}…")
    raise AssertionError(f"no published head covers event {seq}")


# ---------------------------------------------------------------------- the honest game


@pytest.mark.parametrize("name", GAMES)
def test_the_honest_game_is_ok_with_everything_the_public_and_players_kept(name, request):
    game = request.getfixturevalue(name)
    receipts = [body for blocks in game["receipts"].values() for body in read_receipts("".join(blocks))]
    report = public(game, rechain(copy(game)), receipts=receipts, judge_key=game["rows"][0]["data"]["judge_key"])
    heads = len(heads_in_text(game["heads"]))
    forced = sum(1 for row in game["rows"] if row["kind"] in ("nmr", "default") and row["data"].get("forced"))
    assert forced  # the bots' game forces defaults, and the verdict names them
    assert report["verdict_line"] == (f"OK: complete, seed hash matches the published one, judge key matches the "
                                      f"published one, {heads} published heads are prefixes, {len(receipts)} "
                                      f"receipts checked; the judge's discretion: {forced} forced default{'s' if forced > 1 else ''}")
    kinds = {row["kind"] for row in game["rows"]}
    assert {"nmr", "default"} <= kinds and len(receipts) > 20
    assert any(row["data"].get("by") == "moderator" for row in game["rows"] if row["kind"] == "commit")
    forced = [row for row in game["rows"] if row["data"].get("forced")]
    assert forced and all(row["data"]["deadline"] is None for row in forced)


def test_receipts_bind_only_hashes_never_a_secret(t1667):
    """A receipt for a sealed or held choice carries its event's hash, no choice or salt."""
    rows = t1667["rows"]
    disclosed = next(r for r in rows if r["kind"] == "disclosed")["data"]["steps"]
    secrets_ = {e[k] for s in disclosed for e in s["reveals"].values() for k in ("salt",) if k in e}
    for blocks in t1667["receipts"].values():
        for body in read_receipts("".join(blocks)):
            text = json.dumps(body)
            assert not any(s in text for s in secrets_)
            assert set(body) == {"v", "kind", "game", "player", "seq", "event", "hash", "head_seq", "head_hash",
                                 "judge_key"}


# ---------------------------------------------------------------------- lies the public catches


def _mutate(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1") if value else "x"
    if isinstance(value, list):
        return value[::-1] if len(set(map(json.dumps, value))) > 1 else value + value
    if isinstance(value, dict):
        return {**value, "x": 1}
    return 1


@pytest.mark.parametrize("name", GAMES)
def test_each_event_kinds_fields_changed_is_caught_by_the_heads(name, request):
    game = request.getfixturevalue(name)
    kinds = list(dict.fromkeys(row["kind"] for row in game["rows"]))
    checked = 0
    for kind in kinds:
        seq = next(row["seq"] for row in game["rows"] if row["kind"] == kind)
        for field in sorted(game["rows"][seq - 1]["data"]):
            altered = copy(game)
            altered[seq - 1]["data"][field] = _mutate(altered[seq - 1]["data"][field])
            text = rechain(altered)
            report = public(game, text)
            if kind == "created" and field == "seed_hash":
                assert report["verdict_line"].startswith("FAIL: the seed hash in created is ")
            else:
                assert report["verdict_line"] == first_head_at_or_after(game, seq, altered), (kind, field)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("name", GAMES)
def test_a_re_deal_is_caught_by_the_published_seed_hash(name, request):
    game = request.getfixturevalue(name)
    altered = copy(game)
    seed = bytes(32)
    altered[0]["data"]["seed_hash"] = hashlib.sha256(seed).hexdigest()
    altered[-1]["data"]["seed"] = seed.hex()
    report = public(game, rechain(altered))
    assert report["verdict_line"] == (f"FAIL: the seed hash in created is {altered[0]['data']['seed_hash'][:8]}…, "
                                      f"not the published {game['seed_hash'][:8]}…: the game was dealt from "
                                      f"another seed")
    assert report["verdict"] == "FAIL" and report["bad_seq"] == 1


@pytest.mark.parametrize("name", GAMES)
def test_a_truncation_is_caught_by_the_heads_and_never_reads_as_ok(name, request):
    game = request.getfixturevalue(name)
    before_end = [row["seq"] for row in game["rows"] if row["kind"] in ("disclosed", "seed_revealed")][0]
    altered = copy(game)[: before_end - 1]
    text = rechain(altered)
    last = heads_in_text(game["heads"])[-1]
    assert public(game, text)["verdict_line"] == (
        f"FAIL: published head event {last[0]} {last[1][:8]}… is not a prefix of this log: the log stops at "
        f"event {len(altered)}")
    alone = audit.audit_file(text)  # without what the public kept: not OK either
    assert alone["verdict"] == "INCOMPLETE"
    assert alone["verdict_line"].startswith(f"INCOMPLETE: the log stops at event {len(altered)} before the seed is "
                                            f"revealed; draws from event ")


@pytest.mark.parametrize("name", GAMES)
def test_relabelled_commits_and_dropped_forced_flags_are_caught(name, request):
    game = request.getfixturevalue(name)
    rows = game["rows"]
    own = next(r for r in rows if r["kind"] == "commit" and r["data"]["by"] == "player")
    altered = copy(game)
    altered[own["seq"] - 1]["data"]["by"] = "moderator"
    for row in altered:  # its reveal too, so that the step reads consistently
        d = row["data"]
        if row["kind"] in ("reveal", "reveal_held") and (d["player"], d["round"], d["step"]) == (
                own["data"]["player"], own["data"]["round"], own["data"]["step"]):
            d["by"] = "moderator"
    assert public(game, rechain(altered))["verdict_line"] == first_head_at_or_after(game, own["seq"], altered)
    # the player's receipt for the commitment says it was theirs
    player = own["data"]["player"]
    mine = [b for b in read_receipts("".join(game["receipts"][player])) if b["seq"] == own["seq"]]
    alone = audit.audit_file(rechain(altered), Published(receipts=mine))
    assert alone["verdict_line"] == (
        f"FAIL: receipt 1 ({player}, event {own['seq']} commit) is contradicted: the judge signed event "
        f"{own['seq']} as {own['hash'][:8]}…, the log has {altered[own['seq'] - 1]['hash'][:8]}… there: the judge "
        f"changed or dropped that event")

    forced = [r["seq"] for r in rows if r["data"].get("forced")]
    altered = copy(game)
    for seq in forced:
        del altered[seq - 1]["data"]["forced"]
    text = rechain(altered)
    assert public(game, text)["verdict_line"] == first_head_at_or_after(game, forced[0], altered)
    # in a game without a deadline nobody is ever late: the replay alone refuses an unforced default
    alone = audit.audit_file(text)
    assert alone["verdict_line"].startswith(f"FAIL: event {forced[0]}: the game has no deadline, so ")


def _held_vote(rows):
    """The first anonymous step with a player's own held reveal: (step entry, player)."""
    disclosed = next(r for r in rows if r["kind"] == "disclosed")
    for entry in disclosed["data"]["steps"]:
        for player, reveal in entry["reveals"].items():
            if not reveal.get("default") and reveal.get("by") == "player":
                yield disclosed, entry, player


def test_a_consistent_vote_rewrite_is_caught_by_the_heads_and_the_voters_receipt(t1667):
    """The judge rewrites a vote with a new commitment, salt, digest and disclosure: every
    part of the step agrees with the others. What was mailed and the voter's receipt do not."""
    from pbem.protocol.anonymous import batch_digest
    from pbem.protocol.commit import make_commitment
    rows = t1667["rows"]
    for disclosed, entry, player in _held_vote(rows):
        r, s = entry["round"], entry["step"]
        old = entry["reveals"][player]["choice"]
        new = next(c for c in ("vote 1", "vote 2", "vote 3") if c != old)
        altered = copy(t1667)
        salt = "cd" * 32
        commit = next(x for x in altered if x["kind"] == "commit" and
                      (x["data"]["player"], x["data"]["round"], x["data"]["step"]) == (player, r, s))
        commit["data"]["commitment"] = make_commitment("g", r, s, player, new, salt)
        step = next(e for e in altered[disclosed["seq"] - 1]["data"]["steps"] if (e["round"], e["step"]) == (r, s))
        step["reveals"][player].update(choice=new, salt=salt, applied=new)
        batch = next(x for x in altered if x["kind"] == "sealed_batch" and (x["data"]["round"], x["data"]["step"]) == (r, s))
        batch["data"]["digest"] = batch_digest("g", r, s, step["reveals"])
        text = rechain(altered)
        assert public(t1667, text)["verdict_line"] == first_head_at_or_after(t1667, commit["seq"], altered)
        mine = [b for b in read_receipts("".join(t1667["receipts"][player])) if b["seq"] == commit["seq"]]
        assert audit.audit_file(text, Published(receipts=mine))["verdict_line"].startswith(
            f"FAIL: receipt 1 ({player}, event {commit['seq']} commit) is contradicted: ")
        return
    raise AssertionError("no held vote in the game")


# ---------------------------------------------------------------------- lies only a player sees


@pytest.mark.parametrize("name", GAMES)
def test_a_dropped_reveal_defaulted_as_nmr_is_caught_by_the_players_receipt(name, request):
    """The judge drops a reveal it acknowledged and, before anything else is published,
    records a forced default instead: the log it then shows is consistent, and every head
    published after agrees with it. Only the player's receipt shows the lie."""
    game = request.getfixturevalue(name)
    rows = game["rows"]
    reveal = next(r for r in rows if r["kind"] in ("reveal", "reveal_held") and r["data"]["by"] == "player"
                  and r["data"]["player"] in game["receipts"])
    player, seq = reveal["data"]["player"], reveal["seq"]
    step_kind = "select" if name == "tortuga" else "vote"
    default = {"player": player, "kind": step_kind, "sealed": True, "round": reveal["data"]["round"],
               "step": reveal["data"]["step"], "reason": "no reveal (NMR)", "forced": True, "deadline": None}
    altered = copy(game)[: seq - 1] + [{"game": "g", "kind": "default", "at": reveal["at"], "data": default}]
    if name == "tortuga":  # a public step shows the default's choice: the judge computes it as the rules do
        from pbem.protocol.session import Session
        session = Session.replay("g", rows[: seq - 1], bytes.fromhex(rows[-1]["data"]["seed"]))
        default["choice"] = session.rules.default(session.state, player, "select")
    text = rechain(altered)
    alone = audit.audit_file(text)
    assert alone["ok"] and alone["verdict"] == "INCOMPLETE"  # nothing public contradicts it
    mine = [b for b in read_receipts("".join(game["receipts"][player])) if b["seq"] == seq]
    report = audit.audit_file(text, Published(receipts=mine))
    assert report["verdict_line"] == (
        f"FAIL: receipt 1 ({player}, event {seq} {reveal['kind']}) is contradicted: the judge signed event {seq} "
        f"as {reveal['hash'][:8]}…, the log has {altered[seq - 1]['hash'][:8]}… there: the judge changed or dropped "
        f"that event")


def test_a_receipt_from_another_key_is_bad_evidence_and_a_log_without_the_published_key_fails(tortuga):
    from pbem.protocol.errors import BadAuditInput
    from pbem.protocol.signing import fingerprint, generate_keypair, public_from_secret
    rows = tortuga["rows"]
    secret = tortuga["store"].get_secret("g", SECRET_NAME)
    judge = rows[0]["data"]["judge_key"]
    assert public_from_secret(secret) == judge
    body = make_body("g", "ani", 5, rows[4]["kind"], rows[4]["hash"], (6, rows[5]["hash"]), judge)
    good = read_receipts(receipt_block(secret, body))
    honest = audit.audit_file(rechain(copy(tortuga)), Published(receipts=good, judge_key=judge))
    assert honest["verdict"] == "OK" and honest["judge_key_checked"]
    other_secret, other_public = generate_keypair()
    forged = read_receipts(receipt_block(other_secret, {**body, "judge_key": other_public}))
    # a receipt signed by another key (a player's, say) frames nobody: bad evidence, no verdict
    with pytest.raises(BadAuditInput, match=f"^receipt 1 is signed by judge key {fingerprint(other_public)}, not "
                                            f"the published judge key {fingerprint(judge)}: it proves nothing"):
        audit.audit_file(rechain(copy(tortuga)), Published(receipts=forged, judge_key=judge))
    with pytest.raises(BadAuditInput, match="cannot tell a forged receipt from a forged log"):
        audit.audit_file(rechain(copy(tortuga)), Published(receipts=forged))
    stripped = copy(tortuga)
    del stripped[0]["data"]["judge_key"]  # the judge removes its key to make receipts impossible
    with pytest.raises(BadAuditInput, match="but this log's created names no judge key: without --judge-key"):
        audit.audit_file(rechain(stripped), Published(receipts=good))
    line = audit.audit_file(rechain(stripped), Published(receipts=good, judge_key=judge))["verdict_line"]
    assert line == (f"FAIL: created names no judge key, not the published judge key {fingerprint(judge)}: the log "
                    f"is not the game the judge announced")
    swapped = copy(tortuga)
    swapped[0]["data"]["judge_key"] = other_public  # the judge re-signs a forged log with a new key
    line = audit.audit_file(rechain(swapped), Published(receipts=forged, judge_key=judge))["verdict_line"]
    assert line == (f"FAIL: created names judge key {fingerprint(other_public)}, not the published judge key "
                    f"{fingerprint(judge)}: the log is not the game the judge announced")
    # altered receipts prove nothing: a usage error, not a verdict
    from pbem.protocol.errors import BadAuditInput
    from pbem.protocol.armour import RECEIPT, armour, extract_blocks
    payload = extract_blocks(receipt_block(secret, body), RECEIPT)[0]
    moved = armour({"receipt": {**body, "seq": 4}, "sig": payload["sig"]}, RECEIPT)  # a valid block, re-armoured
    with pytest.raises(BadAuditInput, match="the signature does not verify under its judge key"):
        read_receipts(moved)
    with pytest.raises(BadAuditInput, match="checksum"):
        lines = moved.split("\n")
        lines[1] = ("B" if lines[1][0] != "B" else "C") + lines[1][1:]
        read_receipts("\n".join(lines))
