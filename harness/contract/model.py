"""An ASMX service contract, as data: operations on .asmx endpoints under one namespace.

A contract is a JSON file a person reads and diffs (``load``/``dump``; ``harness contract``
writes one from a deployment's WSDLs). The School Mobile contract is such a file shipped in the
package (``school_mobile.json``): nothing else spells operation names, endpoints and parameter
names, so a second ASMX service is a second file, not a second code path. Its clause numbers
refer to ``shared/spec/school-mobile-service.md``; the spec's odd spellings are the contract.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from harness.contract import structure
from harness.contract.structure import NamedType, Schema, Value
from harness.contract.types import ParamType, sample_value, value_from_digest
from harness.errors import UsageError

DEFAULT_NAMESPACE = "http://tempuri.org/"
SPEC_DOCUMENT = "school-mobile-service.md"


#: The four bindings by their contract names (``harness.contract.bindings.Binding`` values).
ALL_BINDINGS = ("soap11", "soap12", "get", "post")
SCHOOL_MOBILE_FILE = Path(__file__).resolve().parent / "school_mobile.json"


@dataclass(frozen=True)
class Parameter:
    name: str
    type: ParamType = ParamType.STRING
    #: Personal data (phone numbers, codes, device ids): redacted in recordings by default.
    sensitive: bool = False
    #: Name of the schema type when it is not an XSD built-in (enumeration, complex type).
    type_name: str | None = None
    #: The members of an enumeration, in schema order.
    values: tuple[str, ...] = ()
    #: (minOccurs, maxOccurs or None for unbounded, nillable) as a WSDL publishes it; None:
    #: as ASMX publishes the type (``occurrence``). Not part of the contract's identity.
    occurs: tuple[int, int | None, bool] | None = field(default=None, compare=False)

    @property
    def occurrence(self) -> tuple[int, int | None, bool]:
        """(minOccurs, maxOccurs, nillable): as published, else as ASMX publishes a parameter
        of this type: a .NET value type (int, bool, a date, an enum...) once and required, a
        reference type (string, base64Binary, an array or class) minOccurs 0; none nillable."""
        if self.occurs is not None:
            return self.occurs
        return (1 if self.type.is_value_type else 0), 1, False

    def accepts(self, text: str, *, http: bool = False) -> bool:
        """Whether ASMX reads ``text`` as a value of this parameter (``http``: a GET/POST
        field)."""
        return self.type.accepts(text, self.values, http=http)

    def lexical(self, text: str, *, http: bool = False) -> bool:
        """Whether ``text`` is of this parameter's XSD type (``ParamType.lexical``)."""
        return self.type.lexical(text, self.values, http=http)


@dataclass(frozen=True)
class Operation:
    name: str
    endpoint: str  # path of the .asmx endpoint, with its leading slash
    parameters: tuple[Parameter, ...]
    clause: str = ""  # spec clause that describes the operation
    #: Schema type name of the result ("string", "int", an enumeration's name), or None when the
    #: response element is empty. It is also the root element of a GET/POST result document.
    result: str | None = None
    result_sensitive: bool = False
    #: The members of an enumeration result.
    result_values: tuple[str, ...] = ()
    #: The bindings offering this operation when not all of the contract's: ASMX leaves an
    #: operation whose parameters HTTP cannot carry (a Guid, a complex type) out of HttpGet and
    #: HttpPost.
    bindings: tuple[str, ...] = ()
    #: The contract's named types (arrays, complex types), set by the Contract holding it, so
    #: an operation alone can build and read values of its parameters and result.
    schema: Schema = field(default_factory=dict, compare=False, repr=False)

    @cached_property  # read for every exchange judged: worked out once
    def result_root(self) -> str | None:
        """Root element of a GET/POST result document: the result type's name (a complex
        type's name without its structure), ASMX's for an XSD built-in .NET has no type of
        its own for (``<string>`` for an xs:integer: ``ParamType.http_result``)."""
        kind = self.result_type
        if kind is not None and kind.is_simple and kind is not ParamType.ENUM:
            return kind.http_result.value
        return self.result.split("{", 1)[0] if self.result else None

    @property
    def is_simple(self) -> bool:
        """Every parameter and the result are simple types."""
        return all(p.type.is_simple for p in self.parameters) and (
            self.result_type is None or self.result_type.is_simple)

    @cached_property  # read for every exchange judged: worked out once
    def result_type(self) -> ParamType | None:
        """The kind of the result: an XSD built-in, an enumeration or a complex type."""
        if self.result is None:
            return None
        if self.result_values:
            return ParamType.ENUM
        return ParamType(self.result) if self.result in ParamType else ParamType.COMPLEX

    @cached_property  # read for every exchange judged: worked out once
    def response_element(self) -> str:
        return f"{self.name}Response"

    @cached_property  # read for every exchange judged: worked out once
    def result_element(self) -> str | None:
        return f"{self.name}Result" if self.result else None

    @cached_property  # read for every exchange judged: worked out once
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)


