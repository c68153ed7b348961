"""HTTP-level cases: methods the service does not take (PUT, PATCH: never DELETE), unknown
operation names, a huge query string. (Parameter names in another case and duplicated
parameters are rows of the ASMX matrix: ``harness.probe.matrix``, judged as ASMX answers them.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urlencode, urlsplit, urlunsplit

from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, sample_arguments
from harness.contract.selection import Selection
from harness.probe.attacks import attacked_operations
from harness.probe.cases import Expect, Family, ProbeCase, plain_request, with_body

#: The longest query string sent (IIS refuses over 2 KB by default; 32 KB is still bounded).
HUGE_QUERY = 32 * 1024


def http_cases(contract: Contract, base: str, chosen: Selection | None = None
               ) -> Iterator[ProbeCase]:
    op = attacked_operations(contract, chosen)[0]
    get = plain_request(contract, op, Binding.HTTP_GET, base)
    post = plain_request(contract, op, Binding.HTTP_POST, base)
    soap = plain_request(contract, op, Binding.SOAP11, base)

    def case(name: str, what: str, request, binding: Binding = Binding.HTTP_GET,
             expect: Expect = Expect.REFUSAL) -> ProbeCase:
        return ProbeCase(f"http/{name}", Family.HTTP, op, binding, request, expect, what)

    for method in ("PUT", "PATCH"):
        yield case(f"method-{method.lower()}-operation", f"{method} on the operation's path",
                   replace(post, method=method), Binding.HTTP_POST)
        yield case(f"method-{method.lower()}-endpoint", f"{method} of a SOAP call",
                   replace(soap, method=method), Binding.SOAP11)
    yield case("unknown-operation", "GET of an operation the endpoint does not have",
               replace(get, url=get.url.replace(f"/{op.name}?", "/NoSuchOperation?")))
    unknown_soap = soap.body.replace(op.name.encode(), b"NoSuchOperation")
    yield case("unknown-operation-soap", "a SOAP call of an operation the contract lacks",
               with_body(soap.with_header("SOAPAction", None), unknown_soap), Binding.SOAP11)
    yield case("huge-query-string", f"GET with a {HUGE_QUERY // 1024} KB query string",
               _with_query(get, [(p.name, v) for p, v in _values(op)]
                           + [("padding", "x" * HUGE_QUERY)]), expect=Expect.ANY)


def _values(op: Operation) -> list[tuple]:
    args = sample_arguments(op)
    return [(p, args[p.name]) for p in op.parameters]


def _with_query(request, pairs: list[tuple[object, str]]):
    parts = urlsplit(request.url)
    query = urlencode([(getattr(k, "name", k), v) for k, v in pairs])
    return replace(request, url=urlunsplit(parts._replace(query=query)))
