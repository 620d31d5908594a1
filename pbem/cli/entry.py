"""The ``pbem`` program's entry point: Ctrl-C is handled first, before the slow imports.

Ctrl-C at any moment, even while typer is still being imported, ends pbem with one line,
``pbem: interrupted``, and exit status 130, never a traceback. It ends the process at once,
as a kill would: every write is one transaction, so the log stays exactly as it was before
the command or as after it (the crash tests hold it to that). Only the standard library
is imported here, so the handler is in place a few milliseconds after Python starts.
"""


import _signal  # the C module: ``signal`` would first build its enums, a few ms more before the handler
import os

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a program Ctrl-C ended


def _interrupted(signum, frame) -> None:
    try:
        if "--json" in _options():  # as every failure under --json: one JSON document on stdout
            os.write(1, b'{\n  "code": 130,\n  "error": "interrupted"\n}\n')
        os.write(2, b"pbem: interrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


def _options() -> list[str]:
    import sys
    args = sys.argv[1:]
    return args[:args.index("--")] if "--" in args else args


def install() -> None:
    """Handle Ctrl-C (SIGINT) for the rest of the process; for the program only, never the
    library or tests that call the command line in-process."""
    _signal.signal(_signal.SIGINT, _interrupted)
    from ..store.faults import maybe_crash
    maybe_crash("start")  # a test's SIGINT right here lands before the heavy imports


def main() -> None:
    install()
    from .program import main as run  # typer and the commands: the slow part of start-up
    run_program(run)


def run_program(run) -> None:
    """Run the command line ``run`` as the program: its stores kept, and closed at its end
    by ``leave``, which ends the process."""
    from .common import keep_stores
    keep_stores()
    try:
        run()
    except SystemExit as done:  # how typer always ends, whatever the command did
        leave(done.code)
        raise  # leave() found something the interpreter's own exit must still do
    finally:  # not ended here (the usual exit, or a caller that catches it): keep no store after the run
        keep_stores(False)


def leave(code) -> None:
    """End the program now with ``code``, skipping the interpreter's teardown, when nothing
    is left for it to do; else return, and the caller exits the usual way.

    The teardown frees every object of the ~200 modules loaded (typer and its click) one by
    one, about 20 ms, a sixth of ``pbem status``: work whose only effect is freed memory.
    What it would do that matters is done here first: the databases the command opened are
    closed (SQLite folds the write-ahead log back into the file and removes it, as at any
    close), and stdout and stderr are flushed. Anything else makes the exit the usual one:
    an exit handler registered (atexit, ``weakref.finalize``: coverage, logging, temporary
    directories), another thread still running, a tracer or profiler watching (its report
    comes after the program's end) or ``python -i`` (its prompt too), a code not from 0 to
    255, or a stream that cannot be flushed (a closed pipe), which Python then reports as
    it always has.
    """
    if code is None:
        code = 0
    if not (isinstance(code, int) and 0 <= code <= 255):
        return
    import atexit
    import sys
    registered = getattr(atexit, "_ncallbacks", None)  # CPython's; without it, nothing is assumed
    if registered is None or registered():
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    if sys.gettrace() is not None or sys.getprofile() is not None or _monitored() or sys.flags.inspect:
        return  # a tracer, a profiler (python -m cProfile -m pbem.cli ...) or python -i: theirs after the program
    common = sys.modules.get(f"{__package__}.common")
    if common is not None:
        common.close_stores()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - Python's own exit reports it, as before
        return
    os._exit(code)


def _monitored() -> bool:
    """Whether a tool watches through sys.monitoring (Python 3.12+: cProfile, coverage)."""
    import sys
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))
