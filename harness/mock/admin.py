"""The admin API of a mock, under ``/__harness/`` on its own port, for loopback clients only
(like WireMock's ``/__admin``): what a feature file, a test or a person asks the mock the app
talks to.

- ``GET /__harness/calls?operation=LogoutFromSchool&PhoneNumber=0501234567`` - the journalled
  calls that match, newest last, and their ``count``: filter by ``operation``, ``binding``
  (``SOAP 1.1``, ``soap11``...), ``answered`` (``stub``, ``recorded``...), ``since`` (seconds
  since the epoch, or ISO 8601), ``after`` (a ``seq``), and any parameter by name (by meaning,
  as the parameter's type reads it; a sensitive value is matched through its pseudonym).
  ``limit`` caps the calls listed (default 1000), never the count.
- ``DELETE /__harness/calls`` (or ``POST /__harness/calls/reset``) - forget the journal.
- ``GET /__harness/stubs`` - the stubs, in the order they are tried.
- ``POST /__harness/stubs`` - add stubs (JSON: one stub, a list, or ``{"stub": [...]}``, as in
  a stubs file); 201 and their ids, or 400 and what is wrong.
- ``DELETE /__harness/stubs/ID`` - remove one (a file's too); ``DELETE /__harness/stubs`` -
  remove those added at run time.
- ``GET /__harness/summary`` - what was answered and injected so far.
"""

from __future__ import annotations

import ipaddress
import json
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, unquote

from harness.contract.bindings import Binding, did_you_mean
from harness.contract.model import Contract
from harness.contract.types import ParamType
from harness.errors import UsageError
from harness.mock import stubs as stub_files
from harness.mock.journal import Filter
from harness.mock.service import Mock
from harness.reference.app import DISCONNECTED, create_app, read_body
from harness.traffic.redaction import is_pseudonym

PREFIX = "/__harness/"
#: Calls listed at most by one answer (the count counts them all).
LISTED = 1000
#: Largest body the admin API reads (stubs are small).
MAX_BODY = 1024 * 1024
_FILTERS = ("operation", "binding", "answered", "since", "after", "limit")


