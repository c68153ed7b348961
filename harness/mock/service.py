"""The mock: the reference's binding rules in front of a recording's answers.

Every request goes through the reference's ``answer`` (harness.reference.app): a request the
binding rules refuse is refused as ASMX refuses it (wrong Content-Type, SOAPAction, method,
markup in a GET value, a value that is no int...); an accepted call is looked up in the index
by its key (operation and values by meaning) and answered with the recorded answer in the
asking binding's form (harness.mock.answers). A call with no recorded answer is refused, or
answered by the reference with ``fallback="reference"``; either way it is counted and said.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from harness.capture import addresses
from harness.contract.bindings import (
    Binding,
    Classification,
    FaultCode,
    build_fault,
    service_description,
)
from harness.contract.model import Contract, Operation
from harness.contract.structure import Value
from harness.errors import HarnessError
from harness.mock.answers import as_recorded, render
from harness.mock.index import Index, description_key
from harness.mock.values import (
    call_key,
    describe_call,
    describe_nearest,
    nearest,
    normal_arguments,
)
from harness.reference.app import Delayed, answer, reference_answer
from harness.traffic.exchange import HttpRequest, HttpResponse, replace_header
from harness.traffic.redaction import Redactor, is_pseudonym

#: Where an answer came from, in the X-Harness-Mock header of every call's answer.
HEADER = "X-Harness-Mock"
RECORDED, REFERENCE, UNMATCHED = "recorded", "reference", "unmatched"
#: Distinct unmatched calls kept for the summary (the rest are counted).
UNMATCHED_KEPT = 1000
#: Answer delays kept per operation for the latency summary (a uniform sample beyond).
DELAYS_KEPT = 10_000


@dataclass(frozen=True)
class Options:
    fallback: str = "none"  # none | reference
    sequence: bool = False
    latency: str = "none"  # none | recorded
    descriptions: str = "contract"  # contract | recorded
    #: Pseudonymises a call's sensitive values when it matches nothing as sent (--key-file).
    redactor: Redactor | None = None
    #: Whether the recordings hold pseudonyms (said in a refusal without a key).
    redacted: bool = False


@dataclass
class Unmatched:
    operation: str
    binding: str
    call: str  # GetTokenDevice(id='q'), sensitive values masked
    nearest: str
    count: int = 0


@dataclass
class Stats:
    """What the mock answered, for the summary at the end."""

    answered: Counter[str] = field(default_factory=Counter)  # recorded | reference | unmatched
    descriptions: Counter[str] = field(default_factory=Counter)  # recorded | contract
    other: int = 0  # requests that are no call, or that the binding rules refuse
    unmatched: dict[tuple[str, str, str], Unmatched] = field(default_factory=dict)
    unmatched_other: int = 0
    delays: dict[str, list[float]] = field(default_factory=dict)
    delays_seen: Counter[str] = field(default_factory=Counter)


class Mock:
    """``respond`` answers one request (the ``respond`` of ``create_app``); ``stats`` says
    what was answered. Safe to call from several threads."""

    def __init__(self, contract: Contract, index: Index, options: Options = Options(), *,
                 on_unmatched: Callable[[str], None] = lambda line: None,
                 on_error: Callable[[str], None] = lambda line: None) -> None:
        self.contract = contract
        self.index = index
        self.options = options
        self.stats = Stats()
        self.on_unmatched = on_unmatched
        self.on_error = on_error
        self.sensitive = contract.sensitive_names() | (
            options.redactor.names if options.redactor else frozenset())
        self._cursors: dict[int, int] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    # -- a request ----------------------------------------------------------------------

    def respond(self, contract: Contract, request: HttpRequest) -> HttpResponse | Delayed:
        if self.options.descriptions == "recorded" and \
                (recorded := self._recorded_description(request)) is not None:
            return recorded
        self._local.call = False
        response = answer(contract, request, self._produce, wildcard=is_pseudonym)
        if not self._local.call:
            with self._lock:
                if service_description(contract, request) is not None:
                    self.stats.descriptions["contract"] += 1
                else:
                    self.stats.other += 1
        return response

    def _produce(self, contract: Contract, call: Classification, binding: Binding,
                 arguments: dict[str, Value]) -> HttpResponse | Delayed:
        self._local.call = True
        op, http = call.operation, not call.binding.is_soap
        values = normal_arguments(op, arguments, http=http)
        key = call_key(op, values)
        positions = self.index.find(key)
        if not positions and self.options.redactor is not None:
            secret = normal_arguments(op, _pseudonymised(self.options.redactor, arguments),
                                      http=http)
            key = call_key(op, secret)
            positions = self.index.find(key)
        if not positions:
            return self._unmatched(contract, call, binding, arguments, values)
        try:
            position = self._chosen(key, positions, binding)
            exchange = self.index.fetch(position)
            assert exchange.response is not None  # indexed only with one
            response = render(contract, op, binding, exchange.response,
                              self.index.binding(position))
        except HarnessError as exc:  # the recording changed under the mock
            self.on_error(f"{op.name}: {exc}")
            return build_fault(binding, FaultCode.SERVER, "Server was unable to process "
                               "request.")
        response = _marked(response, RECORDED)
        with self._lock:
            self.stats.answered[RECORDED] += 1
        if self.options.latency == "recorded":
            seconds = max(0.0, float(exchange.timings.get("duration") or 0.0))
            self._delayed(op.name, seconds)
            return Delayed(response, seconds)
        return response

    def _chosen(self, key: int, positions: range, binding: Binding) -> int:
        """The last answer recorded over ``binding`` (given as recorded), else the last one;
        with ``sequence``, each in turn, then the last again."""
        if len(positions) == 1:
            return positions[0]
        if not self.options.sequence:
            return next((p for p in reversed(positions) if self.index.binding(p) is binding),
                        positions[-1])
        with self._lock:
            turn = self._cursors.get(key, 0)
            self._cursors[key] = turn + 1
        return positions[min(turn, len(positions) - 1)]

    def _unmatched(self, contract: Contract, call: Classification, binding: Binding,
                   arguments: dict[str, Value], values: tuple[str, ...]) -> HttpResponse:
        op = call.operation
        found = nearest(op, values, self.index.candidates.get(op.name, []))
        said = (f"no recorded answer for {describe_call(op, values, self.sensitive)} over "
                f"{binding.label}; nearest recorded: "
                f"{describe_nearest(op, values, found, self.sensitive)}{self._hint(op, values)}")
        fallback = self.options.fallback == "reference"
        self.on_unmatched(said + ("; answered by the reference" if fallback else ""))
        with self._lock:
            self.stats.answered[REFERENCE if fallback else UNMATCHED] += 1
            self._count_unmatched(op, binding, values, found)
        if fallback:
            produced = reference_answer(contract, call, binding, arguments)
            return _marked(produced, REFERENCE)
        return _marked(build_fault(binding, FaultCode.CLIENT, said), UNMATCHED)

    def _hint(self, op: Operation, values: tuple[str, ...]) -> str:
        """Why a call with real personal values matches nothing in a redacted recording."""
        if not self.options.redacted or self.options.redactor is not None:
            return ""
        real = any(p.name in self.sensitive and v and not is_pseudonym(v)
                   for p, v in zip(op.parameters, values, strict=False))
        return ("; the recording holds pseudonyms of personal values: --key-file matches real "
                "ones" if real else "")

    def _count_unmatched(self, op: Operation, binding: Binding, values: tuple[str, ...],
                         found: tuple[str, ...] | None) -> None:
        said = describe_call(op, values, self.sensitive)
        case = (op.name, binding.label, said)
        entry = self.stats.unmatched.get(case)
        if entry is None:
            if len(self.stats.unmatched) >= UNMATCHED_KEPT:
                self.stats.unmatched_other += 1
                return
            entry = self.stats.unmatched[case] = Unmatched(
                op.name, binding.label, said, describe_nearest(op, values, found,
                                                               self.sensitive))
        entry.count += 1

    def _delayed(self, operation: str, seconds: float) -> None:
        with self._lock:
            kept = self.stats.delays.setdefault(operation, [])
            self.stats.delays_seen[operation] += 1
            seen = self.stats.delays_seen[operation]
            if len(kept) < DELAYS_KEPT:
                kept.append(seconds)
            elif (at := random.randrange(seen)) < DELAYS_KEPT:  # reservoir: a uniform sample
                kept[at] = seconds

    # -- service descriptions ------------------------------------------------------------

    def _recorded_description(self, request: HttpRequest) -> HttpResponse | None:
        """The description recorded for this path and query, its addresses rewritten to the
        mock as the client addressed it; None when none was recorded (the contract's WSDL
        answers then)."""
        if request.method.upper() != "GET" or \
                service_description(self.contract, request) is None:
            return None
        where = self.index.descriptions.get(description_key(request.url))
        if where is None:
            return None
        try:
            recorded = self.index.read(*where)
        except HarnessError as exc:
            self.on_error(f"{urlsplit(request.url).path}: {exc}")
            return None
        assert recorded.response is not None
        response = as_recorded(recorded.response)
        asked, was = urlsplit(request.url), urlsplit(recorded.request.url)
        origins = addresses.named_origins(response.body) | {f"{was.scheme}://{was.netloc}"}
        body, _found = addresses.rewrite(response.body, origins,
                                         f"{asked.scheme}://{asked.netloc}")
        with self._lock:
            self.stats.descriptions["recorded"] += 1
        return HttpResponse(response.status, response.headers, body, response.reason)


def _marked(response: HttpResponse, source: str) -> HttpResponse:
    return HttpResponse(response.status, replace_header(response.headers, HEADER, source),
                        response.body, response.reason)


def _pseudonymised(redactor: Redactor, arguments: Mapping[str, Value]) -> dict[str, Value]:
    """The arguments as capture would have recorded them with ``redactor``: the value of each
    sensitive parameter or field (at any depth) replaced by its pseudonym."""
    def walk(name: str, value: Any) -> Any:
        if isinstance(value, str):
            return redactor.value(name, value)
        if isinstance(value, list):
            return [walk(name, v) for v in value]
        if isinstance(value, Mapping):
            return {k: walk(k, v) for k, v in value.items()}
        return value

    return {name: walk(name, value) for name, value in arguments.items()}
