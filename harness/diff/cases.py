"""What diff sends: cases generated from the contract, or requests read from recordings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.contract.bindings import Binding, build_request, classify
from harness.contract.model import Contract, Operation, sample_arguments
from harness.errors import ClassificationError
from harness.traffic.exchange import HttpRequest
from harness.traffic.recording import read_exchanges

#: Value sets per generated operation x binding: plain, non-ASCII, XML-special.
VARIANTS = 3
#: Generated requests are built for this base and retargeted to every implementation.
_PLACEHOLDER = "http://diff.invalid"


@dataclass(frozen=True)
class Case:
    """One request to send to every implementation, and what it is in the contract's terms."""

    request: HttpRequest
    operation: Operation | None  # None: the request is none of the contract's calls
    binding: Binding | None
    #: Arguments in the operation's parameter order (None where one was absent): calls with
    #: equal arguments over different bindings must give the same result.
    arguments: tuple[str | None, ...] | None
    index: int
    source: str | None = None

    @property
    def operation_name(self) -> str:
        return self.operation.name if self.operation else "(unclassified)"

    @property
    def binding_label(self) -> str:
        return self.binding.label if self.binding else "-"


def generated_cases(contract: Contract, variants: int = VARIANTS) -> Iterator[Case]:
    """Every operation x binding it is offered on, with ``variants`` argument sets each
    (operations of array or complex types are left out: their values are not generated)."""
    index = 0
    for op in contract.operations:
        if not op.is_simple:
            continue
        offered = contract.bindings_of(op)
        for variant in range(variants):
            for binding in Binding:
                if binding.value not in offered:
                    continue
                args = sample_arguments(op, variant, binding.value)
                index += 1
                request = build_request(contract, op, args, binding, _PLACEHOLDER)
                yield Case(request, op, binding, _ordered(op, args), index)


def recorded_cases(contract: Contract, paths: Iterable[str | Path],
                   on_broken: Callable[[Path, int, str], None] | None = None) -> Iterator[Case]:
    """The requests of recordings (native or HAR), classified where they can be."""
    for exchange in read_exchanges(paths, on_broken=on_broken):
        op = binding = arguments = None
        try:
            call = classify(contract, exchange.request)
            op, binding, arguments = call.operation, call.binding, _ordered(call.operation,
                                                                            call.args)
        except ClassificationError:
            pass  # still compared, reported as (unclassified)
        yield Case(exchange.request, op, binding, arguments, exchange.index or 0,
                   exchange.source or None)


def _ordered(op: Operation, args: dict[str, str]) -> tuple[str | None, ...]:
    return tuple(args.get(name) for name in op.parameter_names)
