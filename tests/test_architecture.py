"""The architecture of docs/architecture.md, checked: import-linter's contracts in
pyproject.toml (the floors, no circle inside any package, the order of the rooms of mail/,
protocol/ and cli/, games that import nothing but the games interface), the size of a
module, and the shared text helpers below every floor."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).parent.parent
ROOT = PROJECT / "pbem"
LINT = Path(sys.executable).with_name("lint-imports")
MAX_LINES = 600
MAX_LINES_PROTOCOL = 500


def lint(where: Path) -> subprocess.CompletedProcess:
    """lint-imports run on the package in ``where`` with that folder's pyproject.toml, as
    ``./dev test`` runs it (no cache: a test must see the files as they are now)."""
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", "pyproject.toml"], cwd=where,
                          env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)


def test_every_contract_is_kept():
    result = lint(PROJECT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def sibling_edge(package: str) -> tuple[str, str]:
    """Some module of ``package`` that imports a sibling: (importer, imported), as names."""
    folder = ROOT / package
    for path in sorted(folder.glob("*.py")):
        if path.stem.startswith("__"):  # a package's __init__ is no sibling of its modules
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                target = node.module.split(".")[0]
                if target != path.stem and (folder / f"{target}.py").exists():
                    return path.stem, target
    raise AssertionError(f"no module of pbem/{package} imports a sibling")


@pytest.mark.parametrize("package", ["mail", "protocol", "cli"])
def test_a_planted_circle_breaks_the_contracts(tmp_path, package):
    """The same check on a copy of pbem/ in which one module of the package imports back a
    sibling that imports it (lazily, inside a function, as most imports here are)."""
    shutil.copytree(ROOT, tmp_path / "pbem", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "templates"))
    shutil.copy(PROJECT / "pyproject.toml", tmp_path)
    assert lint(tmp_path).returncode == 0
    importer, imported = sibling_edge(package)
    with (tmp_path / "pbem" / package / f"{imported}.py").open("a", encoding="utf-8") as f:
        f.write(f"\n\ndef planted():\n    from . import {importer}\n    return {importer}\n")
    result = lint(tmp_path)
    assert result.returncode == 1
    assert "No circles" in result.stdout and "BROKEN" in result.stdout
    assert f"pbem.{package}" in result.stdout


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_is_small_enough_to_read_in_one_sitting(path):
    limit = MAX_LINES_PROTOCOL if path.parent.name == "protocol" else MAX_LINES
    assert lines(path) <= limit, f"{path.relative_to(ROOT)}: {lines(path)} lines (at most {limit})"


def test_the_shared_text_helpers_import_nothing():
    """pbem/text.py sits below every floor (games use it too), so it imports nothing."""
    tree = ast.parse((ROOT / "text.py").read_text(encoding="utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported == ["__future__"]
