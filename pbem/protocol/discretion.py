"""The judge's discretion, in the log (docs/protocol.md §14; version 3 logs only), and the
tally of its forced and discretionary acts that the audit's verdict names (§13, every log).

A log is of version 3 when its ``created`` has a judge key. Then, in a game that requires
signatures, client seeds are signed like every other submission; and every ``nmr``, and
every ``default`` given to a late player, records the ``deadline`` it was judged against:
null in a game without a deadline (where any default is the judge's choice and must be
``forced``), else no earlier than the request's opening plus ``deadline_seconds``, and
an unforced one comes at or after it. Older logs keep their rules.
"""

from __future__ import annotations

from ..text import quote
from .errors import Refused


def client_seed_body(game_id: str, data: dict) -> dict:
    """The object a player signs for a client seed (version 3, docs/protocol.md §14)."""
    return {"v": 1, "game": game_id, "kind": "client_seed", "player": data["player"], "seed": data["seed"],
            "nonce": data["nonce"]}


def key_change_body(game_id: str, data: dict) -> dict:
    """The object a player signs, with the key their seat holds, to change it (§14)."""
    return {"v": 1, "game": game_id, "kind": "key", "player": data["player"], "public_key": data["public_key"],
            "nonce": data["nonce"]}


def extension_body(game_id: str, data: dict) -> dict:
    """The object a player signs to extend what they owe in round ``round`` step ``step``
    by ``seconds`` (§16): every request of the event is of that step, due that much later."""
    return {"v": 1, "game": game_id, "kind": "extend", "player": data["player"], "round": data["round"],
            "step": data["step"], "seconds": data["seconds"], "nonce": data["nonce"]}


def default_marks(session, key: tuple, force: bool, at: str, grace: int) -> dict:
    """The ``forced`` mark and (version 3) the recorded ``deadline`` of a default for the
    request ``key`` written at ``at``: refused when it is not due and not ``force``d."""
    if not session.version3:
        return {"forced": True} if force else {}
    from .times import shift
    due = session.base_due(key)  # as moved by a resume or an extension (seats.py)
    deadline = shift(due, grace) if due is not None and grace else due
    stamp = max(at, session.last_at)
    if session.paused and not force:
        raise Refused(f"game {session.game_id} is paused (since {session.paused['since']}), so no deadline runs; "
                      f"resume it (pbem resume {session.game_id}) or use --force to apply the default anyway")
    if not force:
        if deadline is None:
            raise Refused(f"game {session.game_id} has no deadline, so {key[0]} is not late; use --force to apply "
                          f"the default anyway (the log marks it forced)")
        if stamp < deadline:
            raise Refused(f"{key[0]}'s deadline has not passed (due {deadline}"
                          f"{', grace included' if grace else ''}); use --force to apply the default anyway "
                          f"(the log marks it forced)")
    return {**({"forced": True} if force else {}), "deadline": deadline}


