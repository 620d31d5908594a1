"""The game's viewer: one self-contained HTML page of a whole game, from its public record.

What the page shows is what the public has: the log (every event with its hash; the file
carries the export itself, exactly as ``pbem export`` writes it, as a download link that
the verifier page reads when given the viewer file), and the public summaries published from it, every round or
turn with its board, built through the game's public view (``rules.view(state, None)``)
as ``pbem show`` builds them. Replaying the log to draw those boards needs the server seed
(the moderator's own during play, or the one the log reveals); the seed itself, a salt
not yet revealed, a held vote or a hidden card never reaches the page. In Tortuga 1667 the
votes show their shown cards and outcomes, and who played which card only once the log
has disclosed it.

The page makes no request (its Content-Security-Policy forbids every one): inline style,
inline SVG and a small inline script for the previous/next buttons and the arrow keys;
without the script every round is simply shown one after another.
"""

from __future__ import annotations

import re

from ..protocol.errors import Refused

GAME_NAMES = {"tortuga": "Tortuga", "tortuga1667": "Tortuga 1667"}
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)
_BODY = re.compile(r"<body>\n?(.*?)</body>", re.S)
_H1 = re.compile(r"^<h1>.*?</h1>\n?", re.S)
# a Tortuga 1667 turn: its heading, then (further down) the table's heading and picture
_TURN_TABLE = re.compile(r'(<section class="turn"[^>]*>\s*<h2>.*?</h2>)(.*?)'
                         r'(<h3>[^<]*</h3>\s*<figure class="table1667">.*?</figure>)', re.S)


def from_store(store, game: str) -> str:
    """The viewer of a game in the moderator's database."""
    from . import record
    rec = record.from_store(store, game)
    return render_page(rec, [e.export_dict() for e in store.events(game)])


def from_export(text: str) -> str:
    """The viewer of an exported game (its seed revealed, so that the boards can be drawn)."""
    from ..store import read_export
    from . import record
    rec = record.from_export(text)
    return render_page(rec, read_export(text))


def render_page(rec, rows: list[dict]) -> str:
    from markupsafe import Markup

    from . import summary
    from .environment import render
    if not rows:
        raise Refused(f"no events for game {rec.game_id}")
    _model, document = summary.render_all(rec, "html")
    styles = "\n".join(_STYLE.findall(document))
    body = _H1.sub("", _BODY.search(document).group(1).lstrip(), count=1)
    # the table goes beside the turn's summary (on a wide screen), so it moves up to its heading
    body = _TURN_TABLE.sub(lambda m: f'{m.group(1)}\n<aside class="board">{m.group(3)}</aside>{m.group(2)}', body)
    model = page_model(rec, rows)
    model["export"] = export_link(rows)
    return render("shared", "viewer", "html", page=model, summary_style=Markup(styles), summary_body=Markup(body))


def export_link(rows: list[dict]) -> str:
    """The page's copy of the export, exactly what ``pbem export`` writes (one canonical JSON
    line per event), as the address of its download link (a ``data:`` address, base64): the
    verifier page, given the viewer file, checks the game from it (docs/protocol.md §17)."""
    import base64

    from ..protocol.canonical import canonical_text
    text = "".join(canonical_text(row) + "\n" for row in rows)
    return "data:application/x-ndjson;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")


def write_atomically(path, html: str) -> None:
    """Write the page whole or not at all (a reader never sees half a page)."""
    import os
    import tempfile
    from pathlib import Path
    path = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def page_model(rec, rows: list[dict]) -> dict:
    """Everything the page shows besides the summaries; all of it public."""
    created = rows[0]["data"]
    game_type = rec.meta["game_type"]
    unit = "Turn" if game_type == "tortuga1667" else "Round"
    heads = {r.head[0]: r.number for r in rec.rounds if r.head and r.complete}
    return {
        "game": rec.game_id, "game_name": GAME_NAMES.get(game_type, game_type), "unit": unit,
        "players": rec.players, "seed_hash": created.get("seed_hash"), "judge_key": created.get("judge_key"),
        "revealed_seed": rec.revealed_seed, "stands": _stands(rec, unit),
        "rounds": [{"number": r.number, "anchor": f"{'turn' if unit == 'Turn' else 'round'}-{r.number}",
                    "complete": r.complete, "head": {"seq": r.head[0], "hash": r.head[1]} if r.head else None}
                   for r in rec.rounds],
        "head": {"seq": rows[-1]["seq"], "hash": rows[-1]["hash"]},
        "log": [{"seq": row["seq"], "at": row["at"], "kind": row["kind"], "hash": row["hash"],
                 "brief": brief(row["kind"], row["data"], row["at"]), "head_of": heads.get(row["seq"])} for row in rows],
        "votes": votes(rec) if game_type == "tortuga1667" else None,
    }


