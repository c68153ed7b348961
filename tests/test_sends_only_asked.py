"""Nothing is sent that the user did not ask for (issue 30 item 1).

A counting server (tests/counting.py: the reference, counting what each request names and
what it runs) sees every request of certify, replay, diff, probe and load (a master and two
workers) run with ``--operation GetTokenDevice``: no request names or runs another operation,
the check that the target is the service included (before: AuthCode, which texts a code to a
phone, over all four bindings plus AuthCodeSending.asmx?WSDL, once per load process; probe's
plain call between cases was LogoutFromSchool). A replay sends the recorded requests and,
besides them, only the check's ?WSDL; a replay against a ``harness mock`` of its own
recording leaves nothing unmatched there (the mock exits 0).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from asmx_runtime import free_port
from counting import Counting, counting
from test_mock import Served
from traffic import clean_exchanges, exchange, write_recording

from harness.cli import main
from harness.contract.model import Contract, school_mobile
from harness.traffic.exchange import HttpRequest

HARNESS = [sys.executable, "-m", "harness"]
ONLY = ("--operation", "GetTokenDevice")
#: The one description a run of GetTokenDevice asks before it starts: its endpoint's ?WSDL
#: (the service check, which also names the namespace).
CHECK = "/PushNotificationMobile.asmx?WSDL"


@pytest.fixture(scope="module")
def server() -> Iterator[Counting]:
    with counting() as served:
        yield served


@pytest.fixture(scope="module")
def recording(contract: Contract, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every operation over every binding (32 calls) and the ?WSDL of two endpoints, as a
    capture of a client that reads the WSDL first would hold them."""
    wsdl = [exchange(contract, HttpRequest("GET", f"http://school.example:8080{e}?WSDL",
                                           (("Host", "school.example:8080"),)))
            for e in ("/AuthCodeSending.asmx", "/PushNotificationMobile.asmx")]
    path = tmp_path_factory.mktemp("unasked") / "day.jsonl"
    return write_recording(path, [*wsdl, *clean_exchanges(contract)])


def _named(request: HttpRequest, contract: Contract) -> set[str]:
    """The contract's operations a request names anywhere: its SOAPAction, the Content-Type's
    action, its path, its body (a stack that routes by the SOAPAction alone runs the operation
    it names, wherever it is sent)."""
    where = " ".join([request.target, *(v for _, v in request.headers),
                      request.body.decode("utf-8", "replace")])
    return {o.name for o in contract.operations if re.search(rf"\b{o.name}\b", where)}


def _only_token_device(server: Counting, checks: int = 1) -> None:
    counts = server.counts
    assert counts.operations() == {"GetTokenDevice"}, (counts.calls, counts.invoked)
    contract = school_mobile()
    naming = [(r.method, r.target, r.headers) for r in counts.requests
              if _named(r, contract) - {"GetTokenDevice"}]
    assert not naming, naming  # before: a SOAPAction naming AuthCode, at GetTokenDevice's endpoint
    assert counts.descriptions[CHECK] >= checks, counts.descriptions
    assert not {d for d in counts.descriptions if "PushNotificationMobile" not in d}, \
        counts.descriptions


