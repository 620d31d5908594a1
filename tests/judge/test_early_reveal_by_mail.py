"""A reveal sent early, by mail (docs/protocol.md §3, "A reveal sent early"; docs/email.md,
"The third way"): what the player who sent it reads afterwards, and what nobody else sees."""

from __future__ import annotations

from pbem.protocol import commands


def _sealed_at_home(game, player: str) -> dict:
    session = game.session()
    return commands.seal(session, player, session.rules.default(session.state, player, session.sealed.kind))


def _latest_private(game, player: str) -> str:
    rows = [r for r in game.outbox() if r["recipient"] == f"{player}@example.org"
            and f"private message for {player}" in (r["body_text"] or "")]
    return rows[-1]["body_text"]


def test_a_player_whose_reveal_is_held_is_not_told_to_send_it(game):
    made = _sealed_at_home(game, "alex")
    result = game.send("alex", f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
                               f"reveal {made['choice']} {made['salt']}\n")
    assert [line["ok"] for line in result.lines] == [True, True]
    game.send("alex", "private")
    text = _latest_private(game, "alex")
    you_owe = next(line for line in text.splitlines() if line.startswith("You owe: "))
    assert "send your reveal" not in you_owe and "nothing more is needed from you" in you_owe, you_owe
    assert "reveal CHOICE SALT" not in text.split("You owe: ")[1].split("-----")[0]
    # nobody but alex's own answer ever carried the salt
    assert [(r["kind"], r["recipient"]) for r in game.outbox() if made["salt"] in (r["body_text"] or "")] == \
        [("answer", "alex@example.org")]


def test_a_player_whose_new_commitment_replaced_the_one_the_held_reveal_opens_still_owes_a_reveal(game):
    made = _sealed_at_home(game, "alex")
    game.send("alex", f"password {game.passwords['alex']}\ncommit {made['commitment']}\n"
                      f"reveal {made['choice']} {made['salt']}\n")
    again = _sealed_at_home(game, "alex")
    game.send("alex", f"password {game.passwords['alex']}\ncommit {again['commitment']}\n")
    game.send("alex", "private")
    you_owe = next(line for line in _latest_private(game, "alex").splitlines() if line.startswith("You owe: "))
    assert "then send your reveal" in you_owe, you_owe
