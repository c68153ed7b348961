"""The feature files certify runs, written from the contract next to the report.

The shipped features (``features/*.feature``) are the templates: each binding feature's
``| operation |`` table becomes the contract's operations offering that binding, the R9-INT
tag and step become one per parameter type the contract uses, and ``wsdl.feature``'s
``| endpoint |`` table the contract's endpoints. Features about School Mobile operations
(GetTokenDevice, NotificationNotes) are kept only when the contract has those operations;
for the results of any other contract a ``results.feature`` is written. Operations with an
array or complex parameter or result are called like any other (their values generated from
the schema, ``structure.sample``), and an array or complex result is judged by its structure
(OP-RESULT-STRUCTURE). For the School Mobile contract the written files are the shipped ones,
unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from harness.contract.model import ALL_BINDINGS, Contract, Operation
from harness.contract.types import ParamType

#: Feature -> the bindings its calls use (the operations in its table must offer them all).
BINDING_FEATURES = {"soap11.feature": ("soap11",), "soap12.feature": ("soap12",),
                    "http_get.feature": ("get",), "http_post.feature": ("post",),
                    "versioning.feature": ("soap11", "soap12"),
                    "odd_requests.feature": ("soap11", "soap12"),
                    "asmx_matrix.feature": ()}  # each step: its own binding
WSDL_FEATURE = "wsdl.feature"
RESULTS_FEATURE = "results.feature"
_LABELS = {"soap11": "SOAP 1.1", "soap12": "SOAP 1.2", "get": "HTTP GET", "post": "HTTP POST"}
_CALLS = re.compile(r"calls (\S+) over")
_INT_RULE = ParamType.INT.rule_id


def write_features(contract: Contract, templates: Path, names: tuple[str, ...],
                   out: Path) -> list[str]:
    """Write the features for ``contract`` into ``out``; the names of the files written."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.feature"):
        old.unlink()  # a previous run's features are not this contract's
    written = []
    for name in (*names, WSDL_FEATURE):
        text = feature_text(contract, name, (templates / name).read_text(encoding="utf-8"))
        if text is not None:
            (out / name).write_text(text, encoding="utf-8")
            written.append(name)
    covered = {op for name in written for op in _CALLS.findall((out / name).read_text())}
    results = results_feature(contract, covered)
    if results is not None:
        (out / RESULTS_FEATURE).write_text(results, encoding="utf-8")
        written.append(RESULTS_FEATURE)
    return written


def feature_text(contract: Contract, name: str, template: str) -> str | None:
    """The feature ``name`` for ``contract`` (None when it is not about this contract)."""
    if name == WSDL_FEATURE:
        return _with_table(template, "endpoint", list(contract.endpoints))
    bindings = BINDING_FEATURES.get(name)
    if bindings is None:  # a feature about named operations: only when the contract has them
        named = set(_CALLS.findall(template)) | _first_column_names(template)
        named.discard("<operation>")
        return template if all(contract.find(op) for op in named) else None
    ops = [op for op in contract.operations
           if all(b in contract.bindings_of(op) for b in bindings)]
    if not ops:
        return None
    text = _with_table(template, "operation", [op.name for op in ops],
                       rows_for=None if bindings else _ops_over_scenario_binding(contract))
    if _header(text, "endpoint") is not None:  # odd_requests.feature's bare GETs
        text = _with_table(text, "endpoint", list(contract.endpoints))
    return _typed_steps(text, ops)


def _header(text: str, column: str, after: int = 0) -> int | None:
    """The line number of the first table header ``| column |`` from line ``after``."""
    return next((i for i, line in enumerate(text.splitlines()) if i >= after
                 and re.fullmatch(rf"\|\s*{column}\s*\|", line.strip())), None)


def _ops_over_scenario_binding(contract: Contract) -> Callable[[str], list[str]]:
    """For a feature whose scenarios each name their binding ("… over HTTP GET, …"): the
    operations the contract offers over the binding a scenario's title names."""
    def rows(title: str) -> list[str]:
        binding = next(b for b, label in _LABELS.items() if f"over {label}" in title)
        return [op.name for op in contract.operations if binding in contract.bindings_of(op)]
    return rows


