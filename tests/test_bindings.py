"""The four bindings of spec 4.1, both ways: build_request -> classify, build_response ->
read_response, and the precise reasons classify gives for requests that are no operation."""

from __future__ import annotations

import itertools
from dataclasses import replace
from urllib.parse import parse_qsl, unquote_plus, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract import bindings
from harness.contract.bindings import (
    Binding,
    FaultCode,
    build_fault,
    build_request,
    build_response,
    classify,
    read_response,
    soap_payload,
)
from harness.contract.bindings import unquote_plus as fast_unquote_plus
from harness.contract.model import Contract, reference_result, sample_arguments, school_mobile
from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.errors import ClassificationError, UsageError
from harness.traffic.exchange import HttpRequest

BASE = "http://school.example:8080"
OPERATIONS = school_mobile().operations
PAIRS = list(itertools.product(OPERATIONS, Binding))
PAIR_IDS = [f"{op.name}-{binding.value}" for op, binding in PAIRS]
VARIANTS = (0, 1, 2)

# Spec 4.1 table, written out literally so the test does not check the module against itself.
SPEC = {
    Binding.SOAP11: dict(method="POST", content_type="text/xml; charset=utf-8",
                         envelope="http://schemas.xmlsoap.org/soap/envelope/", prefix="soap"),
    Binding.SOAP12: dict(method="POST", content_type="application/soap+xml; charset=utf-8",
                         envelope="http://www.w3.org/2003/05/soap-envelope", prefix="soap12"),
    Binding.HTTP_GET: dict(method="GET", content_type=None),
    Binding.HTTP_POST: dict(method="POST", content_type="application/x-www-form-urlencoded"),
}


def header_names(request: HttpRequest) -> list[str]:
    return [name.lower() for name, _ in request.headers]


def one_header(request: HttpRequest, name: str) -> str | None:
    values = [v for k, v in request.headers if k.lower() == name.lower()]
    assert len(values) <= 1, f"{name} given {len(values)} times"
    return values[0] if values else None


# ------------------------------------------------------------------------------ round trip


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("op", "binding"), PAIRS, ids=PAIR_IDS)
def test_request_classifies_back_to_the_same_call(contract: Contract, op, binding: Binding,
                                                  variant: int) -> None:
    args = sample_arguments(op, variant)
    request = build_request(contract, op, args, binding, BASE)
    call = classify(contract, request)
    assert (call.binding, call.operation, call.args) == (binding, op, args)
    assert [name for name, _ in call.arguments] == list(op.parameter_names)  # order as sent
    assert call.endpoint == op.endpoint
    if binding.is_soap:
        assert call.operation_namespace == contract.namespace
        assert namespace(call.envelope) == SPEC[binding]["envelope"]
    else:
        assert call.envelope is None


# --------------------------------------------------------------------- exact request shape


@pytest.mark.parametrize(("op", "binding"), PAIRS, ids=PAIR_IDS)
def test_request_shape_follows_the_spec_table(contract: Contract, op, binding: Binding) -> None:
    args = sample_arguments(op, 2)
    request = build_request(contract, op, args, binding, BASE)
    spec = SPEC[binding]
    url = urlsplit(request.url)
    assert request.method == spec["method"]
    assert f"{url.scheme}://{url.netloc}" == BASE
    assert one_header(request, "Host") == "school.example:8080"  # rule 4.1.3
    assert one_header(request, "Content-Type") == spec["content_type"]
    # Rules 4.1.1/4.1.2: quoted namespace + "/" + operation on SOAP 1.1, no SOAPAction on 1.2.
    expected_action = f'"http://tempuri.org/{op.name}"' if binding is Binding.SOAP11 else None
    assert one_header(request, "SOAPAction") == expected_action
    expected_pairs = [(name, args[name]) for name in op.parameter_names]  # table order
    if binding.is_soap:
        assert url.path == op.endpoint and not url.query
        assert_envelope(contract, request.body, binding, op, expected_pairs)
    else:
        assert url.path == f"{op.endpoint}/{op.name}"
    if binding is Binding.HTTP_GET:
        assert parse_qsl(url.query, keep_blank_values=True) == expected_pairs
        assert request.body == b""
        assert one_header(request, "Content-Length") in (None, "0")
    else:  # rule 4.1.3: Content-Length is the body's length in bytes
        assert one_header(request, "Content-Length") == str(len(request.body))
    if binding is Binding.HTTP_POST:
        assert not url.query
        assert parse_qsl(request.body.decode("ascii"), keep_blank_values=True) == expected_pairs


