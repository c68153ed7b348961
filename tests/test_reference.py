"""The embedded reference over a real loopback socket: every operation x binding answered as
spec 4 says (httpx), every operation over both SOAP ports of its WSDL (zeep), and errors as an
ASMX service gives them."""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections.abc import Iterator

import httpx
import pytest
import zeep
from zeep.plugins import HistoryPlugin

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, ParamType, sample_arguments, school_mobile
from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.reference.app import MAX_REQUEST_BYTES
from harness.reference.server import running
from harness.reference.wsdl import service_name
from harness.traffic.exchange import HttpRequest

OTHER_NAMESPACE = "urn:example:school"
NAMESPACES = ("default", OTHER_NAMESPACE)
OPERATIONS = school_mobile().operations
PAIRS = list(itertools.product(OPERATIONS, Binding))
PAIR_IDS = [f"{op.name}-{binding.value}" for op, binding in PAIRS]

SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
ENVELOPE = {Binding.SOAP11: SOAP11_NS, Binding.SOAP12: SOAP12_NS}
SOAP_TYPE = {Binding.SOAP11: "text/xml; charset=utf-8",
             Binding.SOAP12: "application/soap+xml; charset=utf-8"}
CLIENT_CODE = {Binding.SOAP11: "Client", Binding.SOAP12: "Sender"}
SERVER_CODE = {Binding.SOAP11: "Server", Binding.SOAP12: "Receiver"}
SOAP_PORTS = {"Soap": Binding.SOAP11, "Soap12": Binding.SOAP12}


@pytest.fixture(scope="module")
def other_url() -> Iterator[str]:
    """A second reference under a non-default namespace."""
    with running(school_mobile(OTHER_NAMESPACE)) as url:
        yield url


@pytest.fixture(scope="module")
def servers(reference_url: str, other_url: str) -> dict[str, tuple[Contract, str]]:
    return {"default": (school_mobile(), reference_url),
            OTHER_NAMESPACE: (school_mobile(OTHER_NAMESPACE), other_url)}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def send(http: httpx.Client, request: HttpRequest) -> httpx.Response:
    """Send ``request`` as built, headers included (httpx adds none it already has)."""
    return http.request(request.method, request.url, headers=list(request.headers),
                        content=request.body or None)


def expected_result(op, args: dict[str, str]) -> str | None:
    """Spec 4.7 via the reference's rule: sha256 of the values (for GetTokenDevice: of id)."""
    if op.result is None:
        return None
    joined = "\x1f".join(args[name] for name in op.parameter_names)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------ 32 pairs over httpx


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize(("op", "binding"), PAIRS, ids=PAIR_IDS)
def test_reference_answers_as_the_spec_says(servers, http: httpx.Client, ns: str, op,
                                            binding: Binding) -> None:
    contract, url = servers[ns]
    args = sample_arguments(op, 1)
    response = send(http, build_request(contract, op, args, binding, url))
    assert response.status_code == 200, response.text  # rule 4.1.4
    assert response.headers.get_list("content-length") == [str(len(response.content))]
    result = expected_result(op, args)
    if binding.is_soap:
        assert_soap_response(contract, op, binding, response, result)
    elif result is None:  # rule 4.1.8: no body, and (as ASMX) no Content-Type
        assert response.content == b""
        assert "content-type" not in response.headers
    else:  # 4.7: an XML document whose root is `string` in the service namespace
        assert response.headers["content-type"] == "text/xml; charset=utf-8"
        assert response.content.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
        root = parse_xml(response.content)
        assert (namespace(root), local_name(root)) == (contract.namespace, op.result)
        assert root.text == result


def assert_soap_response(contract: Contract, op, binding: Binding, response: httpx.Response,
                         result: str | None) -> None:
    assert response.headers["content-type"] == SOAP_TYPE[binding]  # rule 4.1.7
    envelope = parse_xml(response.content)
    assert (namespace(envelope), local_name(envelope)) == (ENVELOPE[binding], "Envelope")
    [body] = element_children(envelope)
    assert (namespace(body), local_name(body)) == (ENVELOPE[binding], "Body")
    [payload] = element_children(body)  # rule 4.1.5
    assert (namespace(payload), local_name(payload)) == (contract.namespace,
                                                         op.response_element)
    children = [(namespace(c), local_name(c), c.text) for c in element_children(payload)]
    if result is None:  # rule 4.1.6
        assert children == [] and not (payload.text or "").strip()
    else:
        assert children == [(contract.namespace, op.result_element, result)]


