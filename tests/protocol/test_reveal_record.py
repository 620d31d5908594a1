"""How a reveal is logged (docs/protocol.md, section 2): the choice exactly as committed, the
canonical form the rules applied, and for a choice the rules refuse the default with the
refusal's reason and its fixed code, which a replay recomputes and compares."""

import copy

import pytest

from pbem.protocol import commands, loading
from pbem.protocol.commit import make_commitment
from pbem.protocol.errors import AuditFailure
from pbem.protocol.session import Session
from pbem.store import Store

PLAYERS = ["ani", "alex", "frank"]
AT = "2024-05-01T12:00:00Z"  # library calls get their time passed in, never the clock


@pytest.fixture
def revealed(tmp_path):
    """Step 1.1: ani committed 'none' (illegal: some die always fits in the first step),
    alex text that is no choice at all, frank a legal choice spelled loosely."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, start=True, at=AT)
    session = loading.load(store, "g")
    option = next(r for r in session.pending() if r.player == "frank").options[-1]
    loose = " " + " ".join(reversed(option.lower().split(","))) + " "
    choices = {"ani": "none", "alex": "Q!", "frank": loose}
    defaults = {p: session.rules.default(session.state, p, "select") for p in PLAYERS}
    for player, choice in choices.items():
        commands.commit(store, "g", player, make_commitment("g", 1, 1, player, choice, "ab" * 32), at=AT)
    for player, choice in choices.items():
        commands.reveal(store, "g", player, choice, "ab" * 32, at=AT)
    reveals = {e.data["player"]: e.data for e in store.events("g") if e.kind == "reveal"}
    yield store, reveals, defaults, option, loose
    store.close()


def test_an_illegal_choice_is_logged_with_its_reason_and_code(revealed):
    _store, reveals, defaults, _option, _loose = revealed
    ani = reveals["ani"]
    assert ani["choice"] == "none" and ani["applied"] == defaults["ani"]
    assert ani["illegal_code"] == "must-select"
    assert ani["illegal"].startswith("illegal: none: at least one die fits")


def test_an_unparseable_choice_is_logged_as_committed_with_the_code_syntax(revealed):
    _store, reveals, defaults, _option, _loose = revealed
    alex = reveals["alex"]
    assert alex["choice"] == "Q!" and alex["applied"] == defaults["alex"]
    assert alex["illegal_code"] == "syntax" and alex["illegal"].startswith("not understood: 'Q!'")


def test_a_loosely_spelled_legal_choice_is_logged_as_committed_and_applied_canonical(revealed):
    _store, reveals, _defaults, option, loose = revealed
    frank = reveals["frank"]
    assert frank["choice"] == loose and frank["applied"] == option
    assert frank["illegal"] is None and "illegal_code" not in frank


def _replay(store, change=None):
    rows = [e.export_dict() for e in store.events("g")]
    rows = copy.deepcopy(rows)
    if change:
        change({r["data"]["player"]: r["data"] for r in rows if r["kind"] == "reveal"})
    seed = bytes.fromhex(store.get_secret("g", loading.SEED))
    return Session.replay("g", rows, seed, audit=True)


def test_replay_checks_the_code(revealed):
    store = revealed[0]
    _replay(store)
    with pytest.raises(AuditFailure, match="recorded illegal_code 'capacity' differs from the rules' 'must-select'"):
        _replay(store, lambda r: r["ani"].update(illegal_code="capacity"))
    with pytest.raises(AuditFailure, match="recorded illegal_code 'syntax', but the revealed choice is legal"):
        _replay(store, lambda r: r["frank"].update(illegal_code="syntax"))


def test_a_log_written_before_the_code_was_recorded_still_replays(revealed):
    store = revealed[0]
    _replay(store, lambda r: [r[p].pop("illegal_code") for p in ("ani", "alex")])


def test_an_open_default_carries_the_current_round_and_step(tmp_path):
    """A default for an open request is numbered like a decision: the game's round and the
    number of its latest roll step; a replay refuses any other numbers."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", PLAYERS, {}, start=True, at=AT)
    for _ in range(200):
        session = loading.load(store, "g")
        open_requests = [r for r in session.pending() if not r.sealed]
        if open_requests:
            break
        for player in session.sealed.owes_commit():
            commands.nmr(store, "g", player, force=True, at=AT)
    else:
        pytest.fail("no open request in 200 steps")
    player = open_requests[0].player
    commands.nmr(store, "g", player, force=True, at=AT)
    rows = [e.export_dict() for e in store.events("g")]
    default = next(r for r in reversed(rows) if r["kind"] == "default")
    assert default["data"]["sealed"] is False and default["data"]["player"] == player
    assert (default["data"]["round"], default["data"]["step"]) == (session.state.round, session.state.step)
    assert session.state.step >= 1
    seed = bytes.fromhex(store.get_secret("g", loading.SEED))
    Session.replay("g", rows, seed, audit=True)
    default["data"]["step"] += 1
    with pytest.raises(AuditFailure, match="this default is for round .* the game is at round"):
        Session.replay("g", rows, seed, audit=True)
    store.close()
