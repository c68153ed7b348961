"""Reading a file the user named (a WSDL, ``--values``, ``--config``, a contract, a baseline):
always within a size limit, whether it is a regular file, a pipe (``<(...)``), a FIFO or a
device such as /dev/zero. The limit is checked as the bytes come in, never after a whole
stream was read: at most ``limit + 1`` bytes are ever held.

    text = read_limited(path, CONFIG_LIMIT, "config").decode("utf-8")
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import UsageError

#: Limits per kind of file: far above any real one, far below what would hurt.
CONFIG_LIMIT = 1 << 20
VALUES_LIMIT = 4 << 20
CONTRACT_LIMIT = 16 << 20
BASELINE_LIMIT = 256 << 20


def read_limited(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of ``path``; UsageError (one line) when it holds more than ``limit`` bytes or
    cannot be read (``what`` names it in the message, e.g. ``"--values"``)."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise UsageError(f"{what} {path} is larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
