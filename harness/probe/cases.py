"""What a probe case is: a request the probe sends, what a sound target does with it, and the
helpers that turn the contract's well-formed call (``bindings.build_request``) into a hostile one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from lxml import etree

from harness.contract import structure
from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, Operation, sample_arguments
from harness.contract.structure import Value
from harness.traffic.exchange import HttpRequest

#: Text that only comes back if the target expanded an entity: every case builds it from parts
#: (two entities, or a character reference), so the literal never appears in a request.
CANARY = "HARNESS-PROBE-CANARY-7F3A"
CANARY_HEAD, CANARY_TAIL = CANARY[:10], CANARY[10:]


class Expect(StrEnum):
    """What a sound target does with the case."""

    REFUSAL = "refusal"  # the request is invalid: an error of its binding, never a success
    ANY = "any"  # valid, or the platform's choice: any answer, in time, alive, leaking nothing


class Family(StrEnum):
    XML = "xml attack"
    ENVELOPE = "malformed envelope"
    VALUE = "invalid value"
    HTTP = "http level"
    MATRIX = "asmx matrix"  # a row of the ASMX matrix, judged as ASMX answers it


@dataclass(frozen=True)
class ProbeCase:
    name: str  # stable, e.g. "xml/internal-entity/parameter"
    family: Family
    operation: Operation
    binding: Binding
    request: HttpRequest
    expect: Expect
    what: str  # one line for people
    #: The case carries a DTD or XInclude: SEC-ENTITY judges it.
    entity: bool = False
    #: The ID of the ASMX matrix row the case is (its rule judges it too).
    matrix: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name} [{self.operation.name} x {self.binding.label}]"


def plain_request(contract: Contract, op: Operation, binding: Binding, base: str) -> HttpRequest:
    """The contract's well-formed call with sample values: the start of every mutation, and the
    plain call that shows the target is still alive."""
    return build_request(contract, op, sample_arguments(op), binding, base)


def with_body(request: HttpRequest, body: bytes, content_type: str | None = None) -> HttpRequest:
    """``request`` carrying ``body`` (Content-Length kept true; Content-Type replaced if given)."""
    changed = request.with_header("Content-Length", str(len(body)))
    if content_type is not None:
        changed = changed.with_header("Content-Type", content_type)
    return replace(changed, body=body)


def escape_text(text: str) -> str:
    """``text`` as XML character data, escaping markup only: control characters stay raw, so
    a value XML cannot carry makes a malformed document, as a careless client would send."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def envelope(contract: Contract, op: Operation, binding: Binding, params: str,
             *, prolog: str = "", body: str | None = None, env_ns: str | None = None) -> bytes:
    """A SOAP envelope written as text, so it may be wrong: ``params`` is the raw XML inside
    the operation element, ``body`` (when given) replaces the whole Body, ``prolog`` goes
    before the root (a DOCTYPE)."""
    ns = env_ns or binding.envelope_ns
    call = f'<{op.name} xmlns="{contract.namespace}">{params}</{op.name}>'
    inside = body if body is not None else f"<soap:Body>{call}</soap:Body>"
    return (f'<?xml version="1.0" encoding="utf-8"?>{prolog}'
            f'<soap:Envelope xmlns:soap="{ns}">{inside}</soap:Envelope>').encode()


def params_xml(op: Operation, values: Mapping[str, Value],
               raw: dict[str, str] | None = None) -> str:
    """The parameter elements of ``op`` in table order; ``raw`` values are written unescaped,
    an array or complex value as XmlSerializer writes it."""
    raw = raw or {}
    parts = []
    for p in op.parameters:
        value = values.get(p.name, "")
        if p.name not in raw and isinstance(value, (list, Mapping)):
            parts.append(_structured_xml(op, p.name, p.type_name or "", value))
            continue
        text = raw[p.name] if p.name in raw else escape_text(str(value))
        parts.append(f"<{p.name}>{text}</{p.name}>")
    return "".join(parts)


def _structured_xml(op: Operation, name: str, type_name: str, value: Value) -> str:
    holder = etree.Element("holder")
    structure.write(holder, "", name, op.schema, type_name, value)
    return "".join(etree.tostring(child, encoding="unicode") for child in holder)
