"""The one-line status of a game as the judge's mail gives it: the answer to ``status``, and
the last line of every other answer (where the game is, who owes what by when, the chain head).
"""

from __future__ import annotations

from ..games import round_word
from ..protocol.reports import waiting
from ..render.times import shown
from .letters import public_view


def status_text(store, game: str, session, tz: str | None = None, head=None) -> str:
    report = status(store, session, head or store.head(game))
    waiting = "; ".join(f"{w['player']} ({w['kind']}" + (f", due {shown(w['due'], tz, seconds=False)}" if "due" in w else "")
                        + ")" for w in report["waiting"]) or "nobody"
    word = round_word(report.get("type"))  # the game's own word for a round: 1667 says "turn"
    step = f", step {report['step']}" if word == "round" or report["step"] else ""
    where = f"{word} {report['round']}{step}, {report['phase']}" if report["started"] else "not started"
    if report.get("paused"):
        where += f"; PAUSED since {shown(report['paused']['since'], tz, seconds=False)} (no deadline runs)"
    if getattr(session, "standing_in", None) and not session.finished:  # public: its moves are logged by: stand-in
        where += f"; the stand-in plays {', '.join(sorted(session.standing_in))}"
    return f"{game}: {where}; waiting for: {waiting}; chain head {report['chain_head']['seq']} {report['chain_head']['hash'][:16]}"


def status(store, session, head: tuple[int, str]) -> dict:
    """What the status line reads of ``reports.status(session, head)``, the same values,
    without the rest of the report (scores, sealed step, seeds); the public view as the
    moment made it (``letters.public_view``)."""
    report = {"type": session.meta.get("game_type"), "started": session.started, "round": None, "step": None,
              "phase": "waiting for client seeds" if not session.started else None,
              "chain_head": {"seq": head[0], "hash": head[1]}, "waiting": []}
    if session.paused:
        report["paused"] = dict(session.paused)
    if session.state is not None:
        view = public_view(store, session)
        report.update(round=view.get("round", session.state.round), step=view.get("step", session.state.step),
                      phase=view["phase"], waiting=waiting(session))
    return report
