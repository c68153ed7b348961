"""Reading a file the user named (a WSDL, ``--values``, ``--config``, a contract, a baseline):
always within a size limit, whether it is a regular file, a pipe (``<(...)``), a FIFO or a
device such as /dev/zero. The limit is checked as the bytes come in, never after a whole
stream was read: at most ``limit + 1`` bytes are ever held.

    text = read_limited(path, CONFIG_LIMIT, "config").decode("utf-8")
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import UsageError

#: Limits per kind of file: far above any real one, far below what would hurt.
CONFIG_LIMIT = 1 << 20
VALUES_LIMIT = 4 << 20
CONTRACT_LIMIT = 16 << 20
BASELINE_LIMIT = 256 << 20
#: Entries (tables, keys, array items) of a ``--values`` or config file: a hand-written one
#: holds tens; 4 MiB of one-line tables (``[a1]``) would be 640,000 of them and ~600 MB parsed.
ENTRIES_LIMIT = 50_000


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


def check_entries(text: str, path: str | Path, what: str, *, toml: bool,
                  limit: int = ENTRIES_LIMIT) -> None:
    """UsageError (one line) when the TOML or JSON ``text`` may hold more than ``limit``
    entries, counted before it is parsed (a parsed entry costs ~1 KB)."""
    if len(text) > limit and _entries_at_most(text, toml) > limit:
        raise UsageError(f"{what} {path} holds more than {limit:,} entries (tables, keys, "
                         "array items)")


#: Strings and comments, whose characters are no entries (TOML's and JSON's forms).
_TOML_TEXT = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
                        r"|#[^\n]*", re.DOTALL)
_JSON_TEXT = re.compile(r'"(?:[^"\\]|\\.)*"')


def _entries_at_most(text: str, toml: bool) -> int:
    """Each entry past the first is announced by one of these characters outside strings:
    a key's ``=`` (and each dot of a dotted key), a table's or an array's ``[``, an inline
    table's ``{``, an item's ``,`` (JSON: ``:`` for keys)."""
    bare = (_TOML_TEXT if toml else _JSON_TEXT).sub("", text)
    marks = "=.[{," if toml else ":[{,"
    return 1 + sum(bare.count(mark) for mark in marks)


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
