"""The embedded reference implementation of the contract: the harness's default target."""

from harness.reference.app import answer, create_app
from harness.reference.server import running, serve

__all__ = ["answer", "create_app", "running", "serve"]
