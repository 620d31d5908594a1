"""A game's ``headline(state)`` (read for every status report instead of the whole public
view) says exactly what the view says of the round, step, phase and start player."""

from __future__ import annotations

import pytest

from pbem import games
from pbem.games.base import headline
from pbem.protocol.rng import RandomSource

NAMES = ("ani", "bo", "cy", "dee", "eve", "fay", "gus", "hal", "ivy")


def from_view(rules, state) -> dict:
    """The fields as the status report took them from the public view before the hook."""
    view = rules.view(state, None)
    return {"round": view.get("round", state.round), "step": view.get("step", state.step),
            "phase": view["phase"], "start_player": view.get("start_player")}


def states(game_type: str, players: int, seed: int, options: dict | None, style: str):
    rules = games.get(game_type)
    rng = RandomSource.for_testing(f"headline/{seed}", game_id=f"h{seed}")
    state = rules.setup(NAMES[:players], options, rng)
    bots = {p: rules.bot(f"{seed}/{p}", style) for p in NAMES[:players]}
    yield state
    for _ in range(5000):
        requests = rules.pending(state)
        if not requests:
            return
        r = requests[0]
        state = rules.apply(state, r.player, bots[r.player].choose(state, r.player, r.kind), rng)
        yield state
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("game_type, players, variant, style, phases", [
    ("tortuga1667", 4, "standard", "random", {"play", "over"}), ("tortuga1667", 5, "standard", "random", {"play", "over"}),
    ("tortuga1667", 9, "standard", "random", {"play", "over"}), ("tortuga1667", 6, "advanced", "random", {"play", "over"}),
    ("tortuga1667", 5, "standard", "informed", {"play", "over"}),
    ("tortuga1667", 7, "advanced", "informed", {"play", "over"}),  # and "sudden" when an even tie-break comes
    ("tortuga", 2, "standard", "random", {"roll", "over"}), ("tortuga", 3, "long", "greedy", {"roll", "over"}),
    ("tortuga", 4, "standard", "greedy", {"roll", "over"})])
def test_a_game_s_headline_is_what_its_public_view_says(game_type, players, variant, style, phases):
    rules = games.get(game_type)
    seen = set()
    for seed in range(3):
        for state in states(game_type, players, seed, {"variant": variant}, style):
            assert rules.headline(state) == from_view(rules, state)
            assert list(rules.headline(state)) == ["round", "step", "phase", "start_player"]
            seen.add(state.phase)
    assert phases <= seen, seen


def test_a_game_without_the_hook_is_read_from_its_view():
    rules = games.get("tortuga1667")
    without = type("Rules", (), {"view": staticmethod(rules.view)})
    for state in states("tortuga1667", 5, 1, None, "random"):
        assert headline(without, state) == rules.headline(state)


@pytest.mark.parametrize("game_type, players", [("tortuga1667", 5), ("tortuga", 3)])
def test_the_status_report_is_the_same_with_or_without_the_hook(tmp_path, game_type, players):
    """The whole status report at every event of a protocol game, through the hook and
    through the view: the same dict, key order included (status --json prints it)."""
    from pbem.protocol import commands, loading, reports
    from pbem.render.demo import play_bots
    from pbem.store import Store

    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", game_type, list(NAMES[:players]), {}, start=True, at="2024-05-01T12:00:00Z")
    play_bots(store, "g", "headline", at="2024-05-01T12:00:00Z")
    rules = games.get(game_type)
    without = type("Rules", (), {name: staticmethod(getattr(rules, name)) for name in ("view", "pending", "result")})

    def both(session, seq):
        head = (seq, "x" * 64)
        hooked = reports.status(session, head)
        real = session.rules
        session.rules = without
        try:
            plain = reports.status(session, head)
        finally:
            session.rules = real
        assert list(hooked.items()) == list(plain.items()), seq
        both.count += 1
    both.count = 0
    seed = bytes.fromhex(store.get_secret("g", loading.SEED))
    from pbem.protocol.session import Session
    Session.replay("g", store.events("g"), seed, held=loading.held_source(store, "g"), after_each=both)
    assert both.count == store.head("g")[0] > 20
