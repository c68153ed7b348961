"""The ``harness`` command as a user meets it: help with examples, ``harness serve`` as a real
process answering curl, and one-line errors with exit status 2."""

from __future__ import annotations

import hashlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.contract.bindings import Binding, build_request
from harness.contract.model import sample_arguments, school_mobile

HARNESS = str(Path(sys.executable).parent / "harness")


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HARNESS, *args], capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "error" in lines[0] and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"]], ids=" ".join)
def test_help_exits_0_and_shows_an_example(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 0, result.stderr
    assert "Example:" in result.stdout
    assert "harness serve --port 8000" in result.stdout


def test_top_level_help_lists_serve() -> None:
    assert "serve" in run("--help").stdout


@pytest.mark.parametrize("args", [
    ["serve", "--bogus"],
    ["serve", "--port", "not-a-number"],
    ["--bogus"],
    [],
    ["no-such-command"],
], ids=lambda a: " ".join(a) or "no arguments")
def test_wrong_usage_is_one_line_and_exit_2(args: list[str]) -> None:
    assert_one_line_error(run(*args))


def test_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("serve", "--port", str(port))
    assert_one_line_error(result)
    assert str(port) in result.stderr


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``harness serve --port 0`` as a real subprocess; its first line names the bound URL."""
    proc = subprocess.Popen([HARNESS, "serve", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        announced = proc.stderr.readline() if proc.stderr else ""
        match = re.search(r"http://127\.0\.0\.1:(\d+)", announced)
        assert match, f"no URL announced: {announced!r}"
        port = int(match.group(1))
        assert port != 0
        wait_for_port(proc, port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if it hangs
            proc.kill()
            proc.wait()


def wait_for_port(proc: subprocess.Popen, port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"harness serve exited {proc.returncode}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"harness serve did not listen on {port} within {seconds} s")


def curl(*args: str) -> subprocess.CompletedProcess[str]:
    """curl printing the body, then a line with the status and the Content-Type."""
    return subprocess.run(["curl", "-sS", "--max-time", "10", "-w",
                           "\n%{http_code} %{content_type}", *args],
                          capture_output=True, text=True, timeout=20, check=True)


def test_serve_answers_curl_get(served: str) -> None:
    op = school_mobile().operation("GetTokenDevice")
    result = curl(f"{served}{op.endpoint}/{op.name}?id=7")
    body, _, status_line = result.stdout.rpartition("\n")
    assert status_line == "200 text/xml; charset=utf-8"
    assert f">{hashlib.sha256(b'7').hexdigest()}</string>" in body


@pytest.mark.parametrize("binding", list(Binding), ids=lambda b: b.value)
def test_serve_answers_curl_on_every_binding(served: str, binding: Binding) -> None:
    contract = school_mobile()
    op = contract.operations[0]
    request = build_request(contract, op, sample_arguments(op, 1), binding, served)
    headers = [arg for name, value in request.headers
               if name.lower() not in ("host", "content-length")
               for arg in ("-H", f"{name}: {value}")]
    data = ["--data-binary", request.body.decode("utf-8")] if request.body else []
    result = curl("-X", request.method, *headers, *data, request.url)
    status = result.stdout.rpartition("\n")[2]
    assert status.split(" ", 1)[0] == "200", result.stdout


def test_serve_wsdl_with_curl(served: str) -> None:
    op = school_mobile().operations[0]
    result = curl(f"{served}{op.endpoint}?WSDL")
    body, _, status = result.stdout.rpartition("\n")
    assert status.startswith("200 text/xml")
    assert "wsdl:definitions" in body and op.name in body


@pytest.mark.parametrize("command", ["lint", "export", "serve"])
def test_commands_that_send_nothing_start_without_the_http_client(command: str) -> None:
    """Building any command's options reads the sending defaults without importing httpx
    (~0.4 s of every start, and of every lint worker's)."""
    code = ("import contextlib, sys\nfrom harness.cli import main\n"
            f"with contextlib.suppress(SystemExit):\n    main([{command!r}, '--help'])\n"
            "print('httpx' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout[-500:] + done.stderr


@pytest.mark.parametrize(("args", "meant"), [
    (["certfy"], "certify"),
    (["certify", "--taget", "http://127.0.0.1:9"], "--target"),
    (["load", "--taget=http://127.0.0.1:9", "x.jsonl"], "--target"),
    (["replay", "--concurency", "2"], "--concurrency"),  # also misses RECORDING: still said
    (["certify", "--profile", "spc"], "spec"),
], ids=" ".join)
def test_a_mistyped_command_or_flag_says_what_was_meant(args: list[str], meant: str) -> None:
    result = run(*args)
    assert_one_line_error(result)
    assert result.stderr.rstrip().endswith(f"(did you mean {meant}?)"), result.stderr


@pytest.mark.parametrize("args", [["zzzzzz"], ["certify", "--zzzzzz"]], ids=" ".join)
def test_nothing_close_suggests_nothing(args: list[str]) -> None:
    result = run(*args)
    assert_one_line_error(result)
    assert "did you mean" not in result.stderr
