"""``python -m pbem.cli.app``: the pbem program, started as the ``pbem`` script and
``python -m pbem.cli`` start it (entry.main). The typer program itself is in program.py."""

if __name__ == "__main__":
    from .entry import main

    main()
