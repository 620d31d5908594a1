"""What the judge mails, queued in the outbox in the same transaction as the events behind it.

``attach(store)`` adds a write hook to the store: every protocol command that writes (from
the command line or from mail) then queues, before it commits,
- a private message to each player who now owes something new (a new roll, a new request,
  reveals now open) or to whom a default was applied;
- the public summary to every player and the game's list address when a step or round
  resolves, and the final result (with the server seed) when the game ends.
Games without any address are left alone. A mail the judge acts on may hold several
commands; its private messages are queued once, as things stand after all of them
(``one_mail``).

Public summaries are costly to render (a replay of a round), so their outbox row holds
what to render: the game, the round and the chain head it describes. ``mail send`` renders
it from the log up to that head, so the text is the same whenever it is rendered
(``materialize``). Private messages queued with a moment are kept as their model (the
player's view when queued) and rendered by ``mail send`` too (``render_private_part``);
everything else is rendered when queued.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

from ..protocol.canonical import plain
from ..store import judge as tables

MAIL_PREFIX = "pbem"


def attach(store, judge_address: str | None = None) -> None:
    """Make every write to ``store`` queue the mail it calls for (once per store)."""
    if judge_address:
        store.mail_domain = judge_address.rpartition("@")[2].lower()
    from . import write_hook
    if watch not in store.write_hooks and write_hook not in store.write_hooks:
        store.write_hooks.append(watch)


def subject_tag(game: str) -> str:
    return f"[{game}]"


# ---------------------------------------------------------------------- the write hook

def watch(store, session):
    """Called inside a write, before its events: remember what each player owed."""
    if not tables.uses_mail(store, session.game_id):
        return None
    privates = getattr(store, "held_privates", None) != session.game_id
    before = _owed(session) if privates else {}  # within one_mail, it has its own
    position = _position(session) + (session.seed_revealed,)
    seq = session.seq

    def after(session, at: str) -> None:
        from .moment import moment
        with moment(store, at):  # one message per player for all this write causes
            follow_ups(store, session, before, position, seq, at, privates=privates)
    return after


@contextmanager
def one_mail(store, session, at: str):
    """Act on one incoming mail in ``session``'s game, holding back private messages.

    One mail may carry several commands (a fleet and a crew decision, say): a private
    message queued after the first would tell its player they still owe the second, which
    they have answered already. So within the block only public summaries are queued as
    steps resolve; at its end (inside the mail's transaction) each player who now owes
    something new, or to whom a default was applied, gets one private message, as things
    stand after the whole mail. The block may put the game's latest session in the dict
    it is given (``["session"]``), which saves reading the game again."""
    from ..protocol import loading
    game, before, seq = session.game_id, _owed(session), session.seq
    store.held_privates = game
    latest: dict = {}
    try:
        yield latest
        store.held_privates = None
        if tables.uses_mail(store, game):
            head = store.head(game)
            if head[0] != seq:
                after = latest.get("session")
                if after is None or after.seq != head[0]:
                    after = loading.load(store, game)
                events = _events_after(store, game, seq, head)
                _queue_privates(store, after, before, seq, at, events=events)
                # the mail's events and the head after them, for its answer (its receipts)
                latest.update(events=events, head=head, since=seq)
    finally:
        store.held_privates = None


def _events_after(store, game: str, seq: int, head: tuple[int, str]) -> list:
    """The events of ``game`` after ``seq``, up to ``head`` (read just now): as the write hook
    read them in this moment when they end at that very event (its hash names the whole
    chain before it), else read again."""
    kept = store.memo.get(("events", game, seq)) if getattr(store, "memo_on", False) else None
    if kept and kept[-1].seq == head[0] and kept[-1].hash == head[1]:
        return kept
    return store.events(game, after=seq)


def _owed(session) -> dict[str, tuple]:
    from ..protocol.reports import waiting
    owed: dict[str, list] = {}
    if session.state is None:
        return {}
    for entry in waiting(session):
        owed.setdefault(entry["player"], []).append((entry["kind"], entry["sealed"]))
    where = _position(session)
    return {player: (where, tuple(sorted(kinds))) for player, kinds in owed.items()}


def _position(session) -> tuple:
    if session.state is None:
        return (None, None, False)
    return (session.state.round, session.state.step, session.finished)


def follow_ups(store, session, before: dict, position: tuple, seq: int, at: str,
               privates: bool = True) -> None:
    """Queue the mail that the events after ``seq`` call for (without the private
    messages when ``privates`` is false: see ``hold_privates``)."""
    if session.seq == seq:
        return
    from . import away
    events = store.events(session.game_id, after=seq)  # read once for all that follows (queueing mail adds none)
    if events and getattr(store, "memo_on", False):  # and for the mail that made them (see one_mail)
        store.memo[("events", session.game_id, seq)] = events
    away.notices(store, session, seq, at, events=events)
    from .deadlines import drop_settled
    drop_settled(store, session, at)
    # after drop_settled: a settled request is not reminded again
    away.remind_again(store, session, seq, at, events=events)
    if privates:
        _queue_privates(store, session, before, seq, at, events=events)
    where = _position(session) + (session.seed_revealed,)
    if position[0] is not None and where != position:
        # the end: the game finished, or the moderator published the seed (play is over)
        final = session.seed_revealed and not position[3]
        queue_summary(store, session, None if final else position[0], at, final=final)


def _queue_privates(store, session, before: dict, seq: int, at: str, events=None) -> None:
    """A private message to each player who owes something new, to whom a default was
    applied, or whose request was withdrawn by another's move (a skull turn that passes
    to a player a late selection put ahead): their last private message asks for what
    they no longer owe, so the judge says so, or they would answer it and be refused.
    ``events``: the game's events after ``seq``, when the caller has read them."""
    if events is None:
        events = store.events(session.game_id, after=seq)
    defaulted = {ev.data.get("player") for ev in events if ev.kind in ("default", "nmr")}
    named = {ev.data.get("player") for ev in events}  # who acted (or was acted for) themselves
    now = _owed(session)
    from .moment import current
    m = current(store)
    where = None
    for player, row in tables.mail_players(store, session.game_id).items():
        withdrawn = player in before and player not in now and player not in named
        if player in defaulted or withdrawn or (player in now and now[player] != before.get(player)):
            if player in defaulted and m is not None:
                m.defaulted.add(player)  # said on top of their message, whatever else it carries
            where = where or _place(session, store)  # the same for every player
            queue_private(store, session, player, at, where=where, row=row)


