"""The rules catalogue judged on real reference answers (``answer`` is the reference itself, a
pure function) and on precise deviations of them, one rule at a time."""

from __future__ import annotations

import re

import pytest
from lxml import etree

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments
from harness.contract.xmlsafe import parse_xml
from harness.judge import rules
from harness.judge.findings import Verdict
from harness.judge.profiles import Profile
from harness.judge.rules import RULES, Side, judge
from harness.reference.app import answer
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse, replace_header

PAIRS = [(name, b) for name in ("AuthCode", "LogoutFromSchool", "GetTokenDevice",
                                "SendMarkNotes") for b in Binding]


def exchange(contract: Contract, name: str, binding: Binding, *, variant: int = 0,
             request=None, response=None) -> Exchange:
    op = contract.operation(name)
    req = request or build_request(contract, op, sample_arguments(op, variant), binding,
                                   "http://school.example")
    return Exchange(req, response if response is not None else answer(contract, req))


def verdicts(findings, rule: str) -> set[Verdict]:
    return {f.verdict for f in findings if f.rule == rule}


def failures(findings) -> list[str]:
    return [f"{f.rule}: {f.expected} / {f.actual}" for f in findings
            if f.verdict is Verdict.FAILED]


def with_body(response: HttpResponse, body: bytes) -> HttpResponse:
    headers = replace_header(response.headers, "Content-Length", str(len(body)))
    return HttpResponse(response.status, headers, body, response.reason)


def test_catalogue_is_data_with_stable_ids():
    ids = [r.id for r in rules.CATALOGUE]
    assert len(ids) == len(set(ids)) == len(RULES)
    assert all(re.fullmatch(r"[A-Z0-9]+(-[A-Z0-9]+)+", i) for i in ids)
    assert all(r.clause and r.title and callable(r.check) for r in rules.CATALOGUE)
    from harness.judge import asmx_matrix, odd_requests, wsdl_rules

    matrix = set(asmx_matrix.titles())
    assert matrix and all(i.startswith("ODD-") for i in matrix)
    assert set(rules.titles()) == {*ids, rules.UNCLASSIFIED, *wsdl_rules.RULES,
                                   *odd_requests.RULES, *matrix}
    assert not set(ids) & set(wsdl_rules.RULES)
    assert not (set(ids) | set(wsdl_rules.RULES)) & (set(odd_requests.RULES) | matrix)
    assert rules.catalogue_ids() == {*ids, *wsdl_rules.RULES, *odd_requests.RULES, *matrix}
    assert ("| `R1-SOAPACTION` | 4.1 rule 1 | request | failure | failure; warning: unquoted "
            "SOAPAction |") in rules.catalogue_table()


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_reference_answers_pass_every_rule(contract, variant):
    for op in contract.operations:
        for binding in Binding:
            refused = variant == 2 and not binding.is_soap  # markup, as ASP.NET refuses it
            control = exchange(contract, op.name, binding) if refused else None
            found = judge(exchange(contract, op.name, binding, variant=variant), contract,
                          intended=(op, binding), control=control)
            assert failures(found) == [], (op.name, binding)
            warned = {f.rule for f in found if f.verdict is Verdict.WARNING}
            assert warned == ({"GAP-VALUES"} if refused else set()), (op.name, binding)
            assert {f.operation for f in found} == {op.name}
            assert {f.binding for f in found} == {binding.label}


def test_not_applicable_where_a_rule_does_not_apply(contract):
    get = judge(exchange(contract, "AuthCode", Binding.HTTP_GET), contract)
    for rule in ("R1-SOAPACTION", "R2-NO-SOAPACTION", "R5-ENVELOPE", "R6-EMPTY-RESPONSE",
                 "R7-SOAP-CONTENT-TYPE", "OP-RESULT", "R9-INT", "BIND-ENVELOPE"):
        assert verdicts(get, rule) == {Verdict.NOT_APPLICABLE}, rule
    assert Verdict.NOT_APPLICABLE in verdicts(get, "R3-LENGTH-HOST")  # no body, no length
    assert verdicts(get, "R8-HTTP-EMPTY-BODY") == {Verdict.PASSED}
    soap = judge(exchange(contract, "LogoutFromSchool", Binding.SOAP11), contract)
    assert verdicts(soap, "R9-INT") == {Verdict.PASSED}
    assert verdicts(soap, "R8-HTTP-EMPTY-BODY") == {Verdict.NOT_APPLICABLE}


