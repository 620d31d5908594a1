"""Every command documents itself with an example, and the command line starts fast: heavy
modules (jinja2, cryptography) are imported only by the commands that need them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pbem.cli.app import app

HEAVY = ("jinja2", "cryptography")


def _command_names() -> list[str]:
    names = []
    for info in app.registered_commands:
        names.append(info.name or info.callback.__name__.replace("_", "-"))
    return names


def test_every_command_is_registered():
    names = _command_names()
    expected = {"new", "status", "private", "seal", "commit", "reveal", "decide", "submit", "nmr",
                "show", "log", "export", "audit", "replay", "reveal-seed", "keygen", "demo"}
    assert expected <= set(names), expected - set(names)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", _command_names())
def test_help_has_an_example(cli, name):
    result = cli.ok(name, "--help")
    assert "Example:" in result.stdout, f"pbem {name} --help has no 'Example:' line"
    example = next(line for line in result.stdout.splitlines() if "Example:" in line)
    assert f"pbem {name}" in example, example
    if name != "export":  # export writes JSON Lines already
        assert "--json" in result.stdout, f"pbem {name} has no --json"


def test_top_level_help_lists_every_command(cli):
    result = cli.ok("--help")
    for name in _command_names():
        assert name in result.stdout


def _imported(helpers, pbem_db, *args: str) -> tuple[str, set[str]]:
    """Run ``python -X importtime -m pbem.cli.app ARGS``: its output and every module imported."""
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(helpers.REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pbem.cli.app", *args],
                          env=env, capture_output=True, text=True, timeout=60)
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    assert done.returncode == 0 and modules, done.stderr[-500:]
    return done.stdout, {m for m in modules if m}


@pytest.mark.parametrize("args", [("--help",), ("status", "g"), ("status", "g", "--json")])
def test_start_up_imports_no_heavy_modules(cli, helpers, pbem_db, args):
    cli.ok("new", "g", "--players", "ani,alex,frank", "--now")
    out, modules = _imported(helpers, pbem_db, *args)
    assert ("Usage" in out) if args == ("--help",) else ("g" in out), out  # it really ran
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert not heavy, f"pbem {' '.join(args)} imported {heavy}"


def test_signing_commands_do_import_cryptography(helpers, pbem_db):
    """The check above would pass vacuously if importtime output were not read right."""
    out, modules = _imported(helpers, pbem_db, "keygen", "--json")
    assert "public_key" in out
    assert any(m.split(".")[0] == "cryptography" for m in modules)
