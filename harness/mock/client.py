"""A client of a mock's admin API (harness.mock.admin): what the scenario vocabulary's mock steps
(steps/mock_steps.py) and a team's own tests use to set stubs and verify calls."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from harness.errors import TargetUnreachable
from harness.traffic import send
from harness.traffic.exchange import HttpRequest

#: Seconds an admin request may take (the mock answers it at once).
TIMEOUT = 10.0


class NotAMock(AssertionError):
    """The target has no admin API: it is no ``harness mock``."""


class MockAdmin:
    """The admin API of the mock serving ``base_url`` (at its origin: ``/__harness/``)."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(send.base_url(base_url))
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self._http = send.client(TIMEOUT)
        #: The ids of the stubs added through this client (``remove_added`` removes them).
        self.added: list[str] = []

    def close(self) -> None:
        self._http.close()

    def add_stub(self, stub: dict[str, Any]) -> str:
        """Add ``stub`` (a stubs file's table as JSON data); its id."""
        stub_id = self._ask("POST", "stubs", body=stub, expect=201)["added"][0]
        self.added.append(stub_id)
        return stub_id

    def remove_added(self) -> None:
        while self.added:
            self.remove_stub(self.added.pop())

    def remove_stub(self, stub_id: str) -> None:
        self._ask("DELETE", f"stubs/{quote(stub_id, safe='')}", expect=(200, 404))

    def calls(self, **filters: str) -> dict[str, Any]:
        """``GET /__harness/calls`` with ``filters``: ``count`` and the ``calls``."""
        return self._ask("GET", "calls", query=filters)

    def _ask(self, method: str, path: str, *, body: Any = None,
             query: dict[str, str] | None = None,
             expect: int | tuple[int, ...] = 200) -> dict[str, Any]:
        url = f"{self.origin}/__harness/{path}" + (f"?{urlencode(query)}" if query else "")
        content = json.dumps(body).encode() if body is not None else b""
        headers = (("Host", urlsplit(self.origin).netloc),
                   *((("Content-Type", "application/json"),) if body is not None else ()))
        try:
            answer = send.send(self._http, HttpRequest(method, url, headers, content))
        except TargetUnreachable as exc:
            raise NotAMock(f"the mock's admin API did not answer: {exc}") from None
        try:
            data = json.loads(answer.body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise NotAMock(f"{self.origin} has no mock admin API ({method} /__harness/{path} "
                           f"answered HTTP {answer.status}, not JSON): these steps need "
                           "`harness mock` as the target")
        if answer.status not in ((expect,) if isinstance(expect, int) else expect):
            raise AssertionError(f"the mock refused {method} /__harness/{path}: "
                                 f"{data.get('error', answer.status)}")
        return data