# ---------------------------------------------------------------------- queueing

def recipients(store, game: str) -> list[tuple[str | None, str]]:
    """(player, address) for every player with an address, then (None, list address)."""
    out = [(p, row.address) for p, row in sorted(tables.mail_players(store, game).items())]
    listed = tables.list_address(store, game)
    if listed:
        out.append((None, listed))
    return out


def queue_private(store, session, player: str, at: str, notice: str = "", kind: str = "private",
                  in_reply_to: str | None = None, subject: str | None = None,
                  secret: str | None = None, where: str | None = None, row=None) -> str | None:
    """Queue ``player``'s private message (with ``notice`` above it, e.g. their password);
    due times in UTC and in the player's own time zone, if they set one. ``secret`` (the
    password in the notice) is removed from the stored message once it is sent. ``where``
    (``_place(session)``) and ``row`` (the player's ``mail_player``): when the caller has
    them already, in the same transaction."""
    from ..store import outbox
    row = row or tables.mail_player(store, session.game_id, player)
    if row is None:
        return None
    from .moment import current
    how = _how_to_reply(session, player)
    if not subject:
        where = where or _place(session, store)
        subject = f"{subject_tag(session.game_id)} private message for {player}: {where}"
    m = current(store)
    html_wanted = session.started and not row.plain  # the HTML part says all the text says, and draws the board
    # goes out with the rest of the moment, after the answer; a message with a password in it
    # goes alone, so that the outbox can cut the password out once it is sent (``redact``)
    if m is not None and kind == "private" and not secret:
        part = _private_part(session, player, row.tz, notice, how, html_wanted)
        m.add_private(session.game_id, player, row.address, subject, part)
        return None
    text, html = render_private_part(_private_spec(session, player, row.tz, notice, how, html_wanted))
    return outbox.queue(store, game=session.game_id, kind=kind, recipient=row.address, subject=subject,
                        text=text, html=html, in_reply_to=in_reply_to, at=at, domain=_domain(store),
                        redact=secret)


