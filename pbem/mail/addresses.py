"""The address book, as the moderator writes it: a player's address (with the welcome that
carries their mail password), the game's list and moderator addresses, plain-text mail, and
a new game with all of them in one transaction.

Addresses live in the judge's private tables (``pbem.store.judge``), not in the events.
Reading the book (who gets a game's mail, an address checked) is ``pbem.mail.envelope``.
"""

from __future__ import annotations

from ..store import judge as tables
from .envelope import check_address
from .judge import attach
from .letters import queue_private, welcome


def register(store, game: str, player: str, address: str, at: str, new_password: bool = False,
             tz: str | None = None, plain: bool | None = None) -> dict:
    """Set ``player``'s address in ``game`` (and time zone ``tz``, an IANA name; "" removes
    it; and ``plain``: mail as plain text only, or with an HTML part and the board as a
    picture; None keeps it). In a game without signatures a player without a password (or
    with ``new_password``) gets a fresh one, mailed once and kept only hashed. Runs in one
    transaction with the private message that carries the password."""
    from ..protocol import loading
    from ..render.times import check_zone
    from .passwords import hash_password, make_password
    address = check_address(address)
    if tz:
        tz = check_zone(tz)
    attach(store)
    with store.atomic():
        session = loading.load(store, game)
        session.player(player)
        others = [p for p, row in tables.mail_players(store, game).items() if row.address == address and p != player]
        if others:
            from ..protocol.errors import Refused
            raise Refused(f"{address} is already the address of {others[0]} in game {game}; "
                          f"each player needs an address of their own")
        old = tables.mail_player(store, game, player)
        signed = bool(session.meta.get("require_signatures"))
        dropped = 0
        if old is not None and old.address != address:  # a typo corrected: nothing goes to it any more
            from ..store import outbox
            dropped = outbox.drop_queued(store, game, old.address)
        password = None
        # a new password when asked, when there is none, or when the mail that carried it
        # may never have gone (it waited for the old address and was dropped)
        if not signed and (new_password or old is None or not old.password_hash or dropped):
            password = make_password()
        tables.set_address(store, game, player, address, hash_password(password) if password else None, tz)
        if plain is not None:
            tables.set_plain(store, game, player, plain)
        from . import failures
        failures.clear(store, address)  # given (again) by the moderator: tried afresh, reminders included
        if password or old is None or old.address != address:
            notice = welcome(session, player, password)
            queue_private(store, session, player, at, notice=notice, secret=password)
    changed = old is not None and old.address != address
    return {"game": game, "player": player, "address": address, "password_sent": bool(password),
            "changed": changed, "private_queued": bool(password) or old is None or changed,
            "dropped": dropped, "tz": tables.mail_player(store, game, player).tz,
            "plain": tables.mail_player(store, game, player).plain}


def set_plain(store, game: str, player: str | None, plain: bool) -> dict:
    """Mail ``player`` (None: the game's list address) as plain text only, or not."""
    from ..protocol import loading
    from ..protocol.errors import Refused
    with store.atomic():
        session = loading.load(store, game)
        if player is None:
            if not tables.list_address(store, game):
                raise Refused(f"game {game} has no list address; set one first: pbem address {game} --list ADDRESS")
        else:
            session.player(player)
            if tables.mail_player(store, game, player) is None:
                raise Refused(f"{player} has no address in game {game}; give one: pbem address {game} {player} EMAIL")
        tables.set_plain(store, game, player, plain)
    return {"game": game, "player": player, "plain": plain}


def set_list(store, game: str, address: str | None, plain: bool | None = None) -> str | None:
    """The address of ``game``'s list, which gets the public summaries; None removes it."""
    from ..protocol import loading
    from . import failures
    address = check_address(address) if address else None
    with store.atomic():
        loading.load(store, game)
        tables.set_list_address(store, game, address)
        if address:
            failures.clear(store, address)  # given (again) by the moderator: tried afresh
        if plain is not None:
            tables.set_plain(store, game, None, plain)
    return address


def set_moderator(store, game: str, address: str | None) -> str | None:
    """Where the moderator of ``game`` is told what needs them (mail to a player that
    cannot be delivered); None removes it."""
    from ..protocol import loading
    from . import failures
    address = check_address(address) if address else None
    with store.atomic():
        loading.load(store, game)
        tables.set_moderator_address(store, game, address)
        if address:
            failures.clear(store, address)  # given (again): tried afresh
    return address


def create_game(store, game_id: str, game_type: str, players: list[str], options: dict,
                addresses: dict[str, str], list_address: str | None, at: str,
                deadlines: dict | None = None, moderator: str | None = None, **settings):
    """``pbem new`` with addresses: the game, its addresses, its deadline settings
    (``deadlines``: remind, grace, on_late; see ``pbem.mail.deadlines``), the moderator's
    address (told when a player's mail cannot be delivered) and the welcome
    messages (each with the player's mail password) in one transaction."""
    from ..protocol import commands
    from . import deadlines as clock
    addresses = {p: check_address(a) for p, a in addresses.items()}
    list_address = check_address(list_address) if list_address else None
    attach(store)
    with store.transaction():
        session = commands.create_game(store, game_id, game_type, players, options, at=at, **settings)
        if deadlines:
            clock.configure(store, game_id, **deadlines)
        if list_address:
            tables.set_list_address(store, game_id, list_address)
        if moderator:
            tables.set_moderator_address(store, game_id, check_address(moderator))
        for player, address in addresses.items():
            register(store, game_id, player, address, at)
    return session
