"""WSDL 1.1 for one endpoint, generated from the contract the way an ASMX service publishes it:
one schema, SOAP, SOAP 1.2, HttpGet and HttpPost bindings, and a service with four ports."""

from __future__ import annotations

from lxml import etree

from harness.contract import structure
from harness.contract.model import Contract, Operation, ParamType
from harness.contract.structure import Schema
from harness.contract.types import MS_TYPES_NS

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
    http_ops = {verb: tuple(op for op in ops if verb in contract.bindings_of(op))
                for verb in ("get", "post")}
    arrays = any(p.type is ParamType.COMPLEX for op in {*http_ops["get"], *http_ops["post"]}
                 for p in op.parameters)
    root = etree.Element(f"{{{WSDL}}}definitions", {"targetNamespace": tns}, nsmap={
        "wsdl": WSDL, "s": XS, "soap": WSOAP, "soap12": WSOAP12, "http": WHTTP, "mime": MIME,
        "tns": tns, "s1": MS_TYPES_NS, **({"s2": _abstract(tns), "soapenc": SOAP_ENC}
                                          if arrays else {})})
    types = _el(root, WSDL, "types")
    _schema(types, tns, ops)
    if arrays:
        _abstract_schema(types, tns)
    for op in ops:
        _messages(root, op, [k for k, v in (("HttpGet", "get"), ("HttpPost", "post"))
                             if op in http_ops[v]])
    for suffix, kind, offered in (("Soap", "Soap", ops), ("HttpGet", "HttpGet", http_ops["get"]),
                                  ("HttpPost", "HttpPost", http_ops["post"])):
        if suffix != "Soap" and kind[4:].lower() not in contract.bindings:
            continue
        port_type = _el(root, WSDL, "portType", name=f"{name}{suffix}")
        for op in offered:
            operation = _el(port_type, WSDL, "operation", name=op.name)
            _el(operation, WSDL, "input", message=f"tns:{op.name}{kind}In")
            _el(operation, WSDL, "output", message=f"tns:{op.name}{kind}Out")
    ports = [p for p in _PORTS if p[2] in contract.bindings]
    for ns, suffix, binding in ports:
        if binding in ("soap11", "soap12"):
            _soap_binding(root, contract, name, ops, ns, suffix)
        else:
            _http_binding(root, name, http_ops[binding], binding.upper())
    service = _el(root, WSDL, "service", name=name)
    for ns, suffix, _ in ports:
        port = _el(service, WSDL, "port", name=f"{name}{suffix}", binding=f"tns:{name}{suffix}")
        _el(port, ns, "address", location=location)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + etree.tostring(
        root, encoding="utf-8", pretty_print=True)


_PORTS = ((WSOAP, "Soap", "soap11"), (WSOAP12, "Soap12", "soap12"), (WHTTP, "HttpGet", "get"),
          (WHTTP, "HttpPost", "post"))


SOAP_ENC = "http://schemas.xmlsoap.org/soap/encoding/"


def _abstract(tns: str) -> str:
    """The namespace of ASMX's StringArray (the type of an array field in GET/POST)."""
    return f"{tns}AbstractTypes"


def _abstract_schema(types: etree._Element, tns: str) -> None:
    schema = _el(types, XS, "schema", targetNamespace=_abstract(tns))
    _el(schema, XS, "import", namespace=SOAP_ENC)
    restriction = _el(_el(_el(schema, XS, "complexType", name="StringArray"), XS,
                          "complexContent", mixed="false"), XS, "restriction",
                      base="soapenc:Array")
    _el(_el(restriction, XS, "sequence"), XS, "element", minOccurs="0", maxOccurs="unbounded",
        name="String", type="s:string")


def _type_ref(kind: ParamType, type_name: str | None) -> str:
    """The schema type of a parameter or result, prefixed as ASMX writes it."""
    if kind in (ParamType.GUID, ParamType.CHAR):
        return f"s1:{kind.value}"
    if kind in (ParamType.ENUM, ParamType.COMPLEX):
        return f"tns:{type_name}"
    return f"s:{kind.value}"


def _field_ref(schema: Schema, type_ref: str) -> str:
    simple = structure.simple_kind(type_ref, schema)
    if simple is None or simple[0] is ParamType.ENUM:
        return f"tns:{type_ref}"
    return _type_ref(simple[0], type_ref)


