"""The mock: the reference's binding rules in front of a recording's answers.

Every request goes through the reference's ``answer`` (harness.reference.app): a request the
binding rules refuse is refused as ASMX refuses it (wrong Content-Type, SOAPAction, method,
markup in a GET value, a value that is no int...); an accepted call is looked up in the index
by its key (operation and values by meaning) and answered with the recorded answer in the
asking binding's form (harness.mock.answers). A call with no recorded answer is refused, or
answered by the reference with ``fallback="reference"``; either way it is counted and said.
With a Forwarder (``--fallback URL``) it is forwarded to a deployment instead (record-through).

Stubs (harness.mock.stubs) come first: the first that matches a call answers it, in the asking
binding's form. Faults (harness.mock.faults), a stub's and ``--fault``'s, are done to the answer;
every call is journalled (harness.mock.journal) once its answer is known.

A call asked again is answered from two bounded caches: the rules' verdict on its request's
very bytes (``Known``: what the rules read is those bytes, and the index does not change) and
its recorded answer as sent, by position and asking binding. Stubs, faults and the journal
still apply to it, as to every call.
"""

from __future__ import annotations

import math
import random
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from harness.capture import addresses
from harness.contract.bindings import (
    Binding,
    Classification,
    FaultCode,
    build_fault,
    build_response,
    service_description,
)
from harness.contract.model import Contract, Operation
from harness.contract.structure import Value
from harness.contract.types import ParamType
from harness.errors import HarnessError
from harness.mock.answers import as_recorded, render, sendable
from harness.mock.faults import MAX_SECONDS, Fault
from harness.mock.forward import Forwarder
from harness.mock.index import Index, description_key
from harness.mock.journal import Journal
from harness.mock.stubs import Stubs
from harness.mock.values import (
    call_key,
    describe_call,
    describe_nearest,
    nearest,
    normal_arguments,
)
from harness.reference.app import (
    SERVER_ERROR,
    Delayed,
    Delivery,
    Disrupted,
    Later,
    answer,
    reference_answer,
)
from harness.traffic.exchange import HttpRequest, HttpResponse, replace_header
from harness.traffic.redaction import Redactor, is_pseudonym

#: Where an answer came from, in the X-Harness-Mock header of every call's answer.
HEADER = "X-Harness-Mock"
#: The faults injected into an answer (``delay 1.5s, malformed``), when any was.
INJECTED_HEADER = "X-Harness-Injected"
STUB, RECORDED, FORWARDED = "stub", "recorded", "forwarded"
REFERENCE, UNMATCHED = "reference", "unmatched"
#: Distinct unmatched calls kept for the summary (the rest are counted).
UNMATCHED_KEPT = 1000
#: The longest recorded latency ``--latency recorded`` waits (a fault's longest delay).
MAX_LATENCY = MAX_SECONDS
#: Answer delays kept per operation for the latency summary (a uniform sample beyond).
DELAYS_KEPT = 10_000


#: Bounds of the mock's two caches (entries, bytes): repeated calls are answered without
#: classifying their request again (a request's bytes up to MEMO_BODY each) and without reading
#: and rendering their recorded answer again.
CALLS_KEPT, CALLS_BYTES, MEMO_BODY = 16_384, 16 * 1024 * 1024, 16 * 1024
ANSWERS_KEPT, ANSWERS_BYTES = 16_384, 32 * 1024 * 1024
_CALL_BYTES, _ANSWER_BYTES = 1024, 512  # what an entry costs beside its bytes, roughly


@dataclass(frozen=True, slots=True)
class Known:
    """An accepted call as the mock answers it: worked out once per distinct request."""

    op: Operation
    binding: Binding  # the answering binding
    http: bool  # asked over HTTP GET or POST
    arguments: dict[str, Value]
    values: tuple[str, ...]  # by meaning (harness.mock.values)
    key: int
    positions: range  # its recorded answers in the index
    shown: tuple[tuple[str, str], ...]  # its values as the journal shows them