# ------------------------------------------------------------------------ zeep and WSDL


@pytest.fixture(scope="module")
def zeep_clients(servers) -> Iterator[dict]:
    """zeep clients per (namespace, endpoint), each WSDL loaded once (the slow part)."""
    cache: dict[tuple[str, str], tuple[zeep.Client, HistoryPlugin]] = {}

    def client_for(ns: str, endpoint: str) -> tuple[zeep.Client, HistoryPlugin]:
        if (ns, endpoint) not in cache:
            history = HistoryPlugin()
            url = servers[ns][1]
            cache[ns, endpoint] = zeep.Client(f"{url}{endpoint}?WSDL", plugins=[history]), history
        return cache[ns, endpoint]

    yield client_for
    for client, _ in cache.values():
        client.transport.session.close()


@pytest.mark.parametrize("port", list(SOAP_PORTS))
@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_zeep_calls_every_operation_over_both_soap_ports(servers, zeep_clients, ns: str, op,
                                                         port: str) -> None:
    contract = servers[ns][0]
    client, history = zeep_clients(ns, op.endpoint)
    name = service_name(op.endpoint)
    service = client.bind(name, f"{name}{port}")
    args = sample_arguments(op, 1)
    typed = {p.name: int(args[p.name]) if p.type is ParamType.INT else args[p.name]
             for p in op.parameters}
    result = getattr(service, op.name)(**typed)  # a fault raises zeep.exceptions.Fault
    assert result == expected_result(op, args)
    binding = SOAP_PORTS[port]
    sent, received = history.last_sent["envelope"], history.last_received["envelope"]
    assert namespace(sent) == namespace(received) == ENVELOPE[binding]
    assert media(history.last_received["http_headers"]) == SOAP_TYPE[binding].split(";")[0]
    [payload] = element_children(element_children(received)[0])
    assert (namespace(payload), local_name(payload)) == (contract.namespace,
                                                         op.response_element)


def media(headers) -> str:
    return headers["Content-Type"].split(";")[0].strip()


@pytest.mark.parametrize("ns", NAMESPACES)
def test_wsdl_names_all_four_ports_per_endpoint(servers, http: httpx.Client, ns: str) -> None:
    contract, url = servers[ns]
    for endpoint, ops in contract.endpoints.items():
        response = http.get(f"{url}{endpoint}?WSDL")
        assert response.status_code == 200
        wsdl = parse_xml(response.content)
        assert wsdl.get("targetNamespace") == contract.namespace
        name = service_name(endpoint)
        ports = [p.get("name") for p in wsdl.iter("{http://schemas.xmlsoap.org/wsdl/}port")]
        assert ports == [f"{name}{s}" for s in ("Soap", "Soap12", "HttpGet", "HttpPost")]
        actions = {o.get("soapAction") for o in wsdl.iter(
            "{http://schemas.xmlsoap.org/wsdl/soap/}operation")}
        assert actions == {contract.soap_action(op).strip('"') for op in ops}


def test_help_page_lists_the_endpoint_operations(reference_url: str, contract: Contract,
                                                 http: httpx.Client) -> None:
    for endpoint, ops in contract.endpoints.items():
        response = http.get(f"{reference_url}{endpoint}")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        assert all(op.name in response.text for op in ops)


# ---------------------------------------------------------------------------- errors

SECRET = "ENTITY-VALUE-MUST-NOT-APPEAR"


def _request(contract: Contract, op_index: int, binding: Binding, base: str,
             **overrides: str) -> HttpRequest:
    op = contract.operations[op_index]
    return build_request(contract, op, {**sample_arguments(op), **overrides}, binding, base)


def _with_body(request: HttpRequest, body: bytes) -> HttpRequest:
    return HttpRequest(request.method, request.url,
                       request.with_header("Content-Length", str(len(body))).headers, body)


def _moved(request: HttpRequest, endpoint: str, contract: Contract, op_index: int) -> HttpRequest:
    op = contract.operations[op_index]
    return HttpRequest(request.method, request.url.replace(op.endpoint, endpoint, 1),
                       request.headers, request.body)


def _drop_query_field(request: HttpRequest) -> HttpRequest:
    url, _, query = request.url.partition("?")
    return HttpRequest(request.method, f"{url}?{query.split('&', 1)[1]}", request.headers)


def _renamed_operation(request: HttpRequest, name: str) -> HttpRequest:
    path, _, query = request.url.partition("?")
    path = path.removesuffix(f"/{name}") + "/NoSuchOperation"
    return HttpRequest(request.method, f"{path}?{query}" if query else path, request.headers,
                       request.body)


