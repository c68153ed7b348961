"""Steps and rules agree (issue 31 item 4): what a scenario step takes for the same fault, a
success, the same value and the right envelope is what diff, replay, probe and certify's rules
take for it, each pair judged on the same answers here (one function each in
harness.contract.bindings: same_fault, is_success, plain_result, in_its_version)."""

from __future__ import annotations

import pytest

from harness.certify.engine import Call
from harness.contract.bindings import Binding, build_request, build_response
from harness.contract.model import Contract, school_mobile
from harness.diff.consistency import outcome
from harness.judge.compare import compare_responses
from harness.judge.findings import Verdict
from harness.judge.rules import judge
from harness.probe.cases import Expect, Family, ProbeCase
from harness.probe.checks import fault_shape
from harness.scenarios import checks
from harness.scenarios.answers import Answer
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse

CONTRACT: Contract = school_mobile()
OP = CONTRACT.operation("GetTokenDevice")
SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"


def _request(binding: Binding) -> HttpRequest:
    return build_request(CONTRACT, OP, {"id": "7"}, binding, "http://h")


def _fault11(code: str, status: int = 500) -> HttpResponse:
    body = (f'<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="{SOAP11_NS}">'
            f"<soap:Body><soap:Fault><faultcode>{code}</faultcode><faultstring>x</faultstring>"
            "</soap:Fault></soap:Body></soap:Envelope>").encode()
    return HttpResponse(status, (("Content-Type", "text/xml; charset=utf-8"),), body)


def _answer(binding: Binding, response: HttpResponse) -> Answer:
    return Answer(Call(OP, binding, Exchange(_request(binding), response)))


def _step_holds(check, *args) -> bool:
    try:
        check(*args)
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize(("asked", "given", "same"), [
    ("Client", "soap:Client", True),
    ("Client", "soap:Client.SchemaValidationError", True),  # spyne's (issue 31)
    ("Server", "soap:Server.Internal", True),
    ("Client", "soap:Server", False),
    ("Client.Authentication", "soap:Client.Timeout", False),
])
def test_the_same_fault(asked: str, given: str, same: bool) -> None:
    """The step ``the answer is a SOAP fault with code "<asked>"`` holds exactly where diff
    finds no failing difference between a fault of that code and the one given."""
    step = _step_holds(checks.is_fault, [_answer(Binding.SOAP11, _fault11(given))], asked)
    differences = compare_responses(_fault11(f"soap:{asked}"), _fault11(given))
    assert (step, all(d.warning for d in differences)) == (same, same), differences


@pytest.mark.parametrize(("status", "fault", "success"), [
    (200, False, True), (204, False, True), (302, False, False), (200, True, False),
    (500, True, False), (404, False, False)])
def test_a_success(status: int, fault: bool, success: bool) -> None:
    """``the call succeeds`` holds where the comparison sees a result (not an error) and
    diff's check over the bindings counts one."""
    result = build_response(CONTRACT, OP, Binding.SOAP11, "token")
    response = _fault11("soap:Server", status) if fault else HttpResponse(
        status, result.headers, result.body if status == 200 else b"")
    step = _step_holds(checks.succeeds, [_answer(Binding.SOAP11, response)])
    compared = compare_responses(result, response)
    result_vs_error = any(d.kind == "outcome" for d in compared)
    assert (step, not result_vs_error, outcome(OP, Binding.SOAP11, response).key != "error") \
        == (success, success, success)


def test_the_same_value_of_a_text_plain_answer() -> None:
    """spyne answers GetTokenDevice over GET as text/plain ``token-for-7``: the step reads
    the value diff's check over the bindings reads (the form is OP-RESULT's failure)."""
    plain = HttpResponse(200, (("Content-Type", "text/plain"),), b"token-for-7")
    answer = _answer(Binding.HTTP_GET, plain)
    assert _step_holds(checks.result_is, [answer], "token-for-7")
    assert outcome(OP, Binding.HTTP_GET, plain).key == "result token-for-7"
    rules = {f.rule: f.verdict for f in judge(Exchange(_request(Binding.HTTP_GET), plain),
                                              CONTRACT)}
    assert rules["OP-RESULT"] is Verdict.FAILED


def test_the_right_envelope_for_a_version_mismatch() -> None:
    """A VersionMismatch fault may come in SOAP 1.1 to a SOAP 1.2 request (SOAP 1.2 part 1,
    5.4.7; ASMX does so): R5-ENVELOPE and probe's ROB-FAULT-SHAPE both take it; another
    fault in the other version neither does."""
    request = _request(Binding.SOAP12)
    for code, right in (("soap:VersionMismatch", True), ("soap:Client", False)):
        response = _fault11(code)
        rules = {f.rule: f.verdict for f in judge(Exchange(request, response), CONTRACT)}
        case = ProbeCase("envelope/x", Family.ENVELOPE, OP, Binding.SOAP12, request,
                         Expect.REFUSAL, "x")
        shaped = fault_shape(case, _probe_answer(response), 5.0).verdict
        assert (rules["R5-ENVELOPE"] is Verdict.PASSED, shaped is not Verdict.FAILED) == (
            right, right), (code, rules["R5-ENVELOPE"], shaped)


def _probe_answer(response: HttpResponse):
    from harness.probe.checks import Answer as ProbeAnswer

    return ProbeAnswer(response, 0.1)
