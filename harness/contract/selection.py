"""What a run sends: the operations and bindings chosen with ``--operation``/``--binding``, and
real argument values per operation (``--values FILE``, TOML) used instead of generated ones.

Values file (TOML; one table per operation, parameters as the spec spells them; a parameter
not named keeps its generated value)::

    [GetTeacherSubjectsByID]
    Tid = "T-1234"          # a teacher that exists on staging
    TClassid = "7B"

    [AuthCode]
    code = "STAGING-CODE"
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.errors import UsageError


@dataclass(frozen=True)
class Selection:
    """Operation names and binding labels to send; empty means all."""

    operations: frozenset[str] = frozenset()
    bindings: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, contract: Contract, operations: Iterable[str] = (),
              bindings: Iterable[str] = ()) -> Selection:
        """Names checked against ``contract`` (UsageError naming the known ones)."""
        names = []
        for name in operations:
            op = contract.find(name)
            if op is None:
                known = ", ".join(o.name for o in contract.operations)
                raise UsageError(f"--operation {name!r} is not an operation (use: {known})")
            names.append(op.name)
        return cls(frozenset(names), frozenset(Binding.parse(b).label for b in bindings))

    def allows(self, operation: str | None, binding: str | None) -> bool:
        """True when the pair is selected; an unknown side (None) is never filtered out."""
        return ((not self.operations or operation is None or operation in self.operations)
                and (not self.bindings or binding is None or binding in self.bindings))

    def __bool__(self) -> bool:
        return bool(self.operations or self.bindings)


@dataclass(frozen=True)
class Values:
    """Real argument values per operation name: ``values.get(op_name) -> {param: text}``."""

    by_operation: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def get(self, operation: str) -> Mapping[str, str]:
        return self.by_operation.get(operation, {})

    @classmethod
    def load(cls, contract: Contract, source: str | Path | Mapping[str, Any] | None) -> Values:
        """From a TOML file path, or a table already read (a config file's ``[values]``)."""
        if source is None:
            return cls()
        if isinstance(source, Mapping):
            return cls(_checked(contract, source, "[values]"))
        try:
            data = tomllib.loads(Path(source).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"--values {source}: {exc.strerror or exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"--values {source}: not TOML ({exc})") from None
        return cls(_checked(contract, data, str(source)))


def _checked(contract: Contract, data: Mapping[str, Any], where: str) -> dict[str, dict]:
    checked: dict[str, dict[str, str]] = {}
    for name, table in data.items():
        op = contract.find(name)
        if op is None or not isinstance(table, Mapping):
            raise UsageError(f"{where}: [{name}] is not an operation table (operations: "
                             f"{', '.join(o.name for o in contract.operations)})")
        params = {p.name for p in op.parameters}
        for param, value in table.items():
            if param not in params or isinstance(value, (Mapping, list)):
                raise UsageError(f"{where}: {name}.{param} is not a parameter value of "
                                 f"{name} (parameters: {', '.join(sorted(params)) or 'none'})")
        checked[op.name] = {k: str(v).lower() if isinstance(v, bool) else str(v)
                            for k, v in table.items()}
    return checked
