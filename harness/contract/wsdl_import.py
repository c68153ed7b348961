"""A contract from ASMX WSDLs, read with zeep's WSDL/XSD parser (parsing only: nothing called).

ASMX publishes one WSDL per .asmx endpoint; ``describe`` reads one into a ``Description`` (what
the WSDL says: operations with their parameter and result types, and per binding the SOAPAction
or location of each operation and the port's address), ``to_contract`` merges descriptions into
a Contract, and ``differences`` names what a description changes from a contract (the WSDL-*
rules and ``harness contract --check`` read it). It reads documents already fetched:
``harness.traffic.wsdls`` reads them from a URL or a file.

Hardened: every document is first read by the ONE hardened parser (no DTD, no entities, size
cap), zeep gets Settings(forbid_dtd, forbid_entities, forbid_external) and a transport that
only hands back the document given, so a WSDL that imports anything else is refused, not
fetched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from harness.contract.model import ALL_BINDINGS, Contract, Operation, Parameter, _roots
from harness.contract.structure import (
    MAX_NESTING,
    Field,
    NamedType,
    check_schema,
    differences,
)
from harness.contract.types import MS_TYPES_NS, ParamType
from harness.contract.xmlsafe import parse_xml
from harness.errors import HarnessError, UsageError

XS = "http://www.w3.org/2001/XMLSchema"
#: Largest WSDL read from a URL or file.
MAX_WSDL_BYTES = 4 * 1024 * 1024
_MS_TYPES = {"guid": ParamType.GUID, "char": ParamType.CHAR}
_XS_TYPES = {t.value: t for t in ParamType if t not in (ParamType.ENUM, ParamType.COMPLEX)} | {
    "guid": None, "char": None}


SOAP_ENCODING_NS = "http://schemas.xmlsoap.org/soap/encoding/"
#: What ASMX WSDLs use of the SOAP encoding schema (soapenc:Array, restricted by the
#: StringArray of HttpGet/HttpPost array parameters).
SOAP_ENCODING_STUB = (
    f'<s:schema xmlns:s="{XS}" targetNamespace="{SOAP_ENCODING_NS}">'
    '<s:complexType name="Array"><s:sequence>'
    '<s:any minOccurs="0" maxOccurs="unbounded" processContents="lax"/></s:sequence>'
    '<s:attribute name="arrayType" type="s:string"/></s:complexType></s:schema>').encode()


class WsdlError(HarnessError):
    """A WSDL that cannot be read as an ASMX service description."""


@dataclass(frozen=True)
class Port:
    """One port of the service: its binding (a contract binding name) and address."""

    binding: str
    address: str
    #: Operation name -> its SOAPAction (SOAP bindings) or location (HTTP bindings).
    actions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Description:
    """What one endpoint's WSDL says."""

    source: str
    namespace: str
    service: str
    endpoint: str
    operations: tuple[Operation, ...]
    ports: tuple[Port, ...]
    #: The named types of its arrays, complex types and the enumerations their fields use.
    types: tuple[NamedType, ...] = ()

    @property
    def bindings(self) -> tuple[str, ...]:
        return tuple(b for b in ALL_BINDINGS if any(p.binding == b for p in self.ports))

    def port(self, binding: str) -> Port | None:
        return next((p for p in self.ports if p.binding == binding), None)


