"""What a run sends: the operations and bindings chosen with ``--operation``/``--binding``, and
real argument values per operation (``--values FILE``, TOML) used instead of generated ones.

Values file (TOML; one table per operation, parameters as the spec spells them; a parameter
not named keeps its generated value)::

    [GetTeacherSubjectsByID]
    Tid = "T-1234"          # a teacher that exists on staging
    TClassid = "7B"

    [AuthCode]
    code = "STAGING-CODE"

An array or complex parameter takes a structured value: a TOML table or array (or a string
holding JSON), or the whole file as JSON (``--values FILE.json``, the same shape). Objects
hold fields, lists hold array items, ``null`` (JSON) leaves a field out; fields not named keep
their generated values::

    [SaveOrder]
    order = '{"Customer": "ACME", "Lines": [{"Sku": "A-1", "Quantity": 3}]}'

    [Sum]
    values = [1, 2, 3]
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contract import structure
from harness.contract.bindings import Binding
from harness.contract.model import Contract, Operation, ParamType
from harness.contract.structure import Value
from harness.errors import UsageError


@dataclass(frozen=True)
class Selection:
    """Operation names and binding labels to send; empty means all."""

    operations: frozenset[str] = frozenset()
    bindings: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, contract: Contract, operations: Iterable[str] = (),
              bindings: Iterable[str] = (), flag: str = "--operation") -> Selection:
        """Names checked against ``contract`` (UsageError naming ``flag`` and the known
        ones)."""
        names = []
        for name in operations:
            op = contract.find(name)
            if op is None:
                known = ", ".join(o.name for o in contract.operations)
                raise UsageError(f"{flag} {name!r} is not an operation (use: {known})")
            names.append(op.name)
        return cls(frozenset(names), frozenset(Binding.parse(b).label for b in bindings))

    def allows(self, operation: str | None, binding: str | None) -> bool:
        """True when the pair is selected; an unknown side (None) is never filtered out."""
        return ((not self.operations or operation is None or operation in self.operations)
                and (not self.bindings or binding is None or binding in self.bindings))

    def __bool__(self) -> bool:
        return bool(self.operations or self.bindings)

    def pairs(self, contract: Contract) -> list[tuple[Operation, Binding]]:
        """Every operation x binding of ``contract`` this selects (offered by the contract)."""
        return [(op, b) for op in contract.operations
                for b in map(Binding.parse, contract.bindings_of(op))
                if self.allows(op.name, b.label)]


@dataclass(frozen=True)
class Values:
    """Real argument values per operation name: ``values.get(op_name) -> {param: text}``."""

    by_operation: Mapping[str, Mapping[str, Value]] = field(default_factory=dict)

    def get(self, operation: str) -> Mapping[str, Value]:
        return self.by_operation.get(operation, {})

    def apply(self, op: Operation, generated: Mapping[str, Value]) -> dict[str, Value]:
        """``generated`` arguments with the given values over them (in an array or complex
        value, fields not named keep their generated values)."""
        given = self.get(op.name)
        return {name: structure.merged(op.schema, (p.type_name or "") if p else "", value,
                                       given[name]) if name in given else value
                for name, value in generated.items() for p in [op.parameter(name)]}

    @classmethod
    def load(cls, contract: Contract, source: str | Path | Mapping[str, Any] | None) -> Values:
        """From a TOML file path, or a table already read (a config file's ``[values]``)."""
        if source is None:
            return cls()
        if isinstance(source, Mapping):
            return cls(_checked(contract, source, "[values]"))
        as_json = str(source).lower().endswith(".json")
        from harness.files import VALUES_LIMIT, check_entries, read_limited

        raw = read_limited(source, VALUES_LIMIT, "--values")
        try:
            text = raw.decode("utf-8")
            check_entries(text, source, "--values", toml=not as_json)
            data = json.loads(text) if as_json else tomllib.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise UsageError(f"--values {source}: not {'JSON' if as_json else 'TOML'} "
                             f"({str(exc)[:200]})") from None
        if not isinstance(data, Mapping):
            raise UsageError(f"--values {source}: not a table of operations")
        return cls(_checked(contract, data, str(source)))


def _checked(contract: Contract, data: Mapping[str, Any], where: str) -> dict[str, dict]:
    checked: dict[str, dict[str, Value]] = {}
    for name, table in data.items():
        op = contract.find(name)
        if op is None or not isinstance(table, Mapping):
            raise UsageError(f"{where}: [{name}] is not an operation table (operations: "
                             f"{', '.join(o.name for o in contract.operations)})")
        params = {p.name: p for p in op.parameters}
        checked[op.name] = {}
        for param, value in table.items():
            p = params.get(param)
            if p is None or (p.type is not ParamType.COMPLEX
                             and (isinstance(value, (Mapping, list)) or value is None)):
                raise UsageError(f"{where}: {name}.{param} is not a parameter value of "
                                 f"{name} (parameters: {', '.join(sorted(params)) or 'none'})")
            checked[op.name][param] = _value(op, p.type_name, value, f"{name}.{param}", where) \
                if p.type is ParamType.COMPLEX else \
                str(value).lower() if isinstance(value, bool) else str(value)
    return checked


def _value(op: Operation, type_name: str | None, value: Any, path: str, where: str) -> Value:
    """A structured value, checked against its type (a string holds it as JSON)."""
    try:
        if isinstance(value, str):
            value = json.loads(value)
        return structure.validate(op.schema, type_name or "", value, path)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{where}: {str(exc)[:300]}") from None
