"""Opening a report file: its folder created, a bad path one line (UsageError), not a
traceback; and text made safe for XML 1.0 (a recorded body may hold any character)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any

from harness.errors import UsageError

_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold."""
    return _XML_UNSAFE.sub("\ufffd", text)


class open_output:
    """Open an output file, creating its folder; a bad path is a UsageError."""

    def __init__(self, path: str | Path, binary: bool = False) -> None:
        self.path, self.binary = Path(path), binary

    def __enter__(self) -> IO[Any]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = self.path.open("wb" if self.binary else "w",
                                         **({} if self.binary else {"encoding": "utf-8"}))
        except OSError as exc:
            raise UsageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self.handle

    def __exit__(self, *exc: object) -> None:
        self.handle.close()