class Discretion:
    """Mixed into ``Session``: the checks of §14."""

    @property
    def version3(self) -> bool:
        """A log of version 3 (its created has a judge key): §12-§14 of docs/protocol.md."""
        return "judge_key" in self.meta

    def _check_seed_signature(self, player: str, data: dict) -> None:
        from .signing import verify
        signature, nonce = data.get("signature"), data.get("nonce")
        if signature is None:
            raise Refused(f"this game requires signed submissions, client seeds too: {player} makes a signed "
                          f"block with pbem client-seed {self.game_id} {player} TEXT --sign-with KEYFILE")
        if player not in self.keys:
            raise Refused(f"{player} has no registered key in this game, so a signed client seed cannot be "
                          f"checked; register the key first (pbem key)")
        if not isinstance(nonce, str) or not 1 <= len(nonce) <= 64:
            raise Refused("a signed submission needs a nonce of 1 to 64 characters")
        if nonce in self.nonces:
            raise Refused("this signed client_seed was already used (replayed submission); sign a fresh one")
        if not verify(self.keys[player], client_seed_body(self.game_id, data), signature):
            raise Refused(f"the signature on {player}'s client_seed is not valid for their registered key")
        self.nonces.add(nonce)
        self.seed_signed[player] = {"signature": signature, "nonce": nonce}

    def _signed_fields(self, player: str, data: dict, what: str) -> None:
        """What a signed block's checks are before its signature: a key to check it with, a
        fresh nonce (the signature itself is checked last, as the verifier page does)."""
        if player not in self.keys:
            raise Refused(f"{player} has no registered key in this game, so a signed {what} cannot be checked")
        nonce = data.get("nonce")
        if not isinstance(nonce, str) or not 1 <= len(nonce) <= 64:
            raise Refused("a signed submission needs a nonce of 1 to 64 characters")
        if nonce in self.nonces:
            raise Refused(f"this signed {what} was already used (replayed submission); sign a fresh one")

    def _verify_signed(self, player: str, body: dict, data: dict, what: str) -> None:
        from .signing import verify
        if not verify(self.keys[player], body, data["signature"]):
            raise Refused(f"the signature on {player}'s {what} is not valid for the key their seat holds")
        self.nonces.add(data["nonce"])

    def _verify_extension(self, player: str, data: dict) -> None:
        """The signature of a player's own extension (seats.py checks the rest first)."""
        self._verify_signed(player, extension_body(self.game_id, data), data, "extension")

    def _check_seed_keys(self) -> None:
        """Version 3: a client seed counts only if it is signed with the key its seat holds
        when play starts (a key changed after the seed was signed leaves it unsigned)."""
        from .signing import verify
        for player in self.players:
            signed = self.seed_signed.get(player)
            if signed is None:
                continue
            body = client_seed_body(self.game_id, {"player": player, "seed": self.client_seeds[player], **signed})
            if player not in self.keys or not verify(self.keys[player], body, signed["signature"]):
                raise Refused(f"{player}'s client seed is not signed with the key {player} holds at the start (a "
                              f"client seed counts only if signed with it): {player} signs it again with pbem "
                              f"client-seed {self.game_id} {player} TEXT --sign-with KEYFILE")
        self.seed_signed = {}

    def _check_recorded_deadline(self, key: tuple, at: str, data: dict) -> None:
        """Version 3 (docs/protocol.md §14): a default records the deadline it was judged
        against; unforced, it comes at or after it, and never in a game without one."""
        if not self.version3:
            return
        player = key[0]
        if "deadline" not in data:
            raise Refused("this default records no deadline (field 'deadline'): in a game with a judge key "
                          "every default says the deadline it was judged against")
        if "forced" in data and data["forced"] is not True:
            raise Refused(f"'forced' is true or absent, not {quote(data['forced'])}")
        recorded, forced = data["deadline"], data.get("forced") is True
        if not self.meta.get("deadline_seconds"):
            if recorded is not None:
                raise Refused(f"the game has no deadline, so the recorded deadline must be null, not {quote(recorded)}")
            if not forced:
                raise Refused(f"the game has no deadline, so {player} is never late: a default is the judge's "
                              f"discretion and must be marked forced")
            return
        if not isinstance(recorded, str) or len(recorded) != 20 or not recorded.endswith("Z"):
            raise Refused(f"the recorded deadline {quote(recorded)} is not a time like 2026-01-31T18:00:00Z")
        if self.paused and not forced:
            raise Refused(f"game {self.game_id} is paused (since {self.paused['since']}), so no deadline runs and "
                          f"{player} is not late: a default now must be marked forced")
        earliest = self.base_due(key)  # the opening plus deadline_seconds, as moved by a resume or extension
        if earliest is not None and recorded < earliest:
            raise Refused(f"the recorded deadline {recorded} is earlier than {player}'s deadline {earliest} "
                          f"(the request opened {self.opened_at.get(key)})")
        if at < recorded and not forced:
            raise Refused(f"{player}'s deadline {recorded} had not passed at {at}, and the default is not "
                          f"marked forced")

    def _after_nmr(self, data: dict) -> bool:
        """Whether a default (seen without the game's state) is the one pbem appends for a
        player marked ``nmr`` in a sealed step: it records no deadline of its own."""
        step = self.public_steps.get((data.get("round"), data.get("step")), {})
        return bool(data.get("sealed")) and step.get("commits", {}).get(data.get("player"), (None, None))[1] == "nmr"