def test_certify_invokes_only_the_selected_operation(server: Counting, tmp_path: Path) -> None:
    server.counts.clear()
    done = subprocess.run([*HARNESS, "certify", "--target", server.url, *ONLY, "--quiet",
                           "--no-html", "--report-dir", str(tmp_path)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    _only_token_device(server)


@pytest.mark.parametrize("command", ["replay", "diff", "probe"])
def test_replay_diff_and_probe_invoke_only_the_selected_operation(
        command: str, server: Counting, recording: Path, tmp_path: Path) -> None:
    server.counts.clear()
    argv = {"replay": ["replay", str(recording), "--target", server.url],
            "diff": ["diff", "--primary", server.url, "--candidate", server.url,
                     str(recording), "--allure-dir", ""],
            "probe": ["probe", "--target", server.url, "--max-requests", "40",
                      "--allure-dir", "", "--failures", str(tmp_path / "failing.jsonl")]}
    assert main([*argv[command], *ONLY, "--quiet"]) == 0
    _only_token_device(server, checks=2 if command == "diff" else 1)  # diff: each target's


def test_a_load_master_checks_once_and_its_workers_not_at_all(server: Counting,
                                                              recording: Path) -> None:
    """The workers are given the target too (as a config file shared with the master would):
    they still ask it nothing before the run."""
    server.counts.clear()
    port = str(free_port())
    common = [*HARNESS, "load", str(recording), *ONLY, "--quiet", "--target", server.url]
    workers = [subprocess.Popen([*common, "--worker", "--master-port", port],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for _ in range(2)]
    try:
        master = subprocess.run([*common, "--master", "--expect-workers", "2",
                                 "--master-port", port, "--rate", "50"],
                                capture_output=True, text=True, timeout=300, check=False)
        outputs = [w.communicate(timeout=60)[0] for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
    assert master.returncode == 0 and all(w.returncode == 0 for w in workers), \
        (master.stdout, master.stderr, outputs)
    _only_token_device(server)
    assert server.counts.descriptions == {CHECK: 1}  # the master's check, nothing else
    assert sum(server.counts.calls.values()) == 4  # each recorded GetTokenDevice call once


def test_a_replay_sends_the_recorded_calls_and_only_effect_free_checks(
        server: Counting, recording: Path, contract: Contract) -> None:
    server.counts.clear()
    assert main(["replay", str(recording), "--target", server.url, "--quiet"]) == 0
    recorded = sorted((e.request.method, e.request.target, e.request.body)
                      for e in clean_exchanges(contract))
    checks = [r for r in server.counts.requests if "?WSDL" in r.url]
    sent = sorted((r.method, r.target, r.body) for r in server.counts.requests
                  if "?WSDL" not in r.url)
    assert sent == recorded  # the 32 calls, each once; the recorded ?WSDL lines not sent
    assert [r.target for r in checks] == ["/AuthCodeSending.asmx?WSDL"]  # the check's


def test_a_replay_against_its_own_mock_leaves_nothing_unmatched(recording: Path,
                                                                tmp_path: Path) -> None:
    """The CI pattern docs/mock.md recommends: before, the check's 4 AuthCode calls were
    unmatched there, and the mock exited 1."""
    served = Served(str(recording), cwd=tmp_path)
    try:
        assert main(["replay", str(recording), "--target", served.url, *ONLY, "--quiet"]) == 0
    finally:
        code, out, err = served.stop()
    assert code == 0, out + err
    assert "unmatched" not in out, out


def test_another_operations_action_is_not_sent_when_every_other_operation_is_left_out(
        server: Counting, tmp_path: Path) -> None:
    """SendMarkNotes shares NotificationNotes.asmx with SendNotificationType, and ASMX runs the
    operation a SOAPAction names on the endpoint; a stack that routes by SOAPAction alone runs
    it wherever it is sent. With every other operation left out, certify and diff --errors send
    no SOAPAction naming one (before: AuthCode's, at the operation's own endpoint): certify
    judges the case not applicable."""
    server.counts.clear()
    report = tmp_path / "certify.json"
    done = subprocess.run([*HARNESS, "certify", "--target", server.url, "--operation",
                           "SendMarkNotes", "--rule", "ODD-SOAPACTION", "--quiet", "--no-html",
                           "--report-dir", str(tmp_path), "--json", str(report)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert main(["diff", "--primary", server.url, "--candidate", server.url, "--errors",
                 "--operation", "SendMarkNotes", "--allure-dir", "", "--quiet"]) == 0
    assert server.counts.operations() == {"SendMarkNotes"}, server.counts.invoked
    contract = school_mobile()
    assert not [(r.target, r.headers) for r in server.counts.requests
                if _named(r, contract) - {"SendMarkNotes"}]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["rules"]["ODD-SOAPACTION"]["not applicable"] == 2  # over SOAP 1.1 and 1.2
