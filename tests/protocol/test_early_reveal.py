"""A reveal sent early (docs/protocol.md §4, "A reveal sent early"): a player who sealed at
home may send the reveal before every commitment of the step is in. It is checked at once
as it will be checked then, kept among the store's private entries (never in the log, an
export or anything another player sees), and recorded as the player's own reveal, in the
same transaction as the last commitment. Whole games of both kinds, signed and unsigned,
anonymous steps included, audit clean played this way."""

from __future__ import annotations

import pytest

from pbem.protocol import commands, loading, offline, submissions
from pbem.protocol.errors import Refused
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, export_lines
from pbem.store.audit import audit_store

AT = "2030-01-01T10:00:00Z"
SEED = bytes.fromhex("e4" * 32)  # the same game every run
VOTES = 20  # 1667: votes are called at every chance for the first sealed steps only (a game of nothing but votes may not end)
PLAYERS = {"tortuga": ["ani", "alex", "frank"], "tortuga1667": ["ani", "alex", "frank", "lothar", "mary"]}


def _early(store: Store, game: str) -> list[str]:
    return [name for name in store.secret_names(game) if name.startswith("early/")]


def choose(session, player: str, kind: str, votes: bool = True) -> str:
    if kind == "action" and votes:  # 1667: call a vote whenever one is legal, so that there are sealed steps
        for word in ("attack", "mutiny", "brawl"):
            try:
                return session.rules.check(session.state, player, word)
            except Exception:
                pass
    request = next(r for r in session.requests_of(player) if r.kind == kind)
    return session.rules.bot(f"bot/{player}", "random").choose(session.state, player, kind, request=request)


def play(store: Store, game: str, keys: dict | None = None) -> dict:
    """Play ``game`` to its end, every sealed choice sent as commitment and reveal together
    (as one signed submission when ``keys``); what was seen along the way."""
    seen = {"early": 0, "last": 0, "held": 0}
    for _ in range(5000):
        session = loading.load(store, game)
        if session.seed_revealed:
            return seen
        player, _what, sealed, _ = session.owed()[0]
        if not sealed:
            request = next(r for r in session.requests_of(player) if not r.sealed)
            choice = choose(session, player, request.kind, votes=seen["last"] < VOTES)
            if keys:
                submissions.submit(store, game, offline.signed_decision(session, player, choice, keys[player]), at=AT)
            else:
                commands.decide(store, game, player, choice, at=AT)
            continue
        step = session.sealed
        made = commands.seal(session, player, choose(session, player, step.kind))
        last = len(step.owes_commit()) == 1
        head = store.head(game)
        if keys:
            blocks = offline.signed_blocks(made, keys[player])
            done = submissions.submit(store, game, blocks["commit"] + "\n" + blocks["reveal"], at=AT)
            early = bool(done[1].get("early"))
        else:
            commands.commit(store, game, player, made["commitment"], at=AT)
            outcome: dict = {}
            commands.reveal(store, game, player, made["choice"], made["salt"], at=AT, outcome=outcome)
            early = bool(outcome.get("early"))
        assert early != last, (player, step.round, step.step)
        after = store.events(game)[head[0]:]
        if early:  # nothing but the commitment entered the log; the salt is nowhere public
            seen["early"] += 1
            assert [e.kind for e in after] == ["commit"]
            assert made["salt"] not in "".join(export_lines(store.events(game)))
        else:  # the last commitment: every early reveal of the step follows it at once
            seen["last"] += 1
            revealed = [e for e in after if e.kind in ("reveal", "reveal_held")]
            assert {e.data["player"] for e in revealed} == set(step.waiting) - step.defaulted
            assert all(e.data["by"] == "player" for e in revealed)
            seen["held"] += sum(e.kind == "reveal_held" for e in revealed)
    raise AssertionError("the game does not end")


@pytest.mark.parametrize("game_type", ["tortuga", "tortuga1667"])
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_whole_game_with_every_reveal_sent_early_audits_clean(tmp_path, game_type, signed, monkeypatch):
    from types import SimpleNamespace
    monkeypatch.setattr(commands, "secrets", SimpleNamespace(token_bytes=lambda n: SEED[:n],
                                                              token_hex=commands.secrets.token_hex))
    store = Store(tmp_path / "g.db")
    players = PLAYERS[game_type]
    pairs = {p: generate_keypair() for p in players} if signed else {}
    commands.create_game(store, "g", game_type, players, {}, require_signatures=signed,
                         keys={p: pub for p, (_, pub) in pairs.items()} or None, start=True, at=AT)
    seen = play(store, "g", {p: secret for p, (secret, _) in pairs.items()} or None)
    assert seen["early"] > 10 and seen["last"] > 5, seen
    if game_type == "tortuga1667":
        assert seen["held"] > 0  # anonymous votes: held by the judge until the end, as a reveal sent then
    report = audit_store(store, "g")
    assert report["ok"], report