def create_mock_app(contract: Contract, mock: Mock):
    """The mock's ASGI app: the service (``mock.respond``), and the admin API under
    ``/__harness/``."""
    service = create_app(contract, mock.respond)

    async def app(scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(PREFIX):
            await _admin(contract, mock, scope, receive, send)
        else:
            await service(scope, receive, send)

    return app


async def _admin(contract: Contract, mock: Mock, scope, receive, send) -> None:
    if not _loopback(scope.get("client")):
        await _reply(send, 403, {"error": "the admin API answers loopback clients only"})
        return
    body = await read_body(receive, MAX_BODY)
    if body is DISCONNECTED:
        return
    if body is None:
        await _reply(send, 413, {"error": f"body over {MAX_BODY} bytes"})
        return
    method, path = scope["method"], scope["path"][len(PREFIX):].rstrip("/")
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    try:
        status, data = route(contract, mock, method, path, query, body)
    except ValueError as exc:
        status, data = 400, {"error": str(exc)}
    except Exception as exc:  # never a traceback on the mock's console, never a hang
        status, data = 500, {"error": f"{type(exc).__name__}: {exc}"}
    await _reply(send, status, data)


def route(contract: Contract, mock: Mock, method: str, path: str,
          query: list[tuple[str, str]], body: bytes) -> tuple[int, Any]:
    """(status, JSON data) of one admin request; ValueError for a wrong one (400)."""
    if path == "calls" and method == "GET":
        return 200, calls(contract, mock, query)
    if (path == "calls" and method == "DELETE") or (path == "calls/reset" and
                                                      method == "POST"):
        return 200, {"reset": mock.journal.reset()}
    if path == "stubs" and method == "GET":
        return 200, {"stubs": mock.stubs.listing()}
    if path == "stubs" and method == "POST":
        return 201, {"added": mock.stubs.add(parse_stubs(contract, body))}
    if path == "stubs" and method == "DELETE":
        return 200, {"removed": mock.stubs.remove()}
    if path.startswith("stubs/") and method == "DELETE":
        stub_id = unquote(path[len("stubs/"):])
        gone = mock.stubs.remove(stub_id)
        return (200, {"removed": gone}) if gone else (404, {"error": f"no stub {stub_id!r}"})
    if path == "summary" and method == "GET":
        return 200, summary(mock)
    if path in ("", "calls", "calls/reset", "stubs", "summary") or path.startswith("stubs/"):
        return 405, {"error": f"{method} is not for /__harness/{path}"}
    return 404, {"error": f"no /__harness/{path}: calls, stubs, summary"}


def calls(contract: Contract, mock: Mock, query: list[tuple[str, str]]) -> dict[str, Any]:
    which, limit = call_filter(contract, mock, query)
    found = mock.journal.select(which)
    return {"count": len(found), "calls": [e.to_data() for e in found[-limit:]],
            "received": mock.journal.received, "dropped": mock.journal.dropped}


def call_filter(contract: Contract, mock: Mock, query: list[tuple[str, str]]
                ) -> tuple[Filter, int]:
    given = dict(query)
    operation = given.get("operation")
    op = contract.find(operation) if operation else None
    if operation and op is None:
        raise ValueError(f"{operation!r} is no operation of {contract.name}"
                         + did_you_mean(operation, [o.name for o in contract.operations]))
    values = {k: v for k, v in given.items() if k not in _FILTERS}
    if values and op is None:
        raise ValueError("filter by parameter values with an operation: "
                         "?operation=NAME&parameter=value")
    shown: tuple[tuple[str, str], ...] = ()
    if op is not None and values:
        unknown = [k for k in values if op.parameter(k) is None]
        if unknown:
            raise ValueError(f"{op.name} has no parameter {unknown[0]!r}"
                             f"{did_you_mean(unknown[0], op.parameter_names)}")
        written = {k: _json_or_text(v) if op.parameter(k).type is ParamType.COMPLEX else v
                   for k, v in values.items()}
        try:  # checked and read as a stub's values are
            when = stub_files.from_data(contract, {"operation": op.name, "when": written}).when
        except stub_files.Problem as exc:
            raise ValueError(str(exc)) from None
        shown = tuple((m.parameter, m.equals if is_pseudonym(m.equals) else
                       mock.journal_redactor.value(m.parameter, m.equals)) for m in when
                      if m.equals is not None)
    return Filter(op.name if op else None, _binding(given.get("binding")),
                  given.get("answered") or None, shown, _since(given.get("since")),
                  _int(given, "after")), _limit(given)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _binding(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return Binding.parse(text).label
    except UsageError:
        raise ValueError(f"binding {text!r} is none of SOAP 1.1, SOAP 1.2, HTTP GET, "
                         "HTTP POST") from None


def _since(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ValueError(f"since {text!r} is no time (seconds since the epoch, or ISO "
                         "8601)") from None


def _int(given: dict[str, str], name: str) -> int | None:
    text = given.get(name)
    if not text:
        return None
    if not text.isdigit():
        raise ValueError(f"{name} is a whole number, not {text!r}")
    return int(text)


def _limit(given: dict[str, str]) -> int:
    limit = _int(given, "limit")
    return LISTED if limit is None else limit


def parse_stubs(contract: Contract, body: bytes) -> list[stub_files.Stub]:
    """The stubs of a POST: a stub, a list of them, or ``{"stub": [...]}``."""
    try:
        data = json.loads(body or b"null")
    except (ValueError, RecursionError):
        raise ValueError("the body is no JSON: send a stub as in a stubs file, e.g. "
                         '{"operation": "GetTokenDevice", "result": "token"}') from None
    if isinstance(data, dict) and set(data) == {"stub"}:
        data = data["stub"]
    entries = data if isinstance(data, list) else [data]
    found = []
    for number, entry in enumerate(entries):
        try:
            found.append(stub_files.from_data(contract, entry))
        except stub_files.Problem as exc:
            where = f"stub {number + 1}: " if len(entries) > 1 else ""
            raise ValueError(f"{where}{exc}") from None
    return found


def summary(mock: Mock) -> dict[str, Any]:
    stats = mock.stats
    return {"answered": dict(stats.answered), "injected": dict(stats.injected),
            "calls": mock.journal.received, "other_requests": stats.other,
            "descriptions": dict(stats.descriptions)}


def _loopback(client: tuple[str, int] | None) -> bool:
    if not client:
        return False
    try:
        return ipaddress.ip_address(client[0].split("%", 1)[0]).is_loopback
    except ValueError:
        return False


async def _reply(send, status: int, data: Any) -> None:
    body = json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