def test_unclassified_request_is_one_finding(contract):
    req = HttpRequest("GET", "http://school.example/Nowhere.asmx/AuthCode", (("Host", "x"),))
    [finding] = judge(Exchange(req, HttpResponse(404)), contract)
    assert finding.rule == rules.UNCLASSIFIED and finding.verdict is Verdict.FAILED
    assert "Nowhere.asmx" in finding.actual


def test_soapaction_quoted_unquoted_missing_wrong(contract):
    base = exchange(contract, "AuthCode", Binding.SOAP11).request
    action = base.header("SOAPAction")
    assert action == '"http://tempuri.org/AuthCode"'
    # unquoted: the spec (and WS-I BP R2744) says quoted; the asmx profile tolerates it
    cases = {action: (Verdict.PASSED, Verdict.PASSED),
             action.strip('"'): (Verdict.FAILED, Verdict.WARNING),
             None: (Verdict.FAILED, Verdict.FAILED),
             '"http://tempuri.org//AuthCode"': (Verdict.FAILED, Verdict.FAILED),
             '"http://tempuri.org/LogoutFromSchool"': (Verdict.FAILED, Verdict.FAILED)}
    for value, (spec, asmx) in cases.items():
        req = base.with_header("SOAPAction", value)
        found = judge(Exchange(req, None), contract, sides=[Side.REQUEST])
        assert verdicts(found, "R1-SOAPACTION") == {spec}, value
        found = judge(Exchange(req, None), contract, sides=[Side.REQUEST],
                      profile=Profile("asmx"))
        assert verdicts(found, "R1-SOAPACTION") == {asmx}, value


def test_soap12_request_with_soapaction_fails(contract):
    req = exchange(contract, "AuthCode", Binding.SOAP12).request.with_header(
        "SOAPAction", '"http://tempuri.org/AuthCode"')
    found = judge(Exchange(req, None), contract, sides=[Side.REQUEST])
    assert verdicts(found, "R2-NO-SOAPACTION") == {Verdict.FAILED}


def test_content_length_and_host(contract):
    req = exchange(contract, "AuthCode", Binding.HTTP_POST).request
    bad = [req.with_header("Content-Length", "3"), req.with_header("Content-Length", None),
           req.with_header("Host", None)]
    for r in bad:
        assert Verdict.FAILED in verdicts(judge(Exchange(r, None), contract),
                                          "R3-LENGTH-HOST")


def test_parameters_order_names_and_int(contract):
    ex = exchange(contract, "LogoutFromSchool", Binding.SOAP11)
    body = ex.request.body
    swapped = body.replace(b"PhoneNumber", b"TMP").replace(b"UuId", b"PhoneNumber").replace(
        b"TMP", b"UuId")
    found = judge(Exchange(ex.request.__class__(ex.request.method, ex.request.url,
                                                ex.request.headers, swapped), None), contract)
    assert verdicts(found, "R9-PARAMETERS") == {Verdict.FAILED}
    not_int = body.replace(b">42<", b">forty-two<")
    found = judge(Exchange(HttpRequest("POST", ex.request.url, ex.request.headers, not_int),
                           None), contract, rules=["R9-INT"])
    assert [f.verdict for f in found] == [Verdict.FAILED]
    op = contract.operation("AuthCode")
    get = build_request(contract, op, sample_arguments(op), Binding.HTTP_GET, "http://h")
    renamed = HttpRequest("GET", get.url.replace("phone=", "Phone="), get.headers)
    assert verdicts(judge(Exchange(renamed, None), contract), "R9-PARAMETERS") == {
        Verdict.FAILED}