def _two_player(tmp_path, signed: bool = False):
    store = Store(tmp_path / "g.db")
    pairs = {p: generate_keypair() for p in ("ani", "alex")} if signed else {}
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=signed,
                         keys={p: pub for p, (_, pub) in pairs.items()} or None, start=True, at=AT)
    session = loading.load(store, "g")
    return store, session, {p: secret for p, (secret, _) in pairs.items()}


def test_a_signed_early_reveal_must_be_signed_by_the_seat(tmp_path):
    store, session, keys = _two_player(tmp_path, signed=True)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    submissions.submit(store, "g", offline.signed_blocks(made, keys["ani"])["commit"], at=AT)
    head = store.head("g")
    forged = offline.signed_blocks(made, keys["alex"])["reveal"]  # ani's reveal, alex's key
    with pytest.raises(Refused, match="signature"):
        submissions.submit(store, "g", forged, at=AT)
    unsigned = dict(made)
    with pytest.raises(Refused, match="requires signed submissions"):
        commands.reveal(store, "g", "ani", unsigned["choice"], unsigned["salt"], at=AT)
    assert store.head("g") == head and not _early(store, "g")


def test_a_refused_early_reveal_keeps_nothing(tmp_path):
    store, session, _ = _two_player(tmp_path)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    with pytest.raises(Refused, match="ani has no commitment in step 1.1 yet"):
        commands.reveal(store, "g", "ani", made["choice"], made["salt"], at=AT)
    commands.commit(store, "g", "ani", made["commitment"], at=AT)
    with pytest.raises(Refused, match="does not match ani's commitment"):
        commands.reveal(store, "g", "ani", made["choice"], "ab" * 32, at=AT)
    with pytest.raises(Refused, match="salt"):
        commands.reveal(store, "g", "ani", made["choice"], "not-a-salt", at=AT)
    assert not _early(store, "g")


def test_a_choice_the_judge_sealed_has_nothing_to_reveal_early(tmp_path):
    store, session, _ = _two_player(tmp_path)
    choice = session.rules.default(session.state, "ani", "select")
    commands.commit_for_player(store, "g", "ani", choice, at=AT)
    with pytest.raises(Refused, match="sealed by the judge"):
        commands.reveal(store, "g", "ani", choice, "ab" * 32, at=AT)


def test_the_last_commitment_records_early_reveals_in_one_transaction(tmp_path, monkeypatch):
    """A crash while the last commitment is written leaves the log as before: no commitment,
    no reveal; the early reveal still waits among the private entries."""
    store, session, _ = _two_player(tmp_path)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    commands.commit(store, "g", "ani", made["commitment"], at=AT)
    commands.reveal(store, "g", "ani", made["choice"], made["salt"], at=AT)
    head = store.head("g")
    session = loading.load(store, "g")
    alex = commands.seal(session, "alex", session.rules.default(session.state, "alex", "select"))
    real = Store.append
    calls = []

    def crash(self, *args, **kwargs):
        calls.append(args[1])
        if args[1] == "reveal":
            raise RuntimeError("the disk is gone")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "append", crash)
    with pytest.raises(RuntimeError):
        commands.commit(store, "g", "alex", alex["commitment"], at=AT)
    monkeypatch.setattr(Store, "append", real)
    assert calls == ["commit", "reveal"] and store.head("g") == head
    assert _early(store, "g") == ["early/1/1/ani"]
    commands.commit(store, "g", "alex", alex["commitment"], at=AT)
    assert [e.kind for e in store.events("g")[head[0]:]] == ["commit", "reveal"]


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_replaced_seat_s_early_reveal_is_its_former_player_s_and_is_not_recorded(tmp_path, signed):
    """The seat's player sent the reveal early, then left (pbem replace): the commitment is
    orphaned (docs/protocol.md §16), as if they had kept the salt. The last commitment of
    the others is recorded as usual (a signed game once refused it: the kept reveal was
    checked against the new player's key), and the seat's default applies."""
    from pbem.protocol import away
    store, session, keys = _two_player(tmp_path, signed=signed)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    if signed:
        blocks = offline.signed_blocks(made, keys["ani"])
        submissions.submit(store, "g", blocks["commit"] + "\n" + blocks["reveal"], at=AT)
    else:
        commands.commit(store, "g", "ani", made["commitment"], at=AT)
        commands.reveal(store, "g", "ani", made["choice"], made["salt"], at=AT)
    assert _early(store, "g") == ["early/1/1/ani"]
    new_secret, new_public = generate_keypair()
    away.replace(store, "g", "ani", key=new_public if signed else None, at=AT)
    session = loading.load(store, "g")
    alex = commands.seal(session, "alex", session.rules.default(session.state, "alex", "select"))
    if signed:
        submissions.submit(store, "g", offline.signed_blocks(alex, keys["alex"])["commit"], at=AT)
    else:
        commands.commit(store, "g", "alex", alex["commitment"], at=AT)
    kinds = [(e.kind, e.data.get("player")) for e in store.events("g")]
    assert kinds[-1] == ("commit", "alex") and ("reveal", "ani") not in kinds
    commands.nmr(store, "g", "ani", force=True, at=AT)
    assert [(e.kind, e.data.get("player")) for e in store.events("g")][-1] == ("default", "ani")
    assert audit_store(store, "g")["ok"]


