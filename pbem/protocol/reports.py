"""What ``status`` and ``private`` report: plain dicts (the ``--json`` contracts).

Public reports go through the game's ``view(state, None)`` (the status report through its
few fields, ``pbem.games.base.headline``); a player's through ``view(state, player)``.
Nothing else of the state leaves this module. It reads a ``Session`` (session.py) and
imports none: the session's own checks (the stand-in's) read the private report from here.
"""

from __future__ import annotations

from ..games.base import headline


def waiting(session) -> list[dict]:
    """Who owes what now: sealed commitments or reveals, and open decisions; with the time
    each request opened (``since``) and, in a game with a deadline, when it is ``due``."""
    if session.seed_revealed:  # the game takes no more moves
        return []
    return [_entry(session, *owed) for owed in session.owed()]


def _entry(session, player: str, kind: str, sealed: bool, clock: tuple) -> dict:
    entry = {"player": player, "kind": kind, "sealed": sealed}
    since = session.opened_at.get(clock)
    if since:
        entry["since"] = since
        due = session.due(clock)
        if due:
            entry["due"] = due
        elif session.paused and session.meta.get("deadline_seconds"):
            entry["paused"] = True  # no deadline runs until the game resumes
    return entry


def due_time(since: str, seconds: int) -> str:
    from .times import shift
    return shift(since, seconds)


def status(session, head: tuple[int, str]) -> dict:
    report = {
        "game": session.game_id,
        "type": session.meta.get("game_type"),
        "players": list(session.players),
        "started": session.started,
        "round": None, "step": None, "phase": "waiting for client seeds" if not session.started else None,
        "chain_head": {"seq": head[0], "hash": head[1]},
        "finished": session.finished,
        "waiting": [],
        "seed_hash": session.meta.get("seed_hash"),
        "seed_revealed": session.seed_revealed,
        "require_signatures": bool(session.meta.get("require_signatures")),
        "client_seeds": sorted(session.client_seeds),
    }
    if session.paused:
        report["paused"] = dict(session.paused)
    if session.started:
        report["seats"] = session.seat_report()
    if session.state is not None:
        report.update(headline(session.rules, session.state), waiting=waiting(session))
        if session.sealed is not None:
            report["sealed_step"] = {
                "round": session.sealed.round, "step": session.sealed.step,
                "committed": sorted(session.sealed.commits) + sorted(session.sealed.defaulted),
                "revealed": sorted(session.sealed.revealed),
                "moderator_sealed": sorted(p for p, c in session.sealed.commits.items() if c["by"] == "moderator"),
                "defaulted": sorted(session.sealed.defaulted),
            }
        result = session.rules.result(session.state)
        if result is not None:
            report["scores"] = {p: s["total"] for p, s in result["scores"].items()}
            report["breakdown"] = result["scores"]
            report["winners"] = result["winners"]
    return report


def private(session, player: str) -> dict:
    session.player(player)
    report = {"game": session.game_id, "player": player, "requests": [], "context": None, "context_kind": None,
              "require_signatures": bool(session.meta.get("require_signatures"))}
    if session.state is None:
        return report
    step = session.sealed
    owing = waiting(session)
    for r in [] if session.seed_revealed else session.requests_of(player):
        entry = {"kind": r.kind, "sealed": r.sealed, "default": r.default, "syntax": r.syntax,
                 "round": r.round, "step": r.step}
        owed = next((w for w in owing if w["player"] == player
                     and (w["kind"] == r.kind or (r.sealed and w["sealed"]))), {})
        if "due" in owed:
            entry["due"] = owed["due"]
        if r.options is not None:
            entry["options"] = list(r.options)
        elif r.all_options:  # too many to list in a message: the stand-in (v2) draws among them
            entry["all_options"] = list(r.all_options)
        if r.sealed and step is not None:
            entry["committed"] = player in step.commits
            if player in step.commits:  # sealed by the player (at home) or by the judge on receipt
                entry["sealed_by"] = step.commits[player].get("by", "player")
            entry["defaulted"] = player in step.defaulted  # late (NMR): nothing more to send
            entry["revealed"] = player in step.revealed
            entry["owe"] = "reveal" if step.all_committed else "commit"
            if session.early_reveal_kept(player):  # its reveal too: nothing more to send
                entry["early"] = True
            if (player, step.round, step.step) in session.orphaned:  # sealed at home by the seat's former player
                entry["orphaned"] = True
                entry["apply_now"] = f"pbem nmr {session.game_id} {player} --force"
            if step.anonymous:  # the player's own held reveal, shown to them alone
                entry["anonymous"] = True
                mine = step.held.get(player)
                if mine is not None:
                    entry["held"] = mine.get("applied", mine["choice"])
        report["requests"].append(entry)
    if report["requests"]:
        from .token import context_token
        # one token: to seal offline while a sealed request is open, else to sign a decision
        report["context"] = context_token(session, player)
        report["context_kind"] = "seal" if any(r["sealed"] for r in report["requests"]) else "decide"
    report["view"] = session.rules.view(session.state, player)
    return report
