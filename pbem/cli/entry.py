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
    from .app import main as run  # typer and the commands: the slow part of start-up
    run()
