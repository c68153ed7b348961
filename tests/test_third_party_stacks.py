"""The stacks of tests/services answer School Mobile as their real clients call them.

spyne and Node's soap are third-party stacks a team migrates to; the hardened ASMX is the real
runtime configured for production. Each is called the way its users would: zeep (from the
stack's own WSDL where it publishes one), Node's soap client, plain HTTP like the mobile app.
The differences each stack keeps from ASMX are asserted too: the harness's findings on these
stacks are judged against them (/work/coord/stack-findings.md checks each by hand).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from lxml import etree

from harness.contract.model import Operation
from harness.contract.types import ParamType

ROOT = Path(__file__).resolve().parents[1]
NODE_CLIENT = ROOT / "tests" / "clients" / "node_soap.js"
# The ASMX service's own WSDLs, saved as the Node team did (addresses at http://localhost:8000)
SAVED_WSDL = ROOT / "tests" / "services" / "node_soap" / "wsdl"
TNS = "http://tempuri.org/"
SOAP11_ENV = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_ENV = "http://www.w3.org/2003/05/soap-envelope"


def arguments(op: Operation) -> dict[str, object]:
    return {p.name: 7 if p.type is ParamType.INT else f"{p.name}-1" for p in op.parameters}


def expected(op: Operation) -> str | None:
    return "token-for-id-1" if op.name == "GetTokenDevice" else None


def service_name(endpoint: str) -> str:
    return endpoint.strip("/").removesuffix(".asmx")


def zeep_service(wsdl: str, endpoint: str, port: str, address: str):
    """zeep on ``wsdl``, bound to ``port`` (``Soap``/``Soap12`` of the saved ASMX WSDL, or the
    one port of spyne's) at ``address``; with the HistoryPlugin that saw the last answer."""
    import zeep
    from zeep.plugins import HistoryPlugin

    history = HistoryPlugin()
    client = zeep.Client(wsdl, plugins=[history])
    binding = f"{{{TNS}}}{service_name(endpoint)}{port}"
    return client.create_service(binding, address), history


# ------------------------------------------------------------------------------------ spyne


def test_spyne_soap11_through_its_own_wsdl_with_zeep(contract, spyne_url):
    import zeep

    for endpoint, ops in contract.endpoints.items():
        client = zeep.Client(f"{spyne_url}{endpoint}?wsdl")
        port = next(iter(next(iter(client.wsdl.services.values())).ports.values()))
        assert port.binding_options["address"] == f"{spyne_url}{endpoint}"
        for op in ops:
            assert getattr(client.service, op.name)(**arguments(op)) == expected(op), op.name


def test_spyne_wsdl_has_the_soap11_binding_only_with_bare_soap_actions(contract, spyne_url):
    """What spyne generates, left as it is: no SOAP 1.2 binding, soapAction without the
    namespace, every parameter optional and nillable."""
    wsdl = etree.fromstring(httpx.get(f"{spyne_url}/NotificationNotes.asmx?WSDL").content)
    ns = {"w": "http://schemas.xmlsoap.org/wsdl/", "s11": "http://schemas.xmlsoap.org/wsdl/soap/",
          "s12": "http://schemas.xmlsoap.org/wsdl/soap12/", "xs": "http://www.w3.org/2001/XMLSchema"}
    assert wsdl.xpath("//w:binding/s12:binding", namespaces=ns) == []
    assert sorted(wsdl.xpath("//s11:operation/@soapAction", namespaces=ns)) == [
        "SendMarkNotes", "SendNotificationType"]
    element = wsdl.xpath("//xs:element[@name='id_class']", namespaces=ns)[0]
    assert (element.get("minOccurs"), element.get("nillable")) == ("0", "true")


@pytest.mark.parametrize("port, envelope", [("Soap", SOAP11_ENV), ("Soap12", SOAP12_ENV)])
def test_spyne_soap_through_the_asmx_wsdl_with_zeep(contract, spyne_url, port, envelope):
    """A client that kept the ASMX service's WSDL (SOAP 1.1 and 1.2 ports) keeps working."""
    for endpoint, ops in contract.endpoints.items():
        wsdl = str(SAVED_WSDL / f"{service_name(endpoint)}.wsdl")
        service, history = zeep_service(wsdl, endpoint, port, f"{spyne_url}{endpoint}")
        for op in ops:
            assert getattr(service, op.name)(**arguments(op)) == expected(op), op.name
            assert history.last_received["envelope"].tag == f"{{{envelope}}}Envelope"


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_spyne_http_get_and_post_like_the_mobile_app(contract, spyne_url, method):
    """spyne's HttpRpc answers 200; GetTokenDevice's result comes as text/plain, not as ASMX's
    <string> document (a difference the migration keeps)."""
    with httpx.Client() as http:
        for op in contract.operations:
            url = f"{spyne_url}{op.endpoint}/{op.name}"
            fields = {k: str(v) for k, v in arguments(op).items()}
            answer = (http.get(url, params=fields) if method == "GET"
                      else http.post(url, data=fields))
            assert answer.status_code == 200, (op.name, answer.text)
            assert answer.text == (expected(op) or "")
            assert answer.headers["content-type"] == "text/plain"


# -------------------------------------------------------------------------------- Node soap


def node_client(jobs: list[dict]) -> list[dict]:
    done = subprocess.run(["node", str(NODE_CLIENT)], input=json.dumps(jobs), text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**os.environ, "NODE_PATH": str(ROOT / "tools" / "node_modules")})
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("port, soap12", [("Soap", False), ("Soap12", True)])
def test_node_soap_with_the_node_soap_client(contract, node_soap_url, port, soap12):
    jobs = [{"wsdl": f"{node_soap_url}{endpoint}?WSDL", "port": f"{service_name(endpoint)}{port}",
             "soap12": soap12,
             "calls": [{"operation": op.name, "args": arguments(op)} for op in ops]}
            for endpoint, ops in contract.endpoints.items()]
    lines = node_client(jobs)
    assert len(lines) == len(contract.operations)
    for line in lines:
        assert line["ok"], line
        op = contract.operation(line["operation"])
        assert line["endpoint"] == f"{node_soap_url}{op.endpoint}"
        want = expected(op)
        assert line["result"] == ({"GetTokenDeviceResult": want} if want else None), line


