"""Email in and out (parse, authenticate, compose, send): not built yet.

Today a moderator saves a mail or forum post to a file and runs ``pbem submit GAME FILE``,
which finds every armoured block in it (quoting and re-wrapping do no harm). Sending
private messages is the moderator's: ``pbem private GAME PLAYER --format text|html``.
"""
