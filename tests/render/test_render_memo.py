"""The memo of rendered pieces (a board's tracks, areas and action spaces, kept by content)
and the quicker ``x.name`` on dicts give the very bytes Jinja gives without them."""

from __future__ import annotations

import itertools

import jinja2
import pytest

from pbem.render.environment import environment
from pbem.render.escape import finalizer

BOARD = '{% from "tortuga/board.svg.html" import board_svg %}{{ memo("tortuga/board_svg", board_svg, b) }}'


def boards():
    """Boards that share some pieces and differ in others, with hostile names."""
    names = ["ani", "<b>al&ex</b>", "fr\"ank'", "lo\u202ethar"]
    for number, (player, boat, pirate) in enumerate(itertools.product(names, (1, 4, 8), (2, 5))):
        chests = ["red", "blue", "yellow", "white", "purple", "<x>"][: number % 7]
        yield {
            "player": player, "tiles": number % 3, "boat": boat, "pirate": pirate,
            "fleet_capacity": 1 + boat // 3, "crew_capacity": 1 + pirate // 3,
            "tortuga": chests, "fleet": chests[:2], "crew": chests[1:], "island": chests * (number % 4),
            "spaces": [{"action": a, "dice": [(number + k) % 6 + 1 for k in range(number % 4)], "bonus": number % 2 * k}
                       for k, a in enumerate(["skull", "fleet", "crew", "island", "tortuga"])],
        }


@pytest.mark.parametrize("fmt", ["html"])
def test_memoised_boards_are_the_bytes_of_boards_drawn_anew(fmt, monkeypatch):
    env = environment(fmt)
    template = env.from_string(BOARD)
    models = list(boards())
    kept = [template.render(b=b) for b in models + models]  # the second round from the memo
    assert kept[: len(models)] == kept[len(models):]
    monkeypatch.setitem(env.globals, "memo", lambda name, macro, *models: macro(*models))
    anew = [env.from_string(BOARD).render(b=b) for b in models]
    assert kept[: len(models)] == anew
    assert len(set(anew)) == len(models)  # each board its own picture
    assert "&lt;b&gt;al&amp;ex&lt;/b&gt;" in anew[3 * 2 * 1]


def test_memo_renders_what_is_not_plain_data_every_time():
    env = environment("html")
    calls = []

    class Model(dict):  # not a plain dict: never a key
        pass

    env.globals["count_macro"] = lambda model: calls.append(1) or str(len(calls))
    try:
        template = env.from_string('{{ memo("t/x", count_macro, m) }}')
        assert [template.render(m=Model(a=1)) for _ in range(2)] == ["1", "2"]
        assert [template.render(m={"a": (1, True)}) for _ in range(2)] == ["3", "3"]
        assert template.render(m={"a": (1, 1)}) == "4"  # True and 1 are different keys
    finally:
        del env.globals["count_macro"]


@pytest.mark.parametrize("fmt", ["text", "markdown", "bbcode", "html"])
def test_dict_attributes_read_as_jinja_reads_them(fmt):
    source = ("{{ d.x }} {{ d.items()|list|length }} {{ d.get('x') }} {{ o.real }} {{ d['items'] }} "
              "{{ d.y is defined }} {{ l.x is defined }}")
    context = {"d": {"x": "<1>", "items": "not the method", "get": 3}, "o": 5, "l": [1]}
    ours = environment(fmt).from_string(source).render(**context)
    plain = jinja2.Environment(autoescape=(fmt == "html"), finalize=finalizer(fmt)).from_string(source).render(**context)
    assert ours == plain
    with pytest.raises(jinja2.UndefinedError):
        environment(fmt).from_string("{{ d.missing }}").render(d={"x": 1})
