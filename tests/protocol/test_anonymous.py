"""Anonymous sealed steps (docs/protocol.md §11): a 5-player Tortuga 1667 game played
through the commands keeps every vote with the judge until the end, discloses them all
before the seed, and audits clean; forged disclosures, digests and orders fail the audit
naming the event; repeats and bad reveals change nothing."""

import json
import secrets

import pytest

from pbem.games.tortuga1667.bots import RandomBot
from pbem.protocol import commands, loading, offline, reports, submissions
from pbem.protocol.anonymous import batch_digest
from pbem.protocol.canonical import GENESIS_HASH, event_hash
from pbem.protocol.errors import Refused
from pbem.store import Store, audit, export_lines

PLAYERS = ["ani", "bo", "cy", "dee", "eve"]
AT = "2024-05-01T12:00:00Z"
FIXED_SEED = bytes(range(32))
VOTES = ("attack", "mutiny", "brawl")

# A 5-player game played through the commands one submission at a time, so tests can look
# at the log between any two. Choices come from the engine's bot (legal options only); a
# captain, mate or governor calls a vote whenever one is legal, so there are anonymous
# steps to check, and in them the driver also marks a player late before committing, lets
# one who committed never reveal, and has the moderator seal for an email-only player.


def new_game(store, game: str = "g", signatures: bool = False, keys: dict | None = None):
    """A started game with a fixed server seed (so the same game is played every run)."""
    real = secrets.token_bytes
    secrets.token_bytes = lambda n: FIXED_SEED[:n]
    try:
        commands.create_game(store, game, "tortuga1667", PLAYERS, {}, require_signatures=signatures,
                             keys=keys, start=True, at=AT)
    finally:
        secrets.token_bytes = real


class Driver:
    def __init__(self, store, game: str = "g", seed: str = "anon", twists: bool = True):
        self.store, self.game = store, game
        self.bots = {p: RandomBot(f"{seed}/{p}") for p in PLAYERS}
        self.sealed: dict = {}  # (round, step, player) -> what commands.seal returned
        self.twists = twists
        self.anon_steps = 0
        self.outcomes: list[dict] = []

    def session(self):
        return loading.load(self.store, self.game)

    def export(self) -> str:
        return "".join(export_lines(self.store.events(self.game)))

    def choose(self, session, player: str, kind: str) -> str:
        if kind == "action":
            for word in VOTES:
                try:
                    return session.rules.check(session.state, player, word)
                except Exception:
                    pass
        return self.bots[player].choose(session.state, player, kind)

    def step(self) -> bool:
        """One submission (a commitment, a reveal, a late mark or a decision); False once over."""
        session = self.session()
        if session.finished or session.seed_revealed:
            return False
        step = session.sealed
        if step is not None:
            key = (step.round, step.step)
            if not step.all_committed:
                player = step.owes_commit()[0]
                if not step.commits and not step.defaulted:
                    self.anon_steps += 1
                twist = self.anon_steps % 4 if self.twists and len(step.waiting) > 1 else 0
                if twist == 1 and player == step.waiting[0]:
                    commands.nmr(self.store, self.game, player, force=True, at=AT)
                    return True
                choice = self.choose(session, player, step.kind)
                if twist == 3 and player == step.waiting[-1]:
                    commands.commit_for_player(self.store, self.game, player, choice, at=AT)
                    return True
                sealed = commands.seal(session, player, choice)
                self.sealed[(*key, player)] = sealed
                commands.commit(self.store, self.game, player, sealed["commitment"], at=AT)
                return True
            player = step.owes_reveal()[0]
            if self.twists and self.anon_steps % 4 == 2 and player == step.waiting[-1] and len(step.waiting) > 1:
                commands.nmr(self.store, self.game, player, force=True, at=AT)
                return True
            sealed = self.sealed[(*key, player)]
            outcome: dict = {}
            commands.reveal(self.store, self.game, player, sealed["choice"], sealed["salt"], at=AT, outcome=outcome)
            self.outcomes.append(outcome)
            return True
        request = session.pending()[0]
        commands.decide(self.store, self.game, request.player,
                        self.choose(session, request.player, request.kind), at=AT)
        return True

    def until(self, predicate, limit: int = 5000):
        for _ in range(limit):
            if predicate(self.session()):
                return
            if not self.step():
                raise AssertionError("the game ended first")
        raise AssertionError("not reached")

    def finish(self, limit: int = 5000) -> None:
        for _ in range(limit):
            if not self.step():
                return
        raise AssertionError("the game did not end")


def rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def rechain(rows):
    """Renumber and rehash forged rows (as in test_public_audit.py)."""
    prev = GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        prev = row["hash"] = event_hash(prev, {k: row[k] for k in ("game", "seq", "kind", "at", "data")})
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The whole game, with what every public report and each private one said on the way."""
    store = Store(tmp_path_factory.mktemp("anon") / "g.db")
    new_game(store)
    driver = Driver(store)
    public, private = [], {p: [] for p in PLAYERS}
    while True:
        session = driver.session()
        head = store.head("g")
        public.append(json.dumps(reports.status(session, head)))
        for p in PLAYERS:
            private[p].append(json.dumps(reports.private(session, p)))
        if not driver.step():
            break
    return store, driver, public, private


def disclosed(store):
    event = next(e for e in store.events("g") if e.kind == "disclosed")
    return event.seq, event.data["steps"]


def held_reveals(steps):
    """(player, round, step, record) of every disclosed reveal that was not a default."""
    return [(p, s["round"], s["step"], r) for s in steps for p, r in s["reveals"].items() if not r.get("default")]


def test_the_game_has_anonymous_steps_of_every_kind(played):
    store, driver, *_ = played
    kinds = [e.kind for e in store.events("g")]
    assert kinds.count("sealed_batch") >= 5 and kinds[-2:] == ["disclosed", "seed_revealed"]
    _, steps = disclosed(store)
    records = [r for s in steps for r in s["reveals"].values()]
    assert any(r.get("default") for r in records)
    assert any(r.get("by") == "moderator" for r in records)
    assert all(o.get("held") and "applied" not in o for o in driver.outcomes)


def test_nothing_public_shows_a_held_vote_before_the_end(played):
    store, driver, public, _ = played
    seq, steps = disclosed(store)
    before = "".join(line + "\n" for line in driver.export().splitlines()[: seq - 1])
    salts = [r["salt"] for *_, r in held_reveals(steps)]
    assert salts and "vote " not in before
    for salt in salts:
        assert salt not in before
        assert not any(salt in report for report in public[:-1])
    assert not any("vote " in report for report in public[:-1])
    text = audit.report_text(audit.audit_file(before))
    assert text.startswith("INCOMPLETE: ") and "contents are disclosed and checked at the end" in text
    assert not any(salt in text for salt in salts)


def test_a_player_is_shown_only_their_own_held_reveal(played):
    store, _, _, private = played
    _, steps = disclosed(store)
    for player, *_, record in held_reveals(steps):
        others = [p for p in PLAYERS if p != player]
        assert not any(record["salt"] in report for p in others for report in private[p])
    shown = [json.loads(r) for r in private["ani"]]
    assert any(req.get("held") for report in shown for req in report["requests"])


def test_the_public_log_has_who_and_when_then_one_digest(played):
    store, *_ = played
    events = store.events("g")
    held = [e for e in events if e.kind == "reveal_held"]
    assert held and all(set(e.data) == {"player", "round", "step", "by"} for e in held)
    late = [e for e in events if e.kind == "default"]
    assert late and all("choice" not in e.data for e in late)
    _, steps = disclosed(store)
    digests = {(e.data["round"], e.data["step"]): e.data["digest"] for e in events if e.kind == "sealed_batch"}
    for s in steps:
        assert digests[(s["round"], s["step"])] == batch_digest("g", s["round"], s["step"], s["reveals"])


def test_after_the_end_the_export_and_the_store_audit_clean(played):
    store, driver, *_ = played
    for report in (audit.audit_file(driver.export()), audit.audit_store(store, "g")):
        assert report["ok"], report["problem"]
        assert report["replay"] == "full" and report["held_reveals"]["disclosed"]
    assert "each checked against its commitment" in audit.report_text(audit.audit_file(driver.export()))


# ---------------------------------------------------------------------- forgeries

def forged(driver, change) -> dict:
    """Audit the export after ``change(rows)``, every hash recomputed."""
    lines = rows(driver.export())
    change(lines)
    return audit.audit_file(rechain(lines))


def index(lines, kind, nth=0):
    return [k for k, r in enumerate(lines) if r["kind"] == kind][nth]


def test_a_changed_held_choice_in_the_disclosure_fails_naming_it(played):
    store, driver, *_ = played
    seq, _ = disclosed(store)

    def change(lines):
        steps = lines[index(lines, "disclosed")]["data"]["steps"]
        player, record = next((p, r) for s in steps for p, r in s["reveals"].items() if not r.get("default"))
        other = "vote 1" if record["choice"] != "vote 1" else "vote 2"
        record.update(choice=other, applied=other)
    report = forged(driver, change)
    assert not report["ok"] and report["bad_seq"] == seq and "does not match ani's commitment" in report["problem"]


def test_a_wrong_batch_digest_fails_naming_the_batch(played):
    _, driver, *_ = played
    lines = rows(driver.export())
    at = index(lines, "sealed_batch", 2)

    def change(lines):
        lines[at]["data"]["digest"] = "0" * 64
    report = forged(driver, change)
    assert not report["ok"] and report["bad_seq"] == at + 1 and "digest" in report["problem"]


def test_a_dropped_disclosure_entry_fails_naming_the_disclosure(played):
    store, driver, *_ = played
    seq, _ = disclosed(store)

    def change(lines):
        steps = lines[index(lines, "disclosed")]["data"]["steps"]
        step = next(s for s in steps if any(not r.get("default") for r in s["reveals"].values()))
        player = next(p for p, r in step["reveals"].items() if not r.get("default"))
        del step["reveals"][player]
    report = forged(driver, change)
    assert not report["ok"] and report["bad_seq"] == seq and "holds no reveal" in report["problem"]


def test_an_extra_disclosure_entry_fails(played):
    store, driver, *_ = played
    seq, _ = disclosed(store)

    def change(lines):
        lines[index(lines, "disclosed")]["data"]["steps"].append({"round": 999, "step": 999, "reveals": {}})
    report = forged(driver, change)
    assert not report["ok"] and report["bad_seq"] == seq


def test_a_held_reveal_before_the_last_commitment_fails(played):
    _, driver, *_ = played

    def change(lines):
        # a step with two commitments: move the first held reveal before the second commitment
        for k, row in enumerate(lines):
            if row["kind"] == "commit" and lines[k + 1]["kind"] == "commit":
                held = next(j for j in range(k, len(lines)) if lines[j]["kind"] == "reveal_held"
                            and (lines[j]["data"]["round"], lines[j]["data"]["step"])
                            == (row["data"]["round"], row["data"]["step"]))
                lines.insert(k + 1, lines.pop(held))
                change.at = k + 2  # the seq of the moved reveal
                return
        raise AssertionError("no step with two commitments")
    # the seedless audit during play finds the commitment after it; the full one, the reveal
    for cut, later, words in ((True, 1, "after its reveals had begun"), (False, 0, "every commitment is in")):
        lines = rows(driver.export())
        if cut:
            lines = lines[: index(lines, "disclosed")]
        change(lines)
        report = audit.audit_file(rechain(lines))
        assert not report["ok"] and report["bad_seq"] == change.at + later and words in report["problem"], report


def test_a_batch_before_the_last_reveal_fails_even_without_the_seed(played):
    _, driver, *_ = played
    lines = rows(driver.export())
    lines = lines[: index(lines, "disclosed")]
    at = next(k for k, r in enumerate(lines) if r["kind"] == "sealed_batch" and lines[k - 1]["kind"] == "reveal_held"
              and lines[k - 2]["kind"] == "reveal_held")
    lines.insert(at - 1, lines.pop(at))
    report = audit.audit_file(rechain(lines))
    assert not report["ok"] and report["bad_seq"] == at and "before every reveal" in report["problem"]


def test_the_seed_without_the_disclosure_is_refused(played):
    _, driver, *_ = played

    def change(lines):
        del lines[index(lines, "disclosed")]
    report = forged(driver, change)
    assert not report["ok"]


def test_a_public_reveal_in_an_anonymous_step_fails(played):
    store, driver, *_ = played
    _, steps = disclosed(store)
    player, round_, step, record = held_reveals(steps)[0]

    def change(lines):
        k = next(k for k, r in enumerate(lines) if r["kind"] == "reveal_held" and r["data"]["player"] == player
                 and (r["data"]["round"], r["data"]["step"]) == (round_, step))
        lines[k]["kind"] = "reveal"
        lines[k]["data"].update(choice=record["choice"], salt=record["salt"])
        change.at = k + 1
    lines = rows(driver.export())
    change(lines)
    report = audit.audit_file(rechain(lines))
    assert not report["ok"] and report["bad_seq"] == change.at


# ---------------------------------------------------------------------- repeats and bad input

@pytest.fixture
def mid_vote(tmp_path):
    """An anonymous step with every commitment in and one reveal held (no twists)."""
    store = Store(tmp_path / "g.db")
    new_game(store)
    driver = Driver(store, twists=False)
    driver.until(lambda s: s.sealed is not None and len(s.sealed.waiting) > 1 and s.sealed.all_committed
                 and len(s.sealed.revealed) == 1)
    return store, driver


def state_of(store):
    secrets = {n: store.get_secret("g", n) for n in store.secret_names("g")}
    return store.head("g"), secrets


def test_the_same_reveal_again_is_already_recorded(mid_vote):
    store, driver = mid_vote
    session = driver.session()
    step = session.sealed
    player = next(iter(step.revealed))
    sealed = driver.sealed[(step.round, step.step, player)]
    before = state_of(store)
    outcome: dict = {}
    commands.reveal(store, "g", player, sealed["choice"], sealed["salt"], at=AT, outcome=outcome)
    assert outcome["already_recorded"] and outcome["held"] and state_of(store) == before
    driver.finish()  # and after the batch, and after the end
    outcome = {}
    commands.reveal(store, "g", player, sealed["choice"], sealed["salt"], (step.round, step.step),
                    at=AT, outcome=outcome)
    assert outcome["already_recorded"]


def test_another_reveal_for_a_held_one_is_refused(mid_vote):
    store, driver = mid_vote
    step = driver.session().sealed
    player = next(iter(step.revealed))
    sealed = driver.sealed[(step.round, step.step, player)]
    before = state_of(store)
    with pytest.raises(Refused, match="already settled"):
        commands.reveal(store, "g", player, sealed["choice"], "ab" * 32, at=AT)
    assert state_of(store) == before


def test_a_wrong_reveal_changes_nothing_not_even_the_held_ones(mid_vote):
    store, driver = mid_vote
    step = driver.session().sealed
    player = step.owes_reveal()[0]
    sealed = driver.sealed[(step.round, step.step, player)]
    before = state_of(store)
    with pytest.raises(Refused, match="does not match"):
        commands.reveal(store, "g", player, sealed["choice"], "cd" * 32, at=AT)
    assert state_of(store) == before


def test_the_game_state_never_sees_a_partial_anonymous_step(mid_vote):
    store, driver = mid_vote
    session = driver.session()
    assert session.state.vote["cards"] == {}  # one reveal is held, none applied
    assert reports.status(session, store.head("g"))["sealed_step"]["revealed"] == sorted(session.sealed.revealed)


def test_a_forced_end_discloses_the_open_step(mid_vote):
    store, driver = mid_vote
    step = driver.session().sealed
    commands.reveal_seed(store, "g", force=True, at=AT)
    kinds = [e.kind for e in store.events("g")]
    assert kinds[-2:] == ["disclosed", "seed_revealed"]
    steps = store.events("g")[-2].data["steps"]
    assert steps[-1]["round"] == step.round and set(steps[-1]["reveals"]) == set(step.revealed)
    report = audit.audit_file(driver.export())
    assert report["ok"], report["problem"]


# ---------------------------------------------------------------------- signed games

def test_a_signed_game_keeps_signatures_private_until_the_end(tmp_path):
    """Blocks signed offline: a held reveal's signature and nonce go to the disclosure, the
    same block again is already recorded, and a forged signature in it fails the audit."""
    from pbem.protocol.signing import generate_keypair
    pairs = {p: generate_keypair() for p in PLAYERS}
    store = Store(tmp_path / "s.db")
    new_game(store, signatures=True, keys={p: public for p, (_, public) in pairs.items()})
    driver = Driver(store, twists=False)
    repeated = False
    for _ in range(3000):
        session = driver.session()
        if session.finished:
            break
        step = session.sealed
        if step is None:
            request = session.pending()[0]
            block = offline.signed_decision(session, request.player,
                                             driver.choose(session, request.player, request.kind),
                                             pairs[request.player][0])
            submissions.submit(store, "g", block, at=AT)
            continue
        blocks = {}
        for player in step.waiting:
            sealed = commands.seal(session, player, driver.choose(session, player, step.kind))
            blocks[player] = offline.signed_blocks(sealed, pairs[player][0])
            submissions.submit(store, "g", blocks[player]["commit"], at=AT)
        for player in step.waiting:
            done = submissions.submit(store, "g", blocks[player]["reveal"], at=AT)
            assert done[0]["held"] and "applied" not in done[0]
            if not repeated:  # the same block again (a mail processed twice), before the batch
                before = state_of(store)
                again = submissions.submit(store, "g", blocks[player]["reveal"], at=AT)
                assert again[0]["already_recorded"] and state_of(store) == before
                repeated = True
    else:
        raise AssertionError("the game did not end")
    assert repeated
    text = "".join(export_lines(store.events("g")))
    report = audit.audit_file(text)
    assert report["ok"], report["problem"]
    lines = rows(text)
    at = next(k for k, r in enumerate(lines) if r["kind"] == "disclosed")
    records = [r for s in lines[at]["data"]["steps"] for r in s["reveals"].values()]
    assert records and all(r.get("signature") and r.get("nonce") for r in records)
    records[0]["signature"] = records[-1]["signature"] if len(records) > 1 else "AAAA" + records[0]["signature"][4:]
    report = audit.audit_file(rechain(lines))
    assert not report["ok"] and report["bad_seq"] == at + 1 and "signature" in report["problem"]


def test_a_held_reveal_that_shows_its_choice_fails(played):
    store, driver, *_ = played
    lines = rows(driver.export())
    at = index(lines, "reveal_held")
    lines[at]["data"]["choice"] = "vote 1"
    for text in (rechain(lines), rechain(lines[: index(lines, "disclosed")])):
        report = audit.audit_file(text)
        assert not report["ok"] and report["bad_seq"] == at + 1 and "not choice" in report["problem"]