@dataclass(frozen=True)
class Contract:
    """A set of operations on .asmx endpoints under one service namespace."""

    operations: tuple[Operation, ...] = ()
    namespace: str = DEFAULT_NAMESPACE
    name: str = "School Mobile"
    spec: str = SPEC_DOCUMENT
    #: The bindings every endpoint serves (``ALL_BINDINGS`` names).
    bindings: tuple[str, ...] = ALL_BINDINGS
    #: The named types of parameters, results and their fields: complex types, arrays
    #: (``ArrayOfX``) and the enumerations fields use.
    types: tuple[NamedType, ...] = ()
    _by_name: dict[str, Operation] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        schema = {t.name: t for t in self.types}
        if any(op.schema != schema for op in self.operations):
            object.__setattr__(self, "operations", tuple(
                op if op.schema == schema else replace(op, schema=schema)
                for op in self.operations))
        object.__setattr__(self, "_by_name", {op.name: op for op in self.operations})

    @cached_property
    def schema(self) -> Schema:
        """The named types by name."""
        return {t.name: t for t in self.types}

    def with_namespace(self, namespace: str | None) -> Contract:
        return self if not namespace else replace(self, namespace=namespace)

    def operation(self, name: str) -> Operation:
        """The operation spelled exactly ``name``; KeyError otherwise."""
        return self._by_name[name]

    def find(self, name: str) -> Operation | None:
        return self._by_name.get(name)

    @cached_property
    def endpoints(self) -> dict[str, tuple[Operation, ...]]:
        """Endpoint path -> its operations, in table order."""
        table: dict[str, list[Operation]] = {}
        for op in self.operations:
            table.setdefault(op.endpoint, []).append(op)
        return {path: tuple(ops) for path, ops in table.items()}

    def endpoint(self, segment: str) -> str | None:
        """The contract's endpoint for a path segment such as ``authcodesending.asmx``.

        IIS treats paths case-insensitively, so the match does too.
        """
        return self._endpoints_by_lower.get("/" + segment.strip("/").lower())

    @cached_property
    def _endpoints_by_lower(self) -> dict[str, str]:
        return {path.lower(): path for path in reversed(self.endpoints)}  # first one wins

    def bindings_of(self, op: Operation) -> tuple[str, ...]:
        """The bindings (``ALL_BINDINGS`` names) offering ``op``."""
        return tuple(b for b in self.bindings if b in op.bindings) if op.bindings \
            else self.bindings

    def soap_action(self, op: Operation) -> str:
        """The quoted SOAPAction header value of rule 4.1.1, joined the way ASMX joins it."""
        return f'"{self.namespace.rstrip("/")}/{op.name}"'

    def sensitive_names(self) -> frozenset[str]:
        """Names of parameters and result elements holding personal data."""
        names = {p.name for op in self.operations for p in op.parameters if p.sensitive}
        names |= {op.result_element for op in self.operations
                  if op.result_sensitive and op.result_element}
        return frozenset(names)


@cache
def _school_mobile() -> Contract:
    return load(SCHOOL_MOBILE_FILE)


def school_mobile(namespace: str | None = None) -> Contract:
    """The School Mobile contract, under ``namespace`` (default ``http://tempuri.org/``)."""
    return _school_mobile().with_namespace(namespace)


