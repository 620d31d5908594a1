"""Anonymous sealed steps: reveals the judge holds until the game ends (docs/protocol.md §11).

A sealed step whose requests are ``anonymous`` is collected as any sealed step, but a
reveal is checked against its commitment and then kept out of the public log: the log
says only that the player revealed (``reveal_held``). When every reveal (or default) is in,
one ``sealed_batch`` event publishes a digest of all of them, and only then are the choices
applied, in the order the step waits for its players. At the end, before the seed, one
``disclosed`` event publishes every held reveal, so anyone can check each against its
commitment and its step's digest.

The held reveals come from a *held source*: the store's private entries during play
(``anon/ROUND/STEP/PLAYER``), the ``disclosed`` event when an export is replayed.
"""

from __future__ import annotations

import hashlib
import json

from ..text import quote
from .canonical import canonical_json
from .commit import commitment_matches, parse_salt
from .errors import Refused

BATCH_TAG = "pbem-batch-v1"
REVEAL_FIELDS = ("choice", "salt", "by", "signature", "nonce")  # what the judge keeps of a reveal


def held_name(round_: int, step: int, player: str) -> str:
    """The name of a held reveal among the store's private entries."""
    return f"anon/{round_}/{step}/{player}"


def early_name(round_: int, step: int, player: str) -> str:
    """The name of the secret that keeps a reveal a player sent before every commitment of
    the step was in (recorded, as theirs, once they all are; docs/protocol.md §3)."""
    return f"early/{round_}/{step}/{player}"


def digest_entry(record: dict) -> dict:
    """What a step's digest covers of one player's part: the choice and salt revealed, or
    the default played (marked)."""
    if record.get("default"):
        return {"choice": record["choice"], "default": True}
    return {"choice": record["choice"], "salt": record["salt"]}


def batch_digest(game: str, round_: int, step: int, reveals: dict) -> str:
    """hex sha256 of "pbem-batch-v1" 0x00 canonical_json({game, round, step, reveals})."""
    body = {"game": game, "round": round_, "step": step,
            "reveals": {p: digest_entry(r) for p, r in reveals.items()}}
    return hashlib.sha256(BATCH_TAG.encode("ascii") + b"\x00" + canonical_json(body)).hexdigest()


class DisclosureMismatch(Refused):
    """The ``disclosed`` event (``seq``) disagrees with the log: an audit names that event."""

    def __init__(self, seq: int | None, message: str):
        super().__init__(message)
        self.seq = seq


class StoreHeld:
    """Held reveals from the store's private entries (the moderator's database)."""

    seq = None

    def __init__(self, store, game_id: str):
        self.store, self.game_id = store, game_id

    def get(self, round_: int, step: int, player: str) -> dict | None:
        text = self.store.get_secret(self.game_id, held_name(round_, step, player))
        try:
            return json.loads(text) if text is not None else None
        except ValueError:
            return None

    def early(self, round_: int, step: int, player: str) -> dict | None:
        """The reveal ``player`` sent early for the step, as kept (``early_name``), if any."""
        text = self.store.get_secret(self.game_id, early_name(round_, step, player))
        return json.loads(text) if text is not None else None

    def put(self, round_: int, step: int, player: str, record: dict) -> None:
        kept = {k: record[k] for k in REVEAL_FIELDS if record.get(k) is not None}
        self.store.put_secret(self.game_id, held_name(round_, step, player), json.dumps(kept, sort_keys=True))


class DisclosedHeld:
    """Held reveals from a log's ``disclosed`` event (an export after the end)."""

    def __init__(self, seq: int, data: dict):
        self.seq = seq
        self.records = {}
        steps = data.get("steps") if isinstance(data, dict) else None
        for entry in steps if isinstance(steps, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("reveals"), dict):
                for player, record in entry["reveals"].items():
                    self.records[(entry.get("round"), entry.get("step"), player)] = record

    def get(self, round_: int, step: int, player: str) -> dict | None:
        record = self.records.get((round_, step, player))
        return dict(record) if isinstance(record, dict) else None


def held_in(events) -> DisclosedHeld | None:
    """The held reveals a log discloses (its ``disclosed`` event), or None."""
    for ev in events:
        get = ev.get if isinstance(ev, dict) else lambda k, e=ev: getattr(e, k)
        if get("kind") == "disclosed":
            return DisclosedHeld(get("seq"), get("data"))
    return None