def test_version_segment_fails(contract):
    op = contract.operation("AuthCode")
    req = build_request(contract, op, sample_arguments(op), Binding.SOAP12, "http://h/api/v1")
    found = judge(Exchange(req, answer(contract, req)), contract)
    assert verdicts(found, "V2-NO-VERSION-SEGMENT") == {Verdict.FAILED}


def _rewrite_prefixes(body: bytes) -> bytes:
    """The same document with other prefixes and pretty-printed, without XML declaration."""
    root = parse_xml(body)
    nsmap = {f"p{i}": ns for i, ns in enumerate(sorted({e.nsmap.get(e.prefix) for e in
                                                        root.iter()} - {None}))}
    copy = etree.Element(root.tag, nsmap=nsmap)

    def clone(src, dst):
        for child in src:
            new = etree.SubElement(dst, child.tag)
            new.text = child.text
            clone(child, new)
    clone(root, copy)
    return etree.tostring(copy, pretty_print=True)


@pytest.mark.parametrize(("name", "binding"), PAIRS)
def test_harmless_variations_pass(contract, name, binding):
    ex = exchange(contract, name, binding)
    response = ex.response
    variants = [replace_header(response.headers, "X-Powered-By", "ASP.NET")]
    if response.content_type:
        variants.append(replace_header(response.headers, "Content-Type",
                                       response.content_type.replace("utf-8", "UTF-8")))
    for headers in variants:
        found = judge(Exchange(ex.request, HttpResponse(200, headers, response.body)), contract)
        assert failures(found) == []
    if response.body:
        varied = with_body(response, _rewrite_prefixes(response.body))
        assert b"<?xml" not in varied.body and b"p0:" in varied.body
        assert failures(judge(Exchange(ex.request, varied), contract)) == []


@pytest.mark.parametrize(("name", "binding", "change", "rule"), [
    ("AuthCode", Binding.SOAP11, lambda r: replace_header(
        r.headers, "Content-Type", "text/xml"), "R7-SOAP-CONTENT-TYPE"),
    ("AuthCode", Binding.SOAP12, lambda r: replace_header(
        r.headers, "Content-Type", "text/xml; charset=utf-8"), "R7-SOAP-CONTENT-TYPE"),
    ("GetTokenDevice", Binding.HTTP_GET, lambda r: replace_header(
        r.headers, "Content-Type", "text/plain; charset=utf-8"), "OP-RESULT"),
])
def test_response_header_faults(contract, name, binding, change, rule):
    ex = exchange(contract, name, binding)
    broken = HttpResponse(200, change(ex.response), ex.response.body)
    found = judge(Exchange(ex.request, broken), contract)
    assert verdicts(found, rule) >= {Verdict.FAILED}
    assert failures(found) and all(f.startswith(rule) for f in failures(found))


@pytest.mark.parametrize(("name", "binding", "old", "new", "rule"), [
    ("AuthCode", Binding.SOAP11, b"AuthCodeResponse", b"AuthCodeResult",
     "R5-RESPONSE-ELEMENT"),
    ("AuthCode", Binding.SOAP12, b'xmlns="http://tempuri.org/"', b'xmlns="urn:other"',
     "R5-RESPONSE-ELEMENT"),
    ("AuthCode", Binding.SOAP11, b"http://schemas.xmlsoap.org/soap/envelope/",
     b"http://www.w3.org/2003/05/soap-envelope", "R5-ENVELOPE"),
    ("SendMarkNotes", Binding.SOAP12, b' xmlns="http://tempuri.org/"/>',
     b' xmlns="http://tempuri.org/"><Extra/></SendMarkNotesResponse>',
     "R6-EMPTY-RESPONSE"),
    ("GetTokenDevice", Binding.SOAP11, b"GetTokenDeviceResult", b"Result", "OP-RESULT"),
    ("GetTokenDevice", Binding.HTTP_POST, b' xmlns="http://tempuri.org/"', b"", "OP-RESULT"),
])
def test_response_body_faults(contract, name, binding, old, new, rule):
    ex = exchange(contract, name, binding)
    assert old in ex.response.body
    broken = with_body(ex.response, ex.response.body.replace(old, new))
    found = judge(Exchange(ex.request, broken), contract)
    assert verdicts(found, rule) >= {Verdict.FAILED}, failures(found)
    assert {f.split(":")[0] for f in failures(found)} <= {rule, "V1-VERSION-BY-CONTENT-TYPE"}