def _doctype(request: HttpRequest) -> HttpRequest:
    """The same envelope behind a DOCTYPE whose entity is used in the first argument."""
    head, _, rest = request.body.partition(b"?>")
    tail = rest.replace(b"</", b"&e;</", 1)
    prolog = f'<!DOCTYPE x [<!ENTITY e "{SECRET}">]>'.encode()
    return _with_body(request, head + b"?>" + prolog + tail)


# The operation with an int parameter (LogoutFromSchool's id_row_central).
INT_OP = next(i for i, op in enumerate(OPERATIONS)
              if any(p.type is ParamType.INT for p in op.parameters))
INT_PARAM = next(p.name for p in OPERATIONS[INT_OP].parameters if p.type is ParamType.INT)
OTHER_ENDPOINT = next(op.endpoint for op in OPERATIONS if op.endpoint != OPERATIONS[0].endpoint)


def error_cases(contract: Contract, base: str) -> dict[str, tuple[HttpRequest, Binding, str]]:
    """name -> (request, binding whose error shape answers it, expected fault code, or '' for
    500 text/plain, or "400"/"415" for that status with an empty body typed as ``binding``).
    Each is what the real ASMX runtime answers (../shared/asmx, Mono's System.Web.Services)."""
    cases: dict[str, tuple[HttpRequest, Binding, str]] = {}
    first_op = contract.operations[0]
    for b in (Binding.SOAP11, Binding.SOAP12):
        soap = _request(contract, 0, b, base)
        client = CLIENT_CODE[b]
        cases |= {
            # ASMX peeks at the root first: an envelope that breaks later gets 400, a root
            # that is no envelope a SOAP 1.1 VersionMismatch fault, no readable root at all
            # (not XML, a DTD) a SOAP 1.2 Receiver fault, whatever the Content-Type
            f"malformed XML {b.value}": (_with_body(soap, soap.body[:-12]), b, "400"),
            f"no envelope {b.value}": (_with_body(soap, b"<a><b></a>"), Binding.SOAP11,
                                       "VersionMismatch"),
            f"wrong envelope namespace {b.value}": (_with_body(soap, soap.body.replace(
                ENVELOPE[b].encode(), b"urn:not-an-envelope")), Binding.SOAP11,
                "VersionMismatch"),
            # a SOAP 1.1 call with a SOAPAction is routed by it and its unreadable body is 400
            f"not XML {b.value}": (_with_body(soap, b"hello"), b, "400") if b is Binding.SOAP11
            else (_with_body(soap, b"hello"), Binding.SOAP12, "Receiver"),
            f"not XML without SOAPAction {b.value}": (
                _with_body(soap, b"hello").with_header("SOAPAction", None), Binding.SOAP12,
                "Receiver"),
            f"DOCTYPE {b.value}": (_doctype(soap), b, "400") if b is Binding.SOAP11
            else (_doctype(soap), Binding.SOAP12, "Receiver"),
            f"non-integer {INT_PARAM} {b.value}": (
                _request(contract, INT_OP, b, base, **{INT_PARAM: "x1"}), b, client),
            # (ASMX routes SOAP 1.1 by its SOAPAction and answers 200; the reference refuses
            # a body that names no operation: docs/reference-implementation.md)
            f"unknown operation in body {b.value}": (_with_body(soap, soap.body.replace(
                first_op.name.encode(), b"NoSuchOperation")), b, client),
            f"operation at the wrong endpoint {b.value}": (
                _moved(soap, OTHER_ENDPOINT, contract, 0), b, client),
            f"over-size body {b.value}": (
                _with_body(soap, b"<a>" + b"x" * MAX_REQUEST_BYTES + b"</a>"), b, SERVER_CODE[b]),
        }
    soap11 = _request(contract, 0, Binding.SOAP11, base)
    cases |= {
        "SOAP 1.1 envelope sent as SOAP 1.2": (
            soap11.with_header("Content-Type", SOAP_TYPE[Binding.SOAP12]), Binding.SOAP11,
            "415"),
        "SOAP envelope sent as text/plain": (
            soap11.with_header("Content-Type", "text/plain"), Binding.SOAP11, "415"),
        "SOAP envelope sent as text/plain without SOAPAction": (
            soap11.with_header("Content-Type", "text/plain").with_header("SOAPAction", None),
            Binding.SOAP12, "415"),
        "wrong SOAPAction": (soap11.with_header("SOAPAction", f'"{contract.namespace}Nope"'),
                             Binding.SOAP11, "Client"),
        "SOAPAction of another operation": (
            soap11.with_header("SOAPAction", contract.soap_action(contract.operations[1])),
            Binding.SOAP11, "Client"),
    }
    for b in (Binding.HTTP_GET, Binding.HTTP_POST):
        plain = _request(contract, 0, b, base)
        cases |= {
            f"non-integer {INT_PARAM} {b.value}": (
                _request(contract, INT_OP, b, base, **{INT_PARAM: "x1"}), b, ""),
            f"unknown operation in path {b.value}": (_renamed_operation(plain, first_op.name),
                                                     b, ""),
            f"operation at the wrong endpoint {b.value}": (
                _moved(plain, OTHER_ENDPOINT, contract, 0), b, ""),
            # ASP.NET's request validation: markup in any value, names not checked
            f"markup in a value {b.value}": (_request(contract, 0, b, base, **{
                first_op.parameters[0].name: "a<b>"}), b, ""),
            f"character reference in a value {b.value}": (_request(contract, 0, b, base, **{
                first_op.parameters[-1].name: "&#65;"}), b, ""),
        }
    get = _request(contract, 0, Binding.HTTP_GET, base)
    post = _request(contract, 0, Binding.HTTP_POST, base)
    cases |= {
        "missing parameter get": (_drop_query_field(get), Binding.HTTP_GET, ""),
        "missing parameter post": (_with_body(post, post.body.split(b"&", 1)[1]),
                                   Binding.HTTP_POST, ""),
        "markup in an extra field get": (HttpRequest("GET", get.url + "&x=%3Cq", get.headers),
                                         Binding.HTTP_GET, ""),
        # (ASMX decodes it leniently and answers 200: docs/reference-implementation.md)
        "query not UTF-8 get": (HttpRequest("GET", get.url + "%FF", get.headers),
                                Binding.HTTP_GET, ""),
        "over-size form post": (_with_body(post, b"a=" + b"x" * MAX_REQUEST_BYTES),
                                Binding.HTTP_POST, ""),
    }
    return cases


