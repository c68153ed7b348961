"""A port out of range, on any command that listens or connects, is one line on stderr and
exit 2 (issue 35 item 5): ``serve --port -1`` or ``--port 100000`` was an OverflowError
traceback from bind(), and a target URL with port 99999 a ValueError traceback from urllib.

Called in-process: every refusal here comes before anything listens or connects."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

HARNESS = str(Path(sys.executable).parent / "harness")
SAMPLE = str(Path(__file__).resolve().parents[1] / "recordings" / "sample-all-bindings.jsonl")
BAD_PORTS = ["-1", "65536", "100000", "9" * 30]
BAD_URLS = ["http://127.0.0.1:99999", "http://127.0.0.1:-1", "https://127.0.0.1:65536/School"]


def refused(argv: list[str]) -> str:
    """The one line ``harness ARGV`` says on stderr as it exits 2."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1, (argv, code, err.getvalue())
    assert "Traceback" not in err.getvalue() and out.getvalue() == ""
    return lines[0]


@pytest.mark.parametrize("port", BAD_PORTS)
@pytest.mark.parametrize("argv", [
    ["serve", "--port"],
    ["mock", SAMPLE, "--port"],
    ["capture", "--upstream", "http://127.0.0.1:9", "-o", "out.jsonl", "--web-port"],
    ["shadow", "--primary", "http://127.0.0.1:9", "--candidate", "http://127.0.0.1:9",
     "--live-port"],
    ["load", SAMPLE, "--master", "--master-port"],
    ["load", SAMPLE, "--web-port"],
], ids=lambda argv: " ".join(a for a in argv if a != SAMPLE))
def test_a_port_out_of_range_is_refused_by_the_options(argv: list[str], port: str) -> None:
    line = refused([*argv, port])
    assert f"{argv[-1]}: {port} is not a port (" in line and "to 65535)" in line


@pytest.mark.parametrize("listen", ["127.0.0.1:100000", "-1", "[::1]:65536"])
@pytest.mark.parametrize("command", [
    ["capture", "--upstream", "http://127.0.0.1:9", "-o", "out.jsonl"],
    ["shadow", "--primary", "http://127.0.0.1:9", "--candidate", "http://127.0.0.1:9"],
], ids=lambda argv: argv[0])
def test_a_listen_address_out_of_range_is_refused(command: list[str], listen: str) -> None:
    assert f"--listen {listen!r} is not HOST:PORT" in refused([*command, "--listen", listen])


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("argv", [
    ["certify", "--operation", "GetTokenDevice", "--target"],
    ["replay", SAMPLE, "--target"],
    ["probe", "--target"],
    ["load", SAMPLE, "--target"],
    ["call", "GetTokenDevice", "id=1", "--target"],
    ["diff", "--candidate", "http://127.0.0.1:9", "--primary"],
    ["shadow", "--candidate", "http://127.0.0.1:9", "--listen", "0", "--primary"],
    ["contract", "--wsdl"],
], ids=lambda argv: " ".join(a for a in argv if a != SAMPLE))
def test_a_url_with_a_port_out_of_range_is_refused(argv: list[str], url: str) -> None:
    assert "has a bad port (1 to 65535)" in refused([*argv, url])


def test_the_mock_refuses_a_fallback_with_a_port_out_of_range() -> None:
    """In a child process: a mock that took the URL served on (forwarding every call to a
    port that cannot exist)."""
    done = subprocess.run([HARNESS, "mock", "--port", "0", "--fallback",
                           "http://127.0.0.1:70000"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "'http://127.0.0.1:70000' has a bad port (1 to 65535)" in done.stderr
