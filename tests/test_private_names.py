"""No module of pbem imports another module's private (``_name``) names (design.md, Layers).

A name used from another file is public: it loses its underscore. Two forms are caught, in
module code and inside functions alike: ``from .x import _y`` (or ``from pbem.x import _y``),
and ``m._y`` where ``m`` is bound in that file by an import of a pbem module (``from . import
judge`` then ``judge._domain(...)``). Dunder names (``__version__``) are not private."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "pbem"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path, root: Path) -> str:
    """``pbem/mail/judge.py`` -> ``pbem.mail.judge``; a package's ``__init__.py`` -> the package."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name of the module that ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class Tree:
    """The modules of one package on disk (``pbem``, or a planted one in a test)."""

    def __init__(self, root: Path):
        self.root, self.name = root, root.name
        self.paths = sorted(root.rglob("*.py"))
        self.modules = {module_name(p, root) for p in self.paths}

    def owns(self, module: str) -> bool:
        return module == self.name or module.startswith(self.name + ".")

    def offences(self) -> list[str]:
        found = []
        for path in self.paths:
            found += self.offences_in(path)
        return found

    def offences_in(self, path: Path) -> list[str]:
        module = module_name(path, self.root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(self.root.parent)
        bound = self.bound_modules(tree, module, path.name == "__init__.py")
        found = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = imported_from(node, module, path.name == "__init__.py")
                if self.owns(source):
                    found += [(node.lineno, f"from {source} import {a.name}") for a in node.names if is_private(a.name)]
            elif isinstance(node, ast.Attribute) and is_private(node.attr):
                target = self.module_of(node.value, bound)
                if target is not None:
                    found.append((node.lineno, f"{target}.{node.attr}"))
        return [f"{where}:{line}: {what}" for line, what in sorted(found)]

    def bound_modules(self, tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
        """Each name that an import in the file binds to a module of this package."""
        bound = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if self.owns(a.name):  # ``import pbem.x.y`` binds pbem; ``as m`` binds the module
                        top = a.name.split(".")[0]
                        bound[a.asname or top] = a.name if a.asname else top
            elif isinstance(node, ast.ImportFrom):
                source = imported_from(node, module, is_package)
                for a in node.names:
                    if self.owns(source) and f"{source}.{a.name}" in self.modules:
                        bound[a.asname or a.name] = f"{source}.{a.name}"
        return bound

    def module_of(self, node: ast.expr, bound: dict[str, str]) -> str | None:
        """The module of this package that ``node`` (``m`` or ``pbem.x.m``) names, if any."""
        dotted = []
        while isinstance(node, ast.Attribute):
            dotted.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in bound:
            return None
        name = ".".join([bound[node.id], *dotted])
        return name if name in self.modules else None


def test_no_module_imports_a_private_name():
    offences = Tree(ROOT).offences()
    if offences:  # every one at once, so one run shows all there is to rename
        pytest.fail(f"{len(offences)} private name(s) used from another module (make them public):\n"
                    + "\n".join(offences), pytrace=False)


def test_a_planted_private_import_is_caught(tmp_path):
    package = tmp_path / "planted"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "1"\n')
    (package / "home.py").write_text("_secret = 1\npublic = 2\n__all__ = ['public']\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "user.py").write_text(
        "import planted.home\n"
        "import planted.home as home_alias\n"
        "from .. import home\n"
        "from ..home import public, __all__\n"
        "from planted import __version__\n"
        "from ..home import _secret\n"                   # 6
        "def later():\n"
        "    from planted.home import _secret as s\n"    # 8
        "    return home._secret + home_alias._secret\n"  # 9, 9
        "value = planted.home._secret\n"                 # 10
        "ok = home.public, home.__name__\n"
        "class Local:\n"
        "    _own = 1\n"
        "    def read(self):\n"
        "        return self._own\n")
    offences = Tree(package).offences()
    assert offences == [
        "planted/sub/user.py:6: from planted.home import _secret",
        "planted/sub/user.py:8: from planted.home import _secret",
        "planted/sub/user.py:9: planted.home._secret",
        "planted/sub/user.py:9: planted.home._secret",
        "planted/sub/user.py:10: planted.home._secret",
    ], offences