class Bounded[T]:
    """A dict of at most ``entries`` entries and about ``size`` bytes, the oldest let go
    first. Reads take no lock."""

    def __init__(self, entries: int, size: int) -> None:
        self.entries, self.size = entries, size
        self._kept: dict[Hashable, tuple[T, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        found = self._kept.get(key)
        return found[0] if found is not None else None

    def put(self, key: Hashable, value: T, size: int) -> None:
        if size > self.size // 16:
            return  # a big one would push out many others
        with self._lock:
            while self._kept and (len(self._kept) >= self.entries
                                  or self._bytes + size > self.size):
                oldest = next(iter(self._kept))
                self._bytes -= self._kept.pop(oldest)[1]
            previous = self._kept.get(key)
            if previous is not None:
                self._bytes -= previous[1]
            self._kept[key] = (value, size)
            self._bytes += size

    def __len__(self) -> int:
        return len(self._kept)


def _memo_key(request: HttpRequest) -> tuple[str, str, str | None, str | None, bytes] | None:
    """What the binding rules read of a request (method, path and query, Content-Type,
    SOAPAction, body), or None when it is not to be kept (a big body)."""
    if len(request.body) > MEMO_BODY:
        return None
    target = request.url.partition("://")[2]
    at = target.find("/")
    content_type = action = None
    for name, value in request.headers:  # one pass: the first of each, as ``header`` reads
        if len(name) == 12 and content_type is None and name.lower() == "content-type":
            content_type = value
        elif len(name) == 10 and action is None and name.lower() == "soapaction":
            action = value
    return (request.method, target[at:] if at >= 0 else "/", content_type, action,
            request.body)


@dataclass(frozen=True)
class Options:
    fallback: str = "none"  # none | reference | a deployment's base URL (record-through)
    sequence: bool = False
    latency: str = "none"  # none | recorded
    descriptions: str = "contract"  # contract | recorded
    #: Pseudonymises a call's sensitive values when it matches nothing as sent (--key-file).
    redactor: Redactor | None = None
    #: Whether the recordings hold pseudonyms (said in a refusal without a key).
    redacted: bool = False
    #: Faults done to every call's answer (--fault), each with its probability.
    faults: tuple[Fault, ...] = ()
    #: Seed of the random draws (probabilities, random delays): None, a fresh one.
    seed: int | None = None


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

    #: stub | recorded | forwarded | reference | unmatched
    answered: Counter[str] = field(default_factory=Counter)
    descriptions: Counter[str] = field(default_factory=Counter)  # recorded | contract
    other: int = 0  # requests that are no call, or that the binding rules refuse
    unmatched: dict[tuple[str, str, str], Unmatched] = field(default_factory=dict)
    unmatched_other: int = 0
    delays: dict[str, list[float]] = field(default_factory=dict)
    delays_seen: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)  # fault label -> calls
    #: forwarded calls the fallback did not answer
    fallback_failed: int = 0


class Mock:
    """``respond`` answers one request (the ``respond`` of ``create_app``); ``stats`` says
    what was answered, ``journal`` every call. Safe to call from several threads."""

    def __init__(self, contract: Contract, index: Index, options: Options = Options(), *,
                 stubs: Stubs | None = None, journal: Journal | None = None,
                 forwarder: Forwarder | None = None,
                 on_unmatched: Callable[[str], None] = lambda line: None,
                 on_error: Callable[[str], None] = lambda line: None) -> None:
        self.contract = contract
        self.index = index
        self.options = options
        self.stats = Stats()
        self.rng = random.Random(options.seed)
        self.redactor = options.redactor
        self.stubs = stubs if stubs is not None else Stubs()
        self.stubs.rng = self.rng
        if self.redactor is not None:
            self.stubs.pseudonymise = self.redactor.value
        self.journal = journal if journal is not None else Journal()
        self.forwarder = forwarder
        self.on_unmatched = on_unmatched
        self.on_error = on_error
        self.sensitive = contract.sensitive_names() | (
            options.redactor.names if options.redactor else frozenset())
        #: Pseudonyms in the journal and its queries: the recording's key, else one of this
        #: run (the same value gets the same pseudonym within the run, and no one can tell
        #: the value from it).
        self.journal_redactor = self.redactor or Redactor(secrets.token_bytes(32),
                                                          self.sensitive)
        self._cursors: dict[int, int] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        #: The calls the binding rules accepted, by their request's bytes (the rules are a
        #: function of them): a call asked again skips classifying and checking it.
        self._calls: Bounded[Known] = Bounded(CALLS_KEPT, CALLS_BYTES)
        #: The recorded answers given, by position and asking binding, as sent (read from
        #: the file, decoded and rendered once).
        self._answers: Bounded[tuple[HttpResponse, float]] = Bounded(ANSWERS_KEPT,
                                                                      ANSWERS_BYTES)

    # -- a request ----------------------------------------------------------------------

    def respond(self, contract: Contract, request: HttpRequest) -> Delivery:
        if self.options.descriptions == "recorded" and \
                (recorded := self._recorded_description(request)) is not None:
            return recorded
        memo = _memo_key(request)
        known = self._calls.get(memo) if memo is not None else None
        if known is not None:  # the binding rules accepted these very bytes before
            try:
                return self._answer(contract, known, request)
            except Exception:  # as ``answer`` does: a server fault, never a dropped socket
                return build_fault(known.binding, FaultCode.SERVER, SERVER_ERROR)
        self._local.call = None
        self._local.memo = memo
        self._local.request = request
        response = answer(contract, request, self._produce, wildcard=is_pseudonym)
        if self._local.call is None:
            with self._lock:
                if service_description(contract, request) is not None:
                    self.stats.descriptions["contract"] += 1
                else:
                    self.stats.other += 1
        return response

    def _produce(self, contract: Contract, call: Classification, binding: Binding,
                 arguments: dict[str, Value]) -> Delivery:
        """A call the binding rules accepted, seen for the first time (as these bytes)."""
        known = self._local.call = self._known(call.operation, binding,
                                               not call.binding.is_soap, arguments)
        if self._local.memo is not None:
            self._calls.put(self._local.memo, known, len(self._local.memo[4]) + _CALL_BYTES)
        return self._answer(contract, known, self._local.request)

    def _known(self, op: Operation, binding: Binding, http: bool,
               arguments: dict[str, Value]) -> Known:
        """What the mock needs of an accepted call, worked out once: its values by meaning,
        its recorded answers, its values as the journal shows them."""
        values = normal_arguments(op, arguments, http=http)
        key = call_key(op, values)
        positions = self.index.find(key)
        if not positions and self.redactor is not None:
            secret = normal_arguments(op, _pseudonymised(self.redactor, arguments), http=http)
            key = call_key(op, secret)
            positions = self.index.find(key)
        shown = self.journal_values(op, arguments, values, http=http)
        return Known(op, binding, http, arguments, values, key, positions, shown)

    def _answer(self, contract: Contract, known: Known, request: HttpRequest) -> Delivery:
        """The answer to an accepted call: a stub's, else the recording's (the fallback's, a
        refusal), faults done to it, the call journalled."""
        op, binding = known.op, known.binding
        chosen = self.stubs.choose(op.name, known.values) if self.stubs else None
        if chosen is None and not self.options.faults:  # the common case, kept short
            delivery, source = self._otherwise(contract, known, request, stubbed=False)
            if isinstance(delivery, HttpResponse):
                self.journal.record(op.name, binding.label, known.shown, source, None, (),
                                    delivery.status)
                return delivery
            return _each(delivery, self._journalled(known, source, None, ()))
        if chosen is not None and chosen.reply.answers:
            delivery: Delivery = chosen.reply.response(contract, op, binding)
            source = STUB
        else:
            delivery, source = self._otherwise(contract, known, request,
                                               stubbed=chosen is not None)
        injected: list[str] = []
        if chosen is not None:
            delivery = _each(delivery, lambda d: chosen.reply.disrupted(d, binding, self.rng,
                                                                        injected))
        for fault in self.options.faults:
            if fault.hits(self.rng):
                delivery = _each(delivery, lambda d, f=fault: f.applied(d, binding, self.rng))
                injected.append(fault.label)
        delivery = _each(delivery, lambda d: _marked(d, source, injected))
        return _each(delivery, self._journalled(known, source,
                                                chosen.stub.id if chosen else None,
                                                tuple(injected)))

    def _otherwise(self, contract: Contract, known: Known, request: HttpRequest, *,
                   stubbed: bool) -> tuple[Delivery, str]:
        """The answer without a stub: the recording's, else the fallback's, else a refusal
        (``stubbed``: a stub that only delays or disrupts took the call: a void operation's
        empty answer then, the only one it has)."""
        op, binding, positions = known.op, known.binding, known.positions
        if not positions:
            if stubbed and op.result is None and self.options.fallback == "none":
                return build_response(contract, op, binding), STUB
            return self._unmatched(contract, known, request)
        position = self._chosen(known.key, positions, binding)
        found = self._answers.get((position, binding))
        if found is None:
            try:
                found = self._recorded(contract, op, binding, position)
            except HarnessError as exc:  # the recording changed under the mock
                self.on_error(f"{op.name}: {exc}")
                return build_fault(binding, FaultCode.SERVER, SERVER_ERROR), RECORDED
            self._answers.put((position, binding), found, len(found[0].body) + _ANSWER_BYTES)
        response, seconds = found
        with self._lock:
            self.stats.answered[RECORDED] += 1
        if self.options.latency == "recorded":
            self._delayed(op.name, seconds)
            return Delayed(response, seconds), RECORDED
        return response, RECORDED

    def _recorded(self, contract: Contract, op: Operation, binding: Binding, position: int
                  ) -> tuple[HttpResponse, float]:
        """The answer recorded at ``position`` in ``binding``'s form, marked, and how long
        the recorded exchange took."""
        exchange = self.index.fetch(position)
        assert exchange.response is not None  # indexed only with one
        def what() -> str:
            return f"{op.name}: the answer recorded at {self.index.where(position)}"

        response = self._sendable(
            render(contract, op, binding, exchange.response, self.index.binding(position)),
            what)
        seconds, said = recorded_latency(exchange.timings.get("duration"), what)
        if said is not None:
            self.on_error(said)
        return _marked(response, RECORDED, ()), seconds

    def _sendable(self, response: HttpResponse, what: Callable[[], str]) -> HttpResponse:
        """``response`` as HTTP can send it; a line on what it could not (harness.mock.answers
        .sendable)."""
        response, said = sendable(response, what)
        if said is not None:
            self.on_error(said)
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

    def _unmatched(self, contract: Contract, known: Known, request: HttpRequest
                   ) -> tuple[Delivery, str]:
        op, binding, values = known.op, known.binding, known.values
        found = nearest(op, values, self.index.candidates.get(op.name, []))
        said = self._why_unmatched(op, binding, values, found)
        fallback = self.options.fallback
        if self.forwarder is not None:
            return self._forwarded(request, said), FORWARDED
        self.on_unmatched(said + ("; answered by the reference" if fallback == "reference"
                                  else ""))
        with self._lock:
            self.stats.answered[REFERENCE if fallback == "reference" else UNMATCHED] += 1
            self._count_unmatched(op, binding, values, found)
        if fallback == "reference":
            call = Classification(binding, op, (), op.endpoint)
            produced = reference_answer(contract, call, binding, known.arguments)
            return _marked(produced, REFERENCE, ()), REFERENCE
        return _marked(build_fault(binding, FaultCode.CLIENT, said), UNMATCHED, ()), UNMATCHED

    def _forwarded(self, request: HttpRequest, said: str) -> Later:
        """The fallback's answer to the request, made on a worker thread (it waits on the
        network): a 502 saying why when none comes."""
        forwarder = self.forwarder
        assert forwarder is not None

        def make() -> HttpResponse:
            try:
                response = as_recorded(forwarder.forward(request))
            except HarnessError as exc:
                self.on_error(f"{said}; the fallback did not answer: {exc}")
                with self._lock:
                    self.stats.answered[FORWARDED] += 1
                    self.stats.fallback_failed += 1
                response = HttpResponse(502, (("Content-Type", "text/plain; charset=utf-8"),),
                                        f"harness mock: {said}; the fallback {forwarder.base} "
                                        f"did not answer: {exc}".encode(), "Bad Gateway")
            else:
                response = self._sendable(response, lambda: f"{said}; the answer of the "
                                                            f"fallback {forwarder.base}")
                with self._lock:
                    self.stats.answered[FORWARDED] += 1
            return _marked(response, FORWARDED, ())

        return Later(make)

    def _journalled(self, known: Known, source: str, stub: str | None,
                    injected: tuple[str, ...]) -> Callable[[Any], Any]:
        """What journals the call once its answer is known (passes the answer through)."""
        if injected or source == STUB:
            with self._lock:
                self.stats.injected.update(injected)
                if source == STUB:
                    self.stats.answered[STUB] += 1
        record, op, label, shown = (self.journal.record, known.op.name, known.binding.label,
                                    known.shown)

        def journal(delivery: Any) -> Any:
            record(op, label, shown, source, stub, injected, _status(delivery))
            return delivery

        return journal

    def journal_values(self, op: Operation, arguments: Mapping[str, Value],
                       values: tuple[str, ...], *, http: bool) -> tuple[tuple[str, str], ...]:
        """The call's values as the journal holds them: by meaning, a sensitive one (at any
        depth) as its pseudonym."""
        if any(p.name in self.sensitive or p.type is ParamType.COMPLEX for p in op.parameters):
            values = normal_arguments(op, _pseudonymised(self.journal_redactor, arguments),
                                      http=http)
        return tuple(zip(op.parameter_names, values, strict=True))

    def _why_unmatched(self, op: Operation, binding: Binding, values: tuple[str, ...],
                       found: tuple[str, ...] | None) -> str:
        """The one line that says why nothing answers a call (the console, the refusal)."""
        call = describe_call(op, values, self.sensitive)
        stubbed = self.stubs.of(op.name)
        if not self.index.sources:  # stubs alone
            return (f"no stub answers {call} over {binding.label}; " + (
                f"the stubs of {op.name} match " + "; ".join(
                    s.describe(self.sensitive) for s in stubbed[:3]) if stubbed
                else f"no stub of {op.name}"))
        return (f"no recorded answer for {call} over {binding.label}"
                + (" and no stub matches it" if stubbed else "") + "; nearest recorded: "
                f"{describe_nearest(op, values, found, self.sensitive)}{self._hint(op, values)}")

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
        response = self._sendable(as_recorded(recorded.response), lambda: (
            f"the description recorded at {self.index.place(where[0])}"))
        asked, was = urlsplit(request.url), urlsplit(recorded.request.url)
        origins = addresses.named_origins(response.body) | {f"{was.scheme}://{was.netloc}"}
        body, _found = addresses.rewrite(response.body, origins,
                                         f"{asked.scheme}://{asked.netloc}")
        with self._lock:
            self.stats.descriptions["recorded"] += 1
        return HttpResponse(response.status, response.headers, body, response.reason)


def _each(delivery: Delivery, change: Callable[[Any], Any]) -> Delivery:
    """``change`` done to ``delivery``, once it is made (a Later's on its worker thread)."""
    if isinstance(delivery, Later):
        make = delivery.make
        return Later(lambda: change(make()))
    return change(delivery)


def recorded_latency(duration: object, what: Callable[[], str]) -> tuple[float, str | None]:
    """The seconds ``--latency recorded`` waits for an exchange that took ``duration`` (its
    timings), and a line when the recording says what cannot be waited: a duration that is
    no number is answered at once; one over MAX_LATENCY (a clock that jumped, a hand-edited
    file: 1e12 s) is waited MAX_LATENCY. ``what``: the answer and where it was recorded."""
    try:
        seconds = float(duration or 0.0)  # type: ignore[arg-type]
    except OverflowError:  # a whole number of 400 digits
        seconds = math.inf
    except (TypeError, ValueError):
        seconds = math.nan
    if math.isnan(seconds):
        return 0.0, f"{what()} took {str(duration)[:40]!r} s by its timings, no number: " \
                    "answered at once"
    if seconds > MAX_LATENCY:
        return MAX_LATENCY, f"{what()} took {seconds:g} s by its timings: answered after " \
                            f"{MAX_LATENCY:g} s (the longest recorded latency waited)"
    return max(0.0, seconds), None


def _marked(delivery: Any, source: str, injected: list[str]) -> Any:
    """Each response in ``delivery`` saying where it came from (and what was injected)."""
    if isinstance(delivery, Delayed):
        return Delayed(_marked(delivery.response, source, injected), delivery.seconds)
    if isinstance(delivery, Disrupted):
        return delivery if delivery.response is None else Disrupted(
            delivery.how, _marked(delivery.response, source, injected), delivery.seconds)
    headers = replace_header(delivery.headers, HEADER, source)
    if injected:
        headers = replace_header(headers, INJECTED_HEADER, ", ".join(injected))
    return HttpResponse(delivery.status, headers, delivery.body, delivery.reason)


def _status(delivery: Any) -> int | None:
    """The status ``delivery`` sends; None when it sends no answer."""
    while isinstance(delivery, Delayed | Disrupted):
        delivery = delivery.response
    return delivery.status if isinstance(delivery, HttpResponse) else None


def _pseudonymised(redactor: Redactor, arguments: Mapping[str, Value]) -> dict[str, Value]:
    """The arguments as capture would have recorded them with ``redactor``: the value of each
    sensitive parameter or field (at any depth) replaced by its pseudonym."""
    def walk(name: str, value: Any) -> Any:
        if isinstance(value, str):
            return value if is_pseudonym(value) else redactor.value(name, value)
        if isinstance(value, list):
            return [walk(name, v) for v in value]
        if isinstance(value, Mapping):
            return {k: walk(k, v) for k, v in value.items()}
        return value

    return {name: walk(name, value) for name, value in arguments.items()}