# ---------------------------------------------------------------------- the tally for the verdict

def tally(rows, ended_early: dict | None = None) -> dict:
    """The judge's forced and discretionary acts in a log (export dicts or Events), counted
    for the verdict (docs/protocol.md §13): ``{"forced_defaults", "ended_early",
    "no_client_seed", "key_changes", "signed_key_changes", "shortened_deadlines", "defaults_during_pause", "pauses", "extensions",
    "extensions_by_moderator", "extensions_after_deadline", "replacements",
    "replacements_to_moderator", "stand_in_moves", "stand_in_v1", "seats_taken_back", "seats_taken_back_by_moderator"}`` (only the
    non-zero ones). ``ended_early``: ``{"round": R, "round_word": "turn"}`` when the seed
    was revealed before the game was over (the replay knows it, the rows alone do not)."""
    counts: dict = {}

    def add(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1
    keyed: set = set()
    key_changes: dict[str, int] = {}
    signed_key_changes: dict[str, int] = {}
    paused = started = client_seeds = signed_game = steerable = False
    for ev in rows:
        kind, data, at = (ev["kind"], ev["data"], ev["at"]) if isinstance(ev, dict) else (ev.kind, ev.data, ev.at)
        if kind == "created":
            keyed.update(data.get("keys") or {})
            signed_game = bool(data.get("require_signatures"))
            steerable = data.get("stand_in_policy", "stand-in-v1") == "stand-in-v1"  # its draws hang on the index
        elif kind == "started":
            started = True
        elif kind == "client_seed":
            client_seeds = True
        elif kind == "key":
            player = data.get("player")
            if data.get("signature") is not None:  # signed with the seat's key: its player's, or whoever held it
                signed_key_changes[player] = signed_key_changes.get(player, 0) + 1
            elif player in keyed:  # the moderator replaced the seat's key
                key_changes[player] = key_changes.get(player, 0) + 1
            keyed.add(player)
        elif kind in ("nmr", "default"):
            if data.get("forced") is True:
                add("forced_defaults")
            if paused:
                add("defaults_during_pause")
        elif kind == "paused":
            paused = True
            add("pauses")
        elif kind == "resumed":
            paused = False
            if data.get("forced") is True:
                add("shortened_deadlines")  # resume --until before a deadline in force, --force
        elif kind == "extended":
            add("extensions")
            if data.get("by") == "moderator" or (signed_game and data.get("signature") is None):
                add("extensions_by_moderator")  # a player's, unsigned in a signed game, is the moderator's
            if any(isinstance(r, dict) and isinstance(r.get("from"), str) and at >= r["from"]
                   for r in data.get("requests") or ()):
                add("extensions_after_deadline")  # the moderator's new deadline for an overdue request
        elif kind == "replaced":
            seat = data.get("seat")
            if not started and (seat in keyed or data.get("key") is not None):
                key_changes[seat] = key_changes.get(seat, 0) + 1  # nobody played the seat yet: a key change
            if data.get("key") is not None:
                keyed.add(seat)
            else:
                keyed.discard(seat)
            add("replacements")
            if data.get("moderator") is True:
                add("replacements_to_moderator")
        elif kind == "stand_in_ended":
            add("seats_taken_back")
            if data.get("by") == "moderator":
                add("seats_taken_back_by_moderator")
        if kind in ("commit", "decide") and data.get("by") == "stand-in":
            add("stand_in_moves")
    if ended_early:
        counts["ended_early"] = dict(ended_early)
    if steerable and counts.get("stand_in_moves"):
        counts["stand_in_v1"] = True  # the judge chose the policy in created: no published value binds it
    if started and not client_seeds:
        counts["no_client_seed"] = True
    if key_changes:
        counts["key_changes"] = key_changes
    if signed_key_changes:
        counts["signed_key_changes"] = signed_key_changes
    return {name: counts[name] for name in ORDER if name in counts}


# the order of the verdict's parts (and of the --json object)
ORDER = ("ended_early", "no_client_seed", "forced_defaults", "shortened_deadlines", "defaults_during_pause",
         "key_changes", "signed_key_changes", "pauses", "extensions", "extensions_by_moderator", "extensions_after_deadline",
         "replacements", "replacements_to_moderator", "stand_in_moves", "stand_in_v1", "seats_taken_back",
         "seats_taken_back_by_moderator")
TIMES = {1: "once", 2: "twice"}


def tally_text(counts: dict) -> str:
    """The verdict's words for a tally, the one place they are made: "the judge ended the
    game early, at turn 3, 2 forced defaults, 1 extension (1 by the moderator), ..."
    (empty when nothing)."""
    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"
    parts = []
    early = counts.get("ended_early")
    if early:
        parts.append(f"the judge ended the game early, at {early.get('round_word', 'round')} {early.get('round')}")
    if counts.get("no_client_seed"):
        parts.append("no client seed: the judge alone chose the deal")
    if counts.get("forced_defaults"):
        parts.append(n(counts["forced_defaults"], "forced default"))
    if counts.get("shortened_deadlines"):
        count = counts["shortened_deadlines"]
        parts.append(f"{count} forced resume{'' if count == 1 else 's'} that shortened deadlines")
    if counts.get("defaults_during_pause"):
        parts.append(n(counts["defaults_during_pause"], "default") + " during a pause")
    for player, times in (counts.get("key_changes") or {}).items():
        parts.append(f"{player}'s key was changed {TIMES.get(times, f'{times} times')} before start")
    for player, times in (counts.get("signed_key_changes") or {}).items():
        parts.append(f"{player}'s key was changed {TIMES.get(times, f'{times} times')} by a block signed with the "
                     f"seat's key")
    if counts.get("pauses"):
        parts.append(n(counts["pauses"], "pause"))
    if counts.get("extensions"):
        late = counts.get("extensions_after_deadline")
        parts.append(n(counts["extensions"], "extension") + f" ({counts.get('extensions_by_moderator', 0)} by the "
                     f"moderator" + (f", {late} after the deadline had passed" if late else "") + ")")
    if counts.get("replacements"):
        mine = counts.get("replacements_to_moderator")
        parts.append(n(counts["replacements"], "replacement")
                     + (f" ({mine} {'seat' if mine == 1 else 'seats'} given to the moderator)" if mine else ""))
    if counts.get("stand_in_moves"):
        parts.append(n(counts["stand_in_moves"], "stand-in move")
                     + (" (by stand-in-v1, whose draws the judge can steer)" if counts.get("stand_in_v1") else ""))
    if counts.get("seats_taken_back"):
        parts.append(n(counts["seats_taken_back"], "seat") + " taken back from the stand-in ("
                     f"{counts.get('seats_taken_back_by_moderator', 0)} by the moderator)")
    return ", ".join(parts)


def keys_at_start(rows) -> dict | None:
    """Each seat's public key when play started (``created.keys``, then ``key`` and
    ``replaced`` events), in the order they were first given; None before ``started``.
    The audit cannot know a player's own key: the report shows these for each player to
    compare with theirs (docs/protocol.md §15)."""
    keys: dict = {}
    for ev in rows:
        kind, data = (ev["kind"], ev["data"]) if isinstance(ev, dict) else (ev.kind, ev.data)
        if kind == "created":
            keys = dict(data.get("keys") or {})
        elif kind == "key":
            keys[data.get("player")] = data.get("public_key")
        elif kind == "replaced":
            if data.get("key") is not None:
                keys[data.get("seat")] = data["key"]
            else:
                keys.pop(data.get("seat"), None)
        elif kind == "started":
            return keys
    return None
