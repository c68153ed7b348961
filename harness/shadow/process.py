"""``harness shadow`` as a child process, for the tests and the benchmark (capture's
``CaptureProcess``: ``url`` is where the proxy listens, ``stop()`` sends SIGINT)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from harness.capture.process import CaptureProcess

_LIVE = re.compile(r"live view on (http://\S+)")


class ShadowProcess(CaptureProcess):
    """``harness shadow --listen 127.0.0.1:0 --live-port 0 ...`` in front of ``primary``."""

    def __init__(self, primary: str, candidate: str, out: str | Path, *extra: str,
                 secondary: str | None = None, timeout: float = 60) -> None:
        super().__init__(primary, out, timeout=timeout)
        self.args = [sys.executable, "-m", "harness", "shadow", "--primary", primary,
                     "--candidate", candidate,
                     *(["--secondary", secondary] if secondary else []),
                     "--listen", "127.0.0.1:0", "--live-port", "0", "--out", str(out),
                     *extra]

    @property
    def live_url(self) -> str:
        """The live view's URL with its token (printed by the worker as it starts)."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            found = _LIVE.search("".join(self._stderr))
            if found:
                return found.group(1)
            time.sleep(0.05)
        raise RuntimeError("harness shadow printed no live view URL")