def _complex_types(schema_el: etree._Element, schema: Schema, ops: tuple[Operation, ...],
                   enums: dict[str, tuple[str, ...]]) -> bool:
    """The complexTypes the operations use (nested ones too); whether one has a guid or char
    field. Enumerations their fields use are added to ``enums``."""
    roots = [p.type_name or "" for op in ops for p in op.parameters
             if p.type is ParamType.COMPLEX]
    roots += [op.result or "" for op in ops if op.result_type is ParamType.COMPLEX]
    ms_types = False
    for named in structure.used_types(schema, tuple(roots)):
        if named.values:
            enums[named.name] = named.values
            continue
        sequence = _el(_el(schema_el, XS, "complexType", name=named.name), XS, "sequence")
        for f in named.fields:
            attrs = {"nillable": "true"} if f.nillable else {}
            _el(sequence, XS, "element", minOccurs=str(f.min_occurs),
                maxOccurs="unbounded" if f.max_occurs is None else str(f.max_occurs),
                name=f.name, **attrs, type=_field_ref(schema, f.type))
            ms_types |= f.type in (ParamType.GUID.value, ParamType.CHAR.value)
    return ms_types


def _schema(types: etree._Element, tns: str, ops: tuple[Operation, ...]) -> None:
    schema = _el(types, XS, "schema", elementFormDefault="qualified", targetNamespace=tns)
    enums: dict[str, tuple[str, ...]] = {}
    ms_types = False
    for op in ops:
        request = _el(_el(schema, XS, "element", name=op.name), XS, "complexType")
        sequence = _el(request, XS, "sequence")
        for p in op.parameters:
            low, high, nillable = p.occurrence  # as ASMX publishes the type, or as given
            _el(sequence, XS, "element", minOccurs=str(low),
                maxOccurs="unbounded" if high is None else str(high), name=p.name,
                **({"nillable": "true"} if nillable else {}), type=_type_ref(p.type, p.type_name))
            if p.values:
                enums[p.type_name or p.name] = p.values
        response = _el(_el(schema, XS, "element", name=op.response_element), XS, "complexType")
        kind = op.result_type
        if op.result_element and kind is not None:
            occurs = "1" if kind.is_value_type else "0"
            _el(_el(response, XS, "sequence"), XS, "element", minOccurs=occurs, maxOccurs="1",
                name=op.result_element, type=_type_ref(kind, op.result))
            if op.result_values:
                enums[op.result or ""] = op.result_values
        ms_types |= any(k in (ParamType.GUID, ParamType.CHAR)
                        for k in (kind, *(p.type for p in op.parameters)))
    if ops:
        ms_types |= _complex_types(schema, ops[0].schema, ops, enums)
    for enum, values in enums.items():
        restriction = _el(_el(schema, XS, "simpleType", name=enum), XS, "restriction",
                          base="s:string")
        for value in values:
            _el(restriction, XS, "enumeration", value=value)
    results = {op.result: op.result_type for op in ops if op.result and op.result_type}
    for result, kind in results.items():
        attrs = {} if kind.is_value_type else {"nillable": "true"}
        _el(schema, XS, "element", name=result, **attrs, type=_type_ref(kind, result))
    if ms_types:
        schema.insert(0, etree.Element(f"{{{XS}}}import", namespace=MS_TYPES_NS))
        _ms_schema(types)


def _ms_schema(types: etree._Element) -> None:
    """The schema ASMX adds for System.Char and System.Guid."""
    schema = _el(types, XS, "schema", elementFormDefault="qualified",
                 targetNamespace=MS_TYPES_NS)
    _el(_el(schema, XS, "simpleType", name="char"), XS, "restriction", base="s:unsignedShort")
    guid = _el(_el(schema, XS, "simpleType", name="guid"), XS, "restriction", base="s:string")
    _el(guid, XS, "pattern", value="[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
        "[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _messages(root: etree._Element, op: Operation, http_kinds: list[str]) -> None:
    _el(_el(root, WSDL, "message", name=f"{op.name}SoapIn"), WSDL, "part",
        name="parameters", element=f"tns:{op.name}")
    _el(_el(root, WSDL, "message", name=f"{op.name}SoapOut"), WSDL, "part",
        name="parameters", element=f"tns:{op.response_element}")
    for kind in http_kinds:
        message = _el(root, WSDL, "message", name=f"{op.name}{kind}In")
        for p in op.parameters:
            _el(message, WSDL, "part", name=p.name, type="s2:StringArray"
                if p.type is ParamType.COMPLEX else "s:string")
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
