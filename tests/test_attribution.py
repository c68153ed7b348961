"""Every finding is attributed, and service descriptions are traffic: a request that is not
exactly one operation x binding is judged as the one it most likely meant (the precise rule it
breaks fails there, "did you mean" when a name is a near miss); UNCLASSIFIED is left for
requests with no plausible target and says why; ?WSDL, ?disco and the help page are counted
by kind, judged by no rule. The recordings hold the reference's real answers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from traffic import BASE, clean_exchanges, exchange, request, write_recording

from harness.contract.bindings import Binding, classify
from harness.contract.model import Contract
from harness.errors import ClassificationError, ServiceDescription
from harness.judge.lint import lint
from harness.reports.json_report import write_json
from harness.traffic.exchange import Exchange, HttpRequest


def _lint_one(contract: Contract, tmp_path: Path, req: HttpRequest) -> tuple[list[dict], dict]:
    """Lint ``req`` (answered by the reference) between clean exchanges: its failures and the
    JSON report."""
    path = write_recording(tmp_path / "r.jsonl",
                           [*clean_exchanges(contract)[:3], exchange(contract, req)])
    report = lint([path], contract)
    write_json(report, tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    return [f for f in data["findings"] if f["verdict"] == "failed"], data


def _moved(req: HttpRequest, old: str, new: str) -> HttpRequest:
    return replace(req, url=req.url.replace(old, new))


def test_form_post_as_text_plain_is_a_content_type_failure_of_the_operation(
        contract: Contract, tmp_path: Path) -> None:
    req = request(contract, "SendMarkNotes", Binding.HTTP_POST).with_header(
        "Content-Type", "text/plain")
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("BIND-REQUEST-CONTENT-TYPE", "SendMarkNotes", "HTTP POST")]
    assert (failures[0]["expected"], failures[0]["actual"]) == (
        "application/x-www-form-urlencoded", "text/plain")


@pytest.mark.parametrize(("asked", "binding"), [
    ("SendMarkNote", Binding.HTTP_GET), ("SendMarkNotez", Binding.HTTP_POST),
    ("SndMarkNote", Binding.HTTP_GET), ("sendmarknotes", Binding.HTTP_GET)])
def test_near_miss_operation_in_the_path_is_that_operation(contract: Contract, tmp_path: Path,
                                                           asked: str, binding: Binding) -> None:
    req = _moved(request(contract, "SendMarkNotes", binding), "/SendMarkNotes", f"/{asked}")
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("BIND-METHOD-PATH", "SendMarkNotes", binding.label)]
    assert f"did you mean SendMarkNotes? (asked {asked})" in failures[0]["message"]


def test_near_miss_soap_body_element_is_that_operation(contract: Contract,
                                                       tmp_path: Path) -> None:
    req = request(contract, "GetTeacherGrpupsByID", Binding.SOAP12)
    body = req.body.replace(b"GetTeacherGrpupsByID", b"GetTeacherGroupsByID")
    req = replace(req, body=body).with_header("Content-Length", str(len(body)))
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("BIND-OPERATION-ELEMENT", "GetTeacherGrpupsByID", "SOAP 1.2")]
    assert "did you mean GetTeacherGrpupsByID?" in failures[0]["message"]


def test_near_miss_endpoint_is_that_endpoint(contract: Contract, tmp_path: Path) -> None:
    req = _moved(request(contract, "AuthCode", Binding.HTTP_GET), "/AuthCodeSending.asmx",
                 "/AuthCodeSendng.asmx")
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("BIND-METHOD-PATH", "AuthCode", "HTTP GET")]
    assert "did you mean /AuthCodeSending.asmx?" in failures[0]["message"]


def test_malformed_soap_at_a_one_operation_endpoint_fails_the_envelope_once(
        contract: Contract, tmp_path: Path) -> None:
    req = request(contract, "GetTokenDevice", Binding.SOAP11)
    req = replace(req, body=b"<oops").with_header("Content-Length", "5")
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("BIND-ENVELOPE", "GetTokenDevice", "SOAP 1.1")]
    assert "no SOAP envelope (" in failures[0]["actual"]


@pytest.mark.parametrize(("path", "why"), [
    ("/Nothing.asmx/Foo", "not in the contract"),
    ("/NotificationNotes.asmx/Unrelated", "serves SendNotificationType, SendMarkNotes"),
    ("/index.html", "names no .asmx endpoint")])
def test_no_plausible_target_is_unclassified_saying_why(contract: Contract, tmp_path: Path,
                                                        path: str, why: str) -> None:
    req = HttpRequest("GET", BASE + path, (("Host", "school.example:8080"),))
    failures, _ = _lint_one(contract, tmp_path, req)
    assert [(f["rule"], f["operation"], f["binding"]) for f in failures] == [
        ("UNCLASSIFIED", None, None)]
    assert why in failures[0]["actual"]


def test_every_finding_in_json_has_operation_and_binding(contract: Contract,
                                                         tmp_path: Path) -> None:
    unknown = HttpRequest("GET", BASE + "/Nothing.asmx/Foo", (("Host", "x"),))
    unquoted = request(contract, "AuthCode", Binding.SOAP11).with_header(
        "SOAPAction", "http://tempuri.org/AuthCode")
    path = write_recording(tmp_path / "r.jsonl", [exchange(contract, unknown),
                                                  exchange(contract, unquoted)])
    write_json(lint([path], contract), tmp_path / "out.json")
    findings = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["findings"]
    assert len(findings) == 2
    assert all("operation" in f and "binding" in f for f in findings)
    assert {(f["operation"], f["binding"]) for f in findings} == {
        (None, None), ("AuthCode", "SOAP 1.1")}


DESCRIPTIONS = [("?WSDL", "WSDL"), ("?wsdl", "WSDL"), ("?disco", "disco"), ("", "help page"),
                ("?op=AuthCode", "help page"), ("?schema=s0", "XSD"), ("/jsdebug", "script proxy")]


@pytest.mark.parametrize(("suffix", "kind"), DESCRIPTIONS)
def test_service_description_requests_are_classified_by_kind(contract: Contract, suffix: str,
                                                             kind: str) -> None:
    req = HttpRequest("GET", f"{BASE}/AuthCodeSending.asmx{suffix}", (("Host", "x"),))
    with pytest.raises(ServiceDescription) as info:
        classify(contract, req)
    assert info.value.kind == kind


def test_post_to_the_endpoint_is_not_a_description(contract: Contract) -> None:
    req = HttpRequest("POST", f"{BASE}/NotificationNotes.asmx?wsdl", (("Host", "x"),))
    with pytest.raises(ClassificationError) as info:
        classify(contract, req)
    assert not isinstance(info.value, ServiceDescription)


def test_service_descriptions_are_counted_not_judged(contract: Contract, tmp_path: Path) -> None:
    fetched = [Exchange(HttpRequest("GET", f"{BASE}/{ep}{suffix}", (("Host", "x"),)), None)
               for ep in ("AuthCodeSending.asmx", "CenterlogOut.asmx")
               for suffix, _ in DESCRIPTIONS[:4]]
    path = write_recording(tmp_path / "r.jsonl", [*fetched, *clean_exchanges(contract)])
    report = lint([path], contract)
    assert report.passed and report.exchanges == 8 + 32
    assert dict(report.descriptions) == {"WSDL": 4, "disco": 2, "help page": 2}
    write_json(report, tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["service_descriptions"] == {"WSDL": 4, "disco": 2, "help page": 2}
    assert data["findings"] == [] and "UNCLASSIFIED" not in data["rules"]


def test_service_descriptions_counted_through_worker_processes(contract: Contract,
                                                               tmp_path: Path) -> None:
    fetched = [Exchange(HttpRequest("GET", f"{BASE}/AuthCodeSending.asmx?WSDL",
                                    (("Host", "x"),)), None)] * 5
    path = write_recording(tmp_path / "r.jsonl", [*fetched, *clean_exchanges(contract)] * 3)
    report = lint([path], contract, workers=2, chunk_size=7)
    assert dict(report.descriptions) == {"WSDL": 15} and report.passed