def test_node_soap_keeps_its_differences_from_asmx(contract, node_soap_url):
    """No HTTP GET/POST (404), and a SOAP 1.2 request answered with a SOAP 1.1 envelope under
    the request's own Content-Type: what Node's soap server does unless told otherwise."""
    op = contract.operation("GetTokenDevice")
    url = f"{node_soap_url}{op.endpoint}"
    with httpx.Client() as http:
        assert http.get(f"{url}/{op.name}", params={"id": "1"}).status_code == 404
        assert http.post(f"{url}/{op.name}", data={"id": "1"}).status_code == 404
        body = (f'<soap12:Envelope xmlns:soap12="{SOAP12_ENV}"><soap12:Body>'
                f'<GetTokenDevice xmlns="{TNS}"><id>1</id></GetTokenDevice>'
                "</soap12:Body></soap12:Envelope>")
        answer = http.post(url, content=body.encode(),
                           headers={"Content-Type": "application/soap+xml; charset=utf-8"})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/soap+xml; charset=utf-8"
    assert etree.fromstring(answer.content).tag == f"{{{SOAP11_ENV}}}Envelope"


# ---------------------------------------------------------------------------- hardened ASMX


@pytest.mark.interop
@pytest.mark.parametrize("port", ["Soap", "Soap12"])
def test_hardened_asmx_answers_soap_from_a_saved_wsdl(contract, asmx_hardened_url, port):
    for endpoint, ops in contract.endpoints.items():
        wsdl = str(SAVED_WSDL / f"{service_name(endpoint)}.wsdl")
        service, _ = zeep_service(wsdl, endpoint, port, f"{asmx_hardened_url}{endpoint}")
        for op in ops:
            assert getattr(service, op.name)(**arguments(op)) == expected(op), op.name


@pytest.mark.interop
def test_hardened_asmx_publishes_no_wsdl_and_no_stack_traces(contract, asmx_hardened_url):
    with httpx.Client() as http:
        for endpoint in contract.endpoints:
            for query in ("?WSDL", ""):
                answer = http.get(f"{asmx_hardened_url}{endpoint}{query}")
                assert answer.status_code == 500, (endpoint, query)
                assert "wsdl:definitions" not in answer.text
        body = (f'<soap:Envelope xmlns:soap="{SOAP11_ENV}"><soap:Body>'
                f'<LogoutFromSchool xmlns="{TNS}"><id_row_central>x</id_row_central>'
                "</LogoutFromSchool></soap:Body></soap:Envelope>")
        fault = http.post(f"{asmx_hardened_url}/CenterlogOut.asmx", content=body.encode(),
                          headers={"Content-Type": "text/xml; charset=utf-8",
                                   "SOAPAction": f'"{TNS}LogoutFromSchool"'})
    assert fault.status_code == 500
    assert etree.fromstring(fault.content).find(f".//{{{SOAP11_ENV}}}Fault") is not None
    assert "\n  at " not in fault.text  # customErrors On: no stack frames