def assert_envelope(contract: Contract, body: bytes, binding: Binding, op,
                    expected_pairs: list[tuple[str, str]]) -> None:
    spec = SPEC[binding]
    envelope = parse_xml(body)
    assert (namespace(envelope), local_name(envelope)) == (spec["envelope"], "Envelope")
    assert envelope.prefix == spec["prefix"]
    assert body.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    assert f"<{spec['prefix']}:Envelope".encode() in body
    [body_el] = element_children(envelope)
    assert (namespace(body_el), local_name(body_el)) == (spec["envelope"], "Body")
    [payload] = element_children(body_el)
    assert (namespace(payload), local_name(payload)) == (contract.namespace, op.name)
    children = element_children(payload)
    assert all(namespace(c) == contract.namespace for c in children)
    assert [(local_name(c), c.text or "") for c in children] == expected_pairs


@pytest.mark.parametrize("ns", ["urn:school", "http://example.org/svc", "http://example.org/svc/",
                                "urn:example:school"])
@pytest.mark.parametrize("binding", list(Binding), ids=lambda b: b.value)
def test_namespace_setting(ns: str, binding: Binding) -> None:
    contract = school_mobile(ns)
    for op in contract.operations:
        args = sample_arguments(op, 1)
        request = build_request(contract, op, args, binding, BASE)
        action = one_header(request, "SOAPAction")
        if binding is Binding.SOAP11:
            # exactly one "/" between the namespace and the operation name
            assert action == f'"{ns.rstrip("/")}/{op.name}"'
            assert "//" not in action.removeprefix('"http://')
        else:
            assert action is None
        if binding.is_soap:
            payload = element_children(element_children(parse_xml(request.body))[0])[0]
            assert namespace(payload) == ns  # the element namespace is the namespace as given
        call = classify(contract, request)
        assert (call.binding, call.operation, call.args) == (binding, op, args)


def test_base_url_path_prefix_is_kept(contract: Contract) -> None:
    op = contract.operations[0]
    request = build_request(contract, op, sample_arguments(op), Binding.SOAP11,
                            "http://h/school/")
    assert urlsplit(request.url).path == f"/school{op.endpoint}"
    assert classify(contract, request).operation is op


def test_a_path_s_route_is_kept_per_contract_and_bounded(contract: Contract) -> None:
    """classify keeps each path's endpoint for the next request of that path (bindings._route):
    per contract (another contract with the endpoint elsewhere reads it its own way), the same
    refusal each time for a path that names none, and at most _KEPT_ROUTES paths kept, however
    many distinct paths a hostile recording holds."""
    op = contract.operations[0]
    request = build_request(contract, op, sample_arguments(op), Binding.SOAP11, "http://h/")
    moved = Contract(tuple(replace(o, endpoint="/Moved.asmx") if o.endpoint == op.endpoint
                           else o for o in contract.operations), contract.namespace)
    for _ in range(2):  # the second time from what was kept
        assert classify(contract, request).endpoint == op.endpoint
        with pytest.raises(ClassificationError, match=f"endpoint {op.endpoint} is not in"):
            classify(moved, request)
    for n in range(2 * bindings._KEPT_ROUTES):
        stray = replace(request, url=f"http://h/nothing/{n}")
        with pytest.raises(ClassificationError, match=rf"path /nothing/{n} names no \.asmx"):
            classify(contract, stray)
        assert len(bindings._ROUTES) <= bindings._KEPT_ROUTES
    with pytest.raises(ClassificationError, match=r"path /nothing/7 names no \.asmx"):
        classify(contract, replace(request, url="http://h/nothing/7"))


