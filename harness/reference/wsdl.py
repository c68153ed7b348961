"""WSDL 1.1 for one endpoint, generated from the contract the way an ASMX service publishes it:
one schema, SOAP, SOAP 1.2, HttpGet and HttpPost bindings, and a service with four ports."""

from __future__ import annotations

from lxml import etree

from harness.contract.model import Contract, Operation, ParamType

WSDL = "http://schemas.xmlsoap.org/wsdl/"
XS = "http://www.w3.org/2001/XMLSchema"
WSOAP = "http://schemas.xmlsoap.org/wsdl/soap/"
WSOAP12 = "http://schemas.xmlsoap.org/wsdl/soap12/"
WHTTP = "http://schemas.xmlsoap.org/wsdl/http/"
MIME = "http://schemas.xmlsoap.org/wsdl/mime/"
SOAP_HTTP_TRANSPORT = "http://schemas.xmlsoap.org/soap/http"


def _el(parent: etree._Element, ns: str, tag: str, **attrs: str) -> etree._Element:
    return etree.SubElement(parent, f"{{{ns}}}{tag}", {k.rstrip("_"): v for k, v in attrs.items()})


def service_name(endpoint: str) -> str:
    return endpoint.strip("/").removesuffix(".asmx")


def wsdl_document(contract: Contract, endpoint: str, location: str) -> bytes:
    """The WSDL of ``endpoint`` whose ports point at ``location`` (the endpoint's URL)."""
    ops = contract.endpoints[endpoint]
    name, tns = service_name(endpoint), contract.namespace
    root = etree.Element(f"{{{WSDL}}}definitions", {"targetNamespace": tns}, nsmap={
        "wsdl": WSDL, "s": XS, "soap": WSOAP, "soap12": WSOAP12, "http": WHTTP, "mime": MIME,
        "tns": tns})
    _schema(_el(root, WSDL, "types"), tns, ops)
    for op in ops:
        _messages(root, op)
    for suffix, kind in (("Soap", "Soap"), ("HttpGet", "HttpGet"), ("HttpPost", "HttpPost")):
        port_type = _el(root, WSDL, "portType", name=f"{name}{suffix}")
        for op in ops:
            operation = _el(port_type, WSDL, "operation", name=op.name)
            _el(operation, WSDL, "input", message=f"tns:{op.name}{kind}In")
            _el(operation, WSDL, "output", message=f"tns:{op.name}{kind}Out")
    for ns, suffix in ((WSOAP, "Soap"), (WSOAP12, "Soap12")):
        _soap_binding(root, contract, name, ops, ns, suffix)
    for verb in ("GET", "POST"):
        _http_binding(root, name, ops, verb)
    service = _el(root, WSDL, "service", name=name)
    for ns, suffix in ((WSOAP, "Soap"), (WSOAP12, "Soap12"), (WHTTP, "HttpGet"),
                       (WHTTP, "HttpPost")):
        port = _el(service, WSDL, "port", name=f"{name}{suffix}", binding=f"tns:{name}{suffix}")
        _el(port, ns, "address", location=location)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + etree.tostring(
        root, encoding="utf-8", pretty_print=True)


def _schema(types: etree._Element, tns: str, ops: tuple[Operation, ...]) -> None:
    schema = _el(types, XS, "schema", elementFormDefault="qualified", targetNamespace=tns)
    for op in ops:
        request = _el(_el(schema, XS, "element", name=op.name), XS, "complexType")
        sequence = _el(request, XS, "sequence")
        for p in op.parameters:
            occurs = "1" if p.type is ParamType.INT else "0"  # value types are never omitted
            _el(sequence, XS, "element", minOccurs=occurs, maxOccurs="1", name=p.name,
                type=f"s:{p.type.value}")
        response = _el(_el(schema, XS, "element", name=op.response_element), XS, "complexType")
        if op.result_element:
            _el(_el(response, XS, "sequence"), XS, "element", minOccurs="0", maxOccurs="1",
                name=op.result_element, type=f"s:{op.result}")
    for result_type in sorted({op.result for op in ops if op.result}):
        _el(schema, XS, "element", name=result_type, nillable="true", type=f"s:{result_type}")


def _messages(root: etree._Element, op: Operation) -> None:
    _el(_el(root, WSDL, "message", name=f"{op.name}SoapIn"), WSDL, "part",
        name="parameters", element=f"tns:{op.name}")
    _el(_el(root, WSDL, "message", name=f"{op.name}SoapOut"), WSDL, "part",
        name="parameters", element=f"tns:{op.response_element}")
    for kind in ("HttpGet", "HttpPost"):
        message = _el(root, WSDL, "message", name=f"{op.name}{kind}In")
        for p in op.parameters:
            _el(message, WSDL, "part", name=p.name, type="s:string")
        out = _el(root, WSDL, "message", name=f"{op.name}{kind}Out")
        if op.result:
            _el(out, WSDL, "part", name="Body", element=f"tns:{op.result}")


def _soap_binding(root: etree._Element, contract: Contract, name: str,
                  ops: tuple[Operation, ...], ns: str, suffix: str) -> None:
    binding = _el(root, WSDL, "binding", name=f"{name}{suffix}", type=f"tns:{name}Soap")
    _el(binding, ns, "binding", transport=SOAP_HTTP_TRANSPORT)
    for op in ops:
        operation = _el(binding, WSDL, "operation", name=op.name)
        _el(operation, ns, "operation", soapAction=contract.soap_action(op).strip('"'),
            style="document")
        for direction in ("input", "output"):
            _el(_el(operation, WSDL, direction), ns, "body", use="literal")


def _http_binding(root: etree._Element, name: str, ops: tuple[Operation, ...], verb: str) -> None:
    kind = "HttpGet" if verb == "GET" else "HttpPost"
    binding = _el(root, WSDL, "binding", name=f"{name}{kind}", type=f"tns:{name}{kind}")
    _el(binding, WHTTP, "binding", verb=verb)
    for op in ops:
        operation = _el(binding, WSDL, "operation", name=op.name)
        _el(operation, WHTTP, "operation", location=f"/{op.name}")
        request = _el(operation, WSDL, "input")
        if verb == "GET":
            _el(request, WHTTP, "urlEncoded")
        else:
            _el(request, MIME, "content", type="application/x-www-form-urlencoded")
        output = _el(operation, WSDL, "output")
        if op.result:
            _el(output, MIME, "mimeXml", part="Body")
