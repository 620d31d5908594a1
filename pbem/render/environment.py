"""The Jinja environment of each output format (jinja2 is imported only when rendering).

Templates live in the top-level ``templates/`` folder (``templates/<game>/`` and
``templates/shared/``), or in the folder named by ``PBEM_TEMPLATES``. A template for format
F is named ``<name>.<ext>`` with ext txt, md, bbcode or html. Templates are files of this
project only: user text is data handed to them, never part of a template's source.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from . import escape
from .escape import EXTENSIONS, FORMATS


class UnknownFormat(ValueError):
    pass


def templates_dir() -> Path:
    override = os.environ.get("PBEM_TEMPLATES")
    if override:
        return Path(override)
    import pbem
    # pbem/templates is a link to the top-level templates/ folder in a checkout, and the
    # folder itself in an installed wheel (package data); either way it is found here
    return Path(pbem.__file__).parent / "templates"


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise UnknownFormat(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


def template_name(game: str, name: str, fmt: str) -> str:
    return f"{game}/{name}.{EXTENSIONS[check_format(fmt)]}"


def environment(fmt: str):
    return _environment(check_format(fmt), str(templates_dir()))


@functools.lru_cache(maxsize=None)
def _environment(fmt: str, folder: str):
    import jinja2
    if not Path(folder, "shared").is_dir():
        raise FileNotFoundError(f"no templates in {folder} (set PBEM_TEMPLATES to the templates folder)")
    env = _fast_environment(jinja2)(
        loader=jinja2.FileSystemLoader(folder),
        bytecode_cache=_bytecode_cache(jinja2, fmt),
        autoescape=(fmt == "html"),
        finalize=escape.finalizer(fmt),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        # templates are files of this project: a template once loaded is not looked up on
        # disk again (a stat of each template and import at every render, otherwise)
        auto_reload=False,
    )
    env.filters["code"] = escape.code_span(fmt)
    env.filters["verbatim"] = escape.verbatim(fmt)
    env.filters["shell"] = escape.shell_word
    env.filters["strong"] = escape.strong(fmt)
    env.filters["plural"] = lambda n, word, many=None: word if n == 1 else (many or word + "s")
    env.filters["heading"] = escape.heading(fmt)
    env.globals["FORMAT"] = fmt
    env.globals["MARK"] = escape.marks(fmt)
    env.globals["memo"] = _memo()
    return env


def _fast_environment(jinja2):
    """jinja2.Environment with a quicker ``x.name`` for plain dicts (the view models): the
    same answer as Jinja's (an attribute of the dict first, then its key, else undefined),
    without raising and catching an AttributeError for every key a template reads."""
    dict_names = frozenset(dir(dict))

    class Environment(jinja2.Environment):
        def getattr(self, obj, attribute):
            if type(obj) is dict and attribute not in dict_names:
                try:
                    return obj[attribute]
                except KeyError:
                    return self.undefined(obj=obj, name=attribute)
            return super().getattr(obj, attribute)
    return Environment


def _plain(value) -> bool:
    """Whether ``value`` is plain data (str, int, float, bool, None, and lists, tuples and
    str-keyed dicts of them, exact types only), quicker than a trial ``json.dumps``."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


MEMO_SIZE = 4096  # rendered pieces kept per format (a board's SVG is some 5 kB)


def _memo():
    """Template global ``memo(name, macro, *models)``: what ``macro(*models)`` renders, kept by
    the models' content, so a piece drawn again and again from the same data (a player's
    board in each of their private messages and in each summary of the round, while it does
    not change) is rendered once. Only plain data is a key (see ``_plain``, compared by its
    ``repr``, which tells 1 from "1" and True from 1); anything else is rendered every time."""
    kept: dict = {}

    def memo(name: str, macro, *models):
        if not _plain(models):
            return macro(*models)
        key = (name, repr(models))
        found = kept.get(key)
        if found is None:
            found = kept[key] = macro(*models)
            if len(kept) > MEMO_SIZE:
                del kept[next(iter(kept))]  # the oldest
        return found
    return memo


def _bytecode_cache(jinja2, fmt: str):
    """Compiled templates kept between runs (jinja's per-user cache folder in the temporary
    directory; each entry is checked against its template's source), so a command does not
    compile every template it uses again: most of a page's time otherwise. One set of files
    per format: the same template compiles differently with each format's escaping, and an
    entry is found by the template's name and path alone. None where that folder cannot be
    used."""
    try:
        return jinja2.FileSystemBytecodeCache(pattern=f"__pbem_{fmt}_%s.cache")
    except (OSError, RuntimeError):
        return None


def render(game: str, name: str, fmt: str, **context) -> str:
    """Render ``templates/<game>/<name>.<ext>`` for ``fmt`` with the given view models."""
    env = environment(fmt)
    return env.get_template(template_name(game, name, fmt)).render(**context).rstrip("\n") + "\n"