def _with_table(template: str, column: str, rows: list[str],
                rows_for: Callable[[str], list[str]] | None = None) -> str:
    """``template`` with each one-column Examples table ``| column |`` holding ``rows``, or
    ``rows_for(the title of the table's scenario)``."""
    text, after = template, 0
    while (start := _header(text, column, after)) is not None:
        lines = text.splitlines()
        end = start + 1
        while end < len(lines) and lines[end].strip().startswith("|"):
            end += 1
        if rows_for is not None:
            title = max(i for i in range(start) if lines[i].strip().startswith("Scenario"))
            rows = rows_for(lines[title])
            if not rows:  # the binding offers none of the operations: no scenario for it
                first = title
                while first > 0 and lines[first - 1].strip().startswith("@"):
                    first -= 1
                text, after = "\n".join([*lines[:first], *lines[end:]]) + "\n", first
                continue
        indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
        width = max(len(column), *(len(r) for r in rows))
        table = [f"{indent}| {cell:<{width}} |" for cell in (column, *rows)]
        text = "\n".join([*lines[:start], *table, *lines[end:]]) + "\n"
        after = start + len(table)
    return text


def _typed_steps(text: str, ops: list[Operation]) -> str:
    """The R9-INT tag and step replaced by one per parameter type of ``ops`` (kept as they
    are when int is the only one)."""
    kinds = [k for k in ParamType if not k.any_text
             and any(p.type is k for op in ops for p in op.parameters)]
    if not kinds:
        kinds = [ParamType.INT]  # judged not applicable: the step still says so
    tags = " ".join(f"@{k.rule_id}" for k in kinds)
    lines = []
    for line in text.splitlines():
        if f"({_INT_RULE})" in line:
            indent = line[:len(line) - len(line.lstrip())]
            for k in kinds:
                lines.append(line if k is ParamType.INT else
                             f"{indent}And array and complex parameters carry their type's "
                             f"structure ({k.rule_id})" if k is ParamType.COMPLEX else
                             f"{indent}And {k.value} parameters carry {k.value} values "
                             f"({k.rule_id})")
            continue
        lines.append(line.replace(f"@{_INT_RULE}", tags) if line.lstrip().startswith("@")
                     else line)
    return "\n".join(lines) + "\n"


def _first_column_names(template: str) -> set[str]:
    """Operation names in the first column of tables headed ``operation``."""
    names: set[str] = set()
    in_table = False
    for line in template.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.strip().startswith("|"):
            in_table = False
        elif cells[0] == "operation":
            in_table = True
        elif in_table:
            names.add(cells[0])
    return names


def results_feature(contract: Contract, covered: set[str]) -> str | None:
    """A feature calling each operation with a result over each of its bindings, unless a
    feature names it already (School Mobile's GetTokenDevice has its own)."""
    rows = [(op.name, _LABELS[b], op.result or "")
            for op in contract.operations
            if op.result and op.name not in covered
            for b in ALL_BINDINGS if b in contract.bindings_of(op)]
    if not rows:
        return None
    complex_rows = [r for r in rows if contract.find(r[0]).result_type is ParamType.COMPLEX]
    text = _results_text(_table(rows))
    if complex_rows:
        text += _STRUCTURE_SCENARIO.format(table=_table(complex_rows))
    return text


def _table(rows: list[tuple[str, str, str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows))
              for i, h in enumerate(("operation", "binding", "result"))]
    return "\n".join("      | " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
                     + " |" for row in [("operation", "binding", "result"), *rows])


_STRUCTURE_SCENARIO = """
  @OP-RESULT @OP-RESULT-STRUCTURE @R4-STATUS
  Scenario Outline: <operation> returns a <result> structure over <binding>
    When the client calls <operation> over <binding>
    Then the call returns HTTP status 200 (R4-STATUS)
    And the result comes back as one <result> value (OP-RESULT)
    And its elements are named and ordered as its type says (OP-RESULT-STRUCTURE)

    Examples:
{table}
"""


def _results_text(table: str) -> str:
    return f"""Feature: Operations with a result return it on every binding
  Every operation with a result answers it over SOAP as one <Operation>Result element in
  <Operation>Response, and over HTTP GET and POST as an XML document whose root element is
  named after the result type, in the service namespace. The value is of the result type.

  Background:
    Given the service under test

  @OP-RESULT @R4-STATUS
  Scenario Outline: <operation> returns its <result> over <binding>
    When the client calls <operation> over <binding>
    Then the call returns HTTP status 200 (R4-STATUS)
    And the result comes back as one <result> value (OP-RESULT)

    Examples:
{table}
"""
