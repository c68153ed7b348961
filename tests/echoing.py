"""An echoing deployment of School Mobile, as some stacks and gateways are: it says back what
it was sent. A real server on loopback (the reference app with another answer):

- every request header comes back as a response header ``X-Echo-<name>`` (a gateway that
  mirrors headers): an ``-H`` credential comes back under a name that is no credential's;
- AuthCode is refused, quoting the values sent (``Invalid code 'CODE-4711' for phone
  '0509998877'``): a Client fault over SOAP, a 500 text/plain over GET and POST;
- GetTokenDevice answers ``token-for-<id>`` as the real ASMX does: in its envelope over SOAP,
  as text/plain over GET and POST (as spyne does: OP-RESULT fails, so reports show it);
- every other call as the reference answers it.

    from echoing import serve_echoing
    with serve_echoing() as url: ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from faulty import serve_fault

from harness.contract.bindings import Binding, FaultCode, build_fault, build_response, classify
from harness.contract.model import Contract
from harness.errors import ClassificationError
from harness.reference.app import answer
from harness.traffic.exchange import HttpRequest, HttpResponse

#: Request headers not echoed (the transport's own).
_NOT_ECHOED = frozenset({"host", "content-length", "connection", "accept-encoding",
                         "transfer-encoding"})


def echoing(contract: Contract, request: HttpRequest) -> HttpResponse:
    response = _answer(contract, request)
    echoed = tuple((f"X-Echo-{k}", v) for k, v in request.headers
                   if k.lower() not in _NOT_ECHOED)
    return HttpResponse(response.status, (*response.headers, *echoed), response.body,
                        response.reason)


def _answer(contract: Contract, request: HttpRequest) -> HttpResponse:
    try:
        call = classify(contract, request)
    except ClassificationError:
        return answer(contract, request)
    op, binding, args = call.operation, call.binding, call.args
    if op.name == "AuthCode":
        said = f"Invalid code '{args.get('code', '')}' for phone '{args.get('phone', '')}'"
        return build_fault(binding, FaultCode.CLIENT, said)  # 500 text/plain over GET/POST
    if op.name == "GetTokenDevice":
        token = f"token-for-{args.get('id', '')}"
        if binding in (Binding.HTTP_GET, Binding.HTTP_POST):
            return HttpResponse(200, (("Content-Type", "text/plain; charset=utf-8"),),
                                token.encode("utf-8"))
        return build_response(contract, op, binding, token)
    return answer(contract, request)


@contextlib.contextmanager
def serve_echoing() -> Iterator[str]:
    """Base URL of the echoing deployment on a free loopback port."""
    with serve_fault(echoing) as url:
        yield url
