"""School Mobile on third-party SOAP stacks and on a hardened ASMX, as session fixtures.

Each fixture starts its server on a free loopback port, waits (bounded) until it is ready,
yields the base URL and stops it at the end of the session: also when a test fails or the run
is interrupted (pytest tears session fixtures down on Ctrl-C), and, should pytest itself die,
the servers get SIGTERM from the kernel (PR_SET_PDEATHSIG).

- ``spyne_url``: tests/services/spyne (Python spyne 2.14, wsgiref), a dev dependency: it must
  start wherever the tests run.
- ``node_soap_url``: tests/services/node_soap (Node's soap server), skipped with one line where
  Node or tools/node_modules/soap is missing.
- ``pysimplesoap_url``: tests/services/pysimplesoap (Python PySimpleSOAP 1.16 on http.server,
  SOAP only), a dev dependency: it must start wherever the tests run.
- ``asmx_hardened_url``: the School Mobile .asmx files of HARNESS_ASMX_HOME with
  tests/services/asmx_hardened/web.config (Documentation protocol removed, customErrors On) on
  the real ASMX runtime; the interop lane (skipped without HARNESS_ASMX_HOME).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from asmx_runtime import real_runtime

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ROOT / "tests" / "services"
NODE_MODULES = ROOT / "tools" / "node_modules"
READY_PREFIX = "listening on "
START_TIMEOUT = 60.0  # seconds; a start takes about 1 s here, far more on a loaded machine


class StackDidNotStart(RuntimeError):
    pass


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the process that started it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def served(argv: Sequence[str], log_dir: Path, *, env: dict[str, str] | None = None,
           timeout: float = START_TIMEOUT) -> Iterator[str]:
    """Runs ``argv``, a server that prints ``listening on URL`` when it is ready; yields URL.

    Its stdout and stderr go to files in ``log_dir`` (a pipe nobody reads could fill and block
    the server). Raises StackDidNotStart, with the end of its stderr, when it exits early or is
    not ready within ``timeout`` seconds."""
    out, err = log_dir / "stdout.log", log_dir / "stderr.log"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=stdout,
                                   stderr=stderr, env=env, cwd=ROOT,
                                   preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    try:
        yield _wait_ready(process, out, err, timeout)
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen, out: Path, err: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith(READY_PREFIX):
                return line[len(READY_PREFIX):].strip().rstrip("/")
        if process.poll() is not None:
            raise StackDidNotStart(f"{process.args[0]} exited with {process.returncode}: "
                                   f"{_tail(err)}")
        time.sleep(0.05)
    raise StackDidNotStart(f"{process.args[0]} not ready after {timeout:.0f} s: {_tail(err)}")


def _tail(path: Path, size: int = 2000) -> str:
    return path.read_text(errors="replace")[-size:].strip() or "(nothing on stderr)"


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def spyne_argv() -> list[str]:
    return [sys.executable, str(SERVICES / "spyne" / "school_mobile.py"), "--port", "0"]


def pysimplesoap_argv() -> list[str]:
    return [sys.executable, str(SERVICES / "pysimplesoap" / "school_mobile.py"), "--port", "0"]


def node_soap_argv() -> list[str]:
    return ["node", str(SERVICES / "node_soap" / "server.js"), "0"]


def node_soap_env() -> dict[str, str]:
    return {**os.environ, "NODE_PATH": str(NODE_MODULES)}


def node_soap_missing() -> str | None:
    """Why the Node soap stack cannot start here, in one line, or None."""
    if shutil.which("node") is None:
        return "node_soap stack skipped: Node.js not found (install Node 20+, run scripts/setup)"
    if not (NODE_MODULES / "soap").is_dir():
        return "node_soap stack skipped: tools/node_modules/soap missing (run scripts/setup)"
    return None


def hardened_service(home: Path, folder: Path) -> Path:
    """A folder holding the .asmx files of ``home``/service (linked, not copied: start.sh copies
    what they point at) and the hardened web.config."""
    folder.mkdir(parents=True, exist_ok=True)
    for asmx in sorted((home / "service").glob("*.asmx")):
        (folder / asmx.name).symlink_to(asmx)
    shutil.copyfile(SERVICES / "asmx_hardened" / "web.config", folder / "web.config")
    return folder


@pytest.fixture(scope="session")
def spyne_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """School Mobile on spyne 2.14 (SOAP 1.1 + WSDL, SOAP 1.2, HTTP GET/POST via HttpRpc)."""
    try:
        with served(spyne_argv(), tmp_path_factory.mktemp("spyne")) as url:
            yield url
    except StackDidNotStart as e:
        pytest.fail(f"the spyne stack did not start (a dev dependency: run scripts/setup): {e}")


@pytest.fixture(scope="session")
def pysimplesoap_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """School Mobile on PySimpleSOAP 1.16 (SOAP 1.1 and 1.2 answered in kind, no GET/POST)."""
    try:
        with served(pysimplesoap_argv(), tmp_path_factory.mktemp("pysimplesoap")) as url:
            yield url
    except StackDidNotStart as e:
        pytest.fail(f"the pysimplesoap stack did not start (a dev dependency: run "
                    f"scripts/setup): {e}")


@pytest.fixture(scope="session")
def node_soap_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """School Mobile on Node's soap server (SOAP only; SOAP 1.2 answered in a 1.1 envelope)."""
    reason = node_soap_missing()
    if reason:
        pytest.skip(reason)
    try:
        with served(node_soap_argv(), tmp_path_factory.mktemp("node_soap"),
                    env=node_soap_env()) as url:
            yield url
    except StackDidNotStart as e:
        pytest.fail(f"the node_soap stack did not start: {e}")


@pytest.fixture(scope="session")
def asmx_hardened_url(asmx_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real ASMX runtime hardened: no Documentation protocol (no ?WSDL, no help page),
    customErrors On; all four bindings on."""
    base = tmp_path_factory.mktemp("asmx_hardened")
    service = hardened_service(asmx_home, base / "service")
    with real_runtime(asmx_home, service, base / "work") as url:
        yield url
