"""XML attacks and malformed envelopes, as data, over both SOAP versions.

Every size is bounded: the billion laughs expands to ~250 KB and the quadratic blow-up to
~400 KB on a target that does expand them; the largest request is just over 4 MB (ASP.NET's
request limit). External references point at 127.0.0.1 port 9 (discard), so a target that
resolves them reaches nothing. Nothing here changes data on the target.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, ParamType, sample_arguments
from harness.contract.selection import Selection
from harness.probe.cases import (
    CANARY_HEAD,
    CANARY_TAIL,
    Expect,
    Family,
    ProbeCase,
    envelope,
    params_xml,
    plain_request,
    with_body,
)

SOAP_BINDINGS = (Binding.SOAP11, Binding.SOAP12)
#: Where external references point: the discard port of the target's own loopback.
NOWHERE = "http://127.0.0.1:9/harness-probe"
_CANARY_PARTS = f'<!ENTITY h "{CANARY_HEAD}"><!ENTITY t "{CANARY_TAIL}">'
_TAIL_BY_REFERENCE = f"&#x{ord(CANARY_TAIL[0]):X};{CANARY_TAIL[1:]}"


@dataclass(frozen=True)
class Attack:
    name: str
    what: str
    subset: str | None  # the DTD's internal subset; None: no DOCTYPE (XInclude)
    reference: str  # raw XML put where a parameter value goes


def _laughs(levels: int = 4, fan: int = 10) -> str:
    entities = [_CANARY_PARTS, '<!ENTITY l0 "&h;&t;">']
    entities += [f'<!ENTITY l{i} "{f"&l{i - 1};" * fan}">' for i in range(1, levels + 1)]
    return "".join(entities)


XML_ATTACKS: tuple[Attack, ...] = (
    Attack("doctype", "a DOCTYPE without entities", "", "1"),
    Attack("internal-entity", "an internal entity that spells the canary", _CANARY_PARTS
           + '<!ENTITY c "&h;&t;">', "&c;"),
    Attack("billion-laughs", "a small billion laughs (10^4 canaries, ~250 KB expanded)",
           _laughs(), "&l4;"),
    Attack("quadratic-blowup", "one 2 KB entity referenced 200 times (~400 KB expanded)",
           _CANARY_PARTS + f'<!ENTITY q "&h;&t;{"x" * 2000}">', "&q;" * 200),
    Attack("external-entity", f"an external entity ({NOWHERE}) next to the canary",
           _CANARY_PARTS + f'<!ENTITY x SYSTEM "{NOWHERE}">', "&h;&t;&x;"),
    Attack("parameter-entity", "a parameter entity declaring the canary entity",
           f"<!ENTITY % p \"<!ENTITY c '{CANARY_HEAD}{_TAIL_BY_REFERENCE}'>\"> %p;", "&c;"),
    Attack("xinclude", f"an XInclude of {NOWHERE}",
           None, f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{NOWHERE}" '
                 'parse="text"/>'),
)

#: Operations the attacks go to: one that echoes its argument in its result, one with an int.
ATTACKED = ("GetTokenDevice", "LogoutFromSchool")


def xml_attacks(contract: Contract, base: str, chosen: Selection | None = None
                ) -> Iterator[ProbeCase]:
    """Each attack in a parameter position and around the whole Body, over both SOAP versions."""
    for op in attacked_operations(contract, chosen):
        target = _target_parameter(op)
        for binding in SOAP_BINDINGS:
            plain = plain_request(contract, op, binding, base)
            values = sample_arguments(op)
            for attack in XML_ATTACKS:
                params = params_xml(op, values, {target: attack.reference})
                yield _attack_case(contract, op, binding, plain, attack, "parameter", params)
                if op.name == ATTACKED[0]:
                    yield _attack_case(contract, op, binding, plain, attack, "document", params)


def _attack_case(contract: Contract, op: Operation, binding: Binding, plain, attack: Attack,
                 position: str, params: str) -> ProbeCase:
    call = f'<{op.name} xmlns="{contract.namespace}">{params}</{op.name}>'
    if attack.subset is None:  # XInclude: the Body itself is the fallback of an include
        body = (f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{NOWHERE}">'
                f"<xi:fallback><soap:Body>{call}</soap:Body></xi:fallback></xi:include>"
                if position == "document" else None)
        data = envelope(contract, op, binding, params, body=body)
    elif position == "document":  # the whole Body is an entity's replacement text
        subset = f"{attack.subset}<!ENTITY body '<soap:Body>{call}</soap:Body>'>"
        data = envelope(contract, op, binding, params, prolog=_doctype(subset), body="&body;")
    else:
        data = envelope(contract, op, binding, params, prolog=_doctype(attack.subset))
    # An XInclude inside a parameter value is only odd text to a target that ignores it.
    judged = attack.subset is not None or position == "document"
    return ProbeCase(f"xml/{attack.name}/{position}", Family.XML, op, binding,
                     with_body(plain, data), Expect.REFUSAL if judged else Expect.ANY,
                     f"{attack.what}, {position}", entity=judged)


def _doctype(subset: str) -> str:
    return f"<!DOCTYPE soap:Envelope [{subset}]>" if subset else "<!DOCTYPE soap:Envelope>"


def attacked_operations(contract: Contract, chosen: Selection | None = None
                        ) -> list[Operation]:
    """The operations the attacks (and the plain call between cases) go to, among the selected
    ones only: an operation left out is never called, not even to see the target still up."""
    ops = [op for op in contract.operations if not chosen or chosen.allows(op.name, None)]
    named = [op for op in ops if op.name in ATTACKED]
    # otherwise the first with a simple parameter to put an attack in, offered everywhere (the
    # HTTP cases send it over GET and POST too)
    everywhere = [op for op in ops if op.parameters
                  and all(p.type.is_simple for p in op.parameters)
                  and contract.bindings_of(op) == contract.bindings]
    return named or everywhere[:1] or [op for op in ops if op.parameters][:1] or ops[:1]


def _target_parameter(op: Operation) -> str:
    """The parameter the attack goes in: an int one if any (its fault may quote it), or the
    first (GetTokenDevice echoes it in its result)."""
    ints = [p.name for p in op.parameters if p.type is ParamType.INT]
    return ints[0] if ints else op.parameters[0].name


# ------------------------------------------------------------------------ malformed envelopes

OTHER_ENVELOPE = "http://example.org/not-a-soap-envelope"
#: ASP.NET's default maxRequestLength (4096 KB): the over-size case is just over it.
SIZE_LIMIT = 4 * 1024 * 1024


def malformed_envelopes(contract: Contract, base: str, chosen: Selection | None = None
                        ) -> Iterator[ProbeCase]:
    op = attacked_operations(contract, chosen)[0]
    for binding in SOAP_BINDINGS:
        yield from _malformed(contract, op, binding, base)


def _malformed(contract: Contract, op: Operation, binding: Binding, base: str
               ) -> Iterator[ProbeCase]:
    values = sample_arguments(op)
    params = params_xml(op, values)
    call = f'<{op.name} xmlns="{contract.namespace}">{params}</{op.name}>'
    plain = plain_request(contract, op, binding, base)
    other = Binding.SOAP12 if binding is Binding.SOAP11 else Binding.SOAP11

    def case(name: str, what: str, data: bytes, expect: Expect = Expect.REFUSAL,
             request=None) -> ProbeCase:
        request = request if request is not None else with_body(plain, data)
        return ProbeCase(f"envelope/{name}", Family.ENVELOPE, op, binding, request,
                         expect, what)

    yield case("truncated", "the call cut in the middle", plain.body[:len(plain.body) // 2])
    yield case("wrong-envelope-namespace", "an Envelope in a namespace no SOAP version has "
               "(VersionMismatch)", envelope(contract, op, binding, params,
                                             env_ns=OTHER_ENVELOPE))
    yield case("missing-body", "an Envelope with a Header and no Body",
               envelope(contract, op, binding, params, body="<soap:Header/>"))
    yield case("doubled-body", "two Body elements",
               envelope(contract, op, binding, params,
                        body=f"<soap:Body>{call}</soap:Body>" * 2), Expect.ANY)
    yield case("two-operations", "two operation elements in the Body",
               envelope(contract, op, binding, params,
                        body=f"<soap:Body>{call}{call}</soap:Body>"), Expect.ANY)
    # ASMX reads a SOAP 1.2 envelope sent as text/xml (and answers 415 the other way)
    yield case("version-mismatch", f"a {other.label} envelope sent as {binding.label}",
               envelope(contract, op, other, params),
               Expect.REFUSAL if binding is Binding.SOAP12 else Expect.ANY)
    if binding is Binding.SOAP11:
        action = plain.with_header("SOAPAction", f'"{contract.namespace}NoSuchAction"')
        yield case("wrong-soapaction", "a SOAPAction naming no operation", b"",
                   request=action)
    latin1 = envelope(contract, op, binding, params_xml(
        op, values, {op.parameters[0].name: "LATIN1"})).replace(b"LATIN1", b"caf\xe9")
    yield case("bad-encoding", "bytes that are not UTF-8 in a document declared UTF-8 "
               "(ASMX reads them as U+FFFD)", latin1, Expect.ANY)
    yield case("utf8-bom", "a UTF-8 byte order mark before the declaration",
               b"\xef\xbb\xbf" + plain.body, Expect.ANY)
    yield case("utf16-body", "the call in UTF-16 (with its BOM) labelled charset=utf-8",
               plain.body.decode("utf-8").replace('encoding="utf-8"', 'encoding="utf-16"')
               .encode("utf-16"), Expect.ANY)
    yield case("over-size", f"a body just over {SIZE_LIMIT // 1024} KB (ASP.NET's limit)",
               _padded(plain.body, SIZE_LIMIT + 1024))
    yield case("deep-nesting", "a parameter nested 5,000 elements deep",
               envelope(contract, op, binding, params_xml(
                   op, values, {op.parameters[0].name: "<a>" * 5000 + "</a>" * 5000})),
               Expect.ANY)
    yield case("wide-body", "100,000 empty elements in the operation element (400 KB)",
               envelope(contract, op, binding, params + "<a/>" * 100_000), Expect.ANY)


def _padded(body: bytes, size: int) -> bytes:
    """``body`` grown to ``size`` bytes by a comment inside the Envelope (still well-formed)."""
    at = body.rindex(b"</")
    filler = size - len(body) - len(b"<!---->")
    return body[:at] + b"<!--" + b"x" * filler + b"-->" + body[at:]
