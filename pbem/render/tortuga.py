"""View models of Tortuga for the templates: plain dicts built from public views and effects.

Every input here is the output of the game's per-viewer functions: ``rules.view(state,
viewer)`` (captured in the record, or inside ``reports.private``) and
``rules.public_effects``. The models only regroup them for reading: effects into roll steps,
actions and chest moves; boards into what a board picture needs.
"""

from __future__ import annotations

import shlex

from ..games.tortuga.model import ACTIONS, END_CHESTS, LETTERS, capacity

AREAS = ("tortuga", "fleet", "crew", "island")


# ------------------------------------------------------------------------- boards

def board(player: str, view_board: dict, dice_from: dict | None = None) -> dict:
    """A board as the templates draw it. ``dice_from`` supplies the dice placed on the action
    spaces when ``view_board`` is from after they were cleared (the end of a round)."""
    dice = (dice_from or view_board)["dice"]
    on = {a: [d for d in LETTERS if dice.get(d) == a] for a in ACTIONS}
    model = {
        "player": player,
        "boat": view_board["boat"], "pirate": view_board["pirate"],
        "fleet_capacity": capacity(view_board["boat"]), "crew_capacity": capacity(view_board["pirate"]),
        **{area: list(view_board[area]) for area in AREAS},
        "bonus": [{"action": a, "value": view_board["bonus"].get(a, 0)} for a in ACTIONS],
        "bonus_tiles": [f"{a} {v}" for a, v in view_board["bonus"].items()],
        "spaces": [{"action": a, "dice": on[a], "bonus": view_board["bonus"].get(a, 0)} for a in ACTIONS],
        "dice_placed": [{"action": a, "dice": on[a]} for a in ACTIONS if on[a]],
        "held": list(view_board.get("held", [])),
        "tiles": view_board["tiles"],
    }
    if view_board.get("roll"):
        model["roll"] = _roll(view_board["roll"])
    if "tile_values" in view_board:  # only in the owner's own view
        model["tile_values"] = list(view_board["tile_values"])
        model["coins"] = sum(view_board["tile_values"])
    return model


def _roll(roll: dict) -> list[dict]:
    return [{"die": d, "face": f} for d, f in sorted(roll.items())]


# ------------------------------------------------------------------------- a round

def _merge_reveals(effects: list[dict]) -> list[dict]:
    """A reveal followed by its own placement (or its skulls held) reads as one line."""
    out: list[dict] = []
    for e in effects:
        last = out[-1] if out else None
        if (last and last["type"] == "reveal" and last["placed"] is None and e.get("player") == last["player"]
                and e.get("dice") == last["selected"]
                and (e["type"] == "held" or (e["type"] == "assign" and e["how"] == "select"))):
            last["placed"] = "skull" if e["type"] == "held" else e["action"]
            continue
        e = dict(e)
        if e["type"] in ("reveal", "reroll"):
            e["dice"] = _roll(e["roll"])
        if e["type"] == "reveal":
            e["placed"] = None
        out.append(e)
    return out


def _totals(e: dict, players: list[str]) -> dict:
    """One action's totals: a cell per player (None: no die there) and the competitors
    in rank order (1st, 2nd, then the others by total)."""
    acting = [p for p in (e["first"], e["second"]) if p is not None]
    others = sorted((p for p in e["totals"] if p not in acting), key=lambda p: (-e["totals"][p], players.index(p)))
    return {"action": e["action"], "first": e["first"], "second": e["second"],
            "cells": [{"player": p, "total": e["totals"].get(p)} for p in players],
            "ranked": [{"player": p, "total": e["totals"][p],
                        "place": acting.index(p) + 1 if p in acting else None} for p in acting + others]}


def sections(effects: list[dict], players: list[str]) -> dict:
    steps: list[dict] = []
    actions = {"totals": [], "events": []}
    move: list[dict] = []
    phase = "roll"
    game_over = False
    for e in effects:
        kind = e["type"]
        if kind == "round":
            continue
        if kind == "game_over":
            game_over = True
        elif kind == "step":
            steps.append({"step": e["step"], "players": e["players"], "events": []})
        elif kind == "totals":
            phase = "actions"
            actions["totals"].append(_totals(e, players))
        elif kind == "draw" or phase == "move":
            phase = "move"
            move.append(e)
        elif phase == "actions":
            actions["events"].append(e)
        elif steps:
            steps[-1]["events"].append(e)
    for s in steps:
        s["events"] = _merge_reveals(s["events"])
    return {"steps": steps, "actions": actions if actions["totals"] else None, "move": move,
            "game_over": game_over}