def test_void_get_with_body_and_wrong_status(contract):
    ex = exchange(contract, "AuthCode", Binding.HTTP_GET)
    found = judge(Exchange(ex.request, HttpResponse(200, (), b"<ok/>")), contract)
    assert verdicts(found, "R8-HTTP-EMPTY-BODY") == {Verdict.FAILED}
    found = judge(Exchange(ex.request, HttpResponse(202, (), b"")), contract)
    # one cause, one failure: R8 presupposes success and is not applicable to a failed call
    assert failures(found) == ["R4-STATUS: HTTP 200 / HTTP 202, empty body"]
    assert verdicts(found, "R8-HTTP-EMPTY-BODY") == {Verdict.NOT_APPLICABLE}


def test_intended_judges_a_request_that_is_not_served(contract):
    op = contract.operation("SendMarkNotes")
    req = build_request(contract, op, sample_arguments(op), Binding.HTTP_GET, "http://h")
    found = judge(Exchange(req, HttpResponse(404, (), b"\n The resource cannot be found.\n"
                                                   b"Line two")), contract,
                  intended=(op, Binding.HTTP_GET))
    # one cause, one failure, with its cause: the status and the body's first line
    assert failures(found) == ["R4-STATUS: HTTP 200 / HTTP 404: The resource cannot be found."]
    assert verdicts(found, "OP-ENDPOINT") == {Verdict.PASSED, Verdict.NOT_APPLICABLE}
    assert {f.operation for f in found} == {"SendMarkNotes"}


def test_sides_and_rule_selection(contract):
    ex = exchange(contract, "GetTokenDevice", Binding.SOAP12)
    request_only = judge(ex, contract, sides=[Side.REQUEST])
    assert "R4-STATUS" not in {f.rule for f in request_only}
    response_only = judge(ex, contract, sides=[Side.RESPONSE])
    assert "R9-PARAMETERS" not in {f.rule for f in response_only}
    assert {f.rule for f in judge(ex, contract, rules=["OP-RESULT"])} == {"OP-RESULT"}
    with pytest.raises(KeyError):
        judge(ex, contract, rules=["NOPE"])


@pytest.mark.parametrize("binding", list(Binding))
def test_error_answering_an_invalid_request_is_not_a_response_failure(contract, binding):
    """The reference refuses a non-integer id_row_central: R9-INT reports the client's defect;
    R4 and the other success shapes are not applicable to the refusal, while the fault's
    envelope version is still judged."""
    op = contract.operation("LogoutFromSchool")
    args = {**sample_arguments(op), "id_row_central": "x"}
    request = build_request(contract, op, args, binding, "http://school.example")
    response = answer(contract, request)
    assert response.status == 500
    found = judge(Exchange(request, response), contract)
    assert failures(found) == ["R9-INT: id_row_central: an int / 'x'"]
    for rule in ("R4-STATUS", "R5-RESPONSE-ELEMENT", "R8-HTTP-EMPTY-BODY", "OP-ENDPOINT"):
        assert Verdict.FAILED not in verdicts(found, rule), rule
    if binding.is_soap:
        assert verdicts(found, "R5-ENVELOPE") == {Verdict.PASSED}
        other = Binding.SOAP12 if binding is Binding.SOAP11 else Binding.SOAP11
        wrong_version = answer(contract, build_request(contract, op, args, other,
                                                       "http://school.example"))
        found = judge(Exchange(request, wrong_version), contract)
        assert verdicts(found, "R5-ENVELOPE") == {Verdict.FAILED}


