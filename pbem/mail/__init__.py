"""Email in and out: the judge's pipeline of small steps (docs/email.md).

Built: parse (``message``: bytes to an ``Incoming``, the readable text, the command lines) and
screen (``screen``: loops, bounces, automatic and list mail). Not built yet: routing,
authentication, the outbox and sending. Today a moderator saves a mail or forum page to a
file and runs ``pbem submit GAME FILE``, which decodes it (a saved .eml or .html works) and
applies every armoured block in it. Sending private messages is the moderator's:
``pbem private GAME PLAYER --format text|html``.
"""
