"""The verifier page on keys and extensions (docs/protocol.md §14, §16): a key swapped to
grind a client seed, a key changed after the start without the old key's signature, a
player's extension unsigned or badly signed; the page's verdict and first reason are the
audit's, word for word, and an honest game's verdict names the same acts."""

from __future__ import annotations

import pytest

from pbem.protocol import away, commands, loading, offline, submissions
from pbem.protocol.discretion import extension_body, key_change_body
from pbem.protocol.rng import combine_client_seeds
from pbem.protocol.signing import generate_keypair, sign
from pbem.store import Store, export_lines

AT = "2030-01-01T10:00:00Z"
NAMES = ["ani", "alex", "frank"]


def check(pages, page, text: str, name: str) -> dict:
    shown = page.verify(text, name=name)
    expected, _code = pages.audit_line(pages.tmp / name)
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    return shown


@pytest.fixture
def page(pages):
    return pages.page()


def _new(tmp, name: str, **options):
    store = Store(tmp / f"{name}.db", create=True)
    keys = {p: generate_keypair() for p in NAMES + ["judge", "ani2"]}
    commands.create_game(store, name, "tortuga", NAMES, {}, require_signatures=True,
                         keys={p: keys[p][1] for p in NAMES}, at=AT, **options)
    return store, keys


def _text(store, game: str) -> str:
    return "".join(export_lines(store.events(game)))


def _play(store, game: str, keys: dict, moves: int) -> None:
    """Bots play ``moves`` signed submissions, each player with the key their seat holds."""
    session = loading.load(store, game)
    bots = {p: session.rules.bot(f"{game}/{p}", "random") for p in NAMES}
    for _ in range(moves):
        step = session.sealed
        if step is not None and step.owes_commit():
            player = step.owes_commit()[0]
            sealed = commands.seal(session, player, bots[player].choose(session.state, player, step.kind))
            blocks = offline.signed_blocks(sealed, keys[player])
            submissions.submit(store, game, blocks["commit"], at=AT)
            if not loading.load(store, game).sealed.owes_commit():
                return
        else:
            request = session.pending()[0]
            choice = bots[request.player].choose(session.state, request.player, request.kind)
            submissions.submit(store, game, offline.signed_decision(session, request.player, choice,
                                                                     keys[request.player]), at=AT)
        session = loading.load(store, game)


def test_a_key_swap_that_grinds_a_client_seed_fails_on_the_page_as_in_the_audit(pages, page):
    store, keys = _new(pages.tmp, "swap")
    commands.register_key(store, "swap", "ani", keys["judge"][1], at=AT)
    submissions.submit(store, "swap", offline.client_seed_block("swap", "ani", "ground", keys["judge"][0]), at=AT)
    commands.register_key(store, "swap", "ani", keys["ani"][1], at=AT)
    rows = pages.rows_of(_text(store, "swap"))
    rows.append({**rows[-1], "seq": len(rows) + 1, "kind": "started",
                 "data": {"client_entropy": combine_client_seeds({"ani": "ground"})}})
    shown = check(pages, page, pages.rechain(rows), "swap.jsonl")
    assert shown["verdict"] == "FAIL"
    assert shown["line"].startswith(f"FAIL: event {len(rows)}: ani's client seed is not signed with the key ani "
                                    f"holds at the start")
    # signed again with the seat's key, the game starts, and both changes are named
    submissions.submit(store, "swap", offline.client_seed_block("swap", "ani", "ani's own", keys["ani"][0]), at=AT)
    commands.start_game(store, "swap", at=AT)
    shown = check(pages, page, _text(store, "swap"), "swap-honest.jsonl")
    assert shown["verdict"] == "INCOMPLETE"
    assert shown["line"].endswith("; the judge's discretion: ani's key was changed twice before start")