def round_model(record, number: int | None, waiting: list[dict] | None) -> dict:
    rnd = record.round(number)
    players = record.players
    end, before = rnd.end_view, rnd.dice_view
    model = {
        "game": record.game_id,
        "game_type": "tortuga",
        "variant": record.meta.get("options", {}).get("variant", "standard"),
        "end_chests": END_CHESTS.get(record.meta.get("options", {}).get("variant", "standard")),
        "players": players,
        "round": rnd.number,
        "complete": rnd.complete,
        "start_player": rnd.start_player,
        "seed_hash": record.meta.get("seed_hash"),
        "setup": record.setup if rnd.number == 1 else [],
        "client_seeds": ([{"player": p, "seed": s} for p, s in sorted(record.session.client_seeds.items())]
                         if rnd.number == 1 else []),
        **sections(rnd.effects, players),
        "boards": [board(p, end["boards"][p], before["boards"][p]) for p in players],
        "centre": list(end["centre"]),
        "bag": end["bag"], "tile_pool": end["tile_pool"], "bonus_supply": end["bonus_supply"],
        "next_start_player": end["start_player"] if rnd.complete and end["phase"] != "over" else None,
        "phase": None if rnd.complete else end["phase"],
        "step": None if rnd.complete else end["step"],
        "waiting": waiting or [],
        "chain_head": {"seq": rnd.head[0], "hash": rnd.head[1]},
        "judge_key": record.meta.get("judge_key"),
        "current_head": ({"seq": record.head[0], "hash": record.head[1]} if record.head != rnd.head else None),
    }
    return model


# ------------------------------------------------------------------------- the end

def result_model(record, audit_file: str | None = None) -> dict | None:
    state = record.session.state
    result = record.session.rules.result(state) if state is not None else None
    if result is None:
        return None
    order = sorted(record.players, key=lambda p: -result["scores"][p]["total"])
    rows = [{"player": p, **result["scores"][p], "winner": p in result["winners"]} for p in order]
    file = audit_file or f"{record.game_id}.jsonl"
    return {
        "game": record.game_id,
        "rounds": record.rounds[-1].number if record.rounds else 0,
        "scores": rows,
        "winners": list(result["winners"]),
        "seed": record.revealed_seed,
        "seed_hash": record.meta.get("seed_hash"),
        "client_seeds": [{"player": p, "seed": s} for p, s in sorted(record.session.client_seeds.items())],
        "audit_file": file,
        "export_command": None if audit_file else f"pbem export {shlex.quote(record.game_id)} -o {shlex.quote(file)}",
        "chain_head": {"seq": record.head[0], "hash": record.head[1]},
        "judge_key": record.meta.get("judge_key"),
    }


# ------------------------------------------------------------------------- one player

def private_model(report: dict) -> dict:
    """From ``reports.private(session, player)``, whose view is the player's own."""
    view = report.get("view")
    player = report["player"]
    model = {"game": report["game"], "player": player, "started": view is not None,
             "requests": [], "context": report.get("context"), "context_kind": report.get("context_kind"),
             "can_seal": False}
    if view is None:
        return model
    own = board(player, view["boards"][player])
    model.update(
        round=view["round"], step=view["step"], phase=view["phase"], stage=view["stage"],
        start_player=view["start_player"], board=own, roll=own.get("roll", []),
        revealed=view["boards"][player].get("revealed"),
        tile_values=own.get("tile_values", []), coins=own.get("coins", 0),
        others=[{"player": p, "tiles": b["tiles"]} for p, b in view["boards"].items() if p != player],
        finished=view["phase"] == "over",
    )
    for q in report["requests"]:
        entry = dict(q)
        entry["options"] = list(q.get("options") or [])
        model["requests"].append(entry)
    sealed = next((q for q in model["requests"] if q["sealed"]), None)
    model["sealed_request"] = sealed
    model["can_seal"] = bool(model["context_kind"] == "seal" and sealed and sealed.get("owe") == "commit"
                            and not sealed.get("defaulted"))
    model["signed_game"] = bool(report.get("require_signatures"))
    model["key_hint"] = " --key YOUR.key" if model["signed_game"] else ""
    model["can_decide_offline"] = bool(model["context_kind"] == "decide" and model["signed_game"])
    return model