def _private_spec(session, player: str, tz: str | None, notice: str, how: str, html: bool) -> dict:
    """What a private message is rendered from: the player's view as of now (its model,
    ``pbem.render.summary.private_model``), the text above and below it, and whether it has
    an HTML part; before the start, its text alone."""
    if not session.started:
        return {"text": notice + _not_started(session) + how}
    from ..render import summary
    game_type, model = summary.private_model(session, player, tz=tz, by_mail=True)
    return {"game_type": game_type, "model": model, "notice": notice, "how": how, "html": html}


def _private_part(session, player: str, tz: str | None, notice: str, how: str, html: bool) -> dict:
    """A moment's part for ``player``'s private message, kept as what to render when the
    message is sent (``{"private": spec}``; see ``pbem.mail.moment``): the model is
    rendered then, as it was now. A model that JSON would not give back equal (a tuple, a
    key that is not a string) is rendered now instead, so the text is the same either way
    (models are plain data: no str subclass such as markupsafe.Markup, which JSON would
    give back equal but as a plain str)."""
    spec = _private_spec(session, player, tz, notice, how, html)
    if "model" in spec and _survives_json(spec["model"]):
        return {"private": spec}
    text, html_doc = render_private_part(spec)
    return {"text": text, **({"html": html_doc} if html_doc else {})}


def _survives_json(value) -> bool:
    """``json.loads(json.dumps(value)) == value``: the same answer (or error), given at once
    for plain data (a private model is: some 200 items), ~3x sooner than JSON's round trip."""
    # a tuple is not plain here: JSON gives it back as a list
    return True if plain(value, tuples=False) else json.loads(json.dumps(value)) == value


def render_private_part(spec: dict) -> tuple[str, str | None]:
    """(text, HTML or None) of a private message from ``_private_spec``."""
    if "model" not in spec:
        return spec["text"], None
    from ..render import summary
    body = summary.render_private_model(spec["game_type"], spec["model"], "text")
    html = None
    if spec["html"]:
        from .htmlmail import Html, document
        html = document(spec["notice"], Html(summary.render_private_model(spec["game_type"], spec["model"], "html")),
                        spec["how"])
    return spec["notice"] + body + spec["how"], html


def queue_summary(store, session, round_: int | None, at: str, final: bool = False) -> None:
    """Queue the public summary of ``round_`` (the final result when ``final``) to everyone,
    as a render spec for the log up to the current head (see ``materialize``)."""
    from .moment import moment
    head = store.head(session.game_id)
    spec = {"what": "result" if final else "summary", "round": round_, "upto": head[0], "head": head[1]}
    if final:
        subject = f"{subject_tag(session.game_id)} final result and server seed"
    else:
        subject = f"{subject_tag(session.game_id)} round {round_}: public summary (event {head[0]})"
    with moment(store, at) as m:  # to everyone with the rest of the moment (pbem.mail.moment)
        m.add_summary(session.game_id, spec, subject, "result" if final else "summary",
                      [address for _player, address in recipients(store, session.game_id)])


