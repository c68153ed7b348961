"""``harness capture`` as a child process: what the sample generator, the tests and the benchmark
drive, so they exercise the real command, not a stand-in."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

_LISTENING = re.compile(r"listening on (http://[\d.:\[\]a-z]+)")


class CaptureProcess:
    """Runs ``harness capture --listen 127.0.0.1:0 ...``; ``url`` is where it listens.

    Use as a context manager; ``stop()`` sends SIGINT and returns (exit status, stdout, stderr).
    """

    def __init__(self, upstream: str | None, out: str | Path, *extra: str,
                 timeout: float = 30) -> None:
        named = ["--upstream", upstream] if upstream else []  # None: regular mode, any host
        self.args = [sys.executable, "-m", "harness", "capture", *named,
                     "--listen", "127.0.0.1:0", "--out", str(out), *extra]
        self.timeout = timeout
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self._stderr: list[str] = []
        self._stdout: list[str] = []
        self._readers: list[threading.Thread] = []

    def start(self) -> CaptureProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, preexec_fn=_default_signals)
        assert self.proc.stderr is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self._stderr.append(line)
            found = _LISTENING.search(line)
            if found:
                self.url = found.group(1)
                # Drain both pipes from now on: a full pipe would stall the proxy.
                self._readers = [threading.Thread(target=_drain, args=(stream, sink), daemon=True)
                                 for stream, sink in ((self.proc.stdout, self._stdout),
                                                      (self.proc.stderr, self._stderr))]
                for reader in self._readers:
                    reader.start()
                return self
        code, _out, err = self.stop()
        raise RuntimeError(f"harness capture did not start (exit {code}): {err.strip()}")

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str, str]:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._readers:
            for reader in self._readers:
                reader.join(timeout=self.timeout)
        else:
            out, err = self.proc.communicate()
            self._stdout.append(out)
            self._stderr.append(err)
        return self.proc.returncode, "".join(self._stdout), "".join(self._stderr)

    def kill(self) -> None:
        """SIGKILL: the crash case; the recording must survive it. Returns once the recording
        writer (the proxy's child, which writes what it was handed and then exits) is done."""
        assert self.proc is not None
        writers = _children(self.proc.pid)
        self.proc.kill()
        self.proc.wait()
        deadline = time.monotonic() + self.timeout
        while any(_alive(pid) for pid in writers) and time.monotonic() < deadline:
            time.sleep(0.01)

    def __enter__(self) -> CaptureProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()


def run_harness(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` as a child process."""
    done = subprocess.run([sys.executable, "-m", "harness", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"harness {' '.join(map(str, args))} failed: {done.stderr.strip()}")
    return done



def _default_signals() -> None:
    """In the child: SIGINT and SIGTERM as a terminal's foreground job has them (a background
    job of a non-interactive shell starts with SIGINT ignored, and would pass that on)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _drain(stream, sink: list[str]) -> None:
    for line in stream:
        sink.append(line)


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(pid):  # the parent's pid
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """True until ``pid`` has exited (a zombie nobody reaps counts as exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
