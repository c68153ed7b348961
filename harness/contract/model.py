"""The School Mobile service contract, as data.

This is the only module that spells operation names, endpoints and parameter names. Everything
else (bindings, reference implementation, rules, generators) reads this table, so a second ASMX
service is a second table, not a second code path. Clause numbers refer to
``shared/spec/school-mobile-service.md``. The spec's odd spellings are the contract: keep them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property

DEFAULT_NAMESPACE = "http://tempuri.org/"
SPEC_DOCUMENT = "school-mobile-service.md"


class ParamType(StrEnum):
    """XSD type of a parameter in the SOAP bindings (GET/POST always carry text)."""

    STRING = "string"
    INT = "int"

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is a value of this type as ASMX reads it (xsd:int: Int32)."""
        if self is ParamType.STRING:
            return True
        stripped = text.strip()
        digits = stripped[1:] if stripped[:1] in "+-" else stripped
        # Length first: int() of a 5,000-digit text raises (Python's 4,300-digit limit)
        # instead of answering "not an Int32".
        if not (digits.isascii() and digits.isdigit()) or len(digits.lstrip("0")) > 10:
            return False
        return -(2**31) <= int(stripped) < 2**31


@dataclass(frozen=True)
class Parameter:
    name: str
    type: ParamType = ParamType.STRING
    #: Personal data (phone numbers, codes, device ids): redacted in recordings by default.
    sensitive: bool = False


@dataclass(frozen=True)
class Operation:
    name: str
    endpoint: str  # path of the .asmx endpoint, with its leading slash
    parameters: tuple[Parameter, ...]
    clause: str  # spec clause that describes the operation
    #: XSD type of the result, or None when the response element is empty.
    result: str | None = None
    result_sensitive: bool = False

    @property
    def response_element(self) -> str:
        return f"{self.name}Response"

    @property
    def result_element(self) -> str | None:
        return f"{self.name}Result" if self.result else None

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)


def _p(name: str, type_: ParamType = ParamType.STRING, *, sensitive: bool = False) -> Parameter:
    return Parameter(name, type_, sensitive)


OPERATIONS: tuple[Operation, ...] = (
    Operation("AuthCode", "/AuthCodeSending.asmx",
              (_p("code", sensitive=True), _p("phone", sensitive=True)), "4.2"),
    Operation("LogoutFromSchool", "/CenterlogOut.asmx",
              (_p("PhoneNumber", sensitive=True), _p("UuId", sensitive=True),
               _p("id_row_central", ParamType.INT)), "4.3"),
    Operation("GetStudentsAudtiNote", "/GetStudentsAudit.asmx",
              (_p("SubjectID"), _p("Class_id")), "4.4"),
    Operation("GetTeacherSubjectsByID", "/GetTeacherSubjects.asmx",
              (_p("Tid"), _p("TClassid")), "4.5"),
    Operation("GetTeacherGrpupsByID", "/GetTeacherGroups.asmx", (_p("Tid"),), "4.6"),
    Operation("GetTokenDevice", "/PushNotificationMobile.asmx", (_p("id"),), "4.7",
              result="string", result_sensitive=True),
    Operation("SendNotificationType", "/NotificationNotes.asmx",
              (_p("id"), _p("baseUrlSchool"), _p("TypeNotfication")), "4.8"),
    Operation("SendMarkNotes", "/NotificationNotes.asmx",
              (_p("id"), _p("id_class"), _p("baseUrlSchool")), "4.9"),
)


@dataclass(frozen=True)
class Contract:
    """A set of operations on .asmx endpoints under one service namespace."""

    operations: tuple[Operation, ...] = OPERATIONS
    namespace: str = DEFAULT_NAMESPACE
    name: str = "School Mobile"
    spec: str = SPEC_DOCUMENT
    _by_name: dict[str, Operation] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {op.name: op for op in self.operations})

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

    def soap_action(self, op: Operation) -> str:
        """The quoted SOAPAction header value of rule 4.1.1, joined the way ASMX joins it."""
        return f'"{self.namespace.rstrip("/")}/{op.name}"'

    def sensitive_names(self) -> frozenset[str]:
        """Names of parameters and result elements holding personal data."""
        names = {p.name for op in self.operations for p in op.parameters if p.sensitive}
        names |= {op.result_element for op in self.operations
                  if op.result_sensitive and op.result_element}
        return frozenset(names)


SCHOOL_MOBILE = Contract()


def school_mobile(namespace: str | None = None) -> Contract:
    """The School Mobile contract, under ``namespace`` (default ``http://tempuri.org/``)."""
    return SCHOOL_MOBILE.with_namespace(namespace)


def reference_result(op: Operation, arguments: dict[str, str]) -> str | None:
    """The embedded reference's result for ``op`` (None for operations with an empty response).

    Deterministic by rule, so every implementation of the reference agrees: the lowercase hex
    SHA-256 of the argument values in table order joined by U+001F. For GetTokenDevice, whose
    only parameter is ``id``, that is ``sha256(id)``.
    """
    if op.result is None:
        return None
    joined = "\x1f".join(arguments.get(name, "") for name in op.parameter_names)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


#: Values the generators use per parameter type: plain, non-ASCII and XML-special text.
SAMPLE_VALUES: dict[ParamType, tuple[str, ...]] = {
    ParamType.STRING: ("A1", "طالب-ملاحظة Ünïcødé", "<a&b>\"'ok'"),
    ParamType.INT: ("42", "0", "-7"),
}


def sample_arguments(op: Operation, variant: int = 0) -> dict[str, str]:
    """Arguments for ``op`` built from the parameter types; ``variant`` picks the value set.

    Each parameter gets a value distinct from its siblings so that a swapped order shows.
    """
    args = {}
    for i, p in enumerate(op.parameters):
        values = SAMPLE_VALUES[p.type]
        value = values[variant % len(values)]
        args[p.name] = value if p.type is ParamType.INT else f"{value}{i}"
    return args