def test_build_request_refuses_unknown_parameters_and_relative_base(contract: Contract) -> None:
    op = contract.operations[0]
    with pytest.raises(UsageError, match="no parameter"):
        build_request(contract, op, {"nope": "1"}, Binding.SOAP11, BASE)
    with pytest.raises(UsageError, match="not an absolute"):
        build_request(contract, op, {}, Binding.SOAP11, "school.example")


def test_missing_arguments_are_sent_empty(contract: Contract) -> None:
    op = contract.operations[0]
    call = classify(contract, build_request(contract, op, {}, Binding.HTTP_POST, BASE))
    assert call.args == dict.fromkeys(op.parameter_names, "")


# ---------------------------------------------------------------- classification leniency


def test_endpoint_path_is_case_insensitive(contract: Contract) -> None:
    op = contract.operations[0]
    request = build_request(contract, op, sample_arguments(op), Binding.HTTP_GET, BASE)
    lowered = HttpRequest("GET", request.url.replace(op.endpoint, op.endpoint.lower()),
                          request.headers)
    call = classify(contract, lowered)
    assert (call.operation, call.endpoint) == (op, op.endpoint)


@pytest.mark.parametrize("binding", [Binding.SOAP11, Binding.SOAP12], ids=lambda b: b.value)
def test_soap_version_falls_back_to_the_envelope_namespace(contract: Contract,
                                                           binding: Binding) -> None:
    op = contract.operations[0]
    request = build_request(contract, op, sample_arguments(op), binding, BASE)
    call = classify(contract, request.with_header("Content-Type", None))
    assert (call.binding, call.operation) == (binding, op)


def test_operation_at_another_endpoint_still_classifies(contract: Contract) -> None:
    """Classification says what the request is; the rules judge the wrong endpoint."""
    op, other = contract.operations[0], contract.operations[1]
    request = build_request(contract, op, sample_arguments(op), Binding.SOAP11, BASE)
    moved = HttpRequest("POST", BASE + other.endpoint, request.headers, request.body)
    call = classify(contract, moved)
    assert (call.operation, call.endpoint) == (op, other.endpoint)


# ------------------------------------------------------------------ classification errors


def soap_request(contract: Contract, body: bytes, binding: Binding = Binding.SOAP11,
                 path: str | None = None) -> HttpRequest:
    op = contract.operations[0]
    template = build_request(contract, op, sample_arguments(op), binding, BASE)
    return HttpRequest("POST", BASE + (path or op.endpoint), template.headers, body)


