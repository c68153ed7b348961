"""Features from recorded traffic (``harness scenarios``): the calls a team captured become its
regression suite, in the vocabulary's sentences, run with ``certify --features DIR``.

One feature per operation. Each recorded call is read through the contract (classify, the
response read as the operation's answer) and becomes a row of a Scenario Outline: its binding,
the parameters it sent (a parameter it did not send is not in that outline's table), and what
the recording shows: the HTTP status, then the result, the fault code, or nothing more. Calls
alike in all of these are one row. Service descriptions (WSDL, help pages), requests that are
not exactly one of the contract's calls and exchanges without a response are left out and
counted.

A redacted result (a pseudonym, ``redacted-`` and 16 hex digits) is checked by its pseudonym
when the recording's key is at hand (``the result's pseudonym is "redacted-..."``, after ``the
recorded values are pseudonyms under key "<key id>"`` in the Background): certify computes the
live result's pseudonym under that key, so a changed result fails. Without the key it is
checked by its shape only (``the result is a non-empty string``, ``an int``). A redacted
parameter is sent as its pseudonym (a string parameter) or as a generated value of its type.
The feature's description says which.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.contract import structure
from harness.contract.bindings import (
    Binding,
    Classification,
    call_arguments,
    classify,
    read_response,
)
from harness.contract.model import Contract, Operation
from harness.contract.types import ParamType, sample_value
from harness.errors import ClassificationError, ServiceDescription, UsageError
from harness.http_messages import status_problem
from harness.traffic.exchange import Exchange
from harness.traffic.keys import key_id
from harness.traffic.redaction import is_pseudonym

#: Rows of one operation's outlines, by default: a long recording's first distinct calls.
MAX_EXAMPLES = 200

# What a recorded answer shows, and the steps that assert it (after the HTTP status).
RESULT, EMPTY, SHAPE, PSEUDONYM, NOT_EMPTY, FAULT, STATUS = (
    "result", "empty", "shape", "pseudonym", "not empty", "fault", "status")
_THEN = {RESULT: 'And the result is "<result>"', EMPTY: "And the result is empty",
         SHAPE: "And the result is <result>",
         PSEUDONYM: 'And the result\'s pseudonym is "<result>"',
         NOT_EMPTY: "And the result is not empty",
         FAULT: 'And the answer is a SOAP fault with code "<code>"', STATUS: None}
_TITLE = {RESULT: "answers as recorded", EMPTY: "answers as recorded",
          SHAPE: "answers a result of the recorded shape",
          PSEUDONYM: "answers the recorded result (by its pseudonym)",
          NOT_EMPTY: "answers a result, as recorded", FAULT: "is refused as recorded",
          STATUS: "answers the recorded HTTP status"}


@dataclass(frozen=True)
class Outcome:
    """What the recording shows of one answer."""

    kind: str
    status: int
    value: str = ""  # the result text, its shape's words, the fault code


@dataclass(frozen=True)
class Row:
    """One recorded call, as an Examples row."""

    binding: Binding
    arguments: tuple[tuple[str, str], ...]  # (parameter, cell text), the ones sent, in order
    outcome: Outcome


@dataclass
class OperationCalls:
    """The distinct recorded calls of one operation, with where each was first seen."""

    operation: Operation
    rows: dict[Row, list[str]] = field(default_factory=dict)  # row -> sources ("a.jsonl #3")
    left_over: int = 0  # calls not written: unlike every row, past the limit
    calls: int = 0
    redacted_parameters: set[str] = field(default_factory=set)
    generated_parameters: set[str] = field(default_factory=set)
    #: How each redacted result is checked: ``the result is a non-empty string``, ``... an int``
    #: or ``... not empty``.
    redacted_result: set[str] = field(default_factory=set)
    #: The id of the key its redacted results are checked by pseudonym under (None: by shape).
    pseudonym_key: str | None = None
    #: Recordings whose redacted results are checked by shape: their key was not found.
    keyless: set[str] = field(default_factory=set)


@dataclass
class Written:
    """What ``write_features`` did."""

    files: list[Path] = field(default_factory=list)
    calls: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # why -> count

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def collect(exchanges: Iterable[Exchange], contract: Contract, written: Written,
            limit: int = MAX_EXAMPLES, keys: Mapping[str, bytes | None] | None = None
            ) -> dict[str, OperationCalls]:
    """The recorded calls of each operation (in the contract's order), distinct ones merged.
    ``keys``: each recording's pseudonym key by its path; the first one found is the one
    redacted results are checked by pseudonym under (those of a recording with another key or
    none, by shape)."""
    found: dict[str, OperationCalls] = {}
    keys = keys or {}
    chosen = next((k for k in keys.values() if k is not None), None)
    for exchange in exchanges:
        call = _classified(contract, exchange, written)
        if call is None:
            continue
        op = call.operation
        calls = found.setdefault(op.name, OperationCalls(op))
        key = keys.get(exchange.source or "")
        row = _row(contract, call, exchange, calls, key if key == chosen else None)
        if row is None:
            written.skip("values a Gherkin table cannot hold (unreadable as their type, "
                         "surrounding blanks, control characters)")
            continue
        written.calls += 1
        calls.calls += 1
        source = f"{Path(exchange.source).name} #{exchange.index}"
        if row in calls.rows:
            calls.rows[row].append(source)
        elif len(calls.rows) < limit:
            calls.rows[row] = [source]
        else:
            calls.left_over += 1
    order = {op.name: i for i, op in enumerate(contract.operations)}
    return dict(sorted(found.items(), key=lambda item: order[item[0]]))


def _classified(contract: Contract, exchange: Exchange, written: Written
                ) -> Classification | None:
    if exchange.response is None:
        written.skip("no response recorded")
        return None
    if status_problem(exchange.response.status) is not None:  # 999, 0, -1: no step says it
        written.skip("a status HTTP has not (outside 100-599)")
        return None
    try:
        call = classify(contract, exchange.request)
    except ServiceDescription:
        written.skip("service descriptions (WSDL, help pages)")
        return None
    except ClassificationError:
        written.skip("not a call of the contract")
        return None
    if call.guess or call.problem:
        written.skip("not exactly a call of the contract (replay them: harness replay)")
        return None
    return call


def _row(contract: Contract, call: Classification, exchange: Exchange,
         calls: OperationCalls, key: bytes | None = None) -> Row | None:
    op, binding = call.operation, call.binding
    try:
        values = call_arguments(call)
    except ValueError:
        return None
    sent = {name for name, _ in call.arguments}
    arguments = []
    for p in op.parameters:
        value = values.get(p.name)
        if p.name not in sent or value is None:
            continue
        if p.type is ParamType.COMPLEX:
            arguments.append((p.name, structure.canonical(value)))
            continue
        text = str(value)
        if is_pseudonym(text):
            calls.redacted_parameters.add(p.name)
            if p.type is not ParamType.STRING:  # a pseudonym is no value of this type
                calls.generated_parameters.add(p.name)
                text = str(sample_value(p.type, 0, p.values, http=not binding.is_soap))
        arguments.append((p.name, text))
    outcome = _outcome(op, binding, exchange, calls, key)
    if not all(fits_a_cell(text) for text in (*(v for _, v in arguments), outcome.value)):
        return None
    return Row(binding, tuple(arguments), outcome)


def _outcome(op: Operation, binding: Binding, exchange: Exchange,
             calls: OperationCalls, key: bytes | None = None) -> Outcome:
    response = exchange.response
    assert response is not None
    reading = read_response(op, binding, response)
    status = response.status
    if reading.fault_code is not None:
        return Outcome(FAULT, status, reading.fault_code)
    if not 200 <= status < 300 or reading.problem:
        return Outcome(STATUS, status)
    if op.result is None:
        return Outcome(EMPTY, status)
    if op.result_type is ParamType.COMPLEX:
        node = reading.result_node
        try:
            value = structure.read(op.schema, op.result, node) if node is not None else None
        except ValueError:
            return Outcome(STATUS, status)
        text = structure.canonical(value) if value is not None else ""
        if _holds_pseudonym(value):
            calls.redacted_result.add("not empty")
            return Outcome(NOT_EMPTY, status)
        return Outcome(RESULT, status, text)
    text = reading.result or ""
    if is_pseudonym(text) and key is not None:
        calls.pseudonym_key = key_id(key)
        return Outcome(PSEUDONYM, status, text.strip())
    if is_pseudonym(text):
        calls.keyless.add(Path(exchange.source or "").name)  # no key, or another one
        kind = op.result_type
        shape = "a non-empty string" if kind in (ParamType.STRING, ParamType.ENUM, None) \
            else f"{'an' if kind.value[0] in 'aeiou' else 'a'} {kind.value}"
        calls.redacted_result.add(shape)
        return Outcome(SHAPE, status, shape)
    return Outcome(RESULT, status, text)


def _holds_pseudonym(value: structure.Value) -> bool:
    if isinstance(value, str):
        return is_pseudonym(value)
    if isinstance(value, dict):
        return any(_holds_pseudonym(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_pseudonym(v) for v in value)
    return False


# ------------------------------------------------------------------------------ the features


def write_features(recordings: list[str], exchanges: Iterable[Exchange], contract: Contract,
                   folder: Path, *, force: bool = False, limit: int = MAX_EXAMPLES,
                   on_file: Callable[[Path, OperationCalls], None] | None = None,
                   keys: Mapping[str, bytes | None] | None = None) -> Written:
    """One ``<Operation>.feature`` per operation recorded, into ``folder`` (``keys``: each
    recording's pseudonym key, as ``collect`` takes them)."""
    written = Written()
    found = collect(exchanges, contract, written, limit, keys)
    if not found:
        raise UsageError(f"no call of the {contract.name} contract in "
                         f"{', '.join(recordings)}" + _skipped_text(written))
    targets = {name: folder / f"{name}.feature" for name in found}
    existing = [p for p in targets.values() if p.exists()]
    if existing and not force:
        raise UsageError(f"{existing[0]} exists: move it away, or give --force to overwrite")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, calls in found.items():
            targets[name].write_text(feature_text(calls, recordings), encoding="utf-8")
            written.files.append(targets[name])
            if on_file is not None:
                on_file(targets[name], calls)
    except OSError as exc:
        raise UsageError(f"cannot write the features into {folder}: "
                         f"{exc.strerror or exc}") from None
    return written


def _skipped_text(written: Written) -> str:
    if not written.skipped:
        return ""
    return " (left out: " + ", ".join(f"{n} {why}" for why, n in written.skipped.items()) + ")"


def feature_text(calls: OperationCalls, recordings: list[str]) -> str:
    op = calls.operation
    sources = ", ".join(Path(r).name for r in recordings)
    distinct = len(calls.rows)
    about = (f"The calls of {op.name} recorded in {sources}, sent again with the values they "
             f"sent and checked against what the recorded deployment answered: {calls.calls} "
             f"call(s), {distinct} distinct"
             + (f", {calls.left_over} more call(s) left out (--max-examples)" if calls.left_over
                else "") + ". " + " ".join(_redaction_notes(calls)))
    lines = [f"# Written by harness scenarios from {sources}: edit it as your own.",
             f"Feature: {op.name} as recorded",
             *textwrap.wrap(about, width=96, initial_indent="  ", subsequent_indent="  ",
                            break_on_hyphens=False)]
    lines += ["", "  Background:", "    Given the service under test"]
    if calls.pseudonym_key:
        lines.append("    And the recorded values are pseudonyms under key "
                     f'"{calls.pseudonym_key}"')
    for (names, kind), rows in _outlines(calls).items():
        lines += ["", *_outline(op, names, kind, rows, calls)]
    return "\n".join(lines) + "\n"


def _redaction_notes(calls: OperationCalls) -> list[str]:
    notes = []
    op = calls.operation
    if calls.redacted_parameters:
        plain = sorted(calls.redacted_parameters - calls.generated_parameters)
        if plain:
            notes.append(f"Redacted in the recording: {', '.join(plain)}, sent as the "
                         "recorded pseudonyms (redacted-...).")
        if calls.generated_parameters:
            notes.append(f"Redacted in the recording: "
                         f"{', '.join(sorted(calls.generated_parameters))}, sent as generated "
                         "values of their types.")
    result = op.result_element or "the result"
    if calls.pseudonym_key:
        notes.append(f"Redacted in the recording: {result}, checked by its pseudonym under the "
                     f"recording's key (key id {calls.pseudonym_key}, from your key store or "
                     "certify --key-file): a changed result fails.")
    if calls.redacted_result:
        shapes = " or ".join(f"the result is {s}" for s in sorted(calls.redacted_result))
        why = (f" (no key at hand for {', '.join(sorted(calls.keyless))})" if calls.keyless
               else "")
        notes.append(f"Redacted in the recording: {result}, checked by its shape ({shapes}), "
                     f"not by its value{why}.")
    return notes


def _outlines(calls: OperationCalls) -> dict[tuple[tuple[str, ...], str], list[Row]]:
    """Rows grouped by the parameters they sent and what their answer shows."""
    groups: dict[tuple[tuple[str, ...], str], list[Row]] = {}
    for row in calls.rows:
        names = tuple(name for name, _ in row.arguments)
        groups.setdefault((names, row.outcome.kind), []).append(row)
    return groups


def _outline(op: Operation, names: tuple[str, ...], kind: str, rows: list[Row],
             calls: OperationCalls) -> list[str]:
    columns = _columns(names)
    without = [p for p in op.parameter_names if p not in names]
    title = f"{op.name} over <binding> {_TITLE[kind]}" + (
        f", without {', '.join(without)}" if without and op.parameters else "") + \
        " (<recorded>)"
    lines = [f"  Scenario Outline: {title}"]
    call = f"    When the client calls {op.name} over <binding>"
    if op.parameters:
        lines.append(call + " with:")
        lines += _table([["parameter", "value"], *([n, f"<{columns[n]}>"] for n in names)],
                        indent=6)
    else:
        lines.append(call)
    lines.append("    Then the HTTP status is <status>")
    if _THEN[kind]:
        lines.append(f"    {_THEN[kind]}")
    header = ["binding", *(columns[n] for n in names), "status"]
    header += ["result"] if kind in (RESULT, SHAPE, PSEUDONYM) else \
        ["code"] if kind == FAULT else []
    header.append("recorded")
    table = [header]
    for row in rows:
        cells = [row.binding.label, *(value for _, value in row.arguments),
                 str(row.outcome.status)]
        if kind in (RESULT, SHAPE, PSEUDONYM, FAULT):
            cells.append(row.outcome.value)
        sources = calls.rows[row]
        cells.append(sources[0] + (f" (+{len(sources) - 1} alike)" if len(sources) > 1
                                   else ""))
        table.append(cells)
    lines += ["", "    Examples:", *_table(table, indent=6)]
    return lines


def _columns(names: tuple[str, ...]) -> dict[str, str]:
    """Examples column of each parameter: its name, unless one of the fixed columns has it."""
    fixed = {"binding", "status", "result", "code", "recorded"}
    return {n: f"{n} value" if n in fixed else n for n in names}


def _table(rows: list[list[str]], indent: int) -> Iterator[str]:
    cells = [[escape_cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    for row in cells:
        yield " " * indent + "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths,
                                                                         strict=True)) + " |"


def escape_cell(text: str) -> str:
    r"""A value as a Gherkin table cell that reads back as the value: ``\``, ``|`` and
    newlines escaped as Gherkin reads them, ``${`` written ``$${`` (no saved value's
    reference)."""
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")
            .replace("${", "$${"))


def fits_a_cell(text: str) -> bool:
    """Whether a Gherkin cell can hold ``text``: it trims surrounding blanks and reads no
    control character but a newline (escaped)."""
    return text == text.strip() and not any(c < " " and c != "\n" for c in text)
