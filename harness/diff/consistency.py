"""Cross-binding consistency: one implementation, one operation, the same arguments, four
bindings -- the result must be the same over all of them.

GetTokenDevice's SOAP ``GetTokenDeviceResult`` must equal its GET/POST ``string`` text; a void
operation must succeed with an empty answer everywhere. Errors are compared as errors only (GET
and POST errors carry no fault code to compare).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from harness.contract.bindings import Binding, is_success, plain_result, read_response
from harness.contract.model import Operation, ParamType
from harness.contract.structure import canonical
from harness.contract.structure import read as read_structure
from harness.contract.xmlsafe import element_children, local_name
from harness.judge.findings import Finding, Verdict
from harness.traffic.exchange import HttpResponse

RULE = "CROSS-BINDING"
#: (implementation, operation, arguments) groups kept; beyond them new argument sets are not
#: checked (a very long recording is checked on its first ones).
MAX_GROUPS = 200_000


@dataclass(frozen=True)
class Outcome:
    """What a call came to: ``key`` is compared across bindings, ``shown`` is reported."""

    key: str
    shown: str
    #: A void SOAP answer that is not empty: the paths of what it holds (an ignored or noisy
    #: element there, e.g. a per-call Timestamp, does not make it a different result).
    content: tuple[str, ...] = ()


def outcome(op: Operation, binding: Binding, response: HttpResponse) -> Outcome:
    reading = read_response(op, binding, response)
    if not is_success(response.status, reading.fault_code is not None):
        code = f", fault {reading.fault_code}" if reading.fault_code else ""
        return Outcome("error", f"error (HTTP {response.status}{code})")
    if reading.problem:
        if (text := plain_result(op, binding, response)) is not None:
            return Outcome(f"result {text}", f"{text!r} (text/plain)")
        return Outcome(f"unreadable: {reading.problem}", f"unreadable body ({reading.problem})")
    if op.result_element:
        if reading.result is None:
            return Outcome("no result", "successful, no result")
        if op.result_type is ParamType.COMPLEX and reading.result_node is not None:
            return _structured(op, reading.result_node)
        return Outcome(f"result {reading.result}", repr(reading.result))
    if not binding.is_soap:
        empty = not response.body.strip()
        return Outcome("empty" if empty else "not empty",
                       "successful, empty" if empty else "successful, not empty")
    payload = reading.payload
    if payload is None or (payload.text or "").strip():
        return Outcome("not empty", "successful, not empty")
    children = element_children(payload)
    if not children:
        return Outcome("empty", "successful, empty")
    base = f"/Envelope/Body/{local_name(payload)}"
    content = tuple(f"{base}/{local_name(child)}" for child in children)
    return Outcome("not empty", f"successful, holds {', '.join(content)}", content)


def _structured(op: Operation, node) -> Outcome:
    """An array or complex result, by its value (read as ASMX reads it): the same whatever
    the binding's layout (SOAP's <Operation>Result, GET/POST's indented document)."""
    try:
        value = canonical(read_structure(op.schema, op.result or "", node))
    except ValueError as exc:
        return Outcome(f"unreadable: {exc}", f"unreadable result ({exc})")
    return Outcome(f"result {value}", value if len(value) <= 200 else value[:197] + "...")


@dataclass
class _Op:
    groups: int = 0
    inconsistent: int = 0
    example: dict[str, Outcome] | None = None
    arguments: tuple[str | None, ...] | None = None


@dataclass
class Consistency:
    """Outcomes per implementation x operation x arguments x binding, judged at the end."""

    table: dict[tuple[str, str, tuple[str | None, ...]], dict[str, Outcome]] = field(
        default_factory=dict)
    operations: dict[str, Operation] = field(default_factory=dict)

    def record(self, role: str, op: Operation, arguments: tuple[str | None, ...],
               binding: Binding, result: Outcome) -> None:
        key = (role, op.name, arguments)
        group = self.table.get(key)
        if group is None:
            if len(self.table) >= MAX_GROUPS:
                return
            group = self.table[key] = {}
        self.operations[op.name] = op
        group.setdefault(binding.label, result)

    def findings(self, judged: str, reference: str, values_only: Callable[[Operation], bool],
                 negligible: Callable[[str, str], bool]) -> Iterator[Finding]:
        """One finding per implementation x operation. An inconsistency of the ``judged``
        implementation fails unless the ``reference`` one has it too (then it is inherited: a
        warning, as every inconsistency of the reference is). Where ``values_only(op)`` (its
        result is noise), only success or error is compared; ``negligible(operation, path)``
        tells content of a void answer that does not count (ignored or noise)."""
        per_op: dict[tuple[str, str], _Op] = {}
        for (role, name, arguments), group in self.table.items():
            if len(group) < 2:
                continue
            op = self.operations[name]
            state = per_op.setdefault((role, name), _Op())
            state.groups += 1
            if len({_key(o, values_only(op), negligible, name) for o in group.values()}) > 1:
                state.inconsistent += 1
                if state.example is None:
                    state.example, state.arguments = group, arguments
        for (role, name), state in sorted(per_op.items()):
            op = self.operations[name]
            if not state.inconsistent:
                yield Finding(RULE, Verdict.PASSED, name, None, extra={"implementation": role})
                continue
            inherited = role != judged or per_op.get((reference, name), _Op()).inconsistent
            key = functools.partial(_key, coarse=values_only(op), negligible=negligible,
                                    operation=name)
            yield _inconsistency(role, op, state,
                                 Verdict.WARNING if inherited else Verdict.FAILED, key)


def _key(result: Outcome, coarse: bool, negligible: Callable[[str, str], bool],
         operation: str) -> str:
    if coarse:
        return "error" if result.key == "error" else "ok"
    if result.content and all(negligible(operation, path) for path in result.content):
        return "empty"
    return result.key


def _inconsistency(role: str, op: Operation, state: _Op, verdict: Verdict,
                   key: Callable[[Outcome], str]) -> Finding:
    group = state.example or {}
    counts = Counter(key(o) for o in group.values())
    first = key(next(iter(group.values())))
    usual = max(counts, key=lambda k: (counts[k], k == first))
    agree = [label for label, o in group.items() if key(o) == usual]
    differ = [label for label, o in group.items() if key(o) != usual]
    shown = {label: o.shown for label, o in group.items()}
    arguments = dict(zip(op.parameter_names, state.arguments or (), strict=False))
    return Finding(
        RULE, verdict, op.name, ", ".join(differ),
        expected=f"{', '.join(agree)}: {group[agree[0]].shown}",
        actual="; ".join(f"{label}: {shown[label]}" for label in differ),
        message=f"{role} answers {op.name} differently over {', '.join(differ)} than over "
                f"{', '.join(agree)} ({state.inconsistent} of {state.groups} argument sets)",
        extra={"implementation": role, "values": shown, "arguments": arguments,
               "inconsistent_sets": state.inconsistent, "argument_sets": state.groups})
