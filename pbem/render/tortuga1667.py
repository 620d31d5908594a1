"""View models of Tortuga 1667 for the templates: plain dicts built from the game's views.

Every input is the output of ``rules.view(state, viewer)`` (the public one, captured in the
record, or the player's own inside ``reports.private``) and ``rules.result``. What the view
does not spell out (ranks, a peek gone stale) is worked out here from what it does show, so
nothing secret can reach a public model: a public model is made from a public view only.

The record calls each turn a "round" (``record.rounds``); a turn's summary shows what
happened in it and the board when it ended (now, while it runs).
"""

from __future__ import annotations

import shlex

from ..games.tortuga1667.model import EVENT_NAMES, HOLDS, SHIP_NAMES, SHIPS

RANK_NAMES = {"captain": "captain", "mate": "first mate", "boy": "cabin boy", "governor": "governor"}
VOTE_NAMES = {"attack": "attack", "mutiny": "mutiny", "brawl": "brawl"}
# a late voter's applied default would say which card of their hand they played
SECRET_DEFAULTS = ("vote", "top", "discard", "commit", "reveal")
SHORT = 16  # characters of a name that fit a board picture
PROMPTS = True  # private_model takes the game's one-line list of legal choices per request


def card_name(card) -> str:
    return EVENT_NAMES.get(card, str(card))


def vote_face(face) -> dict:
    """A vote card as read: ``torch french skull`` -> its three parts and one line. Two
    cards played at once (El Dorado) come joined by `` + `` (or as a list) and read so."""
    if isinstance(face, list):
        face = " + ".join(face)
    if " + " in face:
        return {"face": face, "top": None, "flag": None, "mark": None,
                "text": " + ".join(vote_face(part)["text"] for part in face.split(" + "))}
    top, flag, mark = (face.split() + ["", "", ""])[:3]
    words = f"{top}, {flag.capitalize()} flag, {'skull' if mark == 'skull' else 'no skull'}"
    return {"face": face, "top": top, "flag": flag, "mark": mark, "text": words}


def short(name: str) -> str:
    return name if len(name) <= SHORT else name[:SHORT - 1] + "\u2026"


def crew_ranks(crew: list[str]) -> list[dict]:
    """A ship's crew, captain first, with their ranks (a lone pawn holds all three)."""
    out = []
    for k, player in enumerate(crew):
        ranks = []
        if k == 0:
            ranks.append("captain")
        if k == 1:
            ranks.append("mate")
        if k == len(crew) - 1:
            ranks.append("boy")
        out.append({"player": player, "short": short(player), "ranks": [RANK_NAMES[r] for r in ranks]})
    return out


# ------------------------------------------------------------------------- the board

def board(view: dict) -> dict:
    """Everything public on the table, from a view (public or a player's own)."""
    maps = view.get("maps") or {}  # treasure maps in front of players, once the game has them

    def in_front_of(pawn: dict) -> dict:
        pawn["albatross"] = view["albatross"].get(pawn["player"], 0)
        pawn["maps"] = len(maps.get(pawn["player"], []))
        return pawn

    ships = []
    for ship in SHIPS:
        crew = [in_front_of(c) for c in crew_ranks(view["ships"][ship])]
        ships.append({"ship": ship, "name": SHIP_NAMES[ship], "crew": crew, "room": 5 - len(crew),
                      "holds": {h: view["holds"][ship][h] for h in HOLDS},
                      "rowboat": view["rowboats"][ship],
                      "rowboat_short": short(view["rowboats"][ship]) if view["rowboats"][ship] else None})
    queue = [in_front_of({"player": p, "short": short(p), "ranks": ["governor"] if k == 0 else []})
             for k, p in enumerate(view["tortuga"])]
    row = []
    for slot in view["row"]:
        card = slot["card"]
        state = "empty" if card is None else "down" if card == "down" else "up"
        row.append({"slot": slot["slot"], "state": state, "card": card_name(card) if state == "up" else None})
    in_front = []
    for p in view["players"]:
        albatross = view["albatross"].get(p, 0)
        held = [card_name(m) for m in maps.get(p, [])]
        if albatross or held:
            in_front.append({"player": p, "albatross": albatross, "maps": held})
    return {
        "ships": ships,
        "tortuga": {"queue": queue, "holds": {h: view["holds"]["tortuga"][h] for h in HOLDS},
                    "loose": view["tortuga_loose"]},
        "rowboats_sunk": view["rowboats_sunk"],
        "galleon": view["galleon"],
        "row": row,
        "event_deck": view["event_deck"],
        "discard": [card_name(c) for c in view["discard"]],
        "removed": [card_name(c) for c in view["removed"]],
        "in_front": in_front,
        "vote_deck": view["vote_deck"],
        "hand_sizes": [{"player": p, "cards": view["hand_sizes"].get(p, 0)} for p in view["players"]],
        "totals": {h: sum(view["holds"][place][h] for place in view["holds"]) for h in HOLDS},
    }


