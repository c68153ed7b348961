"""A recorded answer given over the binding that asks, in that binding's form.

- Asked over the binding it was recorded over: as recorded (status, headers, body), less the
  headers of the recorded connection (framing, Date; a content coding is decoded).
- Over another binding, what the contract can read is rendered by the contract, as the
  reference renders its own answers: a result (simple, array, complex, or none for a void
  operation) in the asking binding's envelope or ``<string>``-style document; a SOAP fault
  as a fault of the asking version, or ASMX's 500 text/plain over GET/POST (same code, same
  text); ASMX's GET/POST error text as a Server fault.
- What the contract cannot read (another status, such as a gateway's 503 or a 401, or a body
  that is no answer of the operation) is the same over every binding: as recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.contract import structure
from harness.contract.bindings import (
    Binding,
    FaultCode,
    ResponseReading,
    build_fault,
    build_response,
    read_response,
)
from harness.contract.model import Contract, Operation
from harness.contract.types import ParamType
from harness.http_messages import header_problem, status_problem
from harness.traffic.exchange import HttpResponse, media_type
from harness.traffic.send import HOP_BY_HOP

#: Headers that belong to the recorded connection, not to the answer.
_CONNECTION_HEADERS = HOP_BY_HOP | {"content-length", "date"}
_CODES = {"client": FaultCode.CLIENT, "sender": FaultCode.CLIENT,
          "versionmismatch": FaultCode.VERSION_MISMATCH}


def render(contract: Contract, op: Operation, asking: Binding, recorded: HttpResponse,
           recorded_over: Binding) -> HttpResponse:
    """The recorded answer to ``op`` (over ``recorded_over``) as an answer over ``asking``."""
    response = as_recorded(recorded)
    if asking is recorded_over or response.status not in (200, 500):
        return response
    if not recorded_over.is_soap and response.status == 500:
        if media_type(response.content_type) != "text/plain":
            return response
        return build_fault(asking, FaultCode.SERVER, response.body.decode("utf-8", "replace"))
    reading = read_response(op, recorded_over, response)
    if reading.fault_code is not None:
        code = _CODES.get(reading.fault_code.lower(), FaultCode.SERVER)
        return build_fault(asking, code, reading.fault_reason or "")
    if response.status != 200 or reading.problem is not None:
        return response
    try:
        result = _result(op, reading)
    except ValueError:  # a leaf that is no value of its type: not the contract's to render
        return response
    return build_response(contract, op, asking, result)


def sendable(response: HttpResponse, what: Callable[[], str]
             ) -> tuple[HttpResponse, str | None]:
    """``response`` as HTTP/1.1 can send it, and a line saying what changed (None: nothing).
    A recording can hold what no server could send (a hand-edited file, a tool's HAR): a
    status HTTP has not (999, 0, -1) is answered 502 Bad Gateway with a plain-text line
    saying why, which any client reads; a header HTTP cannot carry (a space in its name, a
    line break in its value, which would start a header of its own) is left out.
    ``what``: the answer and where it was recorded, for the line."""
    problem = status_problem(response.status)
    if problem is not None:
        said = f"{what()} cannot be sent: {problem}"
        return HttpResponse(502, (("Content-Type", "text/plain; charset=utf-8"),),
                            f"harness mock: {said}".encode(), "Bad Gateway"), \
            f"{said}: answered 502 Bad Gateway"
    problems = [header_problem(k, v) for k, v in response.headers]
    if not any(problems):
        return _utf8_values(response), None
    kept = tuple(h for h, p in zip(response.headers, problems, strict=True) if p is None)
    left_out = "; ".join(p for p in problems if p is not None)
    return (_utf8_values(HttpResponse(response.status, kept, response.body, response.reason)),
            f"{what()} has what HTTP cannot send ({left_out}): answered without it")


def _utf8_values(response: HttpResponse) -> HttpResponse:
    """``response`` with each header value beyond Latin-1 as the UTF-8 bytes capture decoded
    it from (the server sends header values as Latin-1 characters, one byte each)."""
    if all(v.isascii() for _, v in response.headers):
        return response
    headers = tuple((k, v if v.isascii() else v.encode("utf-8").decode("latin-1"))
                    for k, v in response.headers)
    return HttpResponse(response.status, headers, response.body, response.reason)


def _result(op: Operation, reading: ResponseReading) -> structure.Value:
    node = reading.result_node
    if op.result is None or node is None:
        return None
    if op.result_type is ParamType.COMPLEX:
        return structure.read(op.schema, op.result, node)
    return node.text or ""


def as_recorded(response: HttpResponse) -> HttpResponse:
    """``response`` without the recorded connection's headers, its body decoded from a
    content coding (the client may not have asked for it; kept as it is when it does not
    decode)."""
    headers = tuple((k, v) for k, v in response.headers if k.lower() not in _CONNECTION_HEADERS)
    coding = (response.header("Content-Encoding") or "").strip().lower()
    body = response.body
    if coding and coding != "identity":
        decoded = _decoded(body, coding)
        if decoded is not None:
            body = decoded
            headers = tuple((k, v) for k, v in headers if k.lower() != "content-encoding")
    if headers == response.headers and body is response.body:
        return response
    return HttpResponse(response.status, headers, body, response.reason)


def _decoded(body: bytes, coding: str) -> bytes | None:
    from mitmproxy.net import encoding  # only for a recorded content coding: a slow import

    try:
        decoded = encoding.decode(body, coding)
    except ValueError:
        return None
    return decoded if isinstance(decoded, bytes) else None
