"""Email in and out: the judge's pipeline of small steps (see docs/email.md).

A message comes in through its stages, in one direction (``ingest`` knows their order;
no stage imports another, and each may end the message with an ``outcome.Stop``):
    read (``message``, over ``limits``, ``body``, ``htmltext``, ``quoting``, ``lines``)
    -> screen (loops, automatic and list mail; ``bounces`` reads what it turns away)
    -> route (whose, for which game) -> authenticate (password or signatures)
    -> apply (the protocol's own commands) -> answer (``statusline`` at its foot)
What the judge mails, and the rooms under the stages, from the top:
    addresses  the address book written; ``away``: a seat's new person;
               ``deadlines``: settings and ``tick`` (reminders, defaults)
    judge      the write hook: what each write causes to be mailed, in its transaction
    notices, reminders   a pause, resume, extension or replacement told; reminders kept true
    letters    private messages and summaries: queued, and rendered when sent
    moment     one message per recipient per moment; ``failures``: mail not delivered
    envelope   recipients, a checked address, the subject tag, the Message-ID domain
The outbox goes out through ``send`` (SMTP or .eml files; ``sendpolicy``, ``pictures``);
``fetch`` takes new mail from IMAP; ``service`` runs them all; ``config``: settings.

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
