"""The moderator at the command line while the judge holds a reveal sent early (docs/protocol.md
§3, "A reveal sent early"): what each command shows, and what none of them may show."""

from __future__ import annotations


def test_nothing_a_moderator_prints_shows_a_held_reveal(new_game, cli, tmp_path):
    new_game("g")
    mine = cli.json("private", "g", "alex")
    request = next(r for r in mine["requests"] if r["sealed"])
    made = cli.json("seal", "--context", mine["context"], request["default"].lower().replace(",", ", "))
    cli.ok("commit", "g", "alex", made["commitment"])
    said = cli.ok("reveal", "g", "alex", made["choice"], made["salt"]).stdout
    assert "held" in said and made["salt"] not in said, said
    private = cli.ok("private", "g", "alex").stdout
    assert "nothing more is needed from you" in private and "then send your reveal" not in private, private
    page = tmp_path / "g.html"
    cli.ok("page", "g", "-o", page)
    shown = [cli.ok(*args).stdout for args in (("status", "g"), ("status", "g", "--json"), ("show", "g"),
                                               ("log", "g", "--json"), ("export", "g"), ("private", "g", "ani"),
                                               ("private", "g", "ani", "--json"))]
    for text in [*shown, page.read_text(encoding="utf-8")]:
        assert made["salt"] not in text and "early/" not in text
    assert '"reveal"' not in cli.ok("export", "g").stdout
