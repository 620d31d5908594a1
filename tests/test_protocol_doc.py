"""Every ``vector:`` block in docs/protocol.md holds for the implementation."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from pbem.games import tortuga
from pbem.protocol.armour import armour, extract_blocks
from pbem.protocol.canonical import GENESIS_HASH, canonical_json, event_hash, sha256_hex
from pbem.protocol.commit import make_commitment
from pbem.protocol.rng import RandomSource, combine_client_seeds
from pbem.protocol.signing import fingerprint, public_from_secret, sign, verify

DOC = Path(__file__).parent.parent / "docs" / "protocol.md"
BLOCKS = re.findall(r"```json vector:([a-z0-9-]+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def vectors(kind):
    found = [json.loads(body) for k, body in BLOCKS if k == kind]
    assert found, f"no vector:{kind} block in {DOC.name}"
    return found


def test_every_block_kind_is_checked():
    assert {k for k, _ in BLOCKS} == {"canonical", "event-chain", "commitment", "client-entropy",
                                      "draw", "tortuga-setup", "tortuga1667-setup", "batch-digest",
                                      "signature", "armour", "receipt"}


def test_canonical():
    for v in vectors("canonical"):
        assert canonical_json(v["value"]).decode("utf-8") == v["canonical"]
        assert sha256_hex(canonical_json(v["value"])) == v["sha256"]


def test_event_chain():
    for v in vectors("event-chain"):
        prev = GENESIS_HASH
        for event, expected in zip(v["events"], v["hashes"]):
            prev = event_hash(prev, event)
            assert prev == expected
        # the same by hand, as an independent verifier would compute it
        first = hashlib.sha256(("0" * 64).encode() + json.dumps(
            v["events"][0], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
        assert first == v["hashes"][0]


def test_commitments():
    for block in vectors("commitment"):
        for v in block:
            assert make_commitment(v["game"], v["round"], v["step"], v["player"], v["choice"], v["salt"]) == v["commitment"]
            preimage = (b"pbem-commit-v1\x00" + json.dumps(
                {k: v[k] for k in ("game", "round", "step", "player", "choice")},
                sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\x00" + bytes.fromhex(v["salt"]))
            assert hashlib.sha256(preimage).hexdigest() == v["commitment"]


def test_client_entropy():
    for block in vectors("client-entropy"):
        for v in block:
            assert combine_client_seeds(v["seeds"]) == v["entropy"]


def test_draws():
    import hmac
    for block in vectors("draw"):
        for v in block:
            source = RandomSource(bytes.fromhex(v["seed"]), v["game"], v["client_entropy"])
            assert source.below(v["label"], v["n"]) == v["value"]
            message = json.dumps(["pbem-rng-v1", v["game"], v["client_entropy"], v["label"], 0],
                                 separators=(",", ":"), ensure_ascii=False).encode()
            assert hmac.new(bytes.fromhex(v["seed"]), message, "sha256").hexdigest() == v["block0"]
            u = int.from_bytes(bytes.fromhex(v["block0"])[:4], "big")
            limit = 2**32 - 2**32 % v["n"]
            if "rejected" in v.get("note", ""):
                assert u >= limit
            else:
                assert u < limit and u % v["n"] == v["value"]


def test_tortuga_setup():
    for v in vectors("tortuga-setup"):
        source = RandomSource(bytes.fromhex(v["seed"]), v["game"], combine_client_seeds(v["client_seeds"]))
        state = tortuga.setup(v["players"], {"start": v["start"]}, source)
        public = tortuga.view(state, None)
        for player, areas in v["setup"].items():
            assert public["boards"][player]["island"] == areas["island"]
            assert public["boards"][player]["crew"] == areas["crew"]
        for player, roll in v["roll1"].items():
            assert tortuga.view(state, player)["boards"][player]["roll"] == roll


def test_tortuga1667_setup():
    from pbem.games import tortuga1667
    for v in vectors("tortuga1667-setup"):
        source = RandomSource(bytes.fromhex(v["seed"]), v["game"], combine_client_seeds(v["client_seeds"]))
        state = tortuga1667.setup(v["players"], {}, source)
        assert state.loyalty == v["loyalty"] and state.hands == v["hands"] and state.vote_deck == v["vote_deck"]
        assert state.events == v["events"] and state.ships == v["ships"]
        assert [state.events[c] for c in state.row] == v["row"]
        assert [state.events[c] for c in state.event_deck] == v["event_deck"]


def test_tortuga1667_setup_from_the_words_of_section_4():
    """An independent verifier's set-up, written from the table of labels alone."""
    for v in vectors("tortuga1667-setup"):
        rng = RandomSource(bytes.fromhex(v["seed"]), v["game"], combine_client_seeds(v["client_seeds"]))
        players = v["players"]

        def take(pool, label):
            return pool.pop(rng.below(label, len(pool)))

        def shuffle(pool, label):
            pool = list(pool)
            return [take(pool, f"{label}/{k}") for k in range(len(pool))]
        british, french, dutch = {4: (2, 2, 0), 5: (2, 2, 1)}[len(players)]
        cards = ["british"] * british + ["french"] * french + ["dutch"] * dutch
        assert {p: take(cards, f"setup/loyalty/{p}") for p in players} == v["loyalty"]
        votes, hands = list(range(40)), {p: [] for p in players}
        for k in range(3):
            for p in players:
                hands[p].append(take(votes, f"setup/hand/{p}/{k}"))
        assert hands == v["hands"]  # in the order drawn
        assert shuffle(votes, "setup/vote-deck") == v["vote_deck"]
        starred = ["powder", "fever", "bells", "storm"]
        drawn = sorted(take(starred, f"setup/starred/{k}") for k in range(3))
        events = (["pistol"] * 2 + ["marque"] * 4 + ["blackspot"] * 3 + ["albatross"] * 3
                  + ["fountain", "atlantis", "eldorado"] + drawn + ["armada"])
        assert events == v["events"]
        deck = shuffle(range(len(events) - 1), "setup/event-deck")
        tail = min(4, len(deck))
        deck.insert(len(deck) - tail + rng.below("setup/event-deck/armada", tail + 1), len(events) - 1)
        assert [events[c] for c in deck] == v["row"] + v["event_deck"]
        ships = {"dutchman": [], "jolly": []}
        for k, p in enumerate(shuffle(players, "setup/pawns")):
            ships["dutchman" if k % 2 == 0 else "jolly"].append(p)
        assert ships == v["ships"]


