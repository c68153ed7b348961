"""A wrong base URL is a setup error: exit 2 and one line saying so, with the hint, before
anything is judged; not dozens of product failures (before: 49 R4-STATUS failures, exit 1, each
"HTTP 404: <?xml version=...", the hint last)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from faulty import serve_fault

from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.judge.sending import check_service
from harness.traffic.exchange import HttpRequest, HttpResponse

HARNESS = [sys.executable, "-m", "harness"]
PAGE = (b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html><head><title>The '
        b"resource cannot be found.</title></head><body>404</body></html>")


def _not_found(contract: Contract, request: HttpRequest) -> HttpResponse:
    """A web server with nothing of the service: 404 and an HTML page for every path."""
    return HttpResponse(404, (("Content-Type", "text/html; charset=utf-8"),), PAGE)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], capture_output=True, text=True, timeout=300,
                          check=False, cwd=tmp_path)


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def test_certify_of_a_wrong_base_url_exits_2_with_one_line(tmp_path: Path) -> None:
    with serve_fault(_not_found) as url:
        done = _run(tmp_path, "certify", "--target", f"{url}/School", "--no-html",
                    "--report-dir", str(tmp_path / "reports"))
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = _lines(done)
    assert f"{url}/School is not the service" in line and "404 or an HTML page" in line
    assert "the base URL of the folder holding its .asmx endpoints" in line
    assert not (tmp_path / "reports" / "allure-results").exists()  # nothing was judged


def test_every_command_that_sends_says_it_once(tmp_path: Path, reference_url: str) -> None:
    with serve_fault(_not_found) as url:
        runs = {"diff": _run(tmp_path, "diff", "--primary", reference_url, "--candidate", url),
                "probe": _run(tmp_path, "probe", "--target", url, "--json",
                              str(tmp_path / "p.json")),
                "replay": _run(tmp_path, "replay", str(Path(__file__).parents[1] / "recordings"
                                                       / "sample-all-bindings.jsonl"),
                               "--target", url, "--quiet")}
    for command, done in runs.items():
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        (line,) = _lines(done)
        assert f"{url} is not the service" in line, (command, line)


def test_a_service_missing_some_bindings_is_judged_not_refused(tmp_path: Path) -> None:
    """Only every call failing makes a wrong target: a service that serves SOAP and answers
    GET and POST with 404 is judged (its failures are the product's)."""
    def soap_only(contract: Contract, request: HttpRequest) -> HttpResponse:
        if request.method == "GET" or "x-www-form-urlencoded" in (request.content_type or ""):
            return _not_found(contract, request)
        from harness.reference.app import answer

        return answer(contract, request)

    with serve_fault(soap_only) as url:
        done = _run(tmp_path, "certify", "--target", url, "--no-html",
                    "--report-dir", str(tmp_path / "reports"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "HTTP GET and HTTP POST not served: 404 on every call" in done.stdout


def test_the_real_asmx_under_a_wrong_prefix_is_named_with_its_root(tmp_path: Path,
                                                                  asmx_url: str) -> None:
    """Interop: the real ASMX at the root, asked under /School: the line says where it is."""
    done = _run(tmp_path, "certify", "--target", f"{asmx_url}/School", "--no-html",
                "--report-dir", str(tmp_path / "reports"))
    assert done.returncode == 2
    (line,) = _lines(done)
    assert line.endswith(f"{asmx_url}/AuthCodeSending.asmx answers: the base URL is "
                         f"{asmx_url}?")


STACKS = ["asmx_url", "asmx_customerrors_url", "asmx_hardened_url", "spyne_url",
          "node_soap_url", "reference_url"]


@pytest.mark.parametrize("stack", STACKS)
def test_the_check_tells_each_stack_from_a_wrong_base_url_and_runs_no_operation(
        stack: str, request: pytest.FixtureRequest, contract: Contract) -> None:
    """The check sends the ?WSDL of the selected operation's endpoint, then a call of an
    operation no service has over each selected binding, until an answer is not 404/HTML.
    Stock and customErrors ASMX, spyne, Node's soap and the reference answer the ?WSDL; the
    hardened ASMX (no Documentation protocol) answers it with an HTML error page (500) and
    the call with a Client fault (SOAP) or a text/plain 500 (HTTP GET). Under a wrong prefix,
    each answers every request with 404 (HTML on ASMX), and the line names the root."""
    url = request.getfixturevalue(stack)
    for chosen in (Selection(), Selection.parse(contract, ["GetTokenDevice"], ["HTTP GET"])):
        assert check_service(url, contract, chosen).wrong is None, (stack, chosen)
    found = check_service(f"{url}/School", contract,
                          Selection.parse(contract, ["GetTokenDevice"], ["HTTP GET"]))
    if stack == "reference_url":  # it serves its endpoints under any prefix
        assert found.wrong is None
        return
    assert found.wrong is not None and found.sent == 2, found
    assert found.wrong.endswith(f"{url}/PushNotificationMobile.asmx answers: the base URL "
                                f"is {url}?"), found.wrong
    assert "(its ?WSDL, a call of an operation no service has over HTTP GET)" in found.wrong