def describe(source: str, document: bytes, location: str | None = None) -> Description:
    """The Description of ``document``, the WSDL read from ``source`` (``location``: the
    address zeep resolves it at, default ``source``). Reading it from a URL or file is
    ``harness.traffic.wsdls``' job: the contract never touches the network."""
    from zeep.exceptions import Error as ZeepError

    location, data = location or source, document
    try:
        root = parse_xml(data, max_bytes=MAX_WSDL_BYTES)
    except HarnessError as exc:
        raise WsdlError(f"{source}: {exc}") from None
    wsdl = _zeep_document(location, data)
    services = list(wsdl.services.values())
    if len(services) != 1:
        raise WsdlError(f"{source}: {len(services)} services; an ASMX WSDL has one")
    service = services[0]
    namespace = root.get("targetNamespace", "")
    enums = _enumerations(root)
    ports = tuple(p for p in (_port(port) for port in service.ports.values()) if p)
    if not ports:
        raise WsdlError(f"{source}: the service has no SOAP or HTTP port")
    endpoint = _endpoint(ports[0].address, source)
    soap = next((port for port in service.ports.values()
                 if _binding_name(port.binding) in ("soap11", "soap12")), None)
    if soap is None:
        raise WsdlError(f"{source}: no SOAP port; the parameter types come from its messages")
    types = _Types(enums, source)
    try:
        operations = tuple(_offered(_operation(op, endpoint, types), ports)
                           for op in soap.binding._operations.values())
    except RecursionError:
        raise WsdlError(f"{source}: its types nest deeper than zeep can read") from None
    except (ZeepError, ValueError, KeyError, AttributeError, TypeError) as exc:
        # zeep resolves type references lazily, while they are walked
        raise WsdlError(f"{source}: its types cannot be read: {type(exc).__name__} "
                        f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    named = tuple(types.found.values())
    try:
        check_schema(named, tuple(_roots(operations)))
    except ValueError as exc:
        raise WsdlError(f"{source}: {exc}") from None
    contract = Contract(operations, namespace, service.name, "", ALL_BINDINGS, named)
    return Description(source, namespace, service.name, endpoint, contract.operations, ports,
                       named)


def _with_xsd11_types() -> None:
    """Teach zeep XSD 1.1's four built-ins (dateTimeStamp, yearMonthDuration,
    dayTimeDuration, anyAtomicType: the XSD namespace, so a WSDL may use them); it knows
    XSD 1.0's. Read as their 1.0 parents: the contract holds their lexical rules."""
    from zeep.xsd.const import xsd_ns
    from zeep.xsd.types import builtins

    known = {cls._default_qname for cls in builtins._types}
    for name, parent in (("dateTimeStamp", builtins.DateTime),
                         ("yearMonthDuration", builtins.Duration),
                         ("dayTimeDuration", builtins.Duration),
                         ("anyAtomicType", builtins.AnySimpleType)):
        if xsd_ns(name) not in known:
            builtins._types.append(type(name, (parent,), {"_default_qname": xsd_ns(name)}))


def _zeep_document(location: str, data: bytes):
    from zeep.exceptions import Error as ZeepError
    from zeep.exceptions import ExternalReferenceForbidden
    from zeep.settings import Settings
    from zeep.transports import Transport
    from zeep.wsdl.wsdl import Document

    class OnlyThis(Transport):
        """Hands zeep the one document given (and a stub of the SOAP encoding schema, which
        zeep imports by itself for the arrays ASMX's HttpGet/HttpPost messages use); any other
        reference is refused, never fetched."""

        def load(self, url: str) -> bytes:
            if url == location:
                return data
            if url == SOAP_ENCODING_NS:
                return SOAP_ENCODING_STUB
            raise WsdlError(f"{location} refers to {url}: external references are not loaded")

    # forbid_external stays off only because zeep would refuse its own soap-encoding import
    # before asking the transport; the transport above is the gate.
    settings = Settings(strict=False, forbid_dtd=True, forbid_entities=True,
                        forbid_external=False)
    _with_xsd11_types()
    try:
        return Document(location, OnlyThis(), settings=settings)
    except HarnessError:
        raise
    except ExternalReferenceForbidden as exc:
        raise WsdlError(f"{location} refers to {exc.url}: external references are not "
                        "loaded") from None
    except RecursionError:
        raise WsdlError(f"{location}: its types nest deeper than zeep can read") from None
    except (ZeepError, ValueError, KeyError, AttributeError, TypeError) as exc:
        raise WsdlError(f"{location}: not a WSDL zeep can read: {type(exc).__name__} "
                        f"{str(exc).splitlines()[0] if str(exc) else ''}") from None


def _binding_name(binding) -> str | None:
    from zeep.wsdl.bindings import http, soap

    kinds = ((soap.Soap12Binding, "soap12"), (soap.Soap11Binding, "soap11"),
             (http.HttpGetBinding, "get"), (http.HttpPostBinding, "post"))
    return next((name for kind, name in kinds if isinstance(binding, kind)), None)


def _port(port) -> Port | None:
    name = _binding_name(port.binding)
    if name is None:
        return None
    ops = port.binding._operations.values()
    if name in ("soap11", "soap12"):
        actions = {op.name: op.soapaction or "" for op in ops}
    else:
        actions = {op.name: op.location or "" for op in ops}
    return Port(name, port.binding_options.get("address", ""), actions)


def _offered(op: Operation, ports: tuple[Port, ...]) -> Operation:
    """``op`` with the bindings offering it, when some port leaves it out."""
    offering = tuple(b for b in ALL_BINDINGS for p in ports
                     if p.binding == b and op.name in p.actions)
    return op if len(offering) == len(ports) else replace(op, bindings=offering)


def _endpoint(address: str, source: str) -> str:
    path = urlsplit(address or source).path
    segment = next((s for s in reversed(path.split("/")) if s.lower().endswith(".asmx")), None)
    if segment is None:
        raise WsdlError(f"{source}: service address {address!r} names no .asmx endpoint")
    return f"/{segment}"


def _enumerations(root) -> dict[tuple[str, str], tuple[str, ...]]:
    """(namespace, simpleType name) -> enumeration members: zeep's XSD model drops them."""
    found = {}
    for schema in root.iter(f"{{{XS}}}schema"):
        tns = schema.get("targetNamespace", "")
        for simple in schema.iterfind(f"{{{XS}}}simpleType"):
            values = tuple(e.get("value", "") for e in simple.iterfind(
                f"{{{XS}}}restriction/{{{XS}}}enumeration"))
            if values:
                found[(tns, simple.get("name", ""))] = values
    return found


#: Most named types and fields per type read from one WSDL: a hostile WSDL stays a bounded
#: contract.
MAX_TYPES = 1000
MAX_FIELDS = 1000


class _Types:
    """The named types met while reading one WSDL's operations (zeep's XSD model walked once
    per type: a type that refers to itself is met again by name, not walked again)."""

    def __init__(self, enums: dict[tuple[str, str], tuple[str, ...]], source: str) -> None:
        self.enums = enums
        self.source = source
        self.found: dict[str, NamedType] = {}

    def parameter(self, name: str, element, depth: int = 0) -> Parameter:
        """The parameter ``element`` declares, with its occurrence and nillable as published."""
        p = self._parameter(name, element, depth)
        try:
            high = element.max_occurs
            occurs = (int(element.min_occurs), None if high == "unbounded" else int(high),
                      bool(element.nillable))
        except (AttributeError, TypeError, ValueError):
            return p
        return replace(p, occurs=occurs)

    def _parameter(self, name: str, element, depth: int = 0) -> Parameter:
        xsd_type = element.type
        qname = getattr(xsd_type, "qname", None)
        ns, local = (qname.namespace, qname.localname) if qname is not None else ("", "")
        if ns == XS and local in _XS_TYPES:
            return Parameter(name, ParamType(local))
        if qname is None and type(xsd_type).__name__ == "AnyType":
            return Parameter(name, ParamType.ANY_TYPE)  # an element of no type: xs:anyType
        if ns == MS_TYPES_NS and local in _MS_TYPES:
            return Parameter(name, _MS_TYPES[local])
        if (ns, local) in self.enums:
            return Parameter(name, ParamType.ENUM, type_name=local, values=self.enums[(ns, local)])
        return Parameter(name, ParamType.COMPLEX,
                         type_name=self.complex(xsd_type, local, name, depth))

    def reference(self, name: str, element, depth: int) -> str:
        """The type of a field: an XSD built-in's name or a named type (read into ``found``)."""
        p = self.parameter(name, element, depth)
        if p.type is ParamType.ENUM and p.type_name:
            self._add(NamedType(p.type_name, values=p.values))
        return p.type_name or p.type.value

    def complex(self, xsd_type, local: str, owner: str, depth: int) -> str:
        name = local or f"{owner}Type"  # an anonymous type: named after its element
        if name in self.found:
            return name
        if depth >= MAX_NESTING:
            raise WsdlError(f"{self.source}: type {name} nests deeper than {MAX_NESTING} levels")
        self._add(NamedType(name))  # placeholder first: a type that contains itself ends here
        children = list(getattr(xsd_type, "elements", None) or [])
        if len(children) > MAX_FIELDS:
            raise WsdlError(f"{self.source}: type {name} has more than {MAX_FIELDS} fields")
        fields = tuple(Field(child, self.reference(child, element, depth + 1),
                             int(element.min_occurs),
                             None if element.max_occurs == "unbounded"
                             else int(element.max_occurs), bool(element.nillable))
                       for child, element in children)
        self.found[name] = NamedType(name, fields)
        return name

    def _add(self, named: NamedType) -> None:
        if named.name not in self.found and len(self.found) >= MAX_TYPES:
            raise WsdlError(f"{self.source}: more than {MAX_TYPES} named types")
        self.found.setdefault(named.name, named)


def _operation(op, endpoint: str, types: _Types) -> Operation:
    params = tuple(types.parameter(name, element) for name, element in _elements(op.input.body))
    results = _elements(op.output.body)
    result, values = None, ()
    if results:
        kind = types.parameter(results[0][0], results[0][1])
        result = kind.type_name or kind.type.value
        values = kind.values
    return Operation(op.name, endpoint, params, "", result, False, values)


def _elements(body) -> list:
    """(name, element) of the children of a document/literal body element."""
    if body is None or not hasattr(body.type, "elements"):
        return []
    return list(body.type.elements)


# ------------------------------------------------------------------------------ merging


def to_contract(descriptions: Sequence[Description], name: str = "") -> Contract:
    """One contract from the WSDLs of a service's endpoints (one namespace)."""
    if not descriptions:
        raise UsageError("no WSDL given")
    namespaces = {d.namespace for d in descriptions}
    if len(namespaces) != 1:
        raise WsdlError(f"the WSDLs name {len(namespaces)} namespaces "
                        f"({', '.join(sorted(namespaces))}); a contract has one")
    ops: dict[str, Operation] = {}
    for d in descriptions:
        for op in d.operations:
            if op.name in ops and ops[op.name].endpoint != op.endpoint:
                raise WsdlError(f"operation {op.name} is on {ops[op.name].endpoint} and "
                                f"{op.endpoint}: operation names are the contract's keys")
            ops.setdefault(op.name, op)
    bindings = tuple(b for b in ALL_BINDINGS if all(b in d.bindings for d in descriptions))
    types: dict[str, NamedType] = {}
    for d in descriptions:
        for t in d.types:
            if t.name in types and types[t.name] != t:
                problems = differences({t.name: types[t.name]}, {t.name: t}, t.name)
                raise WsdlError(f"type {t.name} differs between the WSDLs: {problems[0]}")
            types.setdefault(t.name, t)
    return Contract(tuple(ops.values()), namespaces.pop(),
                    name or descriptions[0].service, "", bindings, tuple(types.values()))


def annotate(derived: Contract, annotated: Contract) -> Contract:
    """``derived`` (from WSDLs) with what a WSDL cannot say taken from ``annotated``: the
    contract's name and spec, each operation's clause and the sensitivity flags."""
    def operation(op: Operation) -> Operation:
        known = annotated.find(op.name)
        if known is None:
            return op
        params = tuple(replace(p, sensitive=k.sensitive) if (k := known.parameter(p.name))
                       else p for p in op.parameters)
        return replace(op, parameters=params, clause=known.clause,
                       result_sensitive=known.result_sensitive)

    return replace(derived, operations=tuple(operation(op) for op in derived.operations),
                   name=annotated.name, spec=annotated.spec)
