"""Reading command lines: a game's own choice that begins with a keyword stays a choice."""

from pbem.mail.lines import read_lines


def verbs(*lines: str) -> list[tuple[str, tuple]]:
    return [(c.verb, c.args) for c in read_lines(list(lines)).commands]


def test_reveal_with_a_salt_is_the_protocol_reveal():
    salt = "ab" * 32
    assert verbs(f"reveal B,C {salt}") == [("reveal", ("B,C", salt))]
    assert verbs(f"Reveal vote 2 {salt}") == [("reveal", ("vote 2", salt))]


def test_a_salt_cut_short_is_still_read_as_a_reveal_so_the_answer_names_the_salt():
    assert verbs("reveal A 0123456789abcdef0") == [("reveal", ("A", "0123456789abcdef0"))]


def test_reveal_without_a_salt_is_a_games_choice():
    """Tortuga 1667's action 'reveal 3' (turn an event card face up) is no protocol reveal."""
    assert verbs("reveal 3") == [("choice", ("reveal 3",))]
    assert verbs("reveal") == [("choice", ("reveal",))]
    assert verbs("reveal 3 4") == [("choice", ("reveal 3 4",))]