def error_cases(contract: Contract) -> dict[str, tuple[HttpRequest, str]]:
    """Request -> a word the one-line reason must contain (the thing it names)."""
    op = contract.operations[0]
    get = build_request(contract, op, sample_arguments(op), Binding.HTTP_GET, BASE)
    post = build_request(contract, op, sample_arguments(op), Binding.HTTP_POST, BASE)
    soap = build_request(contract, op, sample_arguments(op), Binding.SOAP11, BASE)
    soap12 = build_request(contract, op, sample_arguments(op), Binding.SOAP12, BASE)
    renamed = soap.body.replace(op.name.encode(), b"NoSuchOperation")
    return {
        "unknown endpoint": (HttpRequest("POST", BASE + "/Nope.asmx", soap.headers, soap.body),
                             "/Nope.asmx"),
        "no asmx in path": (HttpRequest("GET", BASE + "/index.html"), "/index.html"),
        "unknown operation in path (GET)": (
            HttpRequest("GET", f"{BASE}{op.endpoint}/NoSuchOperation?x=1", get.headers),
            "NoSuchOperation"),
        "unknown operation in path (POST)": (
            HttpRequest("POST", f"{BASE}{op.endpoint}/NoSuchOperation", post.headers, post.body),
            "NoSuchOperation"),
        "unknown operation in SOAP body": (soap_request(contract, renamed), "NoSuchOperation"),
        "unknown operation in SOAP 1.2 body": (
            soap_request(contract, soap12.body.replace(op.name.encode(), b"NoSuchOperation"),
                         Binding.SOAP12), "NoSuchOperation"),
        # At an endpoint of two operations and without SOAPAction: nothing says which one.
        "non-XML SOAP body": (_unattributable(contract, b"this is not XML"), "malformed"),
        "empty SOAP body": (_unattributable(contract, b""), "empty"),
        "DOCTYPE SOAP body": (
            _unattributable(contract, b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "v">]>'
                            + soap.body.split(b"?>", 1)[1]), "DOCTYPE"),
        "PUT on the endpoint": (HttpRequest("PUT", soap.url, soap.headers, soap.body), "PUT"),
        "POST on the bare endpoint, no body": (HttpRequest("POST", BASE + "/NotificationNotes"
                                                           ".asmx"), "empty"),
        "form body not ASCII": (HttpRequest("POST", post.url, post.headers, "é=1".encode()),
                                "ASCII"),
        "query not UTF-8": (HttpRequest("GET", f"{get.url}%FF", get.headers), "UTF-8"),
        "form fields not UTF-8": (HttpRequest("POST", post.url, post.headers, post.body + b"%FF"),
                                  "UTF-8"),
        "neither SOAP version": (
            soap_request(contract, b"<doc/>").with_header("Content-Type", "application/json"),
            "neither"),
        "envelope without Body": (
            _unattributable(contract, b'<soap:Envelope xmlns:soap="'
                                      b'http://schemas.xmlsoap.org/soap/envelope/"/>'), "Body"),
        "empty Body": (
            _unattributable(contract, b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/'
                                      b'soap/envelope/"><soap:Body/></soap:Envelope>'), "Body"),
    }


def _unattributable(contract: Contract, body: bytes) -> HttpRequest:
    return soap_request(contract, body, path="/NotificationNotes.asmx").with_header(
        "SOAPAction", None)


ERROR_CASES = list(error_cases(school_mobile()))


@pytest.mark.parametrize("case", ERROR_CASES)
def test_classify_gives_a_precise_one_line_reason(contract: Contract, case: str) -> None:
    request, named = error_cases(contract)[case]
    with pytest.raises(ClassificationError) as info:
        classify(contract, request)
    reason = str(info.value)
    assert named.lower() in reason.lower(), reason
    assert "\n" not in reason


def test_doctype_entity_is_never_expanded_into_arguments(contract: Contract) -> None:
    op = contract.operations[0]
    soap = build_request(contract, op, sample_arguments(op), Binding.SOAP11, BASE)
    first = op.parameter_names[0].encode()
    body = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "EXPANDED-SECRET">]>'
            + soap.body.split(b"?>", 1)[1].replace(b"<" + first + b">",
                                                   b"<" + first + b">&e;", 1))
    with pytest.raises(ClassificationError) as info:
        classify(contract, _unattributable(contract, body))
    assert "EXPANDED-SECRET" not in str(info.value)
    attributed = classify(contract, soap_request(contract, body))  # AuthCode's only endpoint
    assert attributed.envelope is None and attributed.arguments == ()
    assert "DOCTYPE" in (attributed.problem or "") and "EXPANDED" not in attributed.problem


# ------------------------------------------------------------------------------ responses


@pytest.mark.parametrize(("op", "binding"), PAIRS, ids=PAIR_IDS)
def test_response_reads_back(contract: Contract, op, binding: Binding) -> None:
    result = reference_result(op, sample_arguments(op, 1))
    response = build_response(contract, op, binding, result)
    reading = read_response(op, binding, response)
    assert response.status == 200
    assert reading.problem is None and reading.fault_code is None
    assert reading.result == result
    if binding.is_soap:
        assert reading.envelope_binding is binding
        assert response.content_type == SPEC[binding]["content_type"]
        assert local_name(reading.payload) == op.response_element
        assert namespace(reading.payload) == contract.namespace
    elif op.result is None:
        assert response.body == b"" and response.content_type is None
    else:
        assert response.content_type == "text/xml; charset=utf-8"
        assert (namespace(reading.payload), local_name(reading.payload)) == (
            contract.namespace, op.result)


