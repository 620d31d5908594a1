"""Ed25519 signing: key texts, signatures over canonical JSON, and a frozen vector."""

import ast
import base64
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.protocol.signing import (
    PUBLIC_PREFIX,
    SECRET_PREFIX,
    KeyFormatError,
    SigningError,
    fingerprint,
    generate_keypair,
    parse_public_key,
    parse_secret_key,
    public_from_secret,
    sign,
    signed_message,
    verify,
)

REPO = Path(__file__).resolve().parents[2]

# Frozen vector: secret key bytes 0x01..0x20 (the key of docs/protocol.md, which signs a full
# version-1 body; the signature primitive signs any JSON object, as here).
VECTOR_SECRET = "pbem-ed25519-secret:AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
VECTOR_PUBLIC = "pbem-ed25519-public:ebVWLo/mVPlAeLES6KmLp5AfhTrmlb7X4OORC60ElmQ="
VECTOR_FINGERPRINT = "65b60673d6ed884b"
VECTOR_BODY = {
    "kind": "commit",
    "game": "tortuga-2024",
    "round": 3,
    "step": 2,
    "player": "\u0160\u00e1rka",
    "commitment": "6eb981d9b0214c0869caefd185de2d8ecbb21df0e070840c20338cf525b9a8c0",
}
VECTOR_MESSAGE = (
    b'pbem-sig-v1\x00{"commitment":'
    b'"6eb981d9b0214c0869caefd185de2d8ecbb21df0e070840c20338cf525b9a8c0",'
    b'"game":"tortuga-2024","kind":"commit","player":"\xc5\xa0\xc3\xa1rka","round":3,"step":2}'
)
VECTOR_SIGNATURE = (
    "Lf814Ys7o5A//89qNzGCXxnQVknei5ZPRWUS1SsUA2p8tjSqBSYQVsRX8aJy+hiYIpAGZZvOE/dCsRI0zSdMBQ=="
)


@pytest.fixture(scope="module")
def keys():
    return generate_keypair()


def test_vector():
    assert VECTOR_SECRET == SECRET_PREFIX + base64.b64encode(bytes(range(1, 33))).decode()
    assert public_from_secret(VECTOR_SECRET) == VECTOR_PUBLIC
    assert fingerprint(VECTOR_PUBLIC) == VECTOR_FINGERPRINT
    assert signed_message(VECTOR_BODY) == VECTOR_MESSAGE
    assert sign(VECTOR_SECRET, VECTOR_BODY) == VECTOR_SIGNATURE
    assert verify(VECTOR_PUBLIC, VECTOR_BODY, VECTOR_SIGNATURE)


def test_key_texts(keys):
    secret, public = keys
    assert secret.startswith(SECRET_PREFIX) and public.startswith(PUBLIC_PREFIX)
    assert len(parse_secret_key(secret)) == 32 and len(parse_public_key(public)) == 32
    assert public_from_secret(secret) == public
    assert public_from_secret(f"  {secret}\n") == public
    assert len(fingerprint(public)) == 16
    assert generate_keypair() != keys


def test_round_trip(keys):
    secret, public = keys
    body = {"game": "g", "player": "ani", "choice": "B,C", "nested": {"b": [1, None, True]}}
    signature = sign(secret, body)
    assert len(base64.b64decode(signature)) == 64
    assert verify(public, body, signature)
    assert verify(public, dict(reversed(list(body.items()))), signature)  # key order is free
    assert verify(public, body, f" {signature}\n")


@pytest.mark.parametrize(
    "damage",
    [
        lambda sig: sig[:-4],  # truncated
        lambda sig: sig[:40],
        lambda sig: "",
        lambda sig: "not base64 at all!",
        lambda sig: sig.replace("=", ""),  # padding stripped
        lambda sig: sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:],  # one char changed
        lambda sig: base64.b64encode(b"\x00" * 64).decode(),
        lambda sig: None,
        lambda sig: base64.b64decode(sig),  # bytes, not text
    ],
)
def test_bad_signatures_are_false_not_errors(damage):
    assert verify(VECTOR_PUBLIC, VECTOR_BODY, VECTOR_SIGNATURE)
    assert verify(VECTOR_PUBLIC, VECTOR_BODY, damage(VECTOR_SIGNATURE)) is False


