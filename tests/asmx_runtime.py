"""A folder of .asmx files on the real ASMX runtime (../shared/asmx), for interop tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def real_runtime(home: Path, service: Path, workdir: Path) -> Iterator[str]:
    """``service`` (a folder of .asmx files and web.config) on the real ASMX runtime whose
    start.sh/stop.sh are in ``home``; yields its base URL."""
    env = {**os.environ, "ASMX_SERVICE": str(service)}
    done = subprocess.run([str(home / "start.sh"), str(free_port()), "default", str(workdir)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    url = next((line.split("=", 1)[1] for line in done.stdout.splitlines()
                if line.startswith("ASMX_URL=")), None)
    try:
        assert done.returncode == 0 and url, done.stderr[-2000:]
        yield url
    finally:
        subprocess.run([str(home / "stop.sh"), str(workdir)], capture_output=True, timeout=120,
                       check=False)
