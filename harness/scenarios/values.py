"""What a scenario sends and expects: the ``| parameter | value |`` table of a call, ``${name}``
references to values saved earlier in the scenario, and each value checked against the
contract's type of its parameter before anything is sent.

A cell holds a simple parameter's text as written (an empty cell is the empty string); an array
or complex parameter takes JSON (a list, an object; ``null`` leaves a field out). A parameter
without a row is left out of the request. ``$${`` is a literal ``${``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from harness.contract import structure
from harness.contract.bindings import Binding, closest
from harness.contract.model import Operation
from harness.contract.structure import Value
from harness.contract.types import ParamType

#: A saved value's name, as ``And the result is saved as NAME`` gives it.
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(r"\$\$\{|\$\{(" + NAME + r")\}")
#: The header of a call's table and of an elements table.
CALL_TABLE = ("parameter", "value")
ELEMENTS_TABLE = ("element", "value")


class ValueProblem(ValueError):
    """A table, cell or reference that cannot be used; the message says why in the feature's
    words."""


def references(text: str) -> list[str]:
    """The names ``text`` refers to with ``${name}``, in order."""
    return [m.group(1) for m in _REFERENCE.finditer(text) if m.group(1)]


def fill(text: str, saved: Mapping[str, str], escape: Callable[[str], str] = str) -> str:
    """``text`` with each ``${name}`` replaced by its saved value (passed through ``escape``,
    e.g. ``re.escape`` in a regular expression) and ``$${`` by ``${``."""
    def replace(m: re.Match[str]) -> str:
        name = m.group(1)
        if name is None:
            return "${"
        if name not in saved:
            known = ", ".join(sorted(saved)) or "none yet"
            raise ValueProblem(f"${{{name}}} is not saved in this scenario (saved: {known}); "
                               "save it first: And the result is saved as " + name)
        return escape(saved[name])
    return _REFERENCE.sub(replace, text)


def table_rows(rows: Sequence[Sequence[str]], header: tuple[str, str]) -> list[tuple[str, str]]:
    """The (name, value) rows of a two-column data table whose first row is ``header``."""
    if not rows or tuple(cell.strip().lower() for cell in rows[0]) != header:
        first = " | ".join(rows[0]) if rows else "nothing"
        raise ValueProblem(f"the table's first row must be | {' | '.join(header)} | "
                           f"(it is | {first} |)")
    found: list[tuple[str, str]] = []
    for row in rows[1:]:
        if len(row) != 2:
            raise ValueProblem(f"each row of the table has two cells: {header[0]} and value")
        found.append((row[0].strip(), row[1]))
    return found


def call_arguments(op: Operation, rows: Sequence[Sequence[str]],
                   saved: Mapping[str, str] | None) -> dict[str, Value]:
    """The arguments a call's table gives: parameter -> text (simple) or JSON data checked
    against its type (array, complex). ``saved`` None (a check before the run): a cell that
    refers to a saved value is taken as text unchecked."""
    arguments: dict[str, Value] = {}
    for name, cell in table_rows(rows, CALL_TABLE):
        p = op.parameter(name)
        if p is None:
            guess = closest(name, {n: n for n in op.parameter_names})
            raise ValueProblem(
                f"{op.name} has no parameter {name!r}"
                + (f" (did you mean {guess}?)" if guess else "")
                + f"; its parameters: {', '.join(op.parameter_names) or 'none'}")
        if name in arguments:
            raise ValueProblem(f"{name} has two rows in the table")
        if saved is None and references(cell):
            arguments[name] = cell
            continue
        text = fill(cell, saved or {})
        arguments[name] = _structured(op, p.type_name or "", name, text) \
            if p.type is ParamType.COMPLEX else text
    return arguments


def _structured(op: Operation, type_name: str, name: str, text: str) -> Value:
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueProblem(f"{name} is a {type_name}: give it as JSON (a list or an object), "
                           f"not {text[:60]!r}") from None
    except RecursionError:
        raise ValueProblem(f"{name}: JSON nested too deeply") from None
    try:
        return structure.validate(op.schema, type_name, data, name)
    except ValueError as exc:
        raise ValueProblem(str(exc)[:300]) from None


def type_problems(op: Operation, arguments: Mapping[str, Value], binding: Binding
                  ) -> list[str]:
    """Simple values that are not of their parameter's type as ASMX reads them over
    ``binding``: ``id_row_central is an int: 'abc' is not one``."""
    problems = []
    for name, value in arguments.items():
        p = op.parameter(name)
        if p is None or p.type is ParamType.COMPLEX or not isinstance(value, str):
            continue
        if references(value):
            continue
        if not p.accepts(value, http=not binding.is_soap):
            kind = p.type_name if p.type is ParamType.ENUM else p.type.value
            members = f" (one of {', '.join(p.values)})" if p.values else ""
            problems.append(f"{op.name}'s {name} is {_article(kind)} {kind}{members}: "
                            f"{value[:60]!r} is not one")
    return problems


def _article(word: str | None) -> str:
    return "an" if (word or "x")[0].lower() in "aeiou" else "a"


def shape_names() -> tuple[str, ...]:
    """What ``the result is a ...`` accepts besides ``a non-empty string``: the simple XSD
    types (``an int``, ``a dateTime``)."""
    return tuple(t.value for t in ParamType if t.is_simple and t is not ParamType.ENUM)


def shape_of(words: str) -> str:
    """The type name in ``a non-empty string`` / ``an int``; ValueProblem for another."""
    if words == "a non-empty string":
        return "non-empty string"
    kind = words.split(" ", 1)[1] if " " in words else words
    if kind not in shape_names():
        raise ValueProblem(f"{words!r} is not a shape: use a non-empty string or a type "
                           f"({', '.join('a ' + t for t in shape_names())})")
    return kind


def has_shape(text: str, shape: str) -> bool:
    """Whether ``text`` is of ``shape`` (a non-empty string, or a simple type's name)."""
    if shape == "non-empty string":
        return text != ""
    return ParamType(shape).accepts(text)
