"""Mail that cannot be delivered: each failing address's bounce score, the player marked
"mail not delivered", and the moderator's notice.

In the manner of Mailman 3's bounce processing: every failure that a mail server reports
for an address (an SMTP refusal, a bounce that came back by mail) is recorded against the
address with the server's last words. A permanent failure adds 1 to the address's score, at
most once a day (a burst of bounces on one day is one bad day, not five); a score not
raised for ``STALE_AFTER`` starts again from 0. At ``THRESHOLD`` the address is marked
"mail not delivered": the judge then sends its players no reminder (``is_dead``) until they
mail the judge again or the moderator gives or re-gives their address (``clear``).

Some failures leave no doubt and mark the address at once (``certain``): the judge's own
SMTP server refused the recipient (a 5xx to RCPT TO: no one else can forge that), or a
bounce quotes the Message-ID of a message the judge sent to that very address (Mailman's
VERP probe does the same: a stranger cannot know the random Message-ID).

The moderator of each game the address plays in (``pbem address GAME --moderator ADDR``)
is mailed once when the address starts failing and once when it is marked, each time in
the same transaction as the failure; so is the moderator of a game whose list address
fails (the public summaries reach nobody there). A failing moderator address can be told
to no one by mail: ``for_game`` gives ``pbem status`` all three (players, list, moderator).
Times are parameters; nothing here reads the clock. Writes run inside the caller's
transaction.
"""

from __future__ import annotations

from ..protocol.times import shift
from ..store import judge as tables

THRESHOLD = 3.0  # Mailman 3's default is 5, for lists; a game's deadline is often two days
STALE_AFTER = 7 * 86400  # seconds: Mailman 3's bounce_info_stale_after
FIELDS = ("address", "score", "since", "last_at", "last_scored_at", "last_answer", "failed_messages",
          "dead_since", "told_at", "told_dead_at")


def record(store, address: str, answer: str, at: str, certain: bool = False, message: bool = True,
           first: str | None = None) -> dict:
    """Record a failure of ``address`` at ``at`` with the server's ``answer``; tell the
    moderators what is news; return the address's record (see ``FIELDS``).
    ``message``: a message of the judge was failed for it (counted for the moderator).
    ``first``: when the trouble began, if before ``at`` (a message given up after a while of
    temporary refusals: its first one); the record's ``since`` ("failing since")."""
    from ..store.outbox import one_line
    store.require_transaction("failures.record()")
    address, answer = address.lower(), one_line(answer)
    old = get(store, address)
    if old is not None and old["dead_since"] is None and old["last_scored_at"] \
            and at >= shift(old["last_scored_at"], STALE_AFTER):
        store.conn.execute("delete from mail_failures where address = ?", [address])
        old = None  # stale: it starts again, as if it were the first failure
    if old is None:
        store.conn.execute("insert into mail_failures (address, score, since, last_at, last_answer) "
                           "values (?, 0, ?, ?, ?)", [address, min(first or at, at), at, answer])
        old = get(store, address)
    score, scored = old["score"], old["last_scored_at"]
    if certain:
        score, scored = max(score, THRESHOLD), at
    elif scored is None or scored[:10] != at[:10]:  # once a day, as Mailman counts
        score, scored = score + 1, at
    dead = old["dead_since"] or (at if score >= THRESHOLD else None)
    store.conn.execute("update mail_failures set score = ?, last_scored_at = ?, last_at = ?, last_answer = ?, "
                       "failed_messages = failed_messages + ?, dead_since = ? where address = ?",
                       [score, scored, at, answer, int(message), dead, address])
    now = get(store, address)
    _tell(store, now, at)
    return get(store, address)


def get(store, address: str) -> dict | None:
    row = store.conn.execute(f"select {', '.join(FIELDS)} from mail_failures where address = ?",
                             [address.lower()]).fetchone()
    return dict(zip(FIELDS, row)) if row else None


def is_dead(store, address: str) -> bool:
    """Whether ``address`` is marked "mail not delivered" (no reminder goes to it)."""
    row = store.conn.execute("select dead_since from mail_failures where address = ?", [address.lower()]).fetchone()
    return bool(row and row[0])


def clear(store, address: str) -> bool:
    """The address works again (its player mailed the judge, or the moderator gave it
    again): forget its failures. True when there were any."""
    store.require_transaction("failures.clear()")
    return store.conn.execute("delete from mail_failures where address = ?", [address.lower()]).rowcount > 0


def for_game(store, game: str) -> list[dict]:
    """Every address of ``game`` that fails: its players' by player, then its list's and its
    moderator's; each the address's record with ``player`` (None for the list and the
    moderator), ``role`` ("player", "list" or "moderator"), ``marked`` and ``commands``
    (what helps) added."""
    columns = ", ".join("f." + f for f in FIELDS)
    rows = store.conn.execute(
        f"select p.player, 'player', {columns} from mail_players p "
        "join mail_failures f on f.address = lower(p.address) where p.game = ? order by p.player", [game]).fetchall()
    rows += store.conn.execute(
        f"select null, 'list', {columns} from mail_games g join mail_failures f on f.address = lower(g.list_address) "
        f"where g.game = ? union all select null, 'moderator', {columns} from mail_games g "
        "join mail_failures f on f.address = lower(g.moderator_address) where g.game = ?", [game, game]).fetchall()
    out = []
    for player, role, *values in rows:
        entry = {"player": player, "role": role, **dict(zip(FIELDS, values))}
        entry["marked"] = entry["dead_since"] is not None
        entry["commands"] = commands(game, player, role)
        out.append(entry)
    return out