def votes(view: dict) -> dict:
    """The vote being collected (its voters; who still owes a card is the protocol's to say,
    in ``waiting``) and the last one: its cards shuffled, never who played which."""
    current = None
    if view.get("vote"):
        v = view["vote"]
        current = {"kind": v["kind"], "caller": v["caller"], "ship": SHIP_NAMES.get(v["ship"]),
                   "voters": list(v["voters"]), "voted": list(v["voted"]),
                   "missing": [p for p in v["voters"] if p not in v["voted"]]}
    last = None
    if view.get("last_vote"):
        v = view["last_vote"]
        last = {"kind": v["kind"], "caller": v["caller"], "ship": SHIP_NAMES.get(v["ship"]),
                "voters": list(v["voters"]), "cards": [vote_face(c) for c in v["cards"]],
                "outcome": v["outcome"]}
    return {"vote": current, "last_vote": last}


WHY = {"captain": "by the captain", "pistol": "shot with the Pistol", "blackspot": "the Black Spot",
       "albatross": "two Albatrosses on one ship", "powder": "Black Powder sank the rowboats",
       "mutiny": "the mutiny succeeded"}


def _hold_text(where: str | None) -> str | None:
    """``jolly british`` -> ``the Jolly Roger's British hold``; ``galleon`` as is."""
    if not where or where == "galleon":
        return "the galleon" if where else None
    place, _, hold = where.partition(" ")
    name = SHIP_NAMES.get(place, "Tortuga" if place == "tortuga" else place)
    return f"the {name}'s {hold.capitalize()} hold" if place != "tortuga" else f"Tortuga's {hold.capitalize()} hold"


def effects(items: list[dict]) -> list[dict]:
    """Public effects ready for ``_effect.j2``: ship and card names spelled out, and the
    choice of a late voter left out (it would say which of their cards was played)."""
    out = []
    for e in items:
        e = {k: v for k, v in e.items() if k != "private"}
        if e["type"] == "round":
            continue
        if e["type"] == "default" and str(e.get("choice", "")).split(" ")[0] in SECRET_DEFAULTS:
            e["choice"] = None
            late = e.get("kind") in ("vote", "commit", "reveal", "top", "discard")
            e["reason"] = "no choice in time" if late else "the choice sent was not allowed"
        for key in ("ship", "from", "place"):
            if e.get(key) in SHIP_NAMES:
                e[key + "_name"] = SHIP_NAMES[e[key]]
            elif e.get(key) == "tortuga":
                e[key + "_name"] = "Tortuga"
        if e["type"] == "maroon":
            e["why_text"] = WHY.get(e.get("why"), e.get("why"))
        if e["type"] == "loot":
            e["took_text"] = _hold_text(e.get("took"))
            e["into_text"] = _hold_text(e.get("into"))
        if "map" in e:
            e["map_name"] = card_name(e["map"])
        if "card" in e and e["type"] == "reveal":
            e["card_name"] = card_name(e["card"])
        if e["type"] == "vote":
            e["faces"] = [vote_face(c) for c in e["cards"]]
        out.append(e)
    return out


def waiting_from_view(view: dict) -> list[dict]:
    """Who owes what, from the view alone (when no session reports it)."""
    out = []
    for entry in view.get("waiting", []):
        player, _, kind = entry.rpartition(":")
        out.append({"player": player, "kind": kind, "sealed": kind == "vote"})
    return out


def table(view: dict) -> dict:
    """The public part of a summary, from a view: the board, the votes, whose turn."""
    placing = view.get("placing")  # the advanced set-up, while pawns are being placed
    return {"turn_no": view["turn_no"], "turn": view["turn"], "phase": view["phase"],
            "variant": view.get("variant", "standard"),
            "placing": ({"bag": placing["bag"], "ships": [
                {"name": SHIP_NAMES[ship], "places": [{"place": k + 1, "player": p} for k, p in enumerate(places)]}
                for ship, places in placing["slots"].items()]} if placing else None),
            "board": board(view), **votes(view)}


