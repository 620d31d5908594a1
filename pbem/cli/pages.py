"""Pages for a browser: the verifier page and a game's viewer."""


from pathlib import Path
from typing import Annotated

import typer

from .common import JsonOption, emit, fail, handled


def register(app: typer.Typer) -> None:
    app.command("verify-page")(verify_page)


@handled
def verify_page(output: Annotated[Path, typer.Option("-o", "--output", help="The folder to write verify.html into (made if missing).")],
                force: Annotated[bool, typer.Option("--force", help="Replace an existing verify.html there.")] = False,
                as_json: JsonOption = False):
    """Write a copy of pbem's verifier page: open it in a browser and give it a game's export.

    The page is the same file for everyone; compare its SHA-256 with the one printed in
    docs/protocol.md before you trust it.

    \b
    Example: pbem verify-page -o ~/pbem-verifier   (then open ~/pbem-verifier/verify.html)
    """
    from ..pages import verify_page_bytes, verify_page_sha256
    if output.exists() and not output.is_dir():
        fail(f"{output} is a file; give a folder to write verify.html into")
    target = output / "verify.html"
    if target.exists() and not force:
        fail(f"{target} exists; choose another folder, or add --force to replace it")
    output.mkdir(parents=True, exist_ok=True)
    target.write_bytes(verify_page_bytes())
    digest = verify_page_sha256()
    emit({"path": str(target), "sha256": digest}, as_json,
         f"wrote {target}\nsha256: {digest} (compare with the one in docs/protocol.md)")
