"""Public summaries of a game, built from the effects of each event in a replay.

Plain text for now; templates per format come with the rendering work (issue 4).
"""

from __future__ import annotations

FORMATS = ("text", "markdown", "bbcode", "html")


def rounds(session) -> dict[int, list[dict]]:
    """Public effects grouped by round (effects pass through the game's public filter)."""
    out: dict[int, list[dict]] = {}
    current = 1
    for _seq, _kind, effects in session.history or []:
        for effect in session.rules.public_effects(effects, None):
            if effect["type"] == "round":
                current = effect["round"]
            out.setdefault(current, []).append(effect)
    return out


def render_public(session, head, round_: int | None, fmt: str):
    if fmt not in FORMATS:
        from ..protocol.errors import Refused
        raise Refused(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    by_round = rounds(session)
    if round_ is None:
        round_ = max(by_round) if by_round else 1
    model = {"game": session.game_id, "round": round_, "effects": by_round.get(round_, []),
             "chain_head": {"seq": head[0], "hash": head[1]}}
    lines = [f"{session.game_id}: round {round_}"]
    lines += [_line(e) for e in model["effects"]]
    lines.append(f"chain head: event {head[0]} {head[1]}")
    return model, "\n".join(lines)


def render_all(session, head, fmt: str):
    by_round = rounds(session)
    texts, models = [], []
    for r in sorted(by_round):
        model, text = render_public(session, head, r, fmt)
        models.append(model)
        texts.append(text)
    return models, "\n\n".join(texts)


def _line(effect: dict) -> str:
    from ..cli.common import safe
    return "  " + " ".join(f"{k}={safe(v)}" for k, v in effect.items())
