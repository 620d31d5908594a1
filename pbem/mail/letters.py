"""The judge's letters: what a private message and a public summary say, how each is queued,
and how what was queued as "to render" is rendered when it is sent.

A private message queued within a moment (``pbem.mail.moment``) is kept as its model (the
player's view when queued) and rendered by ``mail send`` (``render_private_part``); one
with a secret in it (a welcome with its password) is rendered when queued, so that the
outbox can cut the secret out once it is sent. Public summaries are costly to render (a
replay of a round), so their part holds what to render: the game, the round and the chain
head it describes. ``mail send`` renders it from the log up to that head, so the text is
the same whenever it is rendered (``materialize``). ``render_row`` does both, at send time.
"""

from __future__ import annotations

import json

from ..protocol.canonical import plain
from ..store import judge as tables
from .envelope import domain, recipients, subject_tag


# ---------------------------------------------------------------------- private messages

def queue_private(store, session, player: str, at: str, notice: str = "", kind: str = "private",
                  in_reply_to: str | None = None, subject: str | None = None,
                  secret: str | None = None, where: str | None = None, row=None,
                  expires_at: str | None = None) -> str | None:
    """Queue ``player``'s private message (with ``notice`` above it, e.g. their password);
    due times in UTC and in the player's own time zone, if they set one. ``secret`` (the
    password in the notice) is removed from the stored message once it is sent. ``where``
    (``place(session)``) and ``row`` (the player's ``mail_player``): when the caller has
    them already, in the same transaction. ``expires_at``: a reminder's deadline, after which
    it is dropped rather than sent (``pbem.store.outbox.claim``)."""
    from ..store import outbox
    row = row or tables.mail_player(store, session.game_id, player)
    if row is None:
        return None
    from .moment import current
    how = how_to_reply(session, player)
    if not subject:
        where = where or place(session, store)
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
                        text=text, html=html, in_reply_to=in_reply_to, at=at, domain=domain(store),
                        redact=secret, expires_at=expires_at)


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
    if "model" in spec and survives_json(spec["model"]):
        return {"private": spec}
    text, html_doc = render_private_part(spec)
    return {"text": text, **({"html": html_doc} if html_doc else {})}


def survives_json(value) -> bool:
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


# ---------------------------------------------------------------------- public summaries

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


def materialize(store, game: str, spec_text: str, kept: dict | None = None) -> tuple[str, str, list[dict]]:
    """The text, HTML and files of a summary: the log up to the head it names, rendered. A
    round's summary is replayed from the snapshot taken before that round began (the cost
    of one round); the final result, once per game, from the first event, and it carries
    the export (GAME.jsonl), so that every player can audit the game without the moderator,
    and make the game's viewer from it (``pbem page --file``: the page itself weighs more
    than the rest of the mail together, docs/email.md "How heavy a message is").
    ``kept``: kept between calls, so that a summary goes on from the replay of the one
    before it (``record.for_round``)."""
    from ..store.export import export_lines
    from ..protocol.loading import SEED, held_source
    from ..protocol.errors import Refused
    from ..render import record, summary
    spec = json.loads(spec_text)
    if spec["what"] != "result":
        rec = record.for_round(store, game, spec["round"], spec["upto"], spec["head"], kept)
        return (summary.render_public(rec, spec["round"], "text")[1],
                summary.render_public(rec, spec["round"], "html")[1], [])
    events = store.events(game, upto=spec["upto"])
    if len(events) != spec["upto"] or events[-1].hash != spec["head"]:
        raise Refused(f"game {game}: the log no longer reaches event {spec['upto']} {spec['head'][:8]}…; "
                      f"run pbem audit {game}")
    secret = store.get_secret(game, SEED)
    rec = record.build(game, events, bytes.fromhex(secret) if secret else None, held_source(store, game))
    file = f"{game}.jsonl"
    note = (f"The whole log of the game is attached as {file}. To check every draw yourself, "
            f"save it and run: pbem audit --file {file}\n"
            f"To see the whole game round by round in any browser, make its page from it: "
            f"pbem page --file {file} -o {game}.html\n\n")
    files = [{"filename": file, "content_type": "application/x-ndjson", "text": "".join(export_lines(events))}]
    return (note + summary.render_public(rec, None, "text", audit_file=file)[1],
            summary.render_public(rec, None, "html", audit_file=file)[1], files)


# ---------------------------------------------------------------------- rendering at send time

def render_row(store, game: str, render: str, cache: dict,
               records: dict | None = None) -> tuple[str, str | None, str | None]:
    """(text, html, attachments) of a row queued as what to render; ``cache`` keeps each
    summary rendered once for every recipient; ``records``, the replays of the summaries
    rendered last, for the next to go on from (see ``materialize``)."""
    from .moment import LATE, html_of, join
    data = json.loads(render)
    if "parts" not in data:  # a row queued before moments: one summary spec alone
        data = {"parts": [{"spec": data}]}
    texts, htmls, files = [], [], []
    for part in data["parts"]:
        if "text" in part:
            texts.append(part["text"])
            htmls.append(part.get("html"))
            continue
        if "private" in part:  # a private message: its model, as it was when the message was queued
            text, html = render_private_part(part["private"])
            texts.append((LATE + text) if part.get("late") else text)
            htmls.append(html)
            continue
        key = (game, json.dumps(part["spec"], sort_keys=True))
        if key not in cache:
            cache[key] = materialize(store, game, json.dumps(part["spec"]), records)
        text, html, attached = cache[key]
        texts.append(text)
        htmls.append(html)
        files += attached
    return join(texts), html_of(texts, htmls), (json.dumps(files) if files else None)


# ---------------------------------------------------------------------- the words around them

def _not_started(session) -> str:
    return (f"Game {session.game_id} has not started yet. Players may add a client seed (any text) "
            f"before it does: reply with the line 'client-seed YOUR WORDS'.\n")


def _example(session, kind: str) -> str:
    """A choice in the game's own syntax for help texts ("sealed" or "open")."""
    return (getattr(session.rules, "EXAMPLES", None) or {"sealed": "B,C", "open": "skull:raid"})[kind]


def how_to_reply(session, player: str) -> str:
    """The foot of every private message: how to answer it by mail."""
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


def welcome(session, player: str, password: str | None) -> str:
    """The notice on top of a new player's first private message (with their password)."""
    lines = [f"Welcome to game {session.game_id}, {player}. The judge will mail you whenever you owe a move."]
    if password:
        lines += ["", f"Your mail password for this game: {password}",
                  "Put the line 'password " + password + "' in every message that changes something.",
                  "This is the only time the judge shows it: keep this message."]
    if session.meta.get("require_signatures"):
        lines += ["", "This game takes only signed blocks: make them with pbem seal / pbem decide --key YOUR.key."]
    return "\n".join(lines) + "\n\n"


def place(session, store=None) -> str:
    """Where the game is, for the subject of a private message."""
    return "before the start" if session.state is None else _where(session, store)


def _where(session, store=None) -> str:
    """Round and phase as the player's private message names them ("round 2, roll step 3")."""
    view = public_view(store, session)
    if "turn_no" in view:  # Tortuga 1667 counts turns, and its private message says "Turn N"
        return f"turn {view['turn_no']}"
    phase = view.get("phase")
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