def test_only_the_canonical_base64_of_a_signature_is_accepted():
    # "Q==" -> "R==" changes only the unused padding bits: same bytes, different text.
    assert VECTOR_SIGNATURE.endswith("Q==")
    altered = VECTOR_SIGNATURE[:-3] + "R=="
    assert base64.b64decode(altered) == base64.b64decode(VECTOR_SIGNATURE)
    assert verify(VECTOR_PUBLIC, VECTOR_BODY, altered) is False


def test_changed_body_or_other_key_is_false(keys):
    changed = dict(VECTOR_BODY, step=3)
    assert not verify(VECTOR_PUBLIC, changed, VECTOR_SIGNATURE)
    assert not verify(VECTOR_PUBLIC, {**VECTOR_BODY, "extra": None}, VECTOR_SIGNATURE)
    assert not verify(keys[1], VECTOR_BODY, VECTOR_SIGNATURE)


@pytest.mark.parametrize("body", [[1, 2], "text", {"x": 1.5}, {"\ud800": 1}, None])
def test_body_that_cannot_have_been_signed_is_false(body):
    assert verify(VECTOR_PUBLIC, body, VECTOR_SIGNATURE) is False


def test_sign_refuses_a_body_that_is_not_an_object():
    with pytest.raises(SigningError, match="must be a JSON object .*got list"):
        sign(VECTOR_SECRET, ["a"])


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_public_key, VECTOR_SECRET, "this is a secret key; a public key is"),
        (parse_secret_key, VECTOR_PUBLIC, "this is a public key; a secret key is"),
        (parse_public_key, "ssh-ed25519 AAAAC3Nz", "does not start with 'pbem-ed25519-public:'"),
        (parse_public_key, PUBLIC_PREFIX + "ebVWLo/mVPlAeLES6KmLp5Af", "decodes to 18 bytes"),
        (parse_public_key, PUBLIC_PREFIX + "ebVWLo/mVPl!", "is not valid base64"),
        (parse_public_key, PUBLIC_PREFIX, "decodes to 0 bytes"),
        (parse_secret_key, 42, "got int"),
    ],
)
def test_malformed_keys(parse, text, message):
    with pytest.raises(KeyFormatError) as info:
        parse(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_malformed_key_raises_in_verify_and_sign():
    with pytest.raises(KeyFormatError):
        verify(VECTOR_PUBLIC[:-2], VECTOR_BODY, VECTOR_SIGNATURE)
    with pytest.raises(KeyFormatError):
        sign(VECTOR_PUBLIC, VECTOR_BODY)


def test_errors_never_quote_the_secret_key():
    secret_b64 = VECTOR_SECRET.removeprefix(SECRET_PREFIX)
    for text in (VECTOR_SECRET + "x", VECTOR_SECRET[:-5], "pbem-ed25519-secret " + secret_b64):
        with pytest.raises(KeyFormatError) as info:
            parse_secret_key(text)
        assert secret_b64[:8] not in str(info.value)
    with pytest.raises(KeyFormatError) as info:
        parse_public_key(VECTOR_SECRET)
    assert secret_b64[:8] not in str(info.value)


@given(st.dictionaries(st.text(max_size=8), st.text(max_size=8) | st.integers(), max_size=5))
def test_round_trip_property(body):
    signature = sign(VECTOR_SECRET, body)
    assert verify(VECTOR_PUBLIC, body, signature)
    assert not verify(VECTOR_PUBLIC, {**body, "\x00extra": 0}, signature)


def _imports(tree):
    """Every module an AST imports, relative imports resolved inside pbem.protocol."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            package = ["pbem", "protocol"][: 3 - node.level] if node.level else []
            yield ".".join([*package, node.module] if node.module else package)


@pytest.mark.parametrize("module", ["commit", "signing", "armour"])
def test_protocol_modules_import_only_canonical_from_pbem(module):
    tree = ast.parse((REPO / "pbem" / "protocol" / f"{module}.py").read_text())
    from_pbem = {name for name in _imports(tree) if name.split(".")[0] == "pbem"}
    assert from_pbem == {"pbem.protocol.canonical"}
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    top_level = ast.Module(body=imports, type_ignores=[])
    assert not any(name.startswith("cryptography") for name in _imports(top_level))


def test_importing_the_protocol_modules_does_not_load_cryptography():
    code = (
        "import sys, pbem.protocol.commit, pbem.protocol.signing, pbem.protocol.armour;"
        "print('cryptography' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
