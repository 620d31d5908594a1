"""What goes on the envelope of the judge's mail, as every room that queues mail reads it:
an address checked, who gets a game's mail, the game's tag in a subject, and the domain of
the Message-IDs the judge makes. It reads the address book; ``pbem.mail.addresses`` writes it.
"""

from __future__ import annotations

from ..store import judge as tables


def subject_tag(game: str) -> str:
    return f"[{game}]"


def check_address(address: str) -> str:
    """A plain address (name@example.org), lower-cased; a one-line refusal otherwise. The
    outbox's own pattern: an address taken here can always be mailed."""
    from ..protocol.errors import Refused
    from ..store.outbox import ADDRESS_PATTERN
    text = (address or "").strip()
    if len(text) > 254 or not ADDRESS_PATTERN.fullmatch(text):
        shown = text[:80] + ("…" if len(text) > 80 else "")
        raise Refused(f"{shown!r} is not a plain email address; give one like ani@example.org "
                      f"(no name, no angle brackets)")
    return text.lower()


def recipients(store, game: str) -> list[tuple[str | None, str]]:
    """(player, address) for every player with an address, then (None, list address)."""
    out = [(p, row.address) for p, row in sorted(tables.mail_players(store, game).items())]
    listed = tables.list_address(store, game)
    if listed:
        out.append((None, listed))
    return out


def judge_address(store) -> str | None:
    """The judge's own address as this process knows it: the one ingest was given, else
    $PBEM_JUDGE_ADDRESS or the mail config file's judge_address (None when none is set)."""
    known = getattr(store, "judge_address", None)
    if known:
        return known.lower()
    import os
    from .config import MailConfigError, load_config
    address = os.environ.get("PBEM_JUDGE_ADDRESS")
    if not address:
        try:
            address = load_config(None, os.environ).judge_address
        except (MailConfigError, OSError):
            address = None
    return address.lower() if address else None


def domain(store) -> str:
    """The domain of the Message-IDs the judge makes: its own address's (from ingest, else
    $PBEM_JUDGE_ADDRESS or the mail config file's judge_address), else pbem.invalid."""
    domain = getattr(store, "mail_domain", None)
    if domain is None:
        import os
        from .config import MailConfigError, load_config
        address = os.environ.get("PBEM_JUDGE_ADDRESS")
        if not address:
            try:
                address = load_config(None, os.environ).judge_address
            except (MailConfigError, OSError):
                address = None
        domain = store.mail_domain = (address or "").rpartition("@")[2].lower() or "pbem.invalid"
    return domain