def materialize(store, game: str, spec_text: str) -> tuple[str, str, list[dict]]:
    """The text, HTML and files of a summary: the log up to the head it names, rendered. A
    round's summary is replayed from the snapshot taken before that round began (the cost
    of one round); the final result, once per game, from the first event, and it carries
    the export (GAME.jsonl), so that every player can audit the game without the moderator,
    and the game's viewer (GAME.html, ``pbem page``)."""
    from ..store.export import export_lines
    from ..protocol.loading import SEED, held_source
    from ..protocol.errors import Refused
    from ..render import record, summary
    spec = json.loads(spec_text)
    if spec["what"] != "result":
        rec = record.for_round(store, game, spec["round"], spec["upto"], spec["head"])
        return (summary.render_public(rec, spec["round"], "text")[1],
                summary.render_public(rec, spec["round"], "html")[1], [])
    events = store.events(game, upto=spec["upto"])
    if len(events) != spec["upto"] or events[-1].hash != spec["head"]:
        raise Refused(f"game {game}: the log no longer reaches event {spec['upto']} {spec['head'][:8]}…; "
                      f"run pbem audit {game}")
    secret = store.get_secret(game, SEED)
    rec = record.build(game, events, bytes.fromhex(secret) if secret else None, held_source(store, game))
    from ..render import viewer
    file = f"{game}.jsonl"
    note = (f"The whole log of the game is attached as {file}. To check every draw yourself, "
            f"save it and run: pbem audit --file {file}\n"
            f"The whole game, round by round, is attached as {game}.html: open it in any browser.\n\n")
    files = [{"filename": file, "content_type": "application/x-ndjson", "text": "".join(export_lines(events))},
             {"filename": f"{game}.html", "content_type": "text/html",
              "text": viewer.render_page(rec, [e.export_dict() for e in events])}]
    return (note + summary.render_public(rec, None, "text", audit_file=file)[1],
            summary.render_public(rec, None, "html", audit_file=file)[1], files)


def _not_started(session) -> str:
    return (f"Game {session.game_id} has not started yet. Players may add a client seed (any text) "
            f"before it does: reply with the line 'client-seed YOUR WORDS'.\n")


def _example(session, kind: str) -> str:
    """A choice in the game's own syntax for help texts ("sealed" or "open")."""
    return (getattr(session.rules, "EXAMPLES", None) or {"sealed": "B,C", "open": "skull:raid"})[kind]


def _how_to_reply(session, player: str) -> str:
    signed = bool(session.meta.get("require_signatures"))
    lines = ["", "-" * 60, f"To answer by mail, reply to this message (keep {subject_tag(session.game_id)} "
             f"in the subject), one command a line:"]
    if signed:
        lines.append("  paste the signed block that pbem seal / pbem decide printed (this game takes only signed blocks)")
    else:
        lines += ["  password YOUR-MAIL-PASSWORD     (in every message that changes something)",
                  "  seal CHOICE                     the judge seals your choice on receipt",
                  "  commit HASH  /  reveal CHOICE SALT   if you seal on your own machine",
                  f"  CHOICE                          an open decision, e.g. {_example(session, 'open')}"]
    lines += ["  status  |  private  |  help",
              "Lines quoted with '>' and everything below '-- ' are not read; greetings and sign-offs",
              "around your commands do no harm."]
    return "\n".join(lines) + "\n"


def _place(session, store=None) -> str:
    """Where the game is, for the subject of a private message."""
    return "before the start" if session.state is None else _where(session, store)


def _where(session, store=None) -> str:
    """Round and phase as the player's private message names them ("round 2, roll step 3")."""
    phase = public_view(store, session).get("phase")
    step = f" step {session.state.step}" if phase == "roll" else ""
    return f"round {session.state.round}, {phase}{step}" if phase else f"round {session.state.round}"


def public_view(store, session) -> dict:
    """``session.rules.view(session.state, None)``, made once per state in a moment (the
    subject of private messages and the answer's status line both name the phase); the
    caller must not change it. Kept in ``store.memo`` (see ``pbem.store.judge._kept``),
    with the state it is of."""
    kept = getattr(store, "memo_on", False)
    key = ("public_view", session.game_id, session.seq)
    if kept:
        found = store.memo.get(key)
        if found is not None and found[0] is session.state:
            return found[1]
    view = session.rules.view(session.state, None)
    if kept:
        store.memo[key] = (session.state, view)
    return view


def _domain(store) -> str:
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


# ---------------------------------------------------------------------- addresses

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
            notice = _welcome(session, player, password)
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


def _welcome(session, player: str, password: str | None) -> str:
    lines = [f"Welcome to game {session.game_id}, {player}. The judge will mail you whenever you owe a move."]
    if password:
        lines += ["", f"Your mail password for this game: {password}",
                  "Put the line 'password " + password + "' in every message that changes something.",
                  "This is the only time the judge shows it: keep this message."]
    if session.meta.get("require_signatures"):
        lines += ["", "This game takes only signed blocks: make them with pbem seal / pbem decide --key YOUR.key."]
    return "\n".join(lines) + "\n\n"


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
