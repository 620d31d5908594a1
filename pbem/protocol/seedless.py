"""What a replay without the seed checks of the events of play (``pbem audit`` of an
export before the seed is published).

Without the seed the game state is unknown: ``SeedlessChecks._public`` (a part of
``Session``) checks what can be checked of each commit, nmr, reveal, default and decide.
"""

from __future__ import annotations

from ..text import quote
from .commit import commitment_matches, parse_commitment, parse_salt
from .errors import Refused


class SeedlessChecks:
    """The checks of the events of play in a replay without the seed (a part of ``Session``)."""

    def _public(self, kind: str, data: dict) -> None:
        """Without the seed (an outsider before reveal-seed) the game state is unknown, so
        check what can be checked: players, commitment forms, the order of commitments and
        reveals within each step, reveals against commitments, and signatures. In an
        anonymous step: that each held reveal follows a commitment of the player and comes
        after the step's last commitment, and that the batch comes once every committed
        player has revealed or been defaulted, before the next step begins."""
        if kind == "sealed_batch":
            return self._public_batch(data)
        player = self.player(data["player"])
        round_, step_ = data["round"], data["step"]
        if type(round_) is not int or type(step_) is not int:
            raise Refused(f"round and step must be integers in a {kind} event")
        key = (round_, step_)
        latest = max(self.public_steps, default=None)
        if kind in ("commit", "nmr") and latest is not None and key < latest:
            raise Refused(f"a {kind} for step {round_}.{step_} after step {latest[0]}.{latest[1]} had begun")
        if kind in ("commit", "nmr") and key not in self.public_steps:
            open_ = [k for k, st in self.public_steps.items() if st["anonymous"] and not st["batched"]]
            if open_:
                raise Refused(f"a {kind} for step {round_}.{step_} before the batch of anonymous step "
                              f"{open_[0][0]}.{open_[0][1]}")
        step = self.public_steps.setdefault(key, {"commits": {}, "done": set(), "closed": False, "how": {},
                                                  "anonymous": None, "digest": None, "batched": False})
        if step["batched"] and (kind in ("commit", "nmr", "reveal", "reveal_held") or data.get("sealed")):
            raise Refused(f"a {kind} for step {round_}.{step_} after its batch")
        anonymous = kind == "reveal_held" or (kind == "default" and data.get("sealed") and "choice" not in data)
        if kind in ("reveal", "reveal_held") or (kind == "default" and data.get("sealed")):
            if step["anonymous"] is not None and step["anonymous"] != anonymous:
                raise Refused(f"step {round_}.{step_} mixes public and held reveals (and defaults that show "
                              f"their choice)")
            step["anonymous"] = anonymous
        try:
            if kind in ("commit", "nmr"):
                if step["closed"]:
                    raise Refused(f"a {kind} for step {round_}.{step_} after its reveals had begun")
                if kind == "commit":
                    by = data.get("by", "player")
                    self._check_signature("commit", data, by)
                    step["commits"][player] = (parse_commitment(data["commitment"]), by)
                else:
                    step["commits"][player] = (None, "nmr")
                return
            if kind == "reveal_held":
                committed, by = step["commits"].get(player, (None, None))
                if player in step["done"] or committed is None:
                    raise Refused(f"the held reveal does not follow an open commitment of {player} for step "
                                  f"{round_}.{step_}")
                if data.get("by", "player") != by:
                    raise Refused(f"this reveal says it was made by the {quote(data.get('by'))}, "
                                  f"but the commitment was made by the {by}")
            elif kind == "reveal":
                committed, by = step["commits"].get(player, (None, None))
                if player in step["done"] or committed is None or not commitment_matches(
                        committed, self.game_id, round_, step_, player, data["choice"],
                        parse_salt(data["salt"])):
                    raise Refused(f"the reveal does not match an open commitment of {player} for step {round_}.{step_}")
                self._check_signature("reveal", data, by)
            elif kind == "default" and data.get("sealed"):
                if player in step["done"]:
                    raise Refused(f"{player} already revealed in step {round_}.{step_}")
            elif kind == "decide":
                self._check_signature("decide", data, "stand-in" if data.get("by") == "stand-in" else "player")
                return
            else:
                return
        except ValueError as exc:
            raise Refused(str(exc)) from None
        step["done"].add(player)
        step["how"][player] = "default" if kind == "default" else "reveal"
        step["closed"] = True