ERROR_CASES = list(error_cases(school_mobile(), "http://h"))


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_as_asmx_gives_them(reference_url: str, contract: Contract, http: httpx.Client,
                                   case: str) -> None:
    request, binding, code = error_cases(contract, reference_url)[case]
    response = send(http, request)
    assert SECRET.encode() not in response.content  # a DOCTYPE's entity is never expanded
    if code in ("400", "415"):
        assert response.status_code == int(code), response.text
        assert response.content == b""
        assert response.headers["content-type"] == SOAP_TYPE[binding]
        return
    assert response.status_code == 500, response.text
    if binding.is_soap:
        assert_fault(response, binding, code)
    else:
        assert response.headers["content-type"] == "text/plain; charset=utf-8"


@pytest.mark.parametrize("case", ["SOAP 1.2 envelope as text/xml", "no SOAPAction",
                                  "missing parameters", "markup that passes validation"])
def test_what_asmx_takes(reference_url: str, contract: Contract, http: httpx.Client,
                         case: str) -> None:
    """Requests a strict reading would refuse and ASMX serves: a SOAP 1.2 envelope sent as
    text/xml is answered in SOAP 1.2; a missing SOAPAction is routed by the body element;
    missing SOAP parameters bind as their defaults (an int as 0); ``<?``, ``</``, ``< `` and
    ``&amp;`` pass request validation."""
    op = contract.operations[INT_OP]
    soap11, soap12 = (_request(contract, INT_OP, b, reference_url)
                      for b in (Binding.SOAP11, Binding.SOAP12))
    answered = Binding.SOAP11
    if case == "SOAP 1.2 envelope as text/xml":
        request = soap12.with_header("Content-Type", SOAP_TYPE[Binding.SOAP11]).with_header(
            "SOAPAction", contract.soap_action(op))
        answered = Binding.SOAP12
    elif case == "no SOAPAction":
        request = soap11.with_header("SOAPAction", None)
    elif case == "missing parameters":
        start = soap11.body.index(f"<{op.name} ".encode())
        end = soap11.body.index(f"</{op.name}>".encode()) + len(op.name) + 3
        request = _with_body(soap11, soap11.body[:start]
                             + f'<{op.name} xmlns="{contract.namespace}"/>'.encode()
                             + soap11.body[end:])
    else:
        values = {p.name: v for p, v in zip(op.parameters, ("<?x </y", "< z &amp;"),
                                            strict=False)}
        request, answered = _request(contract, INT_OP, Binding.HTTP_GET, reference_url,
                                     **values), Binding.HTTP_GET
    response = send(http, request)
    assert response.status_code == 200, response.text
    if answered.is_soap:
        assert response.headers["content-type"] == SOAP_TYPE[answered]
        assert namespace(parse_xml(response.content)) == ENVELOPE[answered]


