"""Replay judges the target against the recording, not against success: a failed call the
recording holds and the target gives again is no failure; a target that answers otherwise is a
named difference; service descriptions are counted and not sent. Against the reference on
loopback, through ``check_replayed`` (the one judgement replay and load share) and the command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from traffic import BASE, clean_exchanges, exchange, request, write_recording

from harness.contract.bindings import Binding, FaultCode, build_fault, build_request
from harness.contract.model import Contract, sample_arguments
from harness.judge.findings import Verdict
from harness.judge.profiles import Profile, Severity
from harness.replay import check_replayed, replay
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse

HARNESS = [sys.executable, "-m", "harness"]


def _soap11_as_soap12(contract: Contract) -> HttpRequest:
    """A SOAP 1.1 envelope sent as application/soap+xml: ASMX answers 415."""
    return request(contract, "AuthCode", Binding.SOAP11).with_header("SOAPAction", None) \
        .with_header("Content-Type", "application/soap+xml; charset=utf-8")


def _non_integer(contract: Contract) -> HttpRequest:
    op = contract.operation("LogoutFromSchool")
    return build_request(contract, op, sample_arguments(op) | {"id_row_central": "x1"},
                         Binding.SOAP12, BASE)


def _server_error() -> HttpResponse:
    return HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),),
                        b"System.Exception: down for maintenance", "Internal Server Error")


def _failures(findings) -> list[tuple[str, str | None, str | None]]:
    return [(f.rule, f.operation, f.binding) for f in findings if f.verdict is Verdict.FAILED]


def test_recorded_error_given_again_is_no_failure(contract: Contract) -> None:
    for req in (_soap11_as_soap12(contract), _non_integer(contract)):
        recorded = exchange(contract, req)
        assert recorded.response is not None and recorded.response.status >= 400
        # The same answer again, as the target gives it: nothing fails, the comparison passes.
        replayed = check_replayed(recorded, recorded.response, contract)
        assert _failures(replayed.findings) == [], replayed.findings


def test_recorded_failed_call_of_a_valid_request_given_again_is_no_failure(
        contract: Contract) -> None:
    req = request(contract, "GetTokenDevice", Binding.HTTP_GET)
    recorded = Exchange(req, _server_error())  # the deployment failed when it was recorded
    replayed = check_replayed(recorded, _server_error(), contract)
    assert _failures(replayed.findings) == []
    status = [f for f in replayed.judged if f.rule == "R4-STATUS"]
    assert [f.verdict for f in status] == [Verdict.NOT_APPLICABLE]
    assert "the recording holds a failed call (HTTP 500)" in status[0].message


def test_success_where_the_recording_failed_is_a_named_difference(contract: Contract) -> None:
    req = request(contract, "GetTokenDevice", Binding.HTTP_GET)
    recorded = Exchange(req, _server_error())
    now = exchange(contract, req).response
    assert now is not None and now.status == 200
    replayed = check_replayed(recorded, now, contract)
    failures = [f for f in replayed.findings if f.verdict is Verdict.FAILED]
    assert ("REPLAY-STATUS", "GetTokenDevice", "HTTP GET") in _failures(failures)
    status = next(f for f in failures if f.rule == "REPLAY-STATUS")
    assert (status.expected, status.actual) == (
        "HTTP 500: System.Exception: down for maintenance",
        "HTTP 200: an XML <string> document")
    assert status.extra["summary"] == "a result instead of HTTP 500"
    assert len(failures) == 1  # the one difference: no Content-Type or body besides
    assert not [f for f in replayed.judged if f.verdict is Verdict.FAILED]


@pytest.mark.parametrize("binding", [Binding.SOAP11, Binding.SOAP12, Binding.HTTP_GET])
def test_failure_where_the_recording_succeeded_is_one_failure_with_its_cause(
        contract: Contract, binding: Binding) -> None:
    recorded = exchange(contract, request(contract, "GetTokenDevice", binding))
    now = build_fault(binding, FaultCode.SERVER,
                      "Object reference not set to an instance of an object.\n   at X.Y()")
    replayed = check_replayed(recorded, now, contract)
    # R4-STATUS fails the call with its cause; the comparison does not say it again
    assert _failures(replayed.findings) == [("R4-STATUS", "GetTokenDevice", binding.label)]
    status = next(f for f in replayed.judged if f.rule == "R4-STATUS")
    code = "Receiver" if binding is Binding.SOAP12 else "Server"
    if binding.is_soap:
        assert status.actual == f"HTTP 500: {code} fault: Object reference not set to an " \
            "instance of an object."
    assert {f.rule: f.verdict for f in replayed.compared} == dict.fromkeys(
        ("REPLAY-STATUS", "REPLAY-CONTENT-TYPE", "REPLAY-BODY"), Verdict.NOT_APPLICABLE)
    assert all(f.client is None for f in replayed.findings)  # the server's doing


def test_fault_where_r4_does_not_apply_is_the_replay_failure_with_its_cause(
        contract: Contract) -> None:
    """Without R4-STATUS (turned off), REPLAY-STATUS is the one failure and names the fault."""
    recorded = exchange(contract, request(contract, "GetTokenDevice", Binding.SOAP11))
    now = build_fault(Binding.SOAP11, FaultCode.SERVER, "Object reference not set\n at X")
    replayed = check_replayed(recorded, now, contract, profile=Profile(
        "spec", overrides=(("R4-STATUS", Severity.OFF),)))
    compared = [f for f in replayed.compared if f.verdict is Verdict.FAILED]
    assert [f.rule for f in compared] == ["REPLAY-STATUS"]
    assert compared[0].extra["summary"] == \
        "Server fault instead of a result: Object reference not set"
    assert compared[0].actual == "HTTP 500: Server fault: Object reference not set"


def _descriptions(reference_url: str) -> list[Exchange]:
    """?WSDL, ?disco and the help page as fetched from the reference, addresses and all."""
    fetched = []
    with httpx.Client(timeout=30) as http:
        for suffix in ("?WSDL", "?disco", ""):
            url = f"{reference_url}/AuthCodeSending.asmx{suffix}"
            answer = http.get(url)
            fetched.append(Exchange(HttpRequest("GET", url, (("Host", "x"),)), HttpResponse(
                answer.status_code, tuple(answer.headers.items()), answer.content)))
    return fetched


def test_replay_command_recorded_errors_and_descriptions_exit_0(
        contract: Contract, reference_url: str, tmp_path: Path) -> None:
    errors = [exchange(contract, _soap11_as_soap12(contract)),
              exchange(contract, _non_integer(contract))]
    path = write_recording(tmp_path / "r.jsonl", [*_descriptions(reference_url), *errors,
                                                  *clean_exchanges(contract)])
    done = subprocess.run([*HARNESS, "replay", str(path), "--target", reference_url, "--quiet",
                           "--json", str(tmp_path / "out.json")], capture_output=True,
                          text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "service descriptions (skipped: not sent): 1 WSDL, 1 disco, 1 help page" \
        in done.stdout
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["service_descriptions"] == {"WSDL": 1, "disco": 1, "help page": 1}
    assert data["exchanges"] == 2 + 32  # calls sent; the 3 descriptions apart, not sent
    assert data["not_sent"] == {"service_descriptions": 3}


def test_descriptions_are_not_sent(contract: Contract, tmp_path: Path) -> None:
    from harness.reference.server import running

    hits: list[str] = []

    async def counting(scope, receive, send) -> None:  # an ASGI app that counts requests
        if scope["type"] != "http":
            return
        hits.append(scope["path"])
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    url = "http://127.0.0.1:9/AuthCodeSending.asmx?WSDL"
    wsdl = Exchange(HttpRequest("GET", url, (("Host", "x"),)),
                    HttpResponse(200, (("Content-Type", "text/xml"),), b"<definitions/>"))
    path = write_recording(tmp_path / "r.jsonl", [wsdl, wsdl])
    with running(app=counting) as target:
        report = replay([path], contract, target, concurrency=1)
    assert [h for h in hits if "asmx" in h.lower()] == []
    assert report.passed and dict(report.descriptions) == {"WSDL": 2}
    assert report.counts[Verdict.FAILED] == 0 and report.exchanges == 0  # no call sent
    assert report.not_sent == {"service_descriptions": 2}


def test_transport_failure_is_attributed(contract: Contract) -> None:
    from harness.errors import TargetUnreachable
    from harness.replay import transport_failure

    ex = exchange(contract, request(contract, "AuthCode", Binding.SOAP12))
    found = transport_failure(replace(ex, index=3), TargetUnreachable("refused"), contract)
    assert (found.rule, found.operation, found.binding) == ("REPLAY-TRANSPORT", "AuthCode",
                                                            "SOAP 1.2")


# -- against the real ASMX runtime (interop lane) ----------------------------------------------


def _asmx_refusals(contract: Contract, base: str) -> list[HttpRequest]:
    """Requests stock ASP.NET refuses, each for one true reason, plus the help page."""
    def at(req: HttpRequest) -> HttpRequest:
        return replace(req, url=req.url.replace(BASE, base)).with_header(
            "Host", base.split("//", 1)[1])

    form = at(request(contract, "SendMarkNotes", Binding.HTTP_POST))
    misspelled = at(request(contract, "SendMarkNotes", Binding.HTTP_GET))
    malformed = at(request(contract, "GetTokenDevice", Binding.SOAP11))
    return [at(_soap11_as_soap12(contract)),                                  # 415
            replace(malformed, body=b"<oops").with_header("Content-Length", "5"),  # 400
            form.with_header("Content-Type", "text/plain"),                   # 500
            replace(misspelled, url=misspelled.url.replace("/SendMarkNotes?", "/SendMarkNote?")),
            HttpRequest("GET", f"{base}/AuthCodeSending.asmx?WSDL",
                        (("Host", base.split("//", 1)[1]),))]


@pytest.mark.interop
def test_real_asmx_refusals_lint_true_and_replay_clean(contract: Contract, asmx_url: str,
                                                       tmp_path: Path) -> None:
    from harness.judge.lint import lint
    from harness.traffic.send import client, send

    with client() as http:
        recorded = [Exchange(req, send(http, req)) for req in _asmx_refusals(contract, asmx_url)]
    assert [e.response.status for e in recorded] == [415, 400, 500, 500, 200]
    path = write_recording(tmp_path / "r.jsonl", recorded)
    kept = list(lint([path], contract).kept())
    # stock ASP.NET shows stack traces to a local client: the passive SEC-LEAK warns, never fails
    leaks = [f for f in kept if f["rule"] == "SEC-LEAK"]
    assert leaks and all(f["verdict"] == "warning" for f in leaks)
    found = sorted((f["rule"], f["operation"], f["binding"]) for f in kept
                   if f["rule"] != "SEC-LEAK")
    assert found == [("BIND-ENVELOPE", "AuthCode", "SOAP 1.2"),
                     ("BIND-ENVELOPE", "GetTokenDevice", "SOAP 1.1"),
                     ("BIND-METHOD-PATH", "SendMarkNotes", "HTTP GET"),
                     ("BIND-REQUEST-CONTENT-TYPE", "SendMarkNotes", "HTTP POST")]
    report = replay([path], contract, asmx_url, concurrency=1)
    assert report.passed, list(report.kept())
    assert dict(report.descriptions) == {"WSDL": 1}
