"""Per-game mail passwords: made by the judge, shown once, kept only as a salted hash.

A ``From:`` header is easy to forge, so a player's mail carries ``password WORD``. The
password is drawn by the judge (15 characters from a 31-letter alphabet, about 74 bits), so a
fast salted SHA-256 is enough to keep it: stretching (scrypt, bcrypt) protects passwords that
people choose, and would make the judge slow at exactly the moment twenty mails arrive.
Stored form: ``sha256$SALT$DIGEST`` (hex).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: easy to read and type


def make_password() -> str:
    groups = ["".join(secrets.choice(ALPHABET) for _ in range(5)) for _ in range(3)]
    return "-".join(groups)


def hash_password(password: str, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(16)
    digest = hashlib.sha256(f"pbem-mail-password-v1:{salt}:{_normal(password)}".encode()).hexdigest()
    return f"sha256${salt}${digest}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored or not password:
        return False
    try:
        scheme, salt, _digest = stored.split("$")
    except ValueError:
        return False
    return scheme == "sha256" and hmac.compare_digest(hash_password(password, salt), stored)


def _normal(password: str) -> str:
    # phones capitalise the first letter and some clients add spaces around dashes
    return "".join(password.split()).lower()