def test_batch_digest():
    from pbem.protocol.anonymous import batch_digest
    for v in vectors("batch-digest"):
        assert batch_digest(v["game"], v["round"], v["step"], v["reveals"]) == v["digest"]
        body = {k: v[k] for k in ("game", "round", "step", "reveals")}
        assert hashlib.sha256(b"pbem-batch-v1\x00" + json.dumps(
            body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest() == v["digest"]


def test_signature():
    for v in vectors("signature"):
        assert public_from_secret(v["secret"]) == v["public"]
        assert fingerprint(v["public"]) == v["fingerprint"]
        assert sign(v["secret"], v["body"]) == v["signature"]
        assert verify(v["public"], v["body"], v["signature"])
        assert b"pbem-sig-v1\x00" + canonical_json(v["body"]) == v["signed_bytes"].encode("utf-8")


def test_the_signed_vectors_are_real_version_1_submissions():
    """The body a verifier learns from is exactly what pbem signs and accepts: version 1,
    with a nonce, and no field a submission may not hold."""
    from pbem.protocol.moves import signed_body
    bodies = [v["body"] for v in vectors("signature")] + [v["payload"]["body"] for v in vectors("armour")]
    for body in bodies:
        assert body.get("v") == 1 and isinstance(body.get("nonce"), str), body
        assert body == signed_body(body["game"], body["kind"], body)
    for v in vectors("armour"):
        signature = next(s for s in vectors("signature") if s["body"] == v["payload"]["body"])
        assert v["payload"]["sig"] == signature["signature"]


def test_armour():
    for v in vectors("armour"):
        text = armour(v["payload"])
        assert f"={v['checksum']}" in text
        quoted = "".join("> " + line + "  \r\n" for line in text.splitlines())
        assert extract_blocks(quoted) == [v["payload"]]


@pytest.mark.parametrize("bad", [{"x": 1.5}, {1: "a"}, {"\ud800": 1}, ["\udfff"]])
def test_no_canonical_form(bad):
    from pbem.protocol.canonical import CanonicalError
    with pytest.raises(CanonicalError):
        canonical_json(bad)


def test_the_seal_token_holds_the_documented_fields(tmp_path):
    """Section 6: the payload's fields, `sealed`, and `kinds` with the options of every
    request the token covers, for a sealed step and for open decisions."""
    from pbem.protocol import commands, loading
    from pbem.protocol.token import context_token, read_token
    from pbem.store import Store
    section = DOC.read_text(encoding="utf-8").split("## 6. The seal token")[1].split("## 7.")[0]
    documented = set(re.findall(r'"([a-z]+)"', re.search(r"`payload` is the object `\{(.*?)\}`", section, re.S).group(1)))
    with Store(tmp_path / "t.db") as store:
        commands.create_game(store, "t", "tortuga", ["ani", "alex", "frank"], {}, start=True,
                             at="2024-05-01T12:00:00Z")
        session = loading.load(store, "t")
        token = read_token(context_token(session, "ani"))
        assert set(token) == documented
        request = next(r for r in session.pending() if r.player == "ani")
        assert token["sealed"] is True and token["kinds"] == [token["kind"]] == ["select"]
        assert token["options"] == list(request.options) and (token["round"], token["step"]) == (1, 1)
        for _ in range(200):  # defaults until someone owes open decisions
            session = loading.load(store, "t")
            if session.sealed is None:
                break
            for player in session.sealed.owes_commit():
                commands.nmr(store, "t", player, force=True, at="2024-05-01T12:00:00Z")
        owing = [r for r in session.pending() if not r.sealed]
        player = owing[0].player
        mine = [r for r in owing if r.player == player]
        token = read_token(context_token(session, player))
        assert set(token) == documented and token["sealed"] is False
        assert token["kinds"] == [r.kind for r in mine] and token["kind"] == mine[0].kind
        if all(r.options is not None for r in mine):
            assert token["options"] == [o for r in mine for o in r.options]
        assert (token["round"], token["step"]) == (session.state.round, session.state.step)


def test_receipt():
    from pbem.protocol.armour import RECEIPT
    from pbem.protocol.receipts import read_receipts, receipt_block, sign_body, signed_message
    for v in vectors("receipt"):
        assert signed_message(v["body"]).decode("utf-8") == v["signed_bytes"]
        assert sign_body(v["secret"], v["body"]) == v["sig"]  # Ed25519 is deterministic
        assert public_from_secret(v["secret"]) == v["body"]["judge_key"]
        block = "\n".join(v["block"]) + "\n"
        assert receipt_block(v["secret"], v["body"]) == block
        assert armour({"receipt": v["body"], "sig": v["sig"]}, RECEIPT) == block
        assert read_receipts("> " + block.replace("\n", "\n> ")) == [v["body"]]
        assert extract_blocks(block) == []  # a receipt is never read as a submission
