"""The command line (typer): parses arguments, opens the store, prints; no rules, no SQL.

Its rooms, from the top down:
  __main__, app   ``python -m pbem.cli`` and ``python -m pbem.cli.app``: start entry
  entry           the process: Ctrl-C handled before the slow imports, the quick exit
  program         the typer program: every command group, or one for a solo command
  audit, away, game, judge, pages, run, tools, deadlines, play, mail
                  one command group each (judge, deadlines and run add to 'pbem mail')
  common, inputs  shared pieces: options, the store, errors, output; bounded input files
"""