def reference_result(op: Operation, arguments: Mapping[str, Value]) -> Value:
    """The embedded reference's result for ``op`` (None for operations with an empty response).

    Deterministic by rule, so every implementation of the reference agrees: the SHA-256 of the
    argument values in table order joined by U+001F (an array or complex argument as
    ``structure.canonical``'s compact JSON), rendered in the result's type by
    ``types.value_from_digest`` (a string: the lowercase hex digest; for GetTokenDevice, whose
    only parameter is ``id``, that is ``sha256(id)``); an array or complex result by
    ``structure.from_digest`` (ARRAY_ITEMS items per array, each leaf from the digest and its
    path).
    """
    if op.result is None:
        return None
    joined = "\x1f".join(structure.canonical(arguments.get(name, ""))
                          for name in op.parameter_names)
    digest = hashlib.sha256(joined.encode("utf-8")).digest()
    if op.result_type is ParamType.COMPLEX:
        return structure.from_digest(op.schema, op.result, digest)
    return value_from_digest(op.result_type or ParamType.STRING, digest, op.result_values)


#: Names of the argument value sets of ``sample_arguments`` (its ``variant``): ``--values``.
VALUE_SETS = {"plain": 0, "non-ascii": 1, "xml-special": 2}


def sample_arguments(op: Operation, variant: int = 0, binding: str = "soap11"
                     ) -> dict[str, Value]:
    """Arguments for ``op`` built from the parameter types; ``variant`` picks the value set
    (plain, non-ASCII, XML-special); ``binding`` (a contract binding name) how they travel.
    An array or complex parameter gets ``structure.sample``'s value (a list or a dict).

    Each string parameter gets a value distinct from its siblings so that a swapped order shows.
    """
    args: dict[str, Value] = {}
    for i, p in enumerate(op.parameters):
        if p.type is ParamType.COMPLEX:
            args[p.name] = structure.sample(op.schema, p.type_name or "", variant)
            continue
        value = sample_value(p.type, variant, p.values, http=binding in ("get", "post"))
        args[p.name] = f"{value}{i}" if p.type is ParamType.STRING else value
    return args


# ------------------------------------------------------------------------ the contract file

#: Version of the file format; a file of another version is refused, not misread.
FORMAT = 1


def mark_sensitive(contract: Contract, names: list[str] | tuple[str, ...]) -> Contract:
    """``contract`` with ``names`` marked personal data (``harness contract --sensitive``):
    a parameter (``NAME``, in every operation that has it, or ``Operation.NAME``) or a result
    (its element ``OperationResult``, or ``Operation.result``). UsageError naming one that
    matches nothing."""
    params: set[tuple[str | None, str]] = set()
    results: set[str] = set()
    for given in names:
        op_name, dot, name = given.rpartition(".")
        scoped = [o for o in contract.operations if o.name == op_name] if dot else \
            list(contract.operations)
        hit = False
        for op in scoped:
            if (dot and name == "result" and op.result) or op.result_element == name:
                results.add(op.name)
                hit = True
            if op.parameter(name) is not None:
                params.add((op.name, name))
                hit = True
        if not hit:
            raise UsageError(f"--sensitive {given}: no parameter or result of that name "
                             "(NAME, Operation.NAME, OperationResult or Operation.result)")
    return replace(contract, operations=tuple(
        replace(op, parameters=tuple(replace(p, sensitive=True) if (op.name, p.name) in params
                                     else p for p in op.parameters),
                result_sensitive=op.result_sensitive or op.name in results)
        for op in contract.operations))


def to_dict(contract: Contract) -> dict[str, Any]:
    """The contract as the JSON document ``dump`` writes (defaults left out, order kept)."""
    out = {"format": FORMAT, "name": contract.name, "namespace": contract.namespace,
           "spec": contract.spec, "bindings": list(contract.bindings),
           "operations": [_operation_dict(op) for op in contract.operations]}
    return out | ({"types": [structure.to_dict(t) for t in contract.types]}
                  if contract.types else {})


