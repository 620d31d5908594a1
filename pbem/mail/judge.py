"""The judge's write hook: what each write to a game causes to be mailed, queued in the
outbox in the same transaction as the events behind it.

``attach(store)`` adds the hook to the store: every protocol command that writes (from
the command line or from mail) then queues, before it commits,
- a private message to each player who now owes something new (a new roll, a new request,
  reveals now open) or to whom a default was applied;
- the public summary to every player and the game's list address when a step or round
  resolves, and the final result (with the server seed) when the game ends;
- the notices of a pause, a resume, an extension or a replacement (``pbem.mail.notices``),
  and the reminders that a write settles or moves (``pbem.mail.reminders``).
Games without any address are left alone. A mail the judge acts on may hold several
commands; its private messages are queued once, as things stand after all of them
(``one_mail``). What the letters say, and how they are queued: ``pbem.mail.letters``.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..store import judge as tables


def attach(store, judge_address: str | None = None) -> None:
    """Make every write to ``store`` queue the mail it calls for (once per store: the hook
    is known by ``queues_mail``, whether it is ``watch`` itself or ``pbem.mail.write_hook``,
    which ``pbem.cli.common.open_store`` installs)."""
    if judge_address:
        store.mail_domain = judge_address.rpartition("@")[2].lower()
        store.judge_address = judge_address
    if not any(getattr(hook, "queues_mail", False) for hook in store.write_hooks):
        store.write_hooks.append(watch)


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


watch.queues_mail = True


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
                events = events_after(store, game, seq, head)
                _queue_privates(store, after, before, seq, at, events=events)
                # the mail's events and the head after them, for its answer (its receipts)
                latest.update(events=events, head=head, since=seq)
    finally:
        store.held_privates = None


def events_after(store, game: str, seq: int, head: tuple[int, str]) -> list:
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
    messages when ``privates`` is false: see ``one_mail``)."""
    if session.seq == seq:
        return
    from . import notices
    from .letters import queue_summary
    from .reminders import drop_settled, remind_again
    events = store.events(session.game_id, after=seq)  # read once for all that follows (queueing mail adds none)
    if events and getattr(store, "memo_on", False):  # and for the mail that made them (see one_mail)
        store.memo[("events", session.game_id, seq)] = events
    notices.notices(store, session, seq, at, events=events)
    drop_settled(store, session, at)
    # after drop_settled: a settled request is not reminded again
    remind_again(store, session, seq, at, events=events)
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
    from .letters import place, queue_private
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
            where = where or place(session, store)  # the same for every player
            queue_private(store, session, player, at, where=where, row=row)