# ------------------------------------------------------------------------- a turn

def round_model(record, number: int | None, waiting: list[dict] | None) -> dict:
    rnd = record.round(number)
    end = rnd.end_view
    return {
        "game": record.game_id,
        "game_type": "tortuga1667",
        "players": record.players,
        "round": rnd.number,
        "complete": rnd.complete,
        "start_player": rnd.start_player,
        "seed_hash": record.meta.get("seed_hash"),
        "setup": effects(record.setup) if rnd.number == 1 else [],
        "client_seeds": ([{"player": p, "seed": s} for p, s in sorted(record.session.client_seeds.items())]
                         if rnd.number == 1 else []),
        "events": effects(rnd.effects),
        **table(end),
        "waiting": waiting if waiting is not None else [],
        "chain_head": {"seq": rnd.head[0], "hash": rnd.head[1]},
        "judge_key": record.meta.get("judge_key"),
        "current_head": ({"seq": record.head[0], "hash": record.head[1]} if record.head != rnd.head else None),
    }


def view_model(view: dict, game: str, events: list[dict] | None = None, head=(0, "")) -> dict:
    """A turn's model straight from a public view (no record): what the tests and a caller
    holding only a state use. The same fields as ``round_model``."""
    return {"game": game, "game_type": "tortuga1667", "players": view["players"], "round": view["turn_no"],
            "complete": view["phase"] == "over", "start_player": view["turn"], "seed_hash": None, "setup": [], "client_seeds": [],
            "events": effects(events if events is not None else view["effects"]), **table(view),
            "waiting": waiting_from_view(view), "chain_head": {"seq": head[0], "hash": head[1]},
            "judge_key": None, "current_head": None}


# ------------------------------------------------------------------------- the end

def disclosed_votes(record) -> list[dict]:
    """Every vote with who played which card, for the final result (the game is over).

    The record reads each voter's card from their own view as it replays the log (the judge
    replays with the held reveals; an export, with those its ``disclosed`` event publishes);
    ``record.votes_played`` is ``[{"vote": n, "kind", "caller", "played": {player: face}}]``."""
    found = getattr(record, "votes_played", None) or []
    return [{"vote": v.get("vote"), "kind": v.get("kind"), "caller": v.get("caller"),
             "played": [{"player": p, **vote_face(face)} for p, face in v.get("played", {}).items()]}
            for v in found]


def final_model(result: dict, game: str, players: list[str], votes_played: list[dict] | None = None) -> dict:
    """The final result from ``rules.result(state)``: every loyalty and the team totals."""
    totals = result["totals"]
    # the Dutch player wins on a tie alone: their line says whether the teams tied
    rows = [{"player": p, "team": result["loyalty"][p], "total": result["scores"][p]["total"],
             "winner": p in result["winners"], "tied": totals["british"] == totals["french"]} for p in players]
    return {"game": game, "winner": result["winner"], "totals": dict(result["totals"]), "rows": rows,
            "winners": list(result["winners"]), "votes": votes_played or []}


def result_model(record, audit_file: str | None = None) -> dict | None:
    state = record.session.state
    result = record.session.rules.result(state) if state is not None else None
    if result is None:
        return None
    file = audit_file or f"{record.game_id}.jsonl"
    return {
        **final_model(result, record.game_id, record.players, disclosed_votes(record)),
        "turns": record.rounds[-1].number if record.rounds else 0,
        "seed": record.revealed_seed,
        "seed_hash": record.meta.get("seed_hash"),
        "audit_file": file,
        "export_command": None if audit_file else f"pbem export {shlex.quote(record.game_id)} -o {shlex.quote(file)}",
        "chain_head": {"seq": record.head[0], "hash": record.head[1]},
        "judge_key": record.meta.get("judge_key"),
    }


# ------------------------------------------------------------------------- one player

