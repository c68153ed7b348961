"""A loopback server that counts what each request invokes, in front of the reference's answer
(tests/test_unasked.py): the operation and binding of a call, a service description asked for,
or no call at all (a request the contract's rules refuse before any operation runs).

    with counting() as server:
        harness certify --target server.url --operation GetTokenDevice ...
    server.invoked()        # Counter({("GetTokenDevice", "SOAP 1.1"): 12, ...})
    server.descriptions     # Counter({"/PushNotificationMobile.asmx?WSDL": 1})

A call is counted under the operation the request most likely meant (a name one or two edits
away, a SOAPAction naming another operation: as a lenient stack might route it), so a request
that could invoke an operation on some stack counts as invoking it.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness.contract.bindings import Binding, Classification, classify, service_description
from harness.contract.model import Contract, school_mobile
from harness.contract.structure import Value
from harness.errors import ClassificationError
from harness.reference.app import Delayed, answer, create_app, reference_answer
from harness.reference.server import running
from harness.traffic.exchange import HttpRequest, HttpResponse


@dataclass
class Counts:
    """What arrived, by kind; ``requests`` is every request in arrival order."""

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: The operations the reference ran (the binding rules accepted the call; a SOAPAction
    #: naming another operation of the endpoint runs that one, as on ASMX).
    invoked: Counter[tuple[str, str]] = field(default_factory=Counter)
    descriptions: Counter[str] = field(default_factory=Counter)
    no_call: Counter[str] = field(default_factory=Counter)
    requests: list[HttpRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, contract: Contract, request: HttpRequest) -> None:
        parts = urlsplit(request.url)
        with self.lock:
            self.requests.append(request)
            if service_description(contract, request) is not None:
                self.descriptions[parts.path + (f"?{parts.query}" if parts.query else "")] += 1
                return
            try:
                call = classify(contract, request)
            except ClassificationError as exc:
                self.no_call[f"{request.method} {parts.path}: {str(exc)[:80]}"] += 1
                return
            self.calls[(call.operation.name, call.binding.label)] += 1

    def operations(self) -> set[str]:
        """Every operation a request named or ran."""
        return {op for op, _ in self.calls} | {op for op, _ in self.invoked}

    def clear(self) -> None:
        with self.lock:
            self.calls.clear()
            self.invoked.clear()
            self.descriptions.clear()
            self.no_call.clear()
            self.requests.clear()


@dataclass
class Counting:
    url: str
    counts: Counts


@contextlib.contextmanager
def counting(contract: Contract | None = None) -> Iterator[Counting]:
    """The reference on a free loopback port, counting every request it answers."""
    contract = contract or school_mobile()
    counts = Counts()

    def run(served: Contract, call: Classification, binding: Binding,
            arguments: dict[str, Value]) -> HttpResponse | Delayed:
        with counts.lock:
            counts.invoked[(call.operation.name, call.binding.label)] += 1
        return reference_answer(served, call, binding, arguments)

    def respond(served: Contract, request: HttpRequest) -> HttpResponse | Delayed:
        counts.note(served, request)
        return answer(served, request, run)

    with running(app=create_app(contract, respond=respond)) as url:
        yield Counting(url, counts)
