"""Email in and out: the judge's mail.

Outgoing mail is a row first and a message second: ``pbem.store.outbox`` queues each
message in the transaction of the events that caused it; ``send`` composes the due rows
and delivers them over SMTP (or writes them as .eml files), marking each one sent;
``config`` reads the SMTP settings. See docs/email.md.
"""