@pytest.mark.parametrize(("binding", "code", "expected"), [
    (Binding.SOAP11, FaultCode.CLIENT, "Client"),
    (Binding.SOAP11, FaultCode.SERVER, "Server"),
    (Binding.SOAP12, FaultCode.CLIENT, "Sender"),
    (Binding.SOAP12, FaultCode.SERVER, "Receiver"),
])
def test_fault_reads_back(contract: Contract, binding: Binding, code: FaultCode,
                          expected: str) -> None:
    op = contract.operations[0]
    response = build_fault(binding, code, "why & <how>")
    reading = read_response(op, binding, response)
    assert response.status == 500
    assert response.content_type == SPEC[binding]["content_type"]
    assert reading.envelope_binding is binding
    assert (reading.fault_code, reading.fault_reason) == (expected, "why & <how>")


@pytest.mark.parametrize("binding", [Binding.HTTP_GET, Binding.HTTP_POST], ids=lambda b: b.value)
def test_http_error_is_plain_text_500(contract: Contract, binding: Binding) -> None:
    response = build_fault(binding, FaultCode.CLIENT, "Missing parameter: x.")
    assert (response.status, response.content_type) == (500, "text/plain; charset=utf-8")
    assert read_response(contract.operations[0], binding, response).problem == "text/plain body"


# --------------------------------------------------------------------------- Binding.parse


@pytest.mark.parametrize(("text", "binding"), [
    ("SOAP 1.1", Binding.SOAP11), ("soap11", Binding.SOAP11), ("soap1.1", Binding.SOAP11),
    ("SOAP 1.2", Binding.SOAP12), ("soap12", Binding.SOAP12),
    ("HTTP GET", Binding.HTTP_GET), ("get", Binding.HTTP_GET), ("http_get", Binding.HTTP_GET),
    ("HTTP POST", Binding.HTTP_POST), ("post", Binding.HTTP_POST),
])
def test_binding_parse(text: str, binding: Binding) -> None:
    assert Binding.parse(text) is binding


def test_binding_parse_refuses_unknown_names() -> None:
    with pytest.raises(UsageError, match="unknown binding"):
        Binding.parse("soap13")


def test_binding_labels() -> None:
    assert [b.label for b in Binding] == ["SOAP 1.1", "SOAP 1.2", "HTTP GET", "HTTP POST"]


@given(st.text(alphabet="%+\\xX0aAfF9zé\u0645 &=", max_size=24))
def test_field_decoding_agrees_with_urllib(text: str) -> None:
    """The fast percent-decoding of query and form fields gives what urllib gives, valid or not
    (a "%" without two hex digits stays; bytes that are not UTF-8 raise, or are replaced)."""
    for errors in ("strict", "replace"):
        try:
            expected = unquote_plus(text, errors=errors)
        except UnicodeDecodeError:
            with pytest.raises(UnicodeDecodeError):
                fast_unquote_plus(text, errors)
            continue
        assert fast_unquote_plus(text, errors) == expected


def test_payload_is_found_past_headers_comments_and_instructions(contract: Contract) -> None:
    body = (b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><!--a-->'
            b"<s:Header><h/></s:Header><?pi x?><s:Body><!--b--><?pi y?>"
            b'<AuthCode xmlns="http://tempuri.org/"><code>1</code></AuthCode></s:Body>'
            b"</s:Envelope>")
    payload = soap_payload(parse_xml(body))
    assert payload is not None and local_name(payload) == "AuthCode"
    for empty in (b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">'
                  b"<s:Header/><s:Body><!--only--></s:Body></s:Envelope>",
                  b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"/>',
                  b'<Envelope><Body><AuthCode/></Body></Envelope>'):
        assert soap_payload(parse_xml(empty)) is None
