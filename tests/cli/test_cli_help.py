"""Every command documents itself with an example, and the command line starts fast: heavy
modules (jinja2, cryptography) are imported only by the commands that need them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pbem.cli.program import app

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


# What `pbem status` and `pbem games` may load beyond what any typer program over SQLite
# loads (`python -c "import typer, sqlite3"`, the floor of benchmarks/bench_status.py), with
# typer's own modules. A module that joins this path fails the test below: if it is truly
# needed, add it here knowingly, and measure bench_status.py before and after.
READ_PATH_MAY_ADD = {
    "pbem", "pbem.text", "pbem.cli", "pbem.cli.entry", "pbem.cli.program", "pbem.cli.common", "pbem.cli.game",
    "pbem.store", "pbem.store.errors", "pbem.store.faults", "pbem.store.store", "pbem.store.event",
    "pbem.store.migrations", "pbem.store.judge", "pbem.store.snapshots",
    "pbem.protocol", "pbem.protocol.canonical", "pbem.protocol.times", "pbem.protocol.snapshot",
    "pbem.games",  # its package alone (round_word), never a game's rules
    "pbem.mail", "pbem.render", "pbem.render.publish",  # their packages and the write hooks alone
    "json", "json.decoder", "json.encoder", "json.scanner", "_json",  # the cached report is JSON
    "_sha256", "_sha2",  # the snapshot's digest, without loading OpenSSL (hashlib)
}

_PROGRAM = """import sys
import pbem.cli.entry as entry
entry.leave = lambda code: None  # the program's end, without its quick exit: the list is written after
sys.argv = ["pbem", *sys.argv[1:]]
try:
    entry.main()
finally:
    sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n")
"""


def _loaded(helpers, pbem_db, code: str, *args: str) -> set[str]:
    """Every module in sys.modules at the end of ``python -c CODE ARGS`` (importtime does
    not see what importlib.import_module loads)."""
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(helpers.REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-500:]
    return set(done.stderr.rpartition("MODULES ")[2].split())


@pytest.mark.parametrize("args", [("status", "g"), ("status", "g", "--json"), ("games",), ("games", "--all", "--json")])
def test_the_read_path_loads_only_what_it_needs(cli, helpers, pbem_db, args):
    cli.ok("new", "g", "--players", "ani,alex,frank", "--now")
    cli.ok("demo", "--game-name", "d")  # a finished game too
    floor = _loaded(helpers, pbem_db, 'import sys, typer, sqlite3; sys.stderr.write("MODULES " + " ".join(sys.modules))')
    loaded = _loaded(helpers, pbem_db, _PROGRAM, *args)
    assert {"pbem.store.store", "pbem.protocol.snapshot", "typer"} <= loaded  # it really ran, and was seen
    added = {m for m in loaded - floor if m.split(".")[0] not in ("typer", "click")}
    assert added <= READ_PATH_MAY_ADD, f"pbem {' '.join(args)} now also loads {sorted(added - READ_PATH_MAY_ADD)}"


def test_signing_commands_do_import_cryptography(helpers, pbem_db):
    """The check above would pass vacuously if importtime output were not read right."""
    out, modules = _imported(helpers, pbem_db, "keygen", "--json")
    assert "public_key" in out
    assert any(m.split(".")[0] == "cryptography" for m in modules)