def test_key_changes_after_the_start_on_the_page_as_in_the_audit(pages, page):
    store, keys = _new(pages.tmp, "keys", start=True)
    secrets = {p: keys[p][0] for p in NAMES}
    _play(store, "keys", secrets, 2)
    block = offline.key_change_block("keys", "ani", keys["ani2"][1], keys["ani"][0])
    submissions.submit(store, "keys", block, at=AT)
    secrets["ani"] = keys["ani2"][0]
    _play(store, "keys", secrets, 12)
    text = _text(store, "keys")
    shown = check(pages, page, text, "keys.jsonl")
    # the player's own change is named too (§15: a judge that held the seat's key could sign one)
    assert shown["verdict"] == "INCOMPLETE" and "before start" not in shown["line"]
    assert shown["line"].endswith("ani's key was changed once by a block signed with the seat's key"), shown["line"]
    rows = pages.rows_of(text)
    at = next(i for i, r in enumerate(rows) if r["kind"] == "key")
    # the judge's own change, unsigned, after the start
    forged = [dict(r) for r in rows]
    forged[at] = {**rows[at], "data": {"player": "ani", "public_key": keys["judge"][1]}}
    shown = check(pages, page, pages.rechain(forged[:at + 1]), "keys-unsigned.jsonl")
    assert shown["line"].startswith(f"FAIL: event {at + 1}: game keys has started, so ani's key changes only by "
                                    f"a block signed with the key the seat holds")
    # signed with the new key instead of the one the seat held
    body = key_change_body("keys", {"player": "ani", "public_key": keys["judge"][1], "nonce": "n1"})
    forged[at] = {**rows[at], "data": {**body, "signature": sign(keys["judge"][0], body)}}
    for k in ("v", "game", "kind"):
        del forged[at]["data"][k]
    shown = check(pages, page, pages.rechain(forged[:at + 1]), "keys-badsig.jsonl")
    assert shown["line"] == (f"FAIL: event {at + 1}: the signature on ani's key change is not valid for the key "
                             f"their seat holds")


def test_a_players_extension_on_the_page_as_in_the_audit(pages, page):
    store, keys = _new(pages.tmp, "ext", start=True, deadline_seconds=86400)
    session = loading.load(store, "ext")
    player, _what, _sealed, clock = session.owed()[0]
    block = offline.extension_block("ext", player, (clock[1], clock[2]), 3600, keys[player][0])
    submissions.submit(store, "ext", block, at=AT)
    text = _text(store, "ext")
    shown = check(pages, page, text, "ext.jsonl")
    assert shown["line"].endswith(", 1 extension (0 by the moderator)")
    rows = pages.rows_of(text)
    data = rows[-1]["data"]
    unsigned = {k: v for k, v in data.items() if k not in ("signature", "nonce", "round", "step", "seconds")}
    shown = check(pages, page, pages.rechain(rows[:-1] + [{**rows[-1], "data": unsigned}]), "ext-unsigned.jsonl")
    assert shown["line"].endswith(", 1 extension (1 by the moderator)")
    other = next(p for p in NAMES if p != player)
    bad = {**data, "signature": sign(keys[other][0], extension_body("ext", data))}
    shown = check(pages, page, pages.rechain(rows[:-1] + [{**rows[-1], "data": bad}]), "ext-badsig.jsonl")
    assert shown["line"] == (f"FAIL: event {len(rows)}: the signature on {player}'s extension is not valid for the "
                             f"key their seat holds")
    longer = {**data, "seconds": 1800, "signature": sign(keys[player][0], extension_body("ext", {**data, "seconds": 1800}))}
    shown = check(pages, page, pages.rechain(rows[:-1] + [{**rows[-1], "data": longer}]), "ext-longer.jsonl")
    assert shown["line"].startswith(f"FAIL: event {len(rows)}: {player} signed an extension of round {clock[1]} "
                                    f"step {clock[2]} by 30m, but this event moves")
    # the moderator's extension of a signed game stays unsigned and the moderator's
    away.extend(store, "ext", seconds=600, reason="a holiday", at=AT)
    shown = check(pages, page, _text(store, "ext"), "ext-moderator.jsonl")
    assert shown["line"].endswith(", 2 extensions (1 by the moderator)")


def test_key_changes_hidden_from_the_verdict_are_named_on_the_page_as_in_the_audit(pages, page):
    """docs/protocol.md §15: a key the judge registered first and changed by its own
    signed block after the start, and a replacement before the start, read as the audit's."""
    store, keys = _new(pages.tmp, "hidden")
    away.replace(store, "hidden", "ani", key=keys["judge"][1], reason="moved house", at=AT)
    submissions.submit(store, "hidden", offline.client_seed_block("hidden", "ani", "ground", keys["judge"][0]), at=AT)
    commands.start_game(store, "hidden", at=AT)
    submissions.submit(store, "hidden", offline.key_change_block("hidden", "ani", keys["ani"][1], keys["judge"][0]),
                       at=AT)
    commands.reveal_seed(store, "hidden", force=True, at=AT)
    shown = check(pages, page, _text(store, "hidden"), "hidden.jsonl")
    assert shown["verdict"] == "OK"
    assert "ani's key was changed once before start, ani's key was changed once by a block signed with the " \
           "seat's key" in shown["line"], shown["line"]