def commands(game: str, player: str | None, role: str = "player") -> list[str]:
    """The commands that help a moderator whose player's (or list's, or own) mail fails."""
    if role == "list":
        return [f"pbem address {game} --list NEW-ADDRESS (or none)", f"pbem mail outbox --game {game}"]
    if role == "moderator":
        return [f"pbem address {game} --moderator NEW-ADDRESS", f"pbem mail outbox --game {game}"]
    return [f"pbem address {game} {player} NEW-ADDRESS",
            f"pbem replace {game} {player} --email NEW-ADDRESS (a new person takes the seat)",
            f"pbem mail outbox --game {game}"]


def who(entry: dict) -> str:
    """Whose address it is, in words: the player's name, "the list", "the moderator"."""
    return {"list": "the list", "moderator": "the moderator"}.get(entry.get("role") or "player", entry["player"])


def state_words(entry: dict) -> str:
    """A failing address's state in a few words, true of what the judge does: "not
    delivered: no reminders" only for a player marked so; a player below the threshold
    still gets reminders, and the words say so."""
    if entry["marked"]:
        return "not delivered: no reminders" if (entry.get("role") or "player") == "player" else "not delivered"
    reminders = "; reminders still go" if (entry.get("role") or "player") == "player" else ""
    return f"failing, bounce score {entry['score']:g} of {THRESHOLD:g}{reminders}"


def line(entry: dict) -> str:
    """One line for ``pbem status`` and ``pbem games``."""
    when = _shown(entry["since"])
    if entry.get("role") in ("list", "moderator"):
        state = "MAIL NOT DELIVERED" if entry["marked"] else f"bounce score {entry['score']:g} of {THRESHOLD:g}"
    else:
        state = ("MAIL NOT DELIVERED (no reminders)" if entry["marked"]
                 else f"bounce score {entry['score']:g} of {THRESHOLD:g}")
    return (f"{who(entry)} <{entry['address']}>: {state}; failing since {when}, "
            f"{entry['failed_messages']} message(s) failed, last answer: {entry['last_answer']}; "
            f"try: {entry['commands'][0]}")


def _shown(at: str | None) -> str:
    return at.replace("T", " ").replace("Z", " UTC") if at else "-"


def _tell(store, entry: dict, at: str) -> None:
    """Mail each moderator of a game the address plays in, once at the first failure and
    once when it is marked (one message when both happen at once)."""
    news_start = entry["told_at"] is None
    news_dead = entry["dead_since"] is not None and entry["told_dead_at"] is None
    if not (news_start or news_dead):
        return
    places = [(row.game, row.player) for row in tables.players_at(store, entry["address"])]
    places += [(game, None) for game, role in tables.roles_at(store, entry["address"])
               if role == "list" and game not in {g for g, _player in places}]  # one notice a game
    for game, player in places:  # a failing moderator address: nobody to mail (pbem status shows it)
        moderator = tables.moderator_address(store, game)
        if moderator and moderator.lower() != entry["address"]:
            _queue_notice(store, game, player, moderator, entry, at)
    store.conn.execute("update mail_failures set told_at = coalesce(told_at, ?), told_dead_at = ? where address = ?",
                       [at, at if entry["dead_since"] else None, entry["address"]])


def _queue_notice(store, game: str, player: str | None, moderator: str, entry: dict, at: str) -> None:
    """``player`` None: the address is the game's list address."""
    from ..store import outbox
    from .envelope import domain, subject_tag
    if player is None:
        return _queue_list_notice(store, game, moderator, entry, at)
    marked = entry["dead_since"] is not None
    lines = [f"The judge cannot deliver mail to {player} in game {game} ({entry['address']}).", "",
             f"Failing since:     {_shown(entry['since'])}",
             f"Last server answer: {entry['last_answer']}",
             f"Messages failed:   {entry['failed_messages']}",
             f"Bounce score:      {entry['score']:g} (at {THRESHOLD:g} the player is marked \"mail not delivered\")", ""]
    if marked:
        lines += [f"{player} is now marked \"mail not delivered\": the judge sends {player} no reminder until "
                  f"{player} mails the judge again or you give an address. Defaults still apply at the deadlines.", ""]
    else:
        lines += ["The judge goes on trying; you are told again if the address is marked \"mail not delivered\".", ""]
    lines += ["What helps:"] + [f"  {command}" for command in commands(game, player)] + [
        f"  pbem status {game}", "", "(docs/email.md, \"When mail cannot be delivered\")"]
    subject = (f"{subject_tag(game)} mail to {player} " + ("not delivered: no more reminders" if marked
                                                            else "cannot be delivered"))
    outbox.queue(store, game=game, kind="notice", recipient=moderator, subject=subject,
                 text="\n".join(lines) + "\n", at=at, domain=domain(store))


def _queue_list_notice(store, game: str, moderator: str, entry: dict, at: str) -> None:
    from ..store import outbox
    from .envelope import domain, subject_tag
    marked = entry["dead_since"] is not None
    lines = [f"The judge cannot deliver the public summaries of game {game} to its list ({entry['address']}).", "",
             f"Failing since:     {_shown(entry['since'])}",
             f"Last server answer: {entry['last_answer']}",
             f"Messages failed:   {entry['failed_messages']}",
             f"Bounce score:      {entry['score']:g} (at {THRESHOLD:g} it is marked \"mail not delivered\")", "",
             "The judge goes on sending the list each summary; whoever reads the game only there misses them.",
             "The players' own mail is not affected.", "",
             "What helps:"] + [f"  {command}" for command in commands(game, None, "list")] + [
             f"  pbem status {game}", "", "(docs/email.md, \"When mail cannot be delivered\")"]
    subject = f"{subject_tag(game)} mail to the list " + ("not delivered" if marked else "cannot be delivered")
    outbox.queue(store, game=game, kind="notice", recipient=moderator, subject=subject,
                 text="\n".join(lines) + "\n", at=at, domain=domain(store))