def private_model(report: dict, prompts: dict | None = None) -> dict:
    """From ``reports.private(session, player)``, whose view is the player's own;
    ``prompts`` maps a request's kind to the game's one-line list of its legal choices
    (for requests with too many options to list one by one)."""
    view = report.get("view")
    player = report["player"]
    model = {"game": report["game"], "player": player, "started": view is not None, "requests": [],
             "context": report.get("context"), "context_kind": report.get("context_kind"), "can_seal": False}
    if view is None:
        return model
    model.update(private_view(view, player))
    for q in report["requests"]:
        entry = dict(q)
        entry["options"] = list(q.get("options") or [])
        entry["prompt"] = (prompts or {}).get(q["kind"], "")
        model["requests"].append(entry)
    sealed = next((q for q in model["requests"] if q["sealed"]), None)
    model["sealed_request"] = sealed
    model["can_seal"] = bool(model["context_kind"] == "seal" and sealed and sealed.get("owe") == "commit"
                            and not sealed.get("defaulted"))
    model["signed_game"] = bool(report.get("require_signatures"))
    model["key_hint"] = " --key YOUR.key" if model["signed_game"] else ""
    model["can_decide_offline"] = bool(model["context_kind"] == "decide" and model["signed_game"])
    return model


def private_view(view: dict, player: str) -> dict:
    """What only ``player`` knows, from their own view: loyalty, hand, peeks, their part of
    the latest effects; and the public table around it."""
    known = {slot["slot"]: card_name(slot["known"]) for slot in view["row"] if slot.get("known")}
    seen = [{"card": card_name(e["card"]), "slot": e["slot"], "turn": e["turn"], "stale": not e["still_there"]}
            for e in view.get("seen", [])]
    news = []  # this player's part of the latest effects
    for e in view["effects"]:
        secret = e.get("private")
        if not secret:
            continue
        item = {"type": e["type"], "slots": e.get("slots"), "other": e.get("other"), "by": e.get("player")}
        if "cards" in secret:
            item["cards"] = [card_name(c) for c in secret["cards"]]
        for key in ("played", "drew", "card"):
            if key in secret:
                item[key] = vote_face(secret[key])
        if "loyalty" in secret:
            item["loyalty"] = secret["loyalty"]
        news.append(item)
    mine = view.get("vote", {}) or {}
    return {
        **table(view),
        "finished": view["phase"] == "over",
        "loyalty": view.get("my_loyalty"),
        "hand": [{"n": c["n"], **vote_face(c["card"])} for c in view.get("hand", [])],
        "seen": seen,
        "known_row": [{"slot": s, "card": c} for s, c in sorted(known.items())],
        "news": news,
        "my_vote": vote_face(mine["mine"]) if mine.get("mine") else None,
        "events": effects(view["effects"]),
    }


# ------------------------------------------------------------------------- without a store

def render_view(view: dict, fmt: str, game: str = "game", result: dict | None = None,
                events: list[dict] | None = None) -> tuple[dict, str]:
    """A public summary of a state from its public view ``rules.view(state, None)`` (and
    ``rules.result(state)`` once over), without a log: for tests and callers holding a state."""
    from .environment import check_format, render
    assert view["viewer"] is None, "a public summary is made from the public view only"
    doc = {"game": game, "game_type": "tortuga1667", "players": view["players"], "seed_hash": None,
           "started": True, "rounds": [view_model(view, game, events)], "audit": None, "ended_early": False,
           "revealed_seed": None, "chain_head": {"seq": 0, "hash": ""},
           "result": ({**final_model(result, game, view["players"]), "turns": view["turn_no"], "seed": None,
                       "seed_hash": None, "audit_file": f"{game}.jsonl", "export_command": None,
                       "chain_head": {"seq": 0, "hash": ""}, "judge_key": None} if result else None)}
    return doc, render("tortuga1667", "summary", check_format(fmt), doc=doc)


def render_private_view(view: dict, requests: list, fmt: str, game: str = "game") -> tuple[dict, str]:
    """A player's private message from their own view and their open ``Request``s."""
    from .environment import check_format, render
    report = {"game": game, "player": view["viewer"], "context": None, "context_kind": None, "view": view,
              "requests": [{"kind": r.kind, "sealed": r.sealed, "default": r.default, "syntax": r.syntax,
                            "round": r.round, "step": r.step, "options": list(r.options or []),
                            **({"committed": False, "defaulted": False, "revealed": False, "owe": "commit"}
                               if r.sealed else {})} for r in requests]}
    from .asks import attach
    model = attach(private_model(report, {r.kind: r.prompt for r in requests}))
    return model, render("tortuga1667", "private", check_format(fmt), msg=model)
