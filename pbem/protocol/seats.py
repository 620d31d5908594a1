"""Seats and time: the moderator's discretion over deadlines and persons, as events.

A deadline is data, kept by the replay: a request is due ``deadline_seconds`` after it
opened, unless an event moved it (``due_over``). These events change deadlines and who
answers for a seat, each naming who asked (``by``) and why (``reason``):

    paused     no deadline runs from now on (moves are still taken)
    resumed    deadlines run again; each open one moves on by the time it was paused
               (or, with ``until``, to that time)
    extended   the named requests' deadlines move to ``until`` (each with its old due,
               ``from``); ``by`` "player" spends one of the game's per-player allowance, and
               in a game that requires signatures carries the player's signature over
               round, step and seconds, and moves every request of that step the player
               owes (unsigned, the verdict counts it as the moderator's)
    replaced   a seat changes hands: its public key (``key``, or none) from this event on;
               a commitment the former person sealed on their own machine stays binding;
               ``moderator`` true: the moderator plays the seat (the audit names it)
    stand_in_ended  the stand-in no longer plays ``player``'s seat: its player came back
               (``by`` "player", the mail command ``back``) or the moderator ended it

Nothing here knows a game's rules; the mixin uses the Session's ``owed`` and ``opened_at``.
No address or password is ever part of these events: those stay in the judge's tables.
"""

from __future__ import annotations

from ..text import quote
from .errors import Refused
from .times import AT_FORMAT, seconds_between, shift

ALLOWANCE = {"count": 1, "max_seconds": 86400}  # a player's own extensions, per game
MAX_REASON = 300
MAX_AHEAD = 365 * 86400  # a deadline an event sets lies at most a year (365 days) after that event
WHO = ("moderator", "player")


def allowance(meta: dict) -> dict:
    """The game's extension allowance for players (``created``'s ``extensions``, else the default)."""
    return {**ALLOWANCE, **(meta.get("extensions") or {})}


def check_time(text, what: str) -> str:
    from datetime import datetime
    try:
        if isinstance(text, str) and datetime.strptime(text, AT_FORMAT).strftime(AT_FORMAT) == text:
            return text
    except ValueError:
        pass
    raise Refused(f"{what} {quote(text)} is not a time; give one like 2030-01-05T18:00:00Z (UTC)")


def check_ahead(until: str, at: str, what: str = "a deadline") -> str:
    """``until`` if it lies at most ``MAX_AHEAD`` (a year) after ``at``; else refused, naming the bound."""
    if seconds_between(at, until) > MAX_AHEAD:
        raise Refused(f"{what} {until} is more than a year (365 days) after now ({at}); the latest allowed "
                      f"is {shift(at, MAX_AHEAD)}")
    return until


def later(due: str, seconds: int, at: str) -> str:
    """``due`` moved on by ``seconds``, refused (naming the bound) past a year after ``at``."""
    try:
        return check_ahead(shift(due, seconds), at, "the new deadline")
    except OverflowError:
        raise Refused(f"the new deadline would lie past the year 9999, more than a year (365 days) after now "
                      f"({at}); the latest allowed is {shift(at, MAX_AHEAD)}: give it with --until") from None


