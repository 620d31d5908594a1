"""The review's tests reuse the command-line fixtures (cli, pbem_db, driver_for)."""
from tests.cli.conftest import *  # noqa: F401,F403