def test_error_answering_a_valid_request_still_fails(contract):
    op = contract.operation("LogoutFromSchool")
    request = build_request(contract, op, sample_arguments(op), Binding.SOAP11,
                            "http://school.example")
    refused = answer(contract, request.with_header("SOAPAction", None).with_header(
        "SOAPAction", contract.soap_action(op)))
    fault = HttpResponse(500, refused.headers, answer(
        contract, request.with_header("SOAPAction", '"urn:wrong"')).body)
    found = judge(Exchange(request, fault), contract)
    # reported once, by R4-STATUS with the fault's code and the first line of its reason;
    # the fault's own form (envelope version, Content-Type) is still judged
    (only,) = failures(found)
    assert re.fullmatch(r"R4-STATUS: HTTP 200 / HTTP 500: Client fault: [^\n]+", only), only
    for rule in ("R5-RESPONSE-ELEMENT", "R6-EMPTY-RESPONSE", "OP-ENDPOINT"):
        assert Verdict.NOT_APPLICABLE in verdicts(found, rule), rule
    assert verdicts(found, "R5-ENVELOPE") == verdicts(found, "R7-SOAP-CONTENT-TYPE") == {
        Verdict.PASSED}


def test_an_error_page_on_a_soap_call_is_one_failure(contract):
    """An HTML error page answering a SOAP call: not a fault, so the envelope and Content-Type
    rules have nothing of their own to say; R4-STATUS names the cause, shortened."""
    ex = exchange(contract, "AuthCode", Binding.SOAP12)
    page = b"<html><head><title>Runtime Error</title></head>" + b"x" * 300 + b"</html>"
    found = judge(Exchange(ex.request, HttpResponse(
        503, (("Content-Type", "text/html"),), page)), contract)
    (only,) = failures(found)
    assert only == "R4-STATUS: HTTP 200 / HTTP 503: page 'Runtime Error'"
    long_line = b"y" * 300
    found = judge(Exchange(ex.request, HttpResponse(503, (), long_line)), contract)
    (only,) = failures(found)
    assert only.endswith("…") and len(only.split(" / ", 1)[1]) <= 120
    words = b"word " * 60  # cut after a whole word (issue 31), never inside one
    found = judge(Exchange(ex.request, HttpResponse(503, (), words)), contract)
    (only,) = failures(found)
    assert only.endswith(" word…") and len(only.split(" / ", 1)[1]) <= 120


def test_a_failed_call_names_what_its_body_says_not_its_xml_declaration(contract):
    """The cause of a 404 is the page's title or its first line that says something: never
    the XML declaration or doctype the body starts with. Every finding of the call shares it
    as its cause."""
    ex = exchange(contract, "AuthCode", Binding.HTTP_GET)
    page = (b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html><head>'
            b"<title>The resource cannot be found.</title></head><body>x</body></html>")
    found = judge(Exchange(ex.request, HttpResponse(404, (), page)), contract)
    (status,) = [f for f in found if f.verdict is Verdict.FAILED]
    assert status.actual == "HTTP 404: page 'The resource cannot be found.'"
    # a call not served is that, whatever the page says: one cause for a whole binding
    assert status.cause == "HTTP 404: the call is not served"
    plain = b'<?xml version="1.0" encoding="utf-8"?>\nNo such operation\n'
    found = judge(Exchange(ex.request, HttpResponse(500, (), plain)), contract)
    assert [f.cause for f in found if f.verdict is Verdict.FAILED] == [
        "HTTP 500: No such operation"]


def _refused(request: HttpRequest) -> HttpResponse:
    """ASP.NET's request validation: markup in a GET/POST value gets 500 text/plain."""
    return HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),),
                        b"A potentially dangerous Request.Form value was detected\n  at ...")


