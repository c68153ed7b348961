"""The reference's robustness fixes found by the probe review (issue 11): a 5,000-digit
``id_row_central`` is a Client fault with no Python exception text, a body of 900k empty elements
is refused before it is built, and a connection that never finishes its headers is closed."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from harness.contract.bindings import Binding, build_request, read_response
from harness.contract.model import ParamType, school_mobile
from harness.contract.xmlsafe import MAX_XML_TAGS, parse_xml
from harness.errors import XMLRejected
from harness.reference.server import running
from harness.traffic.send import client, send

CONTRACT = school_mobile()
LOGOUT = next(op for op in CONTRACT.operations if op.name == "LogoutFromSchool")
CLIENT_CODE = {Binding.SOAP11: "Client", Binding.SOAP12: "Sender"}
PYTHON_WORDS = ("ValueError", "Traceback", "Exception", "Error:", "File \"")


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with client(60.0) as made:
        yield made


def test_a_5000_digit_integer_is_not_an_int32() -> None:
    assert not ParamType.INT.accepts("9" * 5000)
    assert not ParamType.INT.accepts("-" + "1" * 11)
    assert ParamType.INT.accepts("0000000000002147483647")  # leading zeros: still Int32
    assert not ParamType.INT.accepts("2147483648")


@pytest.mark.parametrize("binding", [Binding.SOAP11, Binding.SOAP12])
def test_5000_digits_get_a_client_fault_without_python_text(
        reference_url: str, http: httpx.Client, binding: Binding) -> None:
    args = {"PhoneNumber": "1", "UuId": "u", "id_row_central": "9" * 5000}
    response = send(http, build_request(CONTRACT, LOGOUT, args, binding, reference_url))
    reading = read_response(LOGOUT, binding, response)
    assert response.status == 500 and reading.fault_code == CLIENT_CODE[binding]
    assert not any(word in (reading.fault_reason or "") for word in PYTHON_WORDS)


@pytest.mark.parametrize("binding", [Binding.HTTP_GET, Binding.HTTP_POST])
def test_5000_digits_over_get_post_are_refused_without_python_text(
        reference_url: str, http: httpx.Client, binding: Binding) -> None:
    args = {"PhoneNumber": "1", "UuId": "u", "id_row_central": "9" * 5000}
    response = send(http, build_request(CONTRACT, LOGOUT, args, binding, reference_url))
    assert response.status == 500
    assert not any(word.encode() in response.body for word in PYTHON_WORDS)


def wide_envelope(count: int) -> bytes:
    """A SOAP 1.1 call whose parameter holds ``count`` empty elements (4 bytes each)."""
    return (b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
            b'<GetTokenDevice xmlns="http://tempuri.org/"><id>' + b"<a/>" * count
            + b"</id></GetTokenDevice></soap:Body></soap:Envelope>")


def test_the_parser_refuses_900k_empty_elements_before_building_them() -> None:
    with pytest.raises(XMLRejected, match="tag limit"):
        parse_xml(wide_envelope(900_000))
    parse_xml(wide_envelope(MAX_XML_TAGS // 2))  # wide but within the limit


def test_the_reference_answers_900k_empty_elements_with_a_client_fault(
        reference_url: str, http: httpx.Client) -> None:
    op = next(op for op in CONTRACT.operations if op.name == "GetTokenDevice")
    request = build_request(CONTRACT, op, {"id": "1"}, Binding.SOAP11, reference_url)
    body = wide_envelope(900_000)
    request = request.__class__(request.method, request.url,
                                tuple((k, str(len(body)) if k == "Content-Length" else v)
                                      for k, v in request.headers), body)
    response = send(http, request)
    assert response.status == 500
    assert read_response(op, Binding.SOAP11, response).fault_code == "Client"
    # and the server still answers a plain call
    plain = build_request(CONTRACT, op, {"id": "7"}, Binding.SOAP11, reference_url)
    assert send(http, plain).status == 200


def test_a_connection_that_never_finishes_its_headers_is_closed() -> None:
    with running(header_timeout=0.5) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as half_sent:
            half_sent.sendall(b"POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: a\r\n")
            assert half_sent.recv(1024) == b""  # closed by the server, not by our 30 s timeout
        # a request sent whole is still answered
        with httpx.Client(timeout=30) as http:
            assert http.get(f"{url}/PushNotificationMobile.asmx?WSDL").status_code == 200