def assert_fault(response: httpx.Response, binding: Binding, code: str) -> None:
    """A SOAP fault of ``binding``'s version with fault code ``code`` (text never checked)."""
    assert response.headers["content-type"] == SOAP_TYPE[binding]
    envelope = parse_xml(response.content)
    assert namespace(envelope) == ENVELOPE[binding]
    [body] = [c for c in element_children(envelope) if local_name(c) == "Body"]
    [payload] = element_children(body)
    assert (namespace(payload), local_name(payload)) == (ENVELOPE[binding], "Fault")
    if binding is Binding.SOAP11:
        [value] = [c for c in element_children(payload) if local_name(c) == "faultcode"]
    else:
        [value] = [v for c in element_children(payload) if local_name(c) == "Code"
                   for v in element_children(c) if local_name(v) == "Value"]
    prefix, _, local = (value.text or "").strip().rpartition(":")
    assert value.nsmap.get(prefix or None) == ENVELOPE[binding]  # the code is an envelope QName
    assert local == code


@pytest.mark.parametrize("request_line", [
    ("POST", "/NoSuchService.asmx"), ("GET", "/NoSuchService.asmx?WSDL"),
    ("GET", "/NoSuchService.asmx/AuthCode?code=1&phone=2"), ("GET", "/index.html"),
])
def test_unknown_asmx_path_is_404(reference_url: str, http: httpx.Client,
                                  request_line: tuple[str, str]) -> None:
    method, path = request_line
    response = http.request(method, reference_url + path, content=b"<a/>" if method == "POST"
                            else None, headers={"Content-Type": "text/xml; charset=utf-8"})
    assert response.status_code == 404


def test_server_keeps_serving_after_errors(reference_url: str, contract: Contract,
                                           http: httpx.Client) -> None:
    for request, _, _ in error_cases(contract, reference_url).values():
        send(http, request)
    op = contract.operations[0]
    ok = send(http, build_request(contract, op, sample_arguments(op), Binding.SOAP12,
                                  reference_url))
    assert ok.status_code == 200


def test_websocket_upgrade_is_answered_as_the_plain_request(reference_url: str,
                                                            http: httpx.Client,
                                                            caplog: pytest.LogCaptureFixture
                                                            ) -> None:
    """A SOAP service speaks no WebSocket: ASMX answers an ``Upgrade: websocket`` call as the
    call it also is (checked with curl on the real ASMX: 200 and the result). The reference
    handed it to the app as a WebSocket: 500, and a traceback in the server's log."""
    uvicorn_log = logging.getLogger("uvicorn")
    uvicorn_log.addHandler(caplog.handler)
    try:
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket",
                   "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
        answered = http.get(f"{reference_url}/PushNotificationMobile.asmx/GetTokenDevice?id=7",
                            headers=upgrade)
    finally:
        uvicorn_log.removeHandler(caplog.handler)
    assert answered.status_code == 200, answered.text
    assert answered.text.endswith(f">{hashlib.sha256(b'7').hexdigest()}</string>")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_leaving_running_lets_an_answer_in_flight_go_out() -> None:
    """``running`` stops its server at once when nothing is in flight (certify's end), but
    an answer under way when the block is left still goes out whole: that shutdown is
    uvicorn's own."""
    import asyncio
    import threading

    arrived = threading.Event()

    async def slow(scope, receive, send) -> None:
        arrived.set()
        await asyncio.sleep(0.2)  # within the stop's grace for answers in flight
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"4")]})
        await send({"type": "http.response.body", "body": b"done"})

    answers: list[httpx.Response | Exception] = []

    def call(url: str) -> None:
        try:
            answers.append(httpx.get(f"{url}/Slow.asmx", timeout=30))
        except httpx.HTTPError as exc:
            answers.append(exc)

    with running(app=slow) as url:
        caller = threading.Thread(target=call, args=(url,))
        caller.start()
        assert arrived.wait(30)
    caller.join(30)
    assert [(a.status_code, a.text) if isinstance(a, httpx.Response) else a
            for a in answers] == [(200, "done")]
    with pytest.raises(httpx.ConnectError):  # and it stopped listening
        httpx.get(url, timeout=5)
