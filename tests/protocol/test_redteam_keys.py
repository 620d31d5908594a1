"""The dishonest judge's key swaps that issue 27 did not test (docs/protocol.md §15): every
one goes through pbem's own commands, so no edit of the log is needed, and the verdict
must name it."""

from __future__ import annotations

import json

import pytest

from pbem.protocol import away, commands, offline, submissions
from pbem.protocol.signing import generate_keypair
from pbem.store import Store, audit, export_lines

T0 = "2026-04-01T08:00:00Z"


def verdict_of(store) -> dict:
    text = "".join(export_lines(store.events("g")))
    return audit.audit_file(text)


@pytest.fixture
def keys():
    return {who: generate_keypair() for who in ("ani", "alex", "judge")}


def test_a_first_key_the_judge_set_then_changed_by_its_own_signature_is_named(tmp_path, keys):
    """The judge registers its own key in ani's seat, grinds ani's client seed with it,
    starts, then changes the seat's key to ani's own by a block signed with its key: every
    check passes (the seed is signed with the key held at start, the change with the key
    the seat held), so the verdict must name the change for ani to see it was not hers."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={"alex": keys["alex"][1]}, at=T0)
    commands.register_key(store, "g", "ani", keys["judge"][1], at=T0)
    submissions.submit(store, "g", offline.client_seed_block("g", "ani", "ground", keys["judge"][0]), at=T0)
    commands.start_game(store, "g", at=T0)
    submissions.submit(store, "g", offline.key_change_block("g", "ani", keys["ani"][1], keys["judge"][0]), at=T0)
    commands.reveal_seed(store, "g", force=True, at=T0)
    report = verdict_of(store)
    assert report["verdict"] == "OK"
    assert "ani's key was changed once by a block signed with the seat's key" in report["verdict_line"]
    assert report["discretion"]["signed_key_changes"] == {"ani": 1}


def test_a_replacement_before_the_start_is_a_key_change_before_start(tmp_path, keys):
    """A key change hidden as a ``replaced`` event before the start (a seat cannot change
    hands before anyone played it): named as what it is, a key change before start."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={"ani": keys["ani"][1], "alex": keys["alex"][1]}, at=T0)
    away.replace(store, "g", "ani", key=keys["judge"][1], reason="moved house", at=T0)
    submissions.submit(store, "g", offline.client_seed_block("g", "ani", "ground", keys["judge"][0]), at=T0)
    commands.start_game(store, "g", at=T0)
    submissions.submit(store, "g", offline.key_change_block("g", "ani", keys["ani"][1], keys["judge"][0]), at=T0)
    commands.reveal_seed(store, "g", force=True, at=T0)
    report = verdict_of(store)
    assert report["verdict"] == "OK"
    line = report["verdict_line"]
    assert "ani's key was changed once before start" in line, line
    assert "ani's key was changed once by a block signed with the seat's key" in line, line
    assert report["discretion"]["key_changes"] == {"ani": 1}


def test_a_player_rotating_their_own_key_is_named_too(tmp_path, keys):
    """Honest or not, a signed change reads the same in the log: the verdict names it and
    the player whose seat it is tells whether it was theirs."""
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={"ani": keys["ani"][1], "alex": keys["alex"][1]}, at=T0)
    new = generate_keypair()
    submissions.submit(store, "g", offline.key_change_block("g", "alex", new[1], keys["alex"][0]), at=T0)
    submissions.submit(store, "g", offline.key_change_block("g", "alex", keys["alex"][1], new[0]), at=T0)
    report = verdict_of(store)
    assert report["verdict"] == "INCOMPLETE"
    assert json.loads(json.dumps(report["discretion"]))["signed_key_changes"] == {"alex": 2}


def test_the_report_shows_the_keys_the_seats_held_at_the_start(tmp_path, keys):
    """What the audit cannot know (a player's own key) the player can: the report lists each
    seat's key at the start by its fingerprint, as pbem keygen printed it, so a judge that
    registered its own key for a seat, and kept it, is seen by that seat's player."""
    from pbem.protocol.signing import fingerprint
    from pbem.store.audit import report_text
    store = Store(tmp_path / "g.db")
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={"alex": keys["alex"][1]}, at=T0)
    commands.register_key(store, "g", "ani", keys["judge"][1], at=T0)  # the judge's, kept
    commands.start_game(store, "g", at=T0)
    report = verdict_of(store)
    assert report["keys_at_start"] == {"alex": fingerprint(keys["alex"][1]), "ani": fingerprint(keys["judge"][1])}
    assert (f"seat keys at the start (each player compares their own key's fingerprint, as pbem keygen printed "
            f"it): alex {fingerprint(keys['alex'][1])}, ani {fingerprint(keys['judge'][1])}") in report_text(report)
