"""Email in and out: the judge's pipeline of small steps (see docs/email.md).

    message   bytes -> Incoming: the readable text, quoting, the command lines (``quoting``)
    screen    loops, bounces, automatic and list mail: never answered
    ingest    route (game, player), authenticate (password or signatures), the protocol's
              own commands, the answer; one transaction per message
    judge     what the judge mails (private messages, summaries, the result), queued in the
              outbox by a write hook in the transaction of the events behind it; addresses
    send      the outbox delivered over SMTP (or written as .eml files); ``config``: settings
    fetch     new mail taken from an IMAP folder, ingested, and only then flagged or moved

Nothing here is imported at start-up of the command line: each command imports what it uses.
"""


def write_hook(store, session):
    """``judge.watch``, the write hook that queues the mail a write calls for, imported
    only when a game is written: a command that only reads (``pbem status``) never loads
    the judge. ``judge.attach`` and ``pbem.cli.common.open_store`` install one or the other,
    never both."""
    from .judge import watch
    return watch(store, session)


write_hook.queues_mail = True  # how judge.attach knows it is installed (see there)
