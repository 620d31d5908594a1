"""Screen: the step after parsing that keeps the judge out of mail loops.

A judge that answers an automatic message can start a loop that never ends (two
autoresponders, a bounce of a bounce, a list that echoes every post), so it never answers
bounces, automatic replies (RFC 3834), list or bulk mail, digests, or its own mail. Size and
rate limits belong to the steps that know the game and the sender.

The screen is a list of small named rules (``RULES``), each a function of the message and
the judge's addresses that returns why not to answer (one line) or None; the first reason
wins. A new rule is one more function in the list.
"""

from __future__ import annotations

import re
from typing import Callable

from .message import Incoming

_BOUNCE_SENDERS = frozenset(("mailer-daemon", "postmaster"))
_BULK = frozenset(("bulk", "junk", "list", "auto_reply"))
_TOKEN = re.compile(r"[^\s<>,;\"'()]+")
_COMMENT = re.compile(r"\([^()]*\)")
# Mailman's and most list servers' digest subjects: "Tortuga Digest, Vol 3, Issue 5"
_DIGEST_SUBJECT = re.compile(r"\bdigest\b.{0,40}\bvol(?:ume)?\.?\s*\d+.{0,20}\b(?:issue|no\.?)\s*\d+", re.I)
_REPLY = re.compile(r"^\s*(?:re|aw|sv|fw|fwd|wg)\s*:", re.I)

Rule = Callable[[Incoming, frozenset], "str | None"]


def screen(msg: Incoming, judge_addresses: tuple[str, ...]) -> str | None:
    """Why the judge must not answer ``msg`` (one line), or None when it may."""
    judges = frozenset(address.strip().lower() for address in judge_addresses if address.strip())
    for rule in RULES:
        reason = rule(msg, judges)
        if reason:
            return reason
    return None


def own_mail(msg: Incoming, judges: frozenset) -> str | None:
    if msg.sender and msg.sender in judges:
        return f"sent from the judge's own address {msg.sender} (a mail loop)"
    return None


def looped(msg: Incoming, judges: frozenset) -> str | None:
    named = judges & {token.lower() for token in _TOKEN.findall(msg.headers.get("x-loop", ""))}
    if named:
        return f"X-Loop names the judge's address {min(named)}: it has already passed the judge"
    return None


def bounce(msg: Incoming, judges: frozenset) -> str | None:
    """RFC 3834 section 2: no answer to a null return path or a mail system's own mail."""
    if msg.return_path == "":
        return "a bounce: the return path is empty (<>)"
    if msg.sender.partition("@")[0] in _BOUNCE_SENDERS:
        return f"a bounce or mail-system notice from {msg.sender}"
    if msg.return_path and msg.return_path.partition("@")[0] in _BOUNCE_SENDERS:
        return f"a bounce or mail-system notice (Return-Path: <{msg.return_path}>)"
    if _word(msg.headers.get("content-type", "")).startswith("multipart/report"):
        return "a delivery or read report (Content-Type: multipart/report)"
    return None


def automatic(msg: Incoming, judges: frozenset) -> str | None:
    headers = msg.headers
    submitted = _word(headers.get("auto-submitted", ""))
    if submitted and submitted != "no":
        return f"an automatic message (Auto-Submitted: {submitted}, RFC 3834)"
    for name in ("x-autoreply", "x-autorespond"):
        if name in headers:
            return f"an automatic reply ({name.title()}: {headers[name]})"
    suppress = " ".join(headers.get("x-auto-response-suppress", "").split())
    if suppress and suppress.lower() != "none":
        # Microsoft's way of saying "do not answer this automatically" (out-of-office notices,
        # delivery reports and other robots' mail carry it)
        return f"its sender asks for no automatic answer (X-Auto-Response-Suppress: {suppress[:60]})"
    return None


def bulk(msg: Incoming, judges: frozenset) -> str | None:
    headers = msg.headers
    precedence = _word(headers.get("precedence", ""))
    if precedence in _BULK:
        return f"bulk or list mail (Precedence: {precedence})"
    if "list-id" in headers:
        return f"a mailing-list copy (List-Id: {headers['list-id']})"
    if "list-unsubscribe" in headers:
        return "a mailing-list or newsletter copy (List-Unsubscribe)"
    return None


def digest(msg: Incoming, judges: frozenset) -> str | None:
    """A list's digest (many members' mail in one): never one player's commands."""
    if msg.digest:
        return "a digest (Content-Type: multipart/digest)"
    if _DIGEST_SUBJECT.search(msg.subject) and not _REPLY.match(msg.subject):
        return f"a mailing-list digest (Subject: {msg.subject[:80]})"
    return None


RULES: list[Rule] = [own_mail, looped, bounce, automatic, bulk, digest]


def _word(value: str) -> str:
    """The lower-case value before any parameter, comments removed: 'auto-replied'."""
    return _COMMENT.sub(" ", value).split(";")[0].strip().lower()