class SeatsAndTime:
    """Session mixin: pauses, extensions and replacements (see the module docstring)."""

    def _init_seats(self) -> None:
        self.paused: dict | None = None  # {"since", "by", "reason"} while the game is paused
        self.due_over: dict[tuple, str] = {}  # request key -> due time set by an event
        self.ext_used: dict[str, int] = {}  # player -> extensions they asked for
        self.hands: dict[str, int] = {}  # seat -> how often it changed hands
        self.orphaned: set[tuple] = set()  # (player, round, step): committed by a former person
        self.missed: dict[str, int] = {}  # seat -> defaults in a row (standin.py)
        self.standing_in: set[str] = set()  # seats the stand-in plays now
        self.stood_in: dict[str, dict] = {}  # seat -> {"since", "defaults"}: when the stand-in took it
        self.replaced_at: dict[str, str] = {}  # seat -> when it last changed hands

    def seats_json(self) -> dict:
        out = {}
        if self.paused:
            out["paused"] = self.paused
        if self.due_over:
            out["due_over"] = [[*key, at] for key, at in sorted(self.due_over.items())]
        if self.ext_used:
            out["ext_used"] = self.ext_used
        if self.hands:
            out["hands"] = self.hands
        if self.orphaned:
            out["orphaned"] = sorted(list(k) for k in self.orphaned)
        if self.missed:
            out["missed"] = self.missed
        if self.standing_in:
            out["standing_in"] = sorted(self.standing_in)
        if self.stood_in:
            out["stood_in"] = self.stood_in
        if self.replaced_at:
            out["replaced_at"] = self.replaced_at
        return out

    def seats_from_json(self, data: dict) -> None:
        self.paused = data.get("paused")
        self.due_over = {(p, r, s, k): at for p, r, s, k, at in data.get("due_over", [])}
        self.ext_used = dict(data.get("ext_used", {}))
        self.hands = dict(data.get("hands", {}))
        self.orphaned = {tuple(k) for k in data.get("orphaned", [])}
        self.missed = dict(data.get("missed", {}))
        self.standing_in = set(data.get("standing_in", []))
        self.stood_in = {seat: dict(v) for seat, v in data.get("stood_in", {}).items()}
        self.replaced_at = dict(data.get("replaced_at", {}))

    def seat_changes(self, before: set, at: str) -> None:
        """After an event that changed who the stand-in plays: when each seat was taken
        (and after how many defaults in a row), for ``status``."""
        for seat in self.standing_in - before:
            self.stood_in[seat] = {"since": at, "defaults": self.missed.get(seat, 0)}
        for seat in before - self.standing_in:
            self.stood_in.pop(seat, None)

    def seat_report(self) -> dict:
        """Who plays each seat: a person, or the stand-in (since when, after how many
        defaults in a row); with ``replaced``, when the seat last changed hands."""
        out = {}
        for seat in self.players:
            entry: dict = {"played_by": "person"}
            if seat in self.standing_in:
                entry = {"played_by": "stand-in", **self.stood_in.get(seat, {})}
            if seat in self.replaced_at:
                entry["replaced"] = self.replaced_at[seat]
            out[seat] = entry
        return out

    # ------------------------------------------------------------------ the stand-in

    def _missed(self, player: str) -> None:
        """One more default in a row for ``player``: the stand-in takes the seat at N."""
        self.missed[player] = self.missed.get(player, 0) + 1
        after = self.meta.get("stand_in_after")
        if after and self.missed[player] >= after:
            self.standing_in.add(player)

    def _came_back(self, player: str) -> None:
        """A valid move of the seat's own: no defaults in a row, and no stand-in."""
        self.missed.pop(player, None)
        self.standing_in.discard(player)

    def _on_stand_in_ended(self, data: dict, at: str) -> None:
        """The seat's player takes it back (``by: player``) or the moderator ends the stand-in."""
        self._discretion(data, "stand-in's end", WHO)
        seat = self.player(data["player"])
        if self.seed_revealed or self.disclosed or (self.state is not None and self.finished):
            raise Refused(f"game {self.game_id} is over, so no seat is taken back from the stand-in")
        if self.state is None:  # a seedless audit does not know who the stand-in plays
            return
        if seat not in self.standing_in:
            raise Refused(f"{seat} is not played by the stand-in, so there is nothing to take back"
                          + ("" if self.meta.get("stand_in_after") else
                             " (this game has no stand-in)"))
        self._came_back(seat)

    # ------------------------------------------------------------------ deadlines

    def base_due(self, key: tuple) -> str | None:
        """When the request ``key`` is due, pause or no pause (None: no deadline)."""
        if key in self.due_over:
            return self.due_over[key]
        deadline = self.meta.get("deadline_seconds")
        opened = self.opened_at.get(key)
        return shift(opened, deadline) if deadline and opened else None

    def due(self, key: tuple) -> str | None:
        """When the request ``key`` is due; None while the game is paused (no deadline runs)."""
        return None if self.paused else self.base_due(key)

    def _keep_dues(self) -> None:
        """Forget moved deadlines of requests that are no longer owed."""
        if self.due_over:
            self.due_over = {k: v for k, v in self.due_over.items() if k in self.opened_at}
        if self.orphaned:
            step = self.sealed
            self.orphaned = {o for o in self.orphaned if step is not None and o[0] not in step.revealed
                             and (o[1], o[2]) == (step.round, step.step)}

    def _discretion(self, data: dict, kind: str, who=("moderator",)) -> None:
        by, reason = data.get("by"), data.get("reason")
        if by not in who:
            raise Refused(f"a {kind} event names who asked for it: by {' or '.join(who)}, not {quote(by)}")
        if not isinstance(reason, str) or len(reason) > MAX_REASON:
            raise Refused(f"a {kind} event says why in a reason of up to {MAX_REASON} characters")

    def _in_play(self, what: str) -> None:
        if self.seed_revealed or self.disclosed or (self.state is not None and self.finished):
            raise Refused(f"game {self.game_id} is over, so it cannot be {what}; only a game in play can")
        if not self.started:
            raise Refused(f"game {self.game_id} has not started, so no deadline runs yet and it cannot be {what} "
                          f"(pbem start {self.game_id})")

    def extension_data(self, player: str | None, seconds: int | None, until: str | None, by: str = "moderator",
                       reason: str = "", signed: dict | None = None, now: str | None = None) -> dict:
        """The ``extended`` event that moves what ``player`` owes now (every player's, when
        None) on by ``seconds``, or to ``until``; ``signed``: a player's own signed block
        (``round``, ``step``, ``seconds``, ``nonce``, ``signature``), which moves what they
        owe in that step. A game that requires signatures takes a player's extension only so.
        ``now``: the command's time; a new deadline lies at most a year after it (``later``)."""
        if signed is not None:
            by, seconds, until = "player", signed["seconds"], None
        if (seconds is None) == (until is None):
            raise Refused("give the extension as a duration (e.g. 24h) or as --until TIME, one of the two")
        game_id = self.game_id
        if player is not None:
            self.player(player)
        if not self.meta.get("deadline_seconds"):
            raise Refused(f"game {game_id} has no deadline (pbem new --deadline 48h), so there is nothing to extend")
        if self.state is None:
            raise Refused(f"game {game_id} has not started, so no deadline runs yet")
        if by == "player" and signed is None and self.meta.get("require_signatures"):
            raise Refused(f"game {game_id} takes only signed submissions, so a player's extension is a signed "
                          f"block: pbem extend {game_id} --context TOKEN 24h --sign-with YOUR.key makes one")
        keys = [clock for who, _what, _sealed, clock in self.owed() if player is None or who == player]
        if signed is not None:
            keys = [k for k in keys if (k[1], k[2]) == (signed["round"], signed["step"])]
            if not keys:
                raise Refused(f"{player} owes nothing in round {signed['round']} step {signed['step']}, so the "
                              f"signed extension has no deadline to move (it was made for another step)")
        if not keys:
            raise Refused(f"{player} owes nothing now, so there is no deadline to extend" if player is not None
                          else "nobody owes anything now, so there is no deadline to extend")
        requests = []
        for key in keys:
            due = self.base_due(key)
            requests.append({"player": key[0], "round": key[1], "step": key[2], "kind": key[3],
                             "from": due, "until": until or later(due, seconds, now or self.last_at)})
        data = {"by": by, "reason": (reason or "").strip() or
                ("asked by mail" if by == "player" else "the moderator's decision"), "requests": requests}
        if player is not None:
            data["player"] = player
        if signed is not None:
            data.update({k: signed[k] for k in ("round", "step", "seconds", "signature", "nonce")})
        return data

    # ------------------------------------------------------------------ events

    def _on_paused(self, data: dict, at: str) -> None:
        self._discretion(data, "pause")
        if not data["reason"].strip():
            raise Refused("a pause needs a reason the players will read, e.g. --reason 'summer holidays'")
        self._in_play("paused")
        if self.paused:
            raise Refused(f"game {self.game_id} is already paused (since {self.paused['since']}); "
                          f"resume it with: pbem resume {self.game_id}")
        self.paused = {"since": at, "by": data["by"], "reason": data["reason"]}

    def _on_resumed(self, data: dict, at: str) -> None:
        self._discretion(data, "resume")
        if not self.paused:
            raise Refused(f"game {self.game_id} is not paused, so there is nothing to resume "
                          f"(pbem pause {self.game_id} --reason TEXT pauses it)")
        until = data.get("until")
        if until is not None and check_time(until, "--until") <= at:
            raise Refused(f"--until {until} is not later than now ({at}); give a time after it")
        if "forced" in data and data["forced"] is not True:
            raise Refused(f"'forced' is true or absent, not {quote(data['forced'])}")
        forced = data.get("forced") is True
        if until is not None:
            check_ahead(until, at, "--until")
        if self.state is not None:
            in_force = self.in_force(at)
            shortened = [(key, due) for key, due in in_force.items() if until is not None and until < due]
            if shortened and not forced:
                (player, *_), due = shortened[0]
                raise Refused(f"--until {until} is earlier than {player}'s deadline in force {due} (its deadline "
                              f"before the pause, moved on by the pause): a resume moves deadlines later, never "
                              f"earlier; give {max(in_force.values())} or later, or use --force (the log marks it "
                              f"forced and the audit names it)")
            if forced and not shortened:
                raise Refused("a resume is marked forced only when it moves a deadline earlier; this one moves "
                              "none: resume without --force")
            for key in self.opened_at:
                if until is not None:
                    self.due_over[key] = until
                elif key in in_force:
                    self.due_over[key] = in_force[key]
        self.paused = None

    def in_force(self, at: str) -> dict[tuple, str]:
        """While paused: each owed request's deadline in force at ``at``, its deadline before
        the pause moved on by the pause (the clock stood still from the pause, or from its
        opening, until ``at``): what a plain resume at ``at`` gives it."""
        since = self.paused["since"]
        out = {}
        for key, opened in self.opened_at.items():
            base = self.base_due(key)
            if base is not None:  # the clock stood still from the pause (or the opening) until now
                try:
                    out[key] = shift(base, seconds_between(max(since, opened), at))
                except OverflowError:  # a deadline set before the bound, near the year 9999
                    raise Refused(f"{key[0]}'s deadline {base} would move past the year 9999; resume "
                                  f"with --until TIME (at most a year, 365 days, from now)") from None
        return out

    def shortens(self, until: str | None, at: str) -> bool:
        """Whether resuming at ``at`` with ``until`` would move an owed deadline earlier
        than the one in force (then only a forced resume may, docs/protocol.md §16)."""
        if until is None or not self.paused or self.state is None:
            return False
        return any(until < due for due in self.in_force(at).values())

    def _on_extended(self, data: dict, at: str) -> None:
        self._discretion(data, "extension", WHO)
        if not self.meta.get("deadline_seconds"):
            raise Refused(f"game {self.game_id} has no deadline (pbem new --deadline 48h), so there is "
                          f"nothing to extend")
        self._in_play("given an extension")
        requests = data["requests"]
        if not isinstance(requests, list) or not requests:
            raise Refused("an extension names the requests whose deadlines it moves")
        asker = data.get("player")
        signed = data.get("signature") is not None
        if signed and data["by"] != "player":
            raise Refused("only a player's own extension is signed: the moderator's carries no signature")
        if data["by"] == "player":
            asker = self.player(asker)
            rules = allowance(self.meta)
            if self.ext_used.get(asker, 0) >= rules["count"]:
                raise Refused(f"{asker} has used the extensions this game allows a player "
                              f"({rules['count']}); ask the moderator instead")
            if signed:
                self._signed_fields(asker, data, "extension")
                if type(data["round"]) is not int or type(data["step"]) is not int \
                        or type(data["seconds"]) is not int or data["seconds"] <= 0:
                    raise Refused("a signed extension names its round and step (whole numbers) and a number "
                                  "of seconds above 0")
        moved = {}
        for item in requests:
            key = (self.player(item["player"]), item["round"], item["step"], item["kind"])
            if asker is not None and key[0] != asker:
                raise Refused(f"{asker} may only extend their own deadlines, not {key[0]}'s")
            until = check_time(item["until"], "an extension's time")
            if signed and ((key[1], key[2]) != (data["round"], data["step"])
                           or until != shift(check_time(item["from"], "an extension's old due"), data["seconds"])):
                raise Refused(f"{asker} signed an extension of round {data['round']} step {data['step']} by "
                              f"{_short(data['seconds'])}, but this event moves their {key[3]} of round "
                              f"{key[1]} step {key[2]} from {item['from']} to {until}")
            if self.state is None:  # a seedless audit knows the order of events, not the requests
                continue
            if key not in self.opened_at:
                raise Refused(f"{key[0]} owes no {key[3]} in round {key[1]} step {key[2]}, so there is no "
                              f"deadline to extend")
            due = self.base_due(key)
            self._expect(item, "from", due)
            if self.paused is None and at >= due:
                if data["by"] != "moderator":
                    raise Refused(f"the deadline of {key[0]}'s {key[3]} passed at {due}; an extension must "
                                  f"come before it (after it, only the moderator can give a new deadline)")
                if until <= at:  # an overdue request: the moderator's new deadline lies ahead
                    raise Refused(f"the deadline of {key[0]}'s {key[3]} passed at {due}; a new deadline must "
                                  f"be after now ({at}): give a later time, or a longer extension")
            if until <= due:
                raise Refused(f"an extension moves a deadline later: {until} is not after {due}")
            check_ahead(until, at, "an extension's time")
            if data["by"] == "player" and seconds_between(due, until) > allowance(self.meta)["max_seconds"]:
                limit = allowance(self.meta)["max_seconds"]
                raise Refused(f"a player may extend a deadline by at most {_short(limit)} in this game; "
                              f"ask for {_short(limit)} or less, or ask the moderator")
            moved[key] = until
        if signed and self.state is not None:  # the signature covers the step, so the event moves all of it
            left = sorted(k[3] for k in self.opened_at if k[0] == asker and (k[1], k[2]) == (data["round"], data["step"])
                          and k not in moved)
            if left:
                raise Refused(f"{asker} signed an extension of everything they owe in round {data['round']} step "
                              f"{data['step']}, but this event leaves their {left[0]} where it was")
        if signed:
            self._verify_extension(asker, data)  # discretion.py
        self.due_over.update(moved)
        if data["by"] == "player":
            self.ext_used[asker] = self.ext_used.get(asker, 0) + 1

    def _on_replaced(self, data: dict, at: str) -> None:
        self._discretion(data, "replacement")
        seat = self.player(data["seat"])
        if self.seed_revealed or self.disclosed or (self.state is not None and self.finished):
            raise Refused(f"game {self.game_id} is over, so its seats no longer change hands")
        if "moderator" in data and data["moderator"] is not True:
            raise Refused(f"'moderator' is true (the moderator plays the seat) or absent, not {quote(data['moderator'])}")
        key = data.get("key")
        if key is not None:
            from .signing import parse_public_key
            try:
                raw = parse_public_key(key)
            except ValueError as exc:
                raise Refused(f"the new key of {seat}: {exc}") from None
            if any(p != seat and parse_public_key(k) == raw for p, k in self.keys.items()):
                raise Refused("this public key is already registered for another seat; the new player "
                              "makes their own key pair (pbem keygen)")
            self.keys[seat] = key
        elif self.meta.get("require_signatures"):
            raise Refused(f"game {self.game_id} takes only signed moves: give the new player's public key "
                          f"with --key")
        else:
            self.keys.pop(seat, None)
        self.hands[seat] = self.hands.get(seat, 0) + 1
        self.replaced_at[seat] = at
        self._came_back(seat)
        step = self.sealed
        if step is not None and seat in step.commits and seat not in step.revealed \
                and step.commits[seat]["by"] == "player":
            self.orphaned.add((seat, step.round, step.step))


def _short(seconds: int) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
