"""Imports point downwards only (design.md): cli -> mail -> render -> store -> protocol -> games,
and a game imports nothing from the other layers."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "pbem"
ORDER = ["games", "protocol", "store", "render", "mail", "cli"]  # lowest first


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "pbem" and parts[1] in ORDER else None


def imports(path: Path) -> list[str]:
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + ".__init__"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: -node.level]
                found.append(".".join(base + ([node.module] if node.module else [])))
            else:
                found.append(node.module or "")
    return found


MODULES = sorted(p for p in ROOT.rglob("*.py") if layer_of("pbem." + p.relative_to(ROOT).parts[0]))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_downwards(path):
    own = path.relative_to(ROOT).parts[0]
    for module in imports(path):
        target = layer_of(module)
        if target is None:
            continue
        assert ORDER.index(target) <= ORDER.index(own), f"{path.relative_to(ROOT)} imports {module} (a higher layer)"
        if own == "games":
            assert target == "games", f"{path.relative_to(ROOT)}: a game imports {module}"


def test_the_shared_text_helpers_import_nothing():
    """pbem/text.py sits below every layer (games use it too), so it imports nothing."""
    assert imports(ROOT / "text.py") == ["__future__"]
