"""The program's end (pbem.cli.entry.leave): once a command is done, pbem ends the process
without the interpreter's teardown, after closing its databases and flushing its output.
Nothing a user or a script sees may change: the output, the exit status, the database
file (no write-ahead log left beside it), exit handlers and threads still running."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

ENTRIES = (["-m", "pbem.cli"], ["-m", "pbem.cli.app"])  # the `pbem` script runs the first


def _env(helpers, pbem_db) -> dict:
    env = {**os.environ, "PBEM_DB": str(pbem_db), "PYTHONPATH": str(helpers.REPO_ROOT)}
    env.pop("PBEM_CRASH_AT", None)
    env.pop("PYTHONUNBUFFERED", None)  # output buffered, as a user's is: it must still all come out
    return env


def _run(helpers, pbem_db, *argv: str, code: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code, *argv] if code else [sys.executable, *argv]
    return subprocess.run(command, env=_env(helpers, pbem_db), capture_output=True, text=True, timeout=120)


def _program(body: str) -> str:
    """A program that runs ``pbem ARGS`` (its own argv) through entry.main after ``body``."""
    return f"import sys\n{body}\nsys.argv = ['pbem', *sys.argv[1:]]\nfrom pbem.cli.entry import main\nmain()\n"


def _left_beside(pbem_db) -> list[str]:
    return sorted(p.name for p in pbem_db.parent.iterdir() if p.name.startswith(pbem_db.name + "-"))


@pytest.fixture
def game(cli, pbem_db):
    cli.ok("new", "g", "--players", "ani,alex,frank", "--now")
    gc.collect()  # the in-process stores' connections (sqlite3 ties each in a cycle) closed
    assert _left_beside(pbem_db) == []
    return "g"


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("argv", [("status", "g"), ("nmr", "g", "ani", "--force", "--json"), ("status", "nope")])
def test_the_databases_are_closed(helpers, pbem_db, game, entry, argv):
    """SQLite removes the write-ahead log and its index when the last connection closes:
    a store left open at the end would leave them (and the log unfolded) beside the file."""
    done = _run(helpers, pbem_db, *entry, *argv)
    assert done.returncode == (1 if "nope" in argv else 0), done.stderr
    assert _left_beside(pbem_db) == []


@pytest.mark.parametrize("entry", ENTRIES)
def test_output_and_exit_status_are_whole(cli, helpers, pbem_db, game, entry, tmp_path):
    cli.ok("demo", "--game-name", "d")  # a whole game: its export is more than any buffer holds
    expected = cli.ok("export", "d").stdout
    assert len(expected) > 64 * 1024
    for args, code, out, err in [
        (("export", "d"), 0, expected, ""),
        (("status", "g", "--json"), 0, cli.ok("status", "g", "--json").stdout, ""),
        (("status", "nope"), 1, "", "pbem: no game 'nope'; games here: d, g\n"),
        (("status", "nope", "--json"), 1, None, None),
        (("status",), 2, "", None),
        (("audit", "g"), 3, cli("audit", "g").stdout, ""),  # INCOMPLETE: a game in play
    ]:
        with open(tmp_path / "out", "w") as sink:  # a file, as a script's redirect: block-buffered
            done = subprocess.run([sys.executable, *entry, *args], stdout=sink, stderr=subprocess.PIPE, text=True,
                                  env=_env(helpers, pbem_db), timeout=120)
        written = (tmp_path / "out").read_text()
        assert done.returncode == code, (args, done.stderr)
        if out is not None:
            assert written == out, args
        if err is not None:
            assert done.stderr == err, args
        if args == ("status", "nope", "--json"):
            assert json.loads(written) == {"code": 1, "error": "no game 'nope'; games here: d, g"}
        if code == 2:
            assert "Missing argument" in done.stderr


def test_the_teardown_is_skipped(helpers, pbem_db, game):
    """What makes the rest of this file worth checking: a plain command does end early (an
    object's finalizer that only the teardown would run does not run)."""
    body = "class Late:\n    def __del__(self): sys.stderr.write('teardown ran\\n')\nlate = Late()"
    done = _run(helpers, pbem_db, "status", "g", code=_program(body))
    assert done.returncode == 0 and "chain head" in done.stdout, done.stderr
    assert "teardown ran" not in done.stderr


def test_an_exit_handler_still_runs(helpers, pbem_db, game):
    body = "import atexit\natexit.register(lambda: print('handler ran'))"
    for argv, code in ((("status", "g"), 0), (("status", "nope"), 1)):
        done = _run(helpers, pbem_db, *argv, code=_program(body))
        assert done.returncode == code, done.stderr
        assert done.stdout.endswith("handler ran\n"), done.stdout
        assert _left_beside(pbem_db) == []


def test_a_running_thread_still_finishes(helpers, pbem_db, game):
    """A thread that waits for the main thread to end (no clock involved) still gets to
    write its line: pbem exits the usual way, which waits for it."""
    body = ("import threading\n"
            "def after():\n    threading.main_thread().join()\n    print('thread ran', flush=True)\n"
            "threading.Thread(target=after).start()")
    done = _run(helpers, pbem_db, "status", "g", code=_program(body))
    assert done.returncode == 0, done.stderr
    assert "chain head" in done.stdout and done.stdout.endswith("thread ran\n"), done.stdout


def test_without_the_count_of_exit_handlers_the_exit_is_the_usual_one(helpers, pbem_db, game):
    """``atexit._ncallbacks`` is CPython's own: on a Python without it pbem cannot know
    whether an exit handler waits, so it ends the usual way (the teardown runs)."""
    body = ("import atexit\ndel atexit._ncallbacks\n"
            "class Late:\n    def __del__(self): sys.stderr.write('teardown ran\\n')\nlate = Late()")
    done = _run(helpers, pbem_db, "status", "g", code=_program(body))
    assert done.returncode == 0 and "chain head" in done.stdout, done.stderr
    assert "teardown ran" in done.stderr
    assert _left_beside(pbem_db) == []


def test_a_profiler_still_reports_once_the_program_has_ended(helpers, pbem_db, game):
    """``python -m cProfile -m pbem.cli ...`` prints its report after the program's
    SystemExit: a profiler or tracer watching makes the exit the usual one."""
    done = _run(helpers, pbem_db, "-m", "cProfile", "-s", "ncalls", "-m", "pbem.cli", "status", "g")
    assert done.returncode == 0, done.stderr
    assert "chain head" in done.stdout and "function calls" in done.stdout, done.stdout[-500:]
    assert _left_beside(pbem_db) == []


def test_with_a_tracer_set_the_exit_is_the_usual_one(helpers, pbem_db, game):
    """A tracer (sys.settrace: a debugger, a coverage tool) still sees the program end."""
    body = ("def tracer(frame, event, arg):\n"
            "    return watch if frame.f_code.co_name == 'leave' else None\n"
            "def watch(frame, event, arg):\n"
            "    if event == 'return':\n"
            "        sys.stderr.write('the tracer saw leave return\\n')\n"
            "    return watch\n"
            "sys.settrace(tracer)")
    done = _run(helpers, pbem_db, "status", "g", code=_program(body))
    assert done.returncode == 0 and "chain head" in done.stdout, done.stderr
    assert done.stderr == "the tracer saw leave return\n"
    assert _left_beside(pbem_db) == []


def test_python_i_still_gives_the_prompt_after_the_command(helpers, pbem_db, game):
    """``python -i -m pbem.cli ...`` (a developer inspecting what a command left) gets its
    interactive prompt once the command is done, as before the quick exit."""
    done = subprocess.run([sys.executable, "-i", "-m", "pbem.cli", "status", "g"], input="print('the prompt ran')\n",
                          env=_env(helpers, pbem_db), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "chain head" in done.stdout and "the prompt ran" in done.stdout, done.stdout[-500:]


def test_main_called_in_process_keeps_no_store_after_it(cli, pbem_db, game, monkeypatch):
    """A test (or another program) may call the program's main in-process and catch its exit
    (pytest has exit handlers, so leave() returns instead of ending the process): after it,
    stores are freed as any object again, the command's own and those opened later, not
    kept open for the rest of the process."""
    from pbem.cli import entry
    monkeypatch.setattr(entry, "install", lambda: None)  # no Ctrl-C handler of the program's in pytest
    monkeypatch.setattr(sys, "argv", ["pbem", "status", "g"])
    with pytest.raises(SystemExit) as done:
        entry.main()
    assert done.value.code == 0
    del done  # its traceback holds the command's frames, and so its store
    gc.collect()
    assert _left_beside(pbem_db) == []
    cli.ok("status", "g")
    gc.collect()
    assert _left_beside(pbem_db) == []
