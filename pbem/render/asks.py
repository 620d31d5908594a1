"""What to send: the one source of the words that tell a player how to answer a request.

Every format of a private message (text, markdown, bbcode, html; both games) prints these
items, and nothing else says what to send, so the HTML part a player reads and the text
part can never disagree. An item is a list of segments, ``{"text": ...}`` (words) or
``{"code": ...}`` (to be copied exactly); templates print the code segments with the
format's ``code`` filter (``templates/shared/_say.j2``).

The commands depend on the way of playing: by mail (``by_mail``: the lines a player
replies with: ``seal CHOICE``, ``commit HASH``, ``reveal CHOICE SALT``, the choice itself),
or at the command line (``pbem seal``, ``pbem commit``, ``pbem reveal``, ``pbem decide``).
Each item that names a command starts with "Send" or "Run", then that command (with
``CHOICE`` in it), then the choices (``one of:``, each a code segment) and an example
(``e.g.``), filled in, that is accepted as written.
"""

from __future__ import annotations

import shlex

SEPARATOR = "  |  "  # between choices: never a comma (Tortuga's sealed choices have commas)


def _t(text: str) -> dict:
    return {"text": text}


def _c(code: str) -> dict:
    return {"code": code}


def _choices(q: dict) -> list[dict]:
    options = q.get("options") or []
    if options:
        out = [_t(", CHOICE exactly one of: ")]
        for index, option in enumerate(options):
            if index:
                out.append(_t(SEPARATOR))
            out.append(_c(option))  # as the game writes it; the example shows the quoting a shell needs
        return out
    if q.get("prompt"):
        return [_t(f", CHOICE as legal now: {q['prompt']}")]
    return [_t(", CHOICE in the syntax below")]


def _example(command: str, q: dict, quote: bool = False) -> list[dict]:
    choice = shlex.quote(q["default"]) if quote else q["default"]
    return [_t("; e.g. "), _c(command.replace("CHOICE", choice))]


def items(q: dict, msg: dict) -> list[list[dict]]:
    """What to send for request ``q`` of private model ``msg`` (empty: nothing to send)."""
    if q.get("defaulted"):
        return []
    by_mail = bool(msg.get("by_mail"))
    game, player = msg["game"], msg["player"]
    signed = bool(msg.get("signed_game"))
    key = " --key YOUR.key" if signed else ""
    token = msg.get("context")
    if not q["sealed"]:
        if signed and token and msg.get("context_kind") == "decide":
            command = f"pbem decide --context {token} CHOICE{key}"
            return [[_t("Run on your own machine "), _c(command), *_choices(q), *_example(command, q, True)],
                     [_t("then send the signed block it prints" + (" to the judge" if by_mail else ""))]]
        if by_mail:
            return [[_t("Send "), _c("CHOICE"), _t(" on a line of its own"), *_choices(q), *_example("CHOICE", q)]]
        command = f"pbem decide {game} {player} CHOICE"
        return [[_t("Run "), _c(command), *_choices(q), *_example(command, q, True)]]
    owe = q.get("owe", "commit")
    anonymous = " to the judge alone (never to a forum thread: it stays secret until the game ends)" \
        if q.get("anonymous") else ""
    afresh = q.get("orphaned") or q.get("sealed_by") == "stand-in"  # may seal a new choice in its place
    if owe == "commit" and (not q.get("committed") or afresh):
        seal = (f"pbem seal --context {token} CHOICE{key}" if token and msg.get("context_kind") == "seal"
                else f"pbem seal {game} {player} CHOICE{key}")  # no token (a view alone): with the database
        out = []
        if by_mail and not signed:
            out.append([_t("Send "), _c("seal CHOICE"), *_choices(q), *_example("seal CHOICE", q),
                        _t(": the judge seals it on receipt")])
        if seal and signed:
            out += [[_t("Run on your own machine "), _c(seal), *_choices(q), *_example(seal, q, True)],
                    [_t("then send the signed commit block it prints now, and the reveal block once every "
                        "commitment is in (this game accepts only blocks signed with your key)"
                        + ("; or both now, in one mail, to save one: the judge keeps the reveal from the "
                           "others until every commitment is in, but sees your choice at once" if by_mail else ""))]]
        elif seal and by_mail:
            out.append([_t("Or seal it on your own machine (the salt never leaves it): run "), _c(seal),
                        _t(", send "), _c("commit HASH"), _t(" with the commitment it prints, and keep the salt "
                                                               "until every commitment is in")])
            out.append([_t("Or send "), _c("reveal CHOICE SALT"), _t(" too, on the line after the commit, to save a "
                        "mail: the judge keeps it from the others until every commitment is in, but sees your "
                        "choice at once, as with seal" + (" (and keeps it to itself until the game ends)"
                                                         if q.get("anonymous") else ""))])
        elif seal:
            commit = f"pbem commit {game} {player} HASH"
            out += [[_t("Run on your own machine (the salt never leaves it): "), _c(seal), *_choices(q),
                     *_example(seal, q, True)],
                    [_t("then hand in the commitment it prints: "), _c(commit),
                     _t("; keep the salt until every commitment is in")]]
        return out
    home = q.get("committed") and q.get("sealed_by", "player") == "player"
    if owe == "reveal" and home and not q.get("revealed"):
        if signed:
            return [[_t("Send the signed reveal block that pbem seal printed" + anonymous)]]
        if by_mail:
            return [[_t("Send "), _c("reveal CHOICE SALT"), _t(", with the choice and the salt that pbem seal "
                                                               "printed (or paste the reveal block it printed)"
                                                               + anonymous)]]
        return [[_t("Run "), _c(f"pbem reveal {game} {player} CHOICE SALT"),
                 _t(", with the choice and the salt that pbem seal printed" + anonymous)]]
    return []


def attach(model: dict) -> dict:
    """Put each request's ``send`` items into private model ``model`` (its ``by_mail`` set)."""
    for q in model.get("requests", []):
        q["send"] = items(q, model)
    return model


def commands(model: dict) -> list[str]:
    """Every command the items of ``model`` name, in order (for tests and tools)."""
    return [s["code"] for q in model.get("requests", []) for item in q.get("send", []) for s in item if "code" in s]
