"""Points of docs/protocol.md and the rules docs that a checker written from the docs alone
needed (issue 29, item 10), each pinned: the doc says it, and pbem does it."""

from __future__ import annotations

from pathlib import Path

from pbem.games.tortuga1667.setup import check_players
from pbem.protocol import away, commands, loading, standin
from pbem.store import Store

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROTOCOL = (DOCS / "protocol.md").read_text(encoding="utf-8")
RULES = (DOCS / "rules.md").read_text(encoding="utf-8")
RULES_1667 = (DOCS / "rules-1667.md").read_text(encoding="utf-8")
T0 = "2030-01-01T10:00:00Z"
DAY = 86400


def flat(text: str) -> str:
    return " ".join(text.split())


def game(tmp_path, **kw):
    store = Store(tmp_path / "g.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex", "frank"], {}, start=True, at=T0, **kw)
    return store


def test_forced_defaults_count_toward_the_stand_in(tmp_path):
    assert "`forced` or not: a `pbem nmr --force` counts like one that was due" in flat(PROTOCOL)
    for doc in (RULES, RULES_1667):
        assert "(an `nmr` or a late `default`, due or forced with `pbem nmr --force`)" in flat(doc)
    store = game(tmp_path, stand_in_after=1)
    commands.nmr(store, "g", "ani", force=True, at=T0)
    assert "ani" in loading.load(store, "g").standing_in


def test_the_deadline_a_forced_default_records(tmp_path):
    assert ("A forced default records the same `deadline` an unforced one would: the request's deadline as "
            "resumes and extensions moved it, plus the grace period, even while the game is paused") in flat(PROTOCOL)
    store = game(tmp_path, deadline_seconds=DAY)
    away.pause(store, "g", "a break", at="2030-01-01T11:00:00Z")
    commands.nmr(store, "g", "ani", force=True, at="2030-01-01T12:00:00Z")
    nmr = next(e.data for e in store.events("g") if e.kind == "nmr")
    assert nmr["forced"] is True and nmr["deadline"] == "2030-01-02T10:00:00Z"
    store2 = Store(tmp_path / "none.db", create=True)
    commands.create_game(store2, "g", "tortuga", ["ani", "alex", "frank"], {}, start=True, at=T0)
    commands.nmr(store2, "g", "ani", force=True, at=T0)
    assert next(e.data for e in store2.events("g") if e.kind == "nmr")["deadline"] is None


def test_reveal_is_a_request_kind_in_an_extension(tmp_path):
    assert "the word `reveal` for a reveal owed once every commitment is in" in flat(PROTOCOL)
    store = game(tmp_path, deadline_seconds=DAY)
    session = loading.load(store, "g")
    sealed = commands.seal(session, "ani", session.requests_of("ani")[0].default)
    commands.commit(store, "g", "ani", sealed["commitment"], at=T0)
    for player in ("alex", "frank"):
        commands.commit_for_player(store, "g", player, session.requests_of(player)[0].default, at=T0)
    outcome: dict = {}
    away.extend(store, "g", "ani", seconds=3600, at=T0, outcome=outcome)
    assert [r["kind"] for r in outcome["requests"]] == ["reveal"]


def test_at_most_a_thousand_stand_in_moves_in_one_command():
    assert standin.MAX_MOVES == 1000
    assert "One command makes at most 1,000 stand-in moves" in flat(PROTOCOL)
    assert "One command makes at most 1,000 stand-in moves" in flat(RULES)
    assert "one command makes at most 1,000 stand-in moves" in flat(RULES_1667)


def test_the_stand_in_numbers_options_in_the_documented_order():
    text = flat(PROTOCOL)
    assert ("Each request's options are numbered in the order the rules documents give (docs/rules.md \"The listed "
            "options, in their order\"; docs/rules-1667.md `option-order`, with `loot-order` for loot)") in text
    assert "**The listed options, in their order**" in RULES
    assert "**Options, in order** (`option-order`)" in RULES_1667
    assert "numbered in the order of `option-order` below (`loot` in the order of `loot-order`)" in flat(RULES_1667)


def test_tied_in_the_result_rows():
    from pbem.render.tortuga1667 import final_model
    assert ("has `player`, `team`, `total`, `winner` and `tied`: `tied` is true on every row when the British and "
            "French totals are equal") in flat(RULES_1667)
    result = {"totals": {"british": 5, "french": 5}, "loyalty": {"a": "british", "b": "french", "c": "dutch"},
              "scores": {p: {"total": 5} for p in "abc"}, "winners": ["c"], "winner": "dutch"}
    assert [r["tied"] for r in final_model(result, "g", ["a", "b", "c"])["rows"]] == [True, True, True]
    result["totals"] = {"british": 6, "french": 5}
    assert [r["tied"] for r in final_model(result, "g", ["a", "b", "c"])["rows"]] == [False, False, False]


def test_ship_aliases_are_player_names():
    assert ("The ships' aliases (`flyingdutchman`, `fd`, `jollyroger`, `roger`, `jr`) are not reserved and are "
            "accepted as player names") in flat(RULES_1667)
    assert check_players(["fd", "roger", "jr", "flyingdutchman"])
