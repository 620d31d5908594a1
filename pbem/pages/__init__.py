"""Pages a browser opens: the project's fixed verifier (``verify.html``, the same bytes for
everyone, its SHA-256 printed in docs/protocol.md) and the viewer of one game (``viewer``).

The verifier is a static file shipped with the package: nothing of a game or of its
moderator is ever written into it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

VERIFY_PAGE = Path(__file__).with_name("verify.html")


def verify_page_bytes() -> bytes:
    return VERIFY_PAGE.read_bytes()


def verify_page_sha256() -> str:
    return hashlib.sha256(verify_page_bytes()).hexdigest()
