"""The shared sender (harness.traffic.send) used by diff and replay: retargeting keeps the request,
sending adds nothing of its own, and an unreachable target is one clear error."""

from __future__ import annotations

import socket

import pytest

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract
from harness.errors import TargetUnreachable, UsageError
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import HttpRequest, HttpResponse
from harness.traffic.send import check_reachable, client, retarget, send


def recorded(contract: Contract) -> HttpRequest:
    op = contract.operation("GetTokenDevice")
    request = build_request(contract, op, {"id": "Ünïcødé <&>"}, Binding.SOAP11,
                            "http://legacy.example:8080/School")
    return HttpRequest(request.method, request.url, (
        *request.headers, ("Connection", "close"), ("Transfer-Encoding", "identity"),
        ("User-Agent", "SchoolApp/3.1"), ("Keep-Alive", "300")), request.body)


def test_retarget_rewrites_address_and_host_only(contract: Contract) -> None:
    request = recorded(contract)
    moved = retarget(request, "https://new.example/App/")
    assert moved.url == "https://new.example/App/PushNotificationMobile.asmx"
    assert moved.header("Host") == "new.example"
    assert moved.body == request.body
    names = [k.lower() for k, _ in moved.headers]
    assert names == ["host", "content-type", "content-length", "soapaction", "user-agent"]
    assert moved.header("SOAPAction") == request.header("SOAPAction")
    get = build_request(contract, contract.operation("GetTokenDevice"), {"id": "a&b"},
                        Binding.HTTP_GET, "http://legacy.example/School")
    assert retarget(get, "http://127.0.0.1:9").url == \
        "http://127.0.0.1:9/PushNotificationMobile.asmx/GetTokenDevice?id=a%26b"


def test_send_adds_no_headers_of_its_own(contract: Contract) -> None:
    seen: list[HttpRequest] = []

    def respond(contract: Contract, request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return answer(contract, request)

    with running(contract, app=create_app(contract, respond=respond)) as url, client() as http:
        response = send(http, retarget(recorded(contract), url))
    assert response.status == 200 and b"GetTokenDeviceResult" in response.body
    names = {k.lower() for k, _ in seen[0].headers}
    assert names == {"host", "content-type", "content-length", "soapaction", "user-agent"}
    assert seen[0].header("User-Agent") == "SchoolApp/3.1"
    assert seen[0].body == recorded(contract).body


def test_unreachable_and_bad_urls_are_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(TargetUnreachable, match="unreachable") as caught:
        check_reachable(closed)
    assert "\n" not in str(caught.value)
    with pytest.raises(TargetUnreachable), client() as http:
        send(http, HttpRequest("GET", closed + "/X.asmx"))
    with pytest.raises(UsageError):
        retarget(HttpRequest("GET", "http://a/X.asmx"), "ftp://elsewhere")
