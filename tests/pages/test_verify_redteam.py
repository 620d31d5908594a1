"""The dishonest judge's lies that issue 27 did not test, on the verifier page (docs/protocol.md
§15): the page's verdict is the audit's, word for word."""

from __future__ import annotations

import pytest

from pbem.protocol import commands
from pbem.store import Store, export_lines

T0 = "2026-04-01T08:00:00Z"


@pytest.fixture
def page(pages):
    return pages.page()


@pytest.mark.parametrize("spelling", ["2026-04-01T09:30:00+01:00", "２０２６-04-01T09:30:00Z", "2026-02-30T09:30:00Z"])
def test_an_event_time_in_another_spelling_fails_on_the_page_as_in_the_audit(pages, page, spelling):
    store = Store(pages.tmp / "times.db", create=True)
    if not store.count("g"):
        commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, deadline_seconds=3600, start=True, at=T0)
        commands.nmr(store, "g", "ani", at="2026-04-01T09:00:00Z")
        commands.reveal_seed(store, "g", force=True, at="2026-04-01T09:10:00Z")
    rows = pages.rows_of("".join(export_lines(store.events("g"))))
    nmr = next(i for i, r in enumerate(rows) if r["kind"] == "nmr")
    rows[nmr]["at"] = spelling
    rows[nmr + 1]["at"] = "2026-04-01T09:40:00Z"
    name = f"times-{spelling[:4]}-{spelling[8:10]}.jsonl"
    shown = page.verify(pages.rechain(rows), name=name)
    expected, _code = pages.audit_line(pages.tmp / name)
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    assert shown["line"].startswith(f"FAIL: event {nmr + 1}: event time "), shown["line"]


def test_a_signed_extension_recorded_on_part_of_the_step_fails_on_the_page_as_in_the_audit(pages, page):
    import json

    from pbem.protocol import offline, submissions
    from pbem.protocol.signing import generate_keypair
    from tests.protocol.test_redteam_extensions import PLAYERS, owes_twice  # noqa: E402
    keys = {p: generate_keypair() for p in PLAYERS}
    store = Store(pages.tmp / "part.db", create=True)
    commands.create_game(store, "g1", "tortuga", PLAYERS, {}, deadline_seconds=86400, start=True, at=T0,
                         keys={p: keys[p][1] for p in PLAYERS})
    player, round_, step = owes_twice(store)
    submissions.submit(store, "g1", offline.extension_block("g1", player, (round_, step), 3600, keys[player][0]), at=T0)
    commands.reveal_seed(store, "g1", force=True, at=T0)
    rows = pages.rows_of("".join(export_lines(store.events("g1"))))
    rows[-2]["data"]["requests"] = rows[-2]["data"]["requests"][:1]
    shown = page.verify(pages.rechain(json.loads(json.dumps(rows))), name="part.jsonl")
    expected, _code = pages.audit_line(pages.tmp / "part.jsonl")
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    assert shown["line"].startswith(f"FAIL: event {len(rows) - 1}: {player} signed an extension of everything"), \
        shown["line"]


def test_the_page_shows_the_keys_the_seats_held_at_the_start_as_the_audit_does(pages, page):
    from pbem.protocol.signing import fingerprint, generate_keypair
    from pbem.store.audit import audit_file, report_text
    keys = {p: generate_keypair() for p in ("ani", "alex", "judge")}
    store = Store(pages.tmp / "start-keys.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex"], {}, require_signatures=True,
                         keys={"alex": keys["alex"][1]}, at=T0)
    commands.register_key(store, "g", "ani", keys["judge"][1], at=T0)
    commands.start_game(store, "g", at=T0)
    text = "".join(export_lines(store.events("g")))
    line = (f"seat keys at the start (each player compares their own key's fingerprint, as pbem keygen printed it): "
            f"alex {fingerprint(keys['alex'][1])}, ani {fingerprint(keys['judge'][1])}")
    assert line in report_text(audit_file(text))
    shown = page.verify(text, name="start-keys.jsonl")
    assert line in shown["details"], shown["details"]


def test_an_early_reveal_moved_before_the_last_commitment_fails_on_the_page_as_in_the_audit(pages, page):
    import json

    from pbem.protocol import loading
    store = Store(pages.tmp / "moved.db", create=True)
    commands.create_game(store, "g", "tortuga", ["ani", "alex", "frank"], {}, deadline_seconds=3600, start=True, at=T0)
    for player in ("ani", "alex", "frank"):
        session = loading.load(store, "g")
        made = commands.seal(session, player, session.rules.default(session.state, player, "select"))
        commands.commit(store, "g", player, made["commitment"], at=T0)
        if player == "ani":
            commands.reveal(store, "g", player, made["choice"], made["salt"], at=T0)  # held
    rows = pages.rows_of("".join(export_lines(store.events("g"))))
    assert rows[-1]["kind"] == "reveal"
    moved = rows[:-3] + [rows[-3], rows[-1], rows[-2]]
    shown = page.verify(pages.rechain(json.loads(json.dumps(moved))), name="moved.jsonl")
    expected, _code = pages.audit_line(pages.tmp / "moved.jsonl")
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    assert shown["line"].startswith("FAIL: event "), shown["line"]


def test_an_honest_game_of_early_reveals_agrees_with_its_receipts_on_the_page_as_in_the_audit(pages, page):
    from tests.protocol.test_redteam_early import honest_game
    folder = pages.tmp / "honest-early"
    folder.mkdir(exist_ok=True)
    store, text = honest_game(folder, "tortuga")
    (folder / "receipts.txt").write_text(text, encoding="utf-8")
    export = "".join(export_lines(store.events("g")))
    (folder / "g.jsonl").write_text(export, encoding="utf-8")
    shown = page.verify(export, name="honest-early.jsonl", receipts=text)
    expected, _code = pages.audit_line(folder / "g.jsonl", "--receipt", str(folder / "receipts.txt"))
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    assert shown["line"].startswith("OK") and "receipts checked" in shown["line"], shown["line"]


@pytest.mark.parametrize("scenario, verdict", [
    ("drop_the_held_reveal", "FAIL"),  # the judge drops a reveal sent early and defaults its player
    ("replaced_after_the_held_reveal", "OK"),  # the seat replaced, its orphaned commitment defaulted: honest
])
def test_a_held_reveal_s_receipt_against_a_later_default_on_the_page_as_in_the_audit(pages, page, scenario, verdict):
    """The receipt of a held reveal (docs/protocol.md §3, §12) makes the page FAIL as the
    audit does when the judge dropped the reveal, and neither when the seat was replaced."""
    from tests.protocol import test_redteam_early
    folder = pages.tmp / scenario
    folder.mkdir(exist_ok=True)
    _store, held, export = getattr(test_redteam_early, scenario)(folder)
    (folder / "ani.txt").write_text(held, encoding="utf-8")
    shown = page.verify(export.read_text(encoding="utf-8"), name=f"{scenario}.jsonl", receipts=held)
    expected, _code = pages.audit_line(export, "--receipt", str(folder / "ani.txt"))
    assert shown["line"] == expected, f"page: {shown['line']}\naudit: {expected}"
    if verdict == "FAIL":
        assert shown["line"].startswith("FAIL") and "the judge dropped the reveal" in shown["line"], shown["line"]
    else:
        assert not shown["line"].startswith("FAIL"), shown["line"]