class AnonymousSteps:
    """The event rules of anonymous steps, mixed into ``Session``."""

    def _anonymous_step(self, data: dict, what: str):
        step = self._sealed_for(data, what)
        if not step.anonymous:
            raise Refused(f"step {step.round}.{step.step} is not anonymous: its reveals are public events")
        return step

    def _on_reveal_held(self, data: dict, at: str) -> None:
        extra = sorted(set(data) - {"player", "round", "step", "by"})
        if extra:  # whatever else it held would be public
            raise Refused(f"a held reveal shows only player, round, step and by, not {', '.join(extra)}")
        self._need_state()
        if self.state is None:
            return self._public("reveal_held", data)
        step = self._anonymous_step(data, "reveal")
        player = data["player"]
        if not step.all_committed:
            raise Refused(f"reveals open once every commitment is in; still waiting for: "
                          f"{', '.join(step.owes_commit())}")
        if player in step.revealed:
            raise Refused(f"{player}'s choice for step {step.round}.{step.step} is already settled (revealed, or "
                          f"the default applied) and cannot be changed; this reveal is not the recorded one")
        if player not in step.commits:
            raise Refused(f"{player} owes no reveal in step {step.round}.{step.step}")
        by = step.commits[player]["by"]
        if data.get("by", "player") != by:
            raise Refused(f"this reveal says it was made by the {quote(data.get('by'))}, "
                          f"but the commitment was made by the {by}")
        source = self.held
        record = source.get(step.round, step.step, player) if source is not None else None
        seq = getattr(source, "seq", None)
        if record is None:
            if seq is not None:
                raise DisclosureMismatch(seq, f"the disclosure holds no reveal of {player} for step "
                                              f"{step.round}.{step.step}, which the log says was held")
            if source is None:
                raise Refused(f"the held reveal of {player} for step {step.round}.{step.step} is not at hand: "
                              f"the log reveals the seed but discloses no held reveals (a 'disclosed' event "
                              f"comes before 'seed_revealed')")
            raise Refused(f"the reveal of {player} for step {step.round}.{step.step} is not at hand "
                          f"(held {held_name(step.round, step.step, player)} missing); restore the database")
        try:
            choice, salt = record["choice"], parse_salt(record["salt"])
            matches = isinstance(choice, str) and commitment_matches(
                step.commits[player]["commitment"], self.game_id, step.round, step.step, player, choice, salt)
        except (KeyError, ValueError, TypeError):
            matches = False
        if not matches:
            what = "held reveal" if seq is not None else "reveal"
            raise _mismatch(seq, f"this {what} does not match {player}'s commitment for step "
                                 f"{step.round}.{step.step} (wrong choice or salt, or made for another step)")
        try:
            self._check_signature("reveal", {**record, "player": player, "round": step.round,
                                             "step": step.step, "by": by}, by)
        except Refused as exc:
            raise _mismatch(seq, f"the held reveal of {player}: {exc}") from None
        applied, illegal, code = self._legal_or_default(player, choice)
        full = {"choice": choice, "salt": record["salt"], "by": by, "applied": applied, "illegal": illegal}
        if code is not None:
            full["illegal_code"] = code
        for key in ("signature", "nonce"):
            if record.get(key) is not None:
                full[key] = record[key]
        if seq is not None and record != full:  # a disclosure must say what the rules give
            wrong = sorted(k for k in set(record) | set(full) if record.get(k) != full.get(k))
            raise DisclosureMismatch(seq, f"the disclosed reveal of {player} for step {step.round}.{step.step} "
                                          f"differs from the rules in {', '.join(wrong)}")
        step.held[player] = full
        step.revealed.add(player)

    def _held_default(self, step, player: str, data: dict) -> None:
        """A late player's default in an anonymous step: computed, kept, not shown."""
        if "choice" in data:
            raise Refused("a default in an anonymous step does not show its choice publicly "
                          "(the disclosure at the end does)")
        step.held[player] = {"default": True, "choice": self.rules.default(self.state, player, step.kind)}

    def _on_sealed_batch(self, data: dict, at: str) -> None:
        self._need_state()
        if self.state is None:
            return self._public("sealed_batch", data)
        step = self.sealed
        if step is None or not step.anonymous:
            raise Refused("no anonymous sealed step is open, so no batch is expected")
        if (data["round"], data["step"]) != (step.round, step.step):
            raise Refused(f"this batch is for step {data['round']}.{data['step']}, "
                          f"but the open sealed step is {step.round}.{step.step}")
        if not step.all_committed or step.owes_reveal():
            raise Refused(f"the batch of step {step.round}.{step.step} comes once every reveal is in; "
                          f"still waiting for: {', '.join(step.owes_commit() or step.owes_reveal())}")
        reveals = {p: step.held[p] for p in step.waiting}
        digest = batch_digest(self.game_id, step.round, step.step, reveals)
        given = data.get("digest")  # what the players saw published: a batch without it proves nothing
        if not isinstance(given, str) or len(given) != 64 or given.strip("0123456789abcdef"):
            raise Refused("a batch digest is 64 lowercase hex characters")
        if given != digest:
            raise Refused(f"the batch digest {quote(data['digest'])} is not the digest of the step's held "
                          f"reveals ({digest})")
        self.anon_steps.append({"round": step.round, "step": step.step, "reveals": reveals})
        for player in step.waiting:  # the game sees the whole step at once, in its order
            self._apply_rules(player, reveals[player].get("applied", reveals[player]["choice"]))
        self._open_sealed()

    def _public_batch(self, data: dict) -> None:
        """Without the seed: the batch comes once every committed (or late) player of the
        step has revealed or defaulted; its digest is kept to check the disclosure by."""
        key = (data["round"], data["step"])
        step = self.public_steps.get(key)
        if step is None or step["batched"] or step["anonymous"] is False:
            raise Refused(f"a batch for step {key[0]}.{key[1]}, which has no held reveals to batch (or has its batch)")
        missing = [p for p in step["commits"] if p not in step["done"]]
        if missing:
            raise Refused(f"the batch of step {key[0]}.{key[1]} before every reveal was in (still "
                          f"missing: {', '.join(missing)})")
        digest = data.get("digest")
        if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
            raise Refused("a batch digest is 64 lowercase hex characters")
        step.update(anonymous=True, batched=True, digest=digest)

    def disclosure(self) -> list[dict]:
        """Every anonymous step's held reveals (with a forced end: also those of the open one)."""
        out = [dict(s) for s in self.anon_steps]
        step = self.sealed
        if step is not None and step.anonymous and step.held:
            out.append({"round": step.round, "step": step.step,
                        "reveals": {p: step.held[p] for p in step.waiting if p in step.held}})
        return out

    @property
    def owes_disclosure(self) -> bool:
        if self.disclosed:
            return False
        if self.state is None:
            return any(s.get("anonymous") for s in self.public_steps.values())
        return bool(self.disclosure())

    def _on_disclosed(self, data: dict, at: str) -> None:
        if self.disclosed:
            raise Refused(f"the held reveals of {self.game_id} are already disclosed")
        if self.seed_revealed:
            raise Refused("the disclosure comes before the seed is revealed")
        if not self.started:
            raise Refused(f"game {self.game_id} has not started, so it has nothing to disclose")
        steps = data["steps"]
        if not isinstance(steps, list):
            raise Refused("the disclosure's steps must be a list")
        if self.state is None:
            self._public_disclosed(steps)
        else:
            expected = self.disclosure()
            if steps != expected:
                where = next((f"step {e['round']}.{e['step']}" for k, e in enumerate(expected)
                              if k >= len(steps) or steps[k] != e), "an extra step at the end")
                raise Refused(f"the disclosure does not list exactly the held reveals of the log "
                              f"(first difference: {where})")
        self.disclosed = True

    def _public_disclosed(self, steps: list) -> None:
        """Without the seed: each disclosed reveal against its public commitment, each
        step's reveals against the public record and its batch digest."""
        listed = set()
        for entry in steps:
            key = (entry["round"], entry["step"])
            public = self.public_steps.get(key)
            if public is None or not public.get("anonymous") or key in listed:
                raise Refused(f"the disclosure lists step {key[0]}.{key[1]}, which is no anonymous step of the log "
                              f"(or lists it twice)")
            listed.add(key)
            reveals = entry["reveals"]
            if set(reveals) != set(public["how"]):
                raise Refused(f"the disclosure of step {key[0]}.{key[1]} lists {', '.join(sorted(reveals))}, "
                              f"the log settled {', '.join(sorted(public['how']))}")
            for player, record in reveals.items():
                if bool(record.get("default")) != (public["how"][player] == "default"):
                    raise Refused(f"the disclosure of step {key[0]}.{key[1]} says {player} "
                                  f"{'defaulted' if record.get('default') else 'revealed'}; the log says otherwise")
                if record.get("default"):
                    continue
                committed, _ = public["commits"][player]
                if not commitment_matches(committed, self.game_id, key[0], key[1], player, record["choice"],
                                          parse_salt(record["salt"])):
                    raise Refused(f"the disclosed reveal of {player} for step {key[0]}.{key[1]} does not match "
                                  f"their commitment")
            if public.get("digest") is not None and \
                    batch_digest(self.game_id, key[0], key[1], reveals) != public["digest"]:
                raise Refused(f"the disclosed reveals of step {key[0]}.{key[1]} do not give its batch digest")
        missing = [k for k, s in self.public_steps.items() if s.get("anonymous") and k not in listed]
        if missing:
            raise Refused(f"the disclosure leaves out anonymous step {missing[0][0]}.{missing[0][1]}")


def _mismatch(seq: int | None, message: str) -> Refused:
    return DisclosureMismatch(seq, message) if seq is not None else Refused(message)
