"""Capture in front of a deployment behind Windows authentication: a real client (zeep, with
requests-ntlm: pyspnego underneath) authenticates through ``harness capture`` to an NTLM front
of the service. NTLM authenticates a connection, so this works only when each client
connection keeps one upstream connection of its own (mitmproxy's design): the handshake's legs
and the calls after it reach the front over one connection. Every exchange is recorded, the
credentials as pseudonyms."""

from __future__ import annotations

from pathlib import Path

from auth_servers import NTLM_USER, PASSWORD, stats

from harness.capture.process import CaptureProcess
from harness.contract.model import Contract
from harness.reference.wsdl import service_name
from harness.traffic.recording import read_exchanges


def _zeep_with_ntlm(proxy: str, endpoint: str, port: str) -> str:
    import requests
    import zeep
    from requests_ntlm import HttpNtlmAuth
    from zeep.transports import Transport

    session = requests.Session()
    session.trust_env = False
    session.auth = HttpNtlmAuth(NTLM_USER, PASSWORD)
    client = zeep.Client(f"{proxy}{endpoint}?WSDL", transport=Transport(session=session))
    service = client.bind(service_name(endpoint), f"{service_name(endpoint)}{port}")
    answers = [service.GetTokenDevice(id=7), service.GetTokenDevice(id=8)]
    session.close()
    return " ".join(str(a) for a in answers)


def test_capture_records_a_zeep_client_authenticating_with_ntlm(contract: Contract,
                                                                ntlm_front: str,
                                                                tmp_path: Path) -> None:
    endpoint = contract.find("GetTokenDevice").endpoint
    out = tmp_path / "ntlm.jsonl"
    before = stats(ntlm_front)
    with CaptureProcess(ntlm_front, out) as capture:
        # two clients, two connections, each with a handshake of its own, at once
        answers = [_zeep_with_ntlm(capture.url, endpoint, port) for port in ("Soap", "Soap12")]
        code, _stdout, stderr = capture.stop()
    assert code == 0, stderr
    assert all(answers), answers
    after = stats(ntlm_front)
    assert after["refused"] == before["refused"]
    assert after["handshakes"] - before["handshakes"] >= 2  # one per client connection at least
    exchanges = list(read_exchanges([out]))
    calls = [e for e in exchanges if e.meta.get("operation") == "GetTokenDevice"
             and e.response is not None and e.response.status == 200]
    assert sorted(e.meta.get("binding") for e in calls) == ["soap11"] * 2 + ["soap12"] * 2
    challenged = [e for e in exchanges if e.response is not None and e.response.status == 401]
    assert challenged, "the handshake's legs are recorded too"
    authorizations = [v for e in exchanges for k, v in e.request.headers
                      if k.lower() == "authorization"]
    assert authorizations and all(v.startswith("redacted-") for v in authorizations)
    raw = out.read_bytes()
    # no message of the client's in clear (NTLM type 1 and 3; the server's challenge, type 2,
    # names the scheme and stays as it is)
    assert PASSWORD.encode() not in raw
    assert b"TlRMTVNTUAAB" not in raw and b"TlRMTVNTUAAD" not in raw


def test_capture_presents_a_client_certificate_to_an_mtls_upstream(mtls_front: str, pki,
                                                                   tmp_path: Path) -> None:
    import httpx

    path = "/PushNotificationMobile.asmx/GetTokenDevice?id=3"
    out = tmp_path / "mtls.jsonl"
    with CaptureProcess(mtls_front, out, "--cacert", str(pki.ca), "--cert",
                        str(pki.client_bundle)) as capture:
        answer = httpx.get(f"{capture.url}{path}", timeout=30)
        code, _stdout, stderr = capture.stop()
    assert code == 0, stderr
    assert answer.status_code == 200 and b"<string" in answer.content, answer.text
    exchange, = read_exchanges([out])
    assert exchange.response is not None and exchange.response.status == 200