def _operation_dict(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {"name": op.name, "endpoint": op.endpoint}
    if op.clause:
        out["clause"] = op.clause
    out["parameters"] = [_drop_defaults({"name": p.name, "type": p.type.value,
                                         "type_name": p.type_name, "values": list(p.values),
                                         "sensitive": p.sensitive}) | _occurs_dict(p)
                         for p in op.parameters]
    out["result"] = op.result
    return out | _drop_defaults({"result_values": list(op.result_values),
                                 "result_sensitive": op.result_sensitive,
                                 "bindings": list(op.bindings)})


def _occurs_dict(p: Parameter) -> dict[str, Any]:
    """A parameter's occurrence as its WSDL publishes it, where that is not how ASMX
    publishes its type (a struct such as TimeSpan: minOccurs 1)."""
    if p.occurs is None or p.occurs == replace(p, occurs=None).occurrence:
        return {}
    low, high, nillable = p.occurs
    return {"min_occurs": low, "max_occurs": "unbounded" if high is None else high} | (
        {"nillable": True} if nillable else {})


def _drop_defaults(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v not in (None, False, [])}


def from_dict(data: Any, source: str = "contract") -> Contract:
    """The contract of a ``to_dict`` document; UsageError naming what is wrong otherwise."""
    try:
        if data.get("format") != FORMAT:
            raise UsageError(f"{source}: format {data.get('format')!r} is not {FORMAT}")
        ops = tuple(_operation(o) for o in data["operations"])
        bindings = tuple(data.get("bindings", ALL_BINDINGS))
        if set(bindings) - set(ALL_BINDINGS):
            raise ValueError(f"bindings {bindings} (known: {', '.join(ALL_BINDINGS)})")
        types = tuple(structure.from_dict(t) for t in data.get("types", ()))
        structure.check_schema(types, tuple(_roots(ops)))
        named = {t.name for t in types}
        for op in ops:
            for kind in (*(p.type_name for p in op.parameters if p.type is ParamType.COMPLEX),
                         *((op.result,) if op.result_type is ParamType.COMPLEX else ())):
                if kind not in named:
                    raise ValueError(f"{op.name}: type {kind} is not in the contract's types")
        return Contract(ops, data.get("namespace", DEFAULT_NAMESPACE), data.get("name", ""),
                        data.get("spec", ""), bindings, types)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{source} is not a contract file: {type(exc).__name__} {exc}") from None


def _operation(o: dict[str, Any]) -> Operation:
    params = tuple(Parameter(p["name"], ParamType(p.get("type", "string")),
                             bool(p.get("sensitive", False)), p.get("type_name"),
                             tuple(p.get("values", ())), _occurs(p)) for p in o["parameters"])
    return Operation(o["name"], o["endpoint"], params, o.get("clause", ""), o.get("result"),
                     bool(o.get("result_sensitive", False)), tuple(o.get("result_values", ())),
                     tuple(o.get("bindings", ())))


def _occurs(p: dict[str, Any]) -> tuple[int, int | None, bool] | None:
    if "min_occurs" not in p:
        return None
    high = p.get("max_occurs", 1)
    return int(p["min_occurs"]), None if high == "unbounded" else int(high), bool(
        p.get("nillable", False))


def _roots(ops: tuple[Operation, ...]):
    """The named types parameters and results use."""
    for op in ops:
        yield from (p.type_name for p in op.parameters if p.type is ParamType.COMPLEX)
        if op.result_type is ParamType.COMPLEX:
            yield op.result


def dumps(contract: Contract) -> str:
    """The contract file's text: one line per field and per parameter (and per field of a
    complex type), so a diff of two contracts shows one changed line per changed one."""
    def field_lines(fields: dict[str, Any], indent: str) -> str:
        return ",\n".join(f"{indent}{_json(k)}: {_value(v, indent)}" for k, v in fields.items())

    def _value(value: Any, indent: str) -> str:
        if isinstance(value, list) and value and isinstance(value[0], dict):
            inner = indent + "  "
            items = ",\n".join(inner + (_json(v) if not ({"parameters", "fields"} & set(v))
                                        else "{\n" + field_lines(v, inner + "  ")
                                        + f"\n{inner}}}") for v in value)
            return f"[\n{items}\n{indent}]"
        return _json(value)

    return "{\n" + field_lines(to_dict(contract), "  ") + "\n}\n"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def load(path: str | Path) -> Contract:
    """The contract in JSON file ``path``."""
    from harness.files import CONTRACT_LIMIT, read_limited

    raw = read_limited(path, CONTRACT_LIMIT, "contract")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read contract {path}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"contract {path} is not JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"contract {path} is nested too deeply") from None
    return from_dict(data, str(path))
