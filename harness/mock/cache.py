"""An index kept in a file (``harness mock --index-cache FILE``), so that a later start with the
same recordings and contract reads it instead of indexing again.

The file is a JSON header line (what it is for: each recording's path, size, modification time
and inode, the contract's digest, the harness version; and the index's counts and positions)
followed by the four arrays of the index as raw bytes. It holds no recorded value: the keys are
digests, and the candidates for "nearest recorded" are kept as positions in the recordings and
read again on load. It is written with mode 0600, through a temporary file. A file that does
not fit (another recording, a recording appended to since, another contract or version) is
ignored and replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from harness import __version__
from harness.contract.model import Contract, to_dict
from harness.errors import HarnessError
from harness.mock.index import COLUMNS, Index, Part, Source, call_values
from harness.reference.app import Refusal

FORMAT = "asmx-harness-mock-index"
VERSION = 1


def fingerprint(contract: Contract, sources: list[Source]) -> dict[str, Any]:
    """What an index depends on: the recordings as they are now, the contract, the harness."""
    files = []
    for source in sources:
        stat = source.path.stat()
        files.append({"path": str(source.path.resolve()), "size": stat.st_size,
                      "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino})
    digest = hashlib.sha256(json.dumps(to_dict(contract), sort_keys=True).encode()).hexdigest()
    return {"format": FORMAT, "version": VERSION, "harness": __version__, "contract": digest,
            "byteorder": sys.byteorder, "recordings": files}


def read(path: str | Path, contract: Contract, sources: list[Source]) -> Index | None:
    """The index kept in ``path`` when it fits ``sources`` and ``contract``; None otherwise
    (missing, unreadable, or made for something else)."""
    expected = fingerprint(contract, sources)
    try:
        with Path(path).open("rb") as f:
            header = json.loads(f.readline(16 * 1024 * 1024))
            if not isinstance(header, dict) or header.get("fits") != expected:
                return None
            found = Part()
            for name in COLUMNS:
                column = getattr(found, name)
                column.frombytes(f.read(column.itemsize * header["calls"]))
                if len(column) != header["calls"]:
                    return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found.descriptions = {(d[0], d[1]): (d[2], d[3]) for d in header["descriptions"]}
    found.operations.update(header["operations"])
    found.skipped.update(header["skipped"])
    found.broken, found.broken_count = header["broken"], header["broken_count"]
    found.exchanges = header["exchanges"]
    index = Index(sources, found)
    _candidates(index, contract, header["candidates_at"])
    return index


def _candidates(index: Index, contract: Contract, positions: dict[str, list[list[int]]]
                ) -> None:
    """The candidates' values, read again from the recordings."""
    for name, places in positions.items():
        for where, length in places:
            try:
                _call, _binding, values = call_values(contract, index.read(where, length))
            except (HarnessError, Refusal):  # the line changed: one candidate fewer
                continue
            index.found.candidates.setdefault(name, []).append(values)
            index.found.candidates_at.setdefault(name, []).append((where, length))


def write(path: str | Path, contract: Contract, index: Index) -> None:
    """Keep ``index`` in ``path`` (OSError when it cannot be written)."""
    found = index.found
    header = {"fits": fingerprint(contract, index.sources), "calls": index.calls,
              "descriptions": [[*k, *v] for k, v in found.descriptions.items()],
              "candidates_at": found.candidates_at, "operations": found.operations,
              "skipped": found.skipped, "broken": found.broken,
              "broken_count": found.broken_count, "exchanges": found.exchanges}
    target = Path(path)
    partial = target.with_name(target.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps(header).encode() + b"\n")
            for name in COLUMNS:
                getattr(found, name).tofile(f)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
