"""Screen: the step after parsing that keeps the judge out of mail loops.

A judge that answers an automatic message can start a loop that never ends (two
autoresponders, a bounce of a bounce, a list that echoes every post), so it never answers
bounces, automatic replies (RFC 3834), list or bulk mail, or its own mail. Size and rate
limits belong to the steps that know the game and the sender.
"""

from __future__ import annotations

import re

from .message import Incoming

_BOUNCE_SENDERS = frozenset(("mailer-daemon", "postmaster"))
_BULK = frozenset(("bulk", "junk", "list", "auto_reply"))
_TOKEN = re.compile(r"[^\s<>,;\"'()]+")
_COMMENT = re.compile(r"\([^()]*\)")


def screen(msg: Incoming, judge_addresses: tuple[str, ...]) -> str | None:
    """Why the judge must not answer ``msg`` (one line), or None when it may."""
    judges = {address.strip().lower() for address in judge_addresses if address.strip()}
    headers = msg.headers
    if msg.sender and msg.sender in judges:
        return f"sent from the judge's own address {msg.sender} (a mail loop)"
    looped = judges & {token.lower() for token in _TOKEN.findall(headers.get("x-loop", ""))}
    if looped:
        return f"X-Loop names the judge's address {min(looped)}: it has already passed the judge"
    if msg.return_path == "":
        return "a bounce: the return path is empty (<>)"
    if msg.sender.partition("@")[0] in _BOUNCE_SENDERS:
        return f"a bounce or mail-system notice from {msg.sender}"
    if _word(headers.get("content-type", "")).startswith("multipart/report"):
        return "a delivery or read report (Content-Type: multipart/report)"
    submitted = _word(headers.get("auto-submitted", ""))
    if submitted and submitted != "no":
        return f"an automatic message (Auto-Submitted: {submitted}, RFC 3834)"
    for name in ("x-autoreply", "x-autorespond"):
        if name in headers:
            return f"an automatic reply ({name.title()}: {headers[name]})"
    precedence = _word(headers.get("precedence", ""))
    if precedence in _BULK:
        return f"bulk or list mail (Precedence: {precedence})"
    if "list-id" in headers:
        return f"a mailing-list copy (List-Id: {headers['list-id']})"
    if "list-unsubscribe" in headers:
        return "a mailing-list or newsletter copy (List-Unsubscribe)"
    return None


def _word(value: str) -> str:
    """The lower-case value before any parameter, comments removed: 'auto-replied'."""
    return _COMMENT.sub(" ", value).split(";")[0].strip().lower()
