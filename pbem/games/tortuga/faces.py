"""The dice face table: which value each die shows for each action.

The table is data. A file holds one line per die, A to E, each giving the values of the
five actions in the order fleet, crew, hunt, board, raid, e.g. ``A: 1 2 3 4 5``. Blank
lines and ``#`` comments are ignored. Each die must show 1..5 once each (a permutation).
The built-in default (a project ruling, the printed table being lost in the text) is the
cyclic Latin square ``value(die i, action j) = ((i + j) mod 5) + 1`` with A=0..E=4.
"""

from __future__ import annotations

from .model import LETTERS

DEFAULT_FACES = tuple(tuple(((i + j) % 5) + 1 for j in range(5)) for i in range(5))


class FaceTableError(ValueError):
    pass


def validate(faces) -> tuple:
    rows = tuple(tuple(int(v) for v in row) for row in faces)
    if len(rows) != 5:
        raise FaceTableError(f"face table needs 5 dice (A-E), got {len(rows)}")
    for letter, row in zip(LETTERS, rows):
        if sorted(row) != [1, 2, 3, 4, 5]:
            raise FaceTableError(
                f"die {letter} must show the values 1 to 5 once each, got {' '.join(map(str, row))}"
            )
    return rows


def parse(text: str) -> tuple:
    """Parse the face table file format (see module doc)."""
    rows: dict[str, list[int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        letter, sep, rest = line.partition(":")
        letter = letter.strip().upper()
        if not sep or letter not in LETTERS:
            raise FaceTableError(f"line {number}: expected 'A: 1 2 3 4 5' (die letter A-E, colon, five values)")
        if letter in rows:
            raise FaceTableError(f"line {number}: die {letter} is given twice")
        try:
            values = [int(v) for v in rest.replace(",", " ").split()]
        except ValueError:
            raise FaceTableError(f"line {number}: values must be whole numbers 1-5") from None
        if len(values) != 5:
            raise FaceTableError(f"line {number}: die {letter} needs 5 values (fleet crew hunt board raid), got {len(values)}")
        rows[letter] = values
    missing = [c for c in LETTERS if c not in rows]
    if missing:
        raise FaceTableError(f"face table is missing die {', '.join(missing)}")
    return validate(rows[c] for c in LETTERS)


def format_table(faces) -> str:
    return "".join(f"{c}: {' '.join(map(str, row))}\n" for c, row in zip(LETTERS, faces))
