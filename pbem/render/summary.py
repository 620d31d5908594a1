"""Public summaries, private messages and final results, rendered for one of four formats.

Entry points (each returns ``(model, text)``: the model is the ``--json`` form of what the
text shows, and the only data the templates receive):

    render_public(record, round, fmt)   one round (default: the latest); after the last
                                        round of a finished game, the final result follows
    render_all(record, fmt)             every round, then the result
    render_private(session, player, fmt, tz)  one player's private message
    private_model(session, player, tz)        its model alone, to render later
    render_private_model(game, model, fmt)    ... rendered from that model
    render_result(record, fmt)          the final result alone

``record`` is a ``pbem.render.record.GameRecord`` (``record.from_store`` /
``record.from_export``). Formats: text, markdown, bbcode, html (see docs/formats.md).
"""

from __future__ import annotations

import importlib

from .environment import check_format, render
from .escape import FORMATS

__all__ = ["FORMATS", "render_public", "render_all", "render_private", "private_model", "render_private_model", "render_result", "render_audit"]


def _models(game_type: str):
    return importlib.import_module(f"{__package__}.{game_type}")


def _waiting(record, number: int) -> list[dict]:
    """Who owes what now, when ``number`` is the round being played."""
    from ..protocol.reports import waiting
    last = record.rounds[-1] if record.rounds else None
    if last is None or last.number != number or last.complete or record.finished:
        return []
    return waiting(record.session)


def _document(record, fmt: str, rounds: list[dict], result: dict | None, audit: dict | None):
    game_type = record.meta["game_type"]
    model = {"game": record.game_id, "game_type": game_type, "players": record.players,
             "seed_hash": record.meta.get("seed_hash"), "started": bool(record.rounds),
             "rounds": rounds, "result": result, "audit": audit,
             "ended_early": record.revealed_seed is not None and not record.finished,
             "revealed_seed": record.revealed_seed,
             "chain_head": {"seq": record.head[0], "hash": record.head[1]}}
    return model, render(game_type, "summary", check_format(fmt), doc=model)


def render_public(record, round_: int | None, fmt: str, audit_file: str | None = None,
                  audit: dict | None = None):
    check_format(fmt)
    models = _models(record.meta["game_type"])
    rounds, result = [], None
    if record.rounds:
        number = record.round(round_).number
        rounds = [models.round_model(record, number, _waiting(record, number))]
        if record.finished and number == record.rounds[-1].number:
            result = models.result_model(record, audit_file)
    return _document(record, fmt, rounds, result, audit)


def render_all(record, fmt: str, audit_file: str | None = None, audit: dict | None = None):
    check_format(fmt)
    models = _models(record.meta["game_type"])
    rounds = [models.round_model(record, r.number, _waiting(record, r.number)) for r in record.rounds]
    return _document(record, fmt, rounds, models.result_model(record, audit_file), audit)


def render_result(record, fmt: str, audit_file: str | None = None, audit: dict | None = None):
    check_format(fmt)
    result = _models(record.meta["game_type"]).result_model(record, audit_file)
    return _document(record, fmt, [], result, audit)


def render_private(session, player: str, fmt: str, tz: str | None = None, by_mail: bool = False):
    """A player's private message, from ``reports.private`` (the player's own view); due
    times in UTC, and also in time zone ``tz`` when the player set one. ``by_mail``: the
    message goes to the player by mail, so it says what to reply (seal CHOICE, reveal CHOICE
    SALT, the choice itself) rather than what to run."""
    check_format(fmt)
    game_type, model = private_model(session, player, tz=tz, by_mail=by_mail)
    return model, render(game_type, "private", fmt, msg=model)


def private_model(session, player: str, tz: str | None = None, by_mail: bool = False) -> tuple[str, dict]:
    """(game type, model) of ``player``'s private message as things stand in ``session``:
    all that its templates receive, so that it can be rendered later, in any format, with
    ``render_private_model`` (the judge keeps it until the message is sent)."""
    from ..protocol.reports import private
    from .times import shown
    game_type = session.meta["game_type"]
    report = private(session, player)
    for request in report["requests"]:
        if request.get("due"):
            request["due_shown"] = shown(request["due"], tz)
    models = _models(game_type)
    if getattr(models, "PROMPTS", False):  # a game whose options can be too many to list
        model = models.private_model(report, {r.kind: r.prompt for r in session.requests_of(player)})
    else:
        model = models.private_model(report)
    model["by_mail"] = by_mail
    from .asks import attach
    return game_type, attach(model)  # what to send: one source for every format (pbem.render.asks)


def render_private_model(game_type: str, model: dict, fmt: str) -> str:
    """The text of a private message from its model (``private_model``)."""
    return render(game_type, "private", check_format(fmt), msg=model)


def render_audit(record, report: dict, fmt: str):
    """An audit verdict alone (``report``: from ``pbem.store.audit``)."""
    check_format(fmt)
    return _document(record, fmt, [], None, report)
