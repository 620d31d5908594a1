"""``pbem COMMAND`` builds only the command group it needs (a start-up cost): the table that
says which group holds which command must match what the groups register."""

from __future__ import annotations

import typer

from pbem.cli import program


def names(app) -> set[str]:
    return set(typer.main.get_command(app).commands)


def test_each_solo_group_registers_exactly_its_commands():
    for group in program.GROUPS:
        assert names(program.build(group)) == {n for n, g in program.SOLO.items() if g == group}, group


def test_every_solo_command_is_in_the_whole_program():
    whole = names(program.app)
    assert set(program.SOLO) <= whole and "mail" in whole and "address" in whole


def test_the_command_is_found_after_the_global_db_option():
    assert program._solo_command(["status", "g"]) == "status"
    assert program._solo_command(["--db", "x.db", "reveal", "g"]) == "reveal"
    assert program._solo_command(["--db=x.db", "log", "g"]) == "log"
    assert program._solo_command(["mail", "tick"]) is None
    assert program._solo_command(["--help"]) is None and program._solo_command([]) is None


def test_a_solo_command_alone_is_the_command_of_the_whole_program():
    for name, group in program.SOLO.items():
        alone = typer.main.get_command(program.build(group, name))
        assert list(alone.commands) == [name]
        whole = typer.main.get_command(program.app).commands[name]
        assert [p.opts for p in alone.commands[name].params] == [p.opts for p in whole.params]
        assert alone.commands[name].help == whole.help