@pytest.mark.parametrize("binding", [Binding.HTTP_GET, Binding.HTTP_POST])
def test_values_refused_while_plain_ones_succeed_is_a_warning(contract, binding):
    """4.10: allowed values are not shown. Judged from behaviour: the same call with plain
    values (the control) succeeds, so the refusal is a GAP-VALUES warning and nothing fails."""
    markup = exchange(contract, "SendMarkNotes", binding, variant=2)
    refused = Exchange(markup.request, _refused(markup.request))
    control = exchange(contract, "SendMarkNotes", binding)
    found = judge(refused, contract, control=control)
    assert failures(found) == []
    (warned,) = [f for f in found if f.verdict is Verdict.WARNING]
    assert warned.rule == "GAP-VALUES" and warned.actual.startswith("HTTP 500: A potentially")
    assert "4.10" in warned.message and rules.RULES["GAP-VALUES"].clause == "4.10"
    for rule in ("R4-STATUS", "R8-HTTP-EMPTY-BODY"):
        assert verdicts(found, rule) == {Verdict.NOT_APPLICABLE}, rule
    # the same refusal with a control that fails too is a failure
    found = judge(refused, contract, control=Exchange(control.request,
                                                      _refused(control.request)))
    assert [f.split(":")[0] for f in failures(found)] == ["R4-STATUS"]
    assert verdicts(found, "GAP-VALUES") == {Verdict.NOT_APPLICABLE}
    # accepted values pass (the reference takes markup in SOAP, as ASMX does)
    accepted = exchange(contract, "SendMarkNotes", Binding.SOAP11, variant=2)
    assert verdicts(judge(accepted, contract), "GAP-VALUES") == {Verdict.PASSED}
    # and the reference's own refusal over GET/POST is the one judged above
    assert markup.response.status == 500 and judge(markup, contract, control=control)


@pytest.mark.parametrize("binding", [Binding.HTTP_GET, Binding.HTTP_POST])
def test_a_recorded_markup_refusal_is_the_same_warning_without_a_control(contract, binding):
    """lint and replay have no second call: ASP.NET's refusal of markup in a value is
    recognised from the exchange itself (markup in a value AND ASP.NET's words), the same
    GAP-VALUES warning certify gives, R4-STATUS not applicable."""
    markup = exchange(contract, "SendMarkNotes", binding, variant=2)
    found = judge(Exchange(markup.request, _refused(markup.request)), contract)
    assert failures(found) == []
    (warned,) = [f for f in found if f.verdict is Verdict.WARNING]
    assert warned.rule == "GAP-VALUES" and "request validation" in warned.message
    assert "4.10" in warned.message and "<" in warned.message  # the refused value, quoted
    assert verdicts(found, "R4-STATUS") == {Verdict.NOT_APPLICABLE}
    # another error answering markup may have another cause: judged as any failed call
    other = HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),),
                         b"Object reference not set to an instance of an object.")
    found = judge(Exchange(markup.request, other), contract)
    assert [f.split(":")[0] for f in failures(found)] == ["R4-STATUS"]
    # and ASP.NET's words without markup in any value are no 4.10 refusal either
    plain = exchange(contract, "SendMarkNotes", binding)
    found = judge(Exchange(plain.request, _refused(plain.request)), contract)
    assert [f.split(":")[0] for f in failures(found)] == ["R4-STATUS"]


def test_a_redacted_markup_refusal_is_taken_at_aspnets_word(contract):
    """A capture redacts sensitive values: the markup is gone from the recorded request, but
    the field ASP.NET's message names holds a pseudonym there. Still the 4.10 warning, and the
    value (sensitive) is not quoted."""
    op = contract.operation("AuthCode")
    args = {"code": "redacted-0123456789abcdef", "phone": "1"}
    request = build_request(contract, op, args, Binding.HTTP_GET, "http://school.example")
    refusal = HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),),
                           b"A potentially dangerous Request.QueryString value was detected "
                           b"from the client (code=&quot;&lt;b&gt;&quot;).")
    found = judge(Exchange(request, refusal), contract)
    assert failures(found) == []
    (warned,) = [f for f in found if f.verdict is Verdict.WARNING]
    assert warned.rule == "GAP-VALUES" and warned.message.endswith("code=(redacted value)")
    # the message naming a field that is not redacted (and holds no markup): no 4.10 refusal
    plain = build_request(contract, op, {"code": "1", "phone": "1"}, Binding.HTTP_GET,
                          "http://school.example")
    assert [f.split(":")[0] for f in failures(judge(Exchange(plain, refusal), contract))] == [
        "R4-STATUS"]