def test_the_new_player_of_a_replaced_seat_cannot_send_the_former_player_s_reveal_early(tmp_path):
    from pbem.protocol import away
    store, session, _ = _two_player(tmp_path)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    commands.commit(store, "g", "ani", made["commitment"], at=AT)
    away.replace(store, "g", "ani", at=AT)
    with pytest.raises(Refused, match="former player"):
        commands.reveal(store, "g", "ani", made["choice"], made["salt"], at=AT)
    assert not _early(store, "g")


def test_a_key_change_after_an_early_reveal_leaves_the_reveal_owed_and_the_step_open(tmp_path):
    """The kept reveal was signed with the key the player then changed (a key block): it
    no longer verifies, so it is not recorded, and the player owes the reveal as usual. The
    last commitment of the others is recorded (it was refused: the game could not go on)."""
    store, session, keys = _two_player(tmp_path, signed=True)
    made = commands.seal(session, "ani", session.rules.default(session.state, "ani", "select"))
    blocks = offline.signed_blocks(made, keys["ani"])
    submissions.submit(store, "g", blocks["commit"] + "\n" + blocks["reveal"], at=AT)
    new_secret, new_public = generate_keypair()
    submissions.submit(store, "g", offline.key_change_block("g", "ani", new_public, keys["ani"]), at=AT)
    session = loading.load(store, "g")
    alex = commands.seal(session, "alex", session.rules.default(session.state, "alex", "select"))
    alex_blocks = offline.signed_blocks(alex, keys["alex"])
    submissions.submit(store, "g", alex_blocks["commit"], at=AT)
    session = loading.load(store, "g")
    assert session.sealed.all_committed and session.sealed.owes_reveal() == ["ani", "alex"]
    submissions.submit(store, "g", offline.signed_blocks(made, new_secret)["reveal"], at=AT)
    submissions.submit(store, "g", alex_blocks["reveal"], at=AT)
    assert audit_store(store, "g")["ok"]


def test_a_seat_back_from_the_stand_in_replaces_its_sealed_choice_and_sends_the_reveal_early(tmp_path):
    """The stand-in plays ani's seat and sealed a choice for it; ani, back, commits and sends
    the reveal early: the commitment is ani's again, and the reveal is recorded with alex's
    last commitment, as ani's own."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=86400, start=True,
                         at=AT, stand_in_after=1)
    commands.nmr(store, "g", "ani", force=True, at=AT)  # ani misses one: the stand-in takes the seat
    for _ in range(200):
        session = loading.load(store, "g")
        step = session.sealed
        if step is not None and step.commits.get("ani", {}).get("by") == "stand-in" and "alex" in step.owes_commit():
            break
        player, _what, sealed, _ = session.owed()[0]
        assert player == "alex"
        if sealed:
            commands.commit_for_player(store, "g", "alex", choose(session, "alex", step.kind), at=AT)
        else:
            request = next(r for r in session.requests_of("alex") if not r.sealed)
            commands.decide(store, "g", "alex", choose(session, "alex", request.kind), at=AT)
    else:
        raise AssertionError("the stand-in never sealed a choice for ani")
    assert "ani" in session.standing_in
    made = commands.seal(session, "ani", choose(session, "ani", step.kind))
    commands.commit(store, "g", "ani", made["commitment"], at=AT)
    outcome: dict = {}
    commands.reveal(store, "g", "ani", made["choice"], made["salt"], at=AT, outcome=outcome)
    assert outcome.get("early") and "ani" not in loading.load(store, "g").standing_in
    head = store.head("g")
    commands.commit_for_player(store, "g", "alex", choose(session, "alex", step.kind), at=AT)
    reveals = [e.data for e in store.events("g")[head[0]:] if e.kind == "reveal"]
    assert {(r["player"], r["by"]) for r in reveals} == {("ani", "player"), ("alex", "moderator")}
    assert audit_store(store, "g")["ok"]