def _stands(rec, unit: str) -> str:
    """Where the game stands, in one sentence."""
    from ..protocol.reports import waiting
    if not rec.rounds:
        return "Not started yet: waiting for client seeds and the start."
    if rec.finished:
        result = rec.session.rules.result(rec.session.state)
        winners = result.get("winners") or []
        won = f" Won by {', '.join(winners)}." if winners else ""
        return f"Over after {unit.lower()} {rec.rounds[-1].number}.{won}"
    if rec.revealed_seed is not None:
        return f"Play ended early, in {unit.lower()} {rec.rounds[-1].number}: the server seed was published."
    owed = waiting(rec.session)
    who = ", ".join(f"{w['player']} ({w['kind']})" for w in owed)
    return f"In play: {unit.lower()} {rec.rounds[-1].number}" + (f", waiting for {who}." if who else ".")


def votes(rec) -> list[dict]:
    """Tortuga 1667's votes: the shown cards and the outcome of each (public), and who
    played which card once the log has disclosed the held votes."""
    from .tortuga1667 import disclosed_votes, vote_face
    shown = []
    for r in rec.rounds:
        for effect in r.effects:
            if effect["type"] == "vote":
                shown.append({"turn": r.number, "kind": effect.get("kind"), "caller": effect.get("caller"),
                              "voters": list(effect.get("voters", [])), "outcome": effect.get("outcome"),
                              "cards": [vote_face(c)["text"] for c in effect.get("cards", [])], "played": None})
    if rec.session.disclosed:
        for vote, played in zip(shown, disclosed_votes(rec)):
            vote["played"] = [{"player": p["player"], "card": p["text"]} for p in played["played"]]
    return shown


def _where(data: dict) -> str:
    return f" {data['round']}.{data['step']}" if "round" in data and "step" in data else ""


def _by(data: dict) -> str:
    """Who made a move when it was not the player: the moderator's seal or the stand-in (§16)."""
    return {"moderator": " (sealed by the moderator)", "stand-in": " (by the stand-in)"}.get(data.get("by"), "")


def _said(data: dict) -> str:
    """Who decided a pause, an extension or a replacement, and why (§16)."""
    by = data.get("by")
    who = ("by the moderator" if by == "moderator"
           else f"by the player {data['player']}" if by == "player" and data.get("player") else f"by {by}")
    reason = data.get("reason")
    return f"{who}: {reason}" if reason else who


def _extended(d: dict, at: str = "") -> str:
    requests = d.get("requests", [])
    moved = "; ".join(f"{r.get('player')}'s {r.get('kind')}{_where(r)} until {r.get('until')}" for r in requests)
    overdue = any(isinstance(r.get("from"), str) and at >= r["from"] for r in requests) if at else False
    return (f"{len(requests)} deadline{'' if len(requests) == 1 else 's'} moved {_said(d)}"
            + (f" ({moved})" if moved else "") + (", after the deadline had passed" if overdue else ""))


# One line per kind of event (docs/protocol.md §2 and §16), from its public data only.
_BRIEFS = {
    "created": lambda d: f"players {', '.join(d.get('players', []))}",
    "key": lambda d: f"{d.get('player')}: key registered",
    "client_seed": lambda d: f"{d.get('player')}: {d.get('seed')}",
    "started": lambda d: "client entropy " + str(d.get("client_entropy", ""))[:16] + "…",
    "commit": lambda d: f"{d.get('player')}, step{_where(d)}: {str(d.get('commitment', ''))[:16]}…{_by(d)}",
    "reveal": lambda d: f"{d.get('player')}, step{_where(d)}: {d.get('applied', d.get('choice'))}{_by(d)}",
    "reveal_held": lambda d: f"{d.get('player')}, step{_where(d)}: revealed to the judge (held until the end){_by(d)}",
    "sealed_batch": lambda d: f"step{_where(d)}: digest {str(d.get('digest', ''))[:16]}…",
    "decide": lambda d: f"{d.get('player')}: {d.get('applied', d.get('choice'))}{_by(d)}",
    "default": lambda d: f"{d.get('player')}: {d.get('reason')}" + (f" ({d['choice']})" if "choice" in d else "")
                         + (" (forced)" if d.get("forced") else ""),
    "nmr": lambda d: f"{d.get('player')}, step{_where(d)}: late" + (" (forced)" if d.get("forced") else ""),
    "disclosed": lambda d: f"{len(d.get('steps', []))} anonymous steps disclosed",
    "paused": lambda d: f"game paused {_said(d)} (no deadline runs)",
    "resumed": lambda d: f"game resumed {_said(d)}" + (f"; every owed deadline is now {d['until']}"
                                                       if d.get("until") else ""),
    "replaced": lambda d: f"seat {d.get('seat')} given to another person {_said(d)}"
                          + ("; the seat's new key is in this event" if d.get("key") else ""),
    "stand_in_ended": lambda d: f"the stand-in no longer plays {d.get('player')} {_said(d)}",
    "seed_revealed": lambda d: f"seed {d.get('seed')}",
}


def brief(kind: str, data: dict, at: str = "") -> str:
    """A few words on an event, from its (public) data and time."""
    if kind == "extended":
        return _extended(data, at)
    line = _BRIEFS.get(kind)
    return line(data) if line else str(data.get("player") or "")
