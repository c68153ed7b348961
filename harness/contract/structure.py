"""Arrays and complex types: the named types of a contract, and values of them.

ASMX (XmlSerializer) publishes a class as an XSD complexType whose sequence holds one element
per public field, in declaration order, and an array ``X[]`` as ``ArrayOfX``: a complexType with
one element, named after the item type (``Product``, ``string``, ``int``), minOccurs 0 and
maxOccurs unbounded. A ``NamedType`` is either such a complex type (``fields``) or an
enumeration (``values``); a field's ``type`` is an XSD built-in (a ``ParamType`` value) or the
name of another NamedType of the same contract.

A *value* of a type is plain JSON data: a dict (field name -> value) for a complex type, a list
of item values for an array type, a string for a simple type, None for nil or absent. It is the
form of structured ``--values``, of generated arguments and of the reference's results;
``write`` turns one into XML as XmlSerializer writes it, ``read`` reads XML back as ASMX does
(fields by name, unknown elements ignored, a leaf that does not convert refused), and ``check``
judges XML strictly against the type (element names, order, occurrences, each leaf's lexical
type by its R9-<TYPE> check).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree

from harness.contract.types import ParamType, sample_value, value_from_digest
from harness.contract.xmlsafe import element_children, local_name, namespace

#: Array items the generators and the reference put in an array (an empty one shows nothing).
ARRAY_ITEMS = 2
#: Nesting depth below which optional (minOccurs 0) complex fields are still filled: a type
#: that contains itself (a tree, a linked list) stays a bounded value.
MAX_FILL_DEPTH = 4
#: Deepest nesting of types, and most elements in one generated value: a hostile schema stays
#: a bounded structure (a one-line error beyond), never a RecursionError.
MAX_NESTING = 32
MAX_VALUE_NODES = 5000
#: Most problems one ``check`` reports (the first ones say enough).
MAX_PROBLEMS = 10
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
_NIL = f"{{{XSI_NS}}}nil"

Value = str | list | dict | None


@dataclass(frozen=True)
class Field:
    """One element of a complex type's sequence."""

    name: str
    type: str  # an XSD built-in (ParamType value) or a NamedType's name
    min_occurs: int = 1
    max_occurs: int | None = 1  # None: unbounded
    nillable: bool = False

    @property
    def repeated(self) -> bool:
        return self.max_occurs is None or self.max_occurs > 1


@dataclass(frozen=True)
class NamedType:
    """A named schema type of the contract: a complex type or an enumeration."""

    name: str
    fields: tuple[Field, ...] = ()
    values: tuple[str, ...] = ()  # an enumeration's members

    @property
    def item(self) -> Field | None:
        """The item element of an array type (``ArrayOfX``): its one, repeated field."""
        if len(self.fields) == 1 and self.fields[0].repeated:
            return self.fields[0]
        return None


Schema = Mapping[str, NamedType]


def simple_kind(type_ref: str, schema: Schema) -> tuple[ParamType, tuple[str, ...]] | None:
    """(kind, enumeration members) of a simple type reference; None for a complex type."""
    named = schema.get(type_ref)
    if named is not None:
        return (ParamType.ENUM, named.values) if named.values else None
    if _builtin(type_ref):
        return ParamType(type_ref), ()
    return ParamType.STRING, ()  # an XSD built-in the contract has no check for


def to_dict(named: NamedType) -> dict[str, Any]:
    if named.values:
        return {"name": named.name, "values": list(named.values)}
    return {"name": named.name, "fields": [_field_dict(f) for f in named.fields]}


def _field_dict(f: Field) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": f.type, "min_occurs": f.min_occurs,
                           "max_occurs": "unbounded" if f.max_occurs is None else f.max_occurs}
    return out | ({"nillable": True} if f.nillable else {})


def from_dict(data: Mapping[str, Any]) -> NamedType:
    values = tuple(str(v) for v in data.get("values", ()))
    fields = tuple(Field(str(f["name"]), str(f["type"]), int(f.get("min_occurs", 1)),
                         None if f.get("max_occurs", 1) == "unbounded"
                         else int(f.get("max_occurs", 1)), bool(f.get("nillable", False)))
                   for f in data.get("fields", ()))
    return NamedType(str(data["name"]), fields, values)


def check_schema(types: tuple[NamedType, ...], roots: tuple[str, ...] = ()) -> None:
    """ValueError naming the problem: a field of an unknown type, a type that contains itself
    through required fields (no finite value has it), nesting deeper than MAX_NESTING, or a
    value of a ``roots`` type (parameters, results) larger than MAX_VALUE_NODES."""
    schema = {t.name: t for t in types}
    for t in types:
        for f in t.fields:
            if f.type not in schema and not _builtin(f.type):
                raise ValueError(f"type {t.name}: field {f.name} is of unknown type {f.type}")
    done: set[str] = set()
    for t in types:
        cycle = _required_cycle(schema, t.name, (), done)
        if cycle:
            raise ValueError(f"type {t.name} contains itself through required fields "
                             f"({' > '.join(cycle)}): no finite value has it")
    for root in dict.fromkeys(r for r in roots if r in schema):
        sample(schema, root)  # raises beyond the bounds


def _builtin(type_ref: str) -> bool:
    return type_ref in ParamType and ParamType(type_ref) not in (ParamType.ENUM,
                                                                 ParamType.COMPLEX)


def _required_cycle(schema: Schema, name: str, path: tuple[str, ...], done: set[str]
                    ) -> tuple[str, ...]:
    if name in path:
        return (*path, name)
    if name in done:
        return ()
    if len(path) >= MAX_NESTING:
        raise ValueError(f"type {path[0]} nests deeper than {MAX_NESTING} levels")
    named = schema.get(name)
    for f in named.fields if named else ():
        if f.min_occurs > 0 and f.type in schema:
            found = _required_cycle(schema, f.type, (*path, name), done)
            if found:
                return found
    done.add(name)
    return ()


def used_types(schema: Schema, roots: Iterator[str] | tuple[str, ...]) -> list[NamedType]:
    """The named types reachable from ``roots``, each once, in first-use order."""
    seen: dict[str, NamedType] = {}
    stack = [r for r in roots if r in schema][::-1]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen[name] = schema[name]
        stack.extend(f.type for f in reversed(schema[name].fields) if f.type in schema)
    return list(seen.values())


def signature(schema: Schema, type_ref: str) -> str:
    """A type's one-level structure, e.g. ``Product{Id:int Name:string? Tags:ArrayOfString?}``
    (``?`` optional, ``*`` repeated, ``!`` nillable): what a drift finding shows."""
    named = schema.get(type_ref)
    if named is None:
        return type_ref
    if named.values:
        return f"{named.name}({'|'.join(named.values)})"
    return f"{named.name}{{{' '.join(_field_signature(f) for f in named.fields)}}}"


def _field_signature(f: Field) -> str:
    marks = ("*" if f.repeated else "?" if f.min_occurs == 0 else "") + ("!" if f.nillable
                                                                          else "")
    return f"{f.name}:{f.type}{marks}"


def differences(want: Schema, got: Schema, type_ref: str, got_ref: str | None = None,
                path: str | None = None) -> list[str]:
    """How type ``type_ref`` of ``want`` differs from ``got_ref`` (default the same name) of
    ``got``, walked through nested types, by ``path`` (default the type's name) and field
    names: ``order.Lines.OrderLine.Quantity: int -> long``."""
    problems: list[str] = []
    _differ(want, got, type_ref, got_ref or type_ref, path or type_ref, problems, set())
    return problems


def _differ(want: Schema, got: Schema, a: str, b: str, path: str, problems: list[str],
            seen: set[tuple[str, str]]) -> None:
    if (a, b) in seen or len(problems) >= MAX_PROBLEMS or path.count(".") > MAX_NESTING:
        return
    seen.add((a, b))
    if a != b:
        problems.append(f"{path}: {a} -> {b}")
        return
    ta, tb = want.get(a), got.get(b)
    if ta is None or tb is None:
        if (ta is None) != (tb is None):
            problems.append(f"{path}: {signature(want, a)} -> {signature(got, b)}")
        return
    if signature(want, a) != signature(got, b):
        names_a, names_b = [f.name for f in ta.fields], [f.name for f in tb.fields]
        if ta.values != tb.values or names_a != names_b:
            problems.append(f"{path}: {signature(want, a)} -> {signature(got, b)}")
    by_name = {f.name: f for f in tb.fields}
    for fa, fb in ((f, by_name[f.name]) for f in ta.fields if f.name in by_name):
        where = f"{path}.{fa.name}"
        if _field_signature(fa) != _field_signature(fb) and fa.type == fb.type:
            problems.append(f"{where}: {_field_signature(fa)} -> {_field_signature(fb)}")
        _differ(want, got, fa.type, fb.type, where, problems, seen)


# ------------------------------------------------------------------------------- values


def sample(schema: Schema, type_ref: str, variant: int = 0, depth: int = 0) -> Value:
    """A generated value of ``type_ref``: every required field, optional ones while shallower
    than MAX_FILL_DEPTH, ARRAY_ITEMS items per array; leaves ``types.sample_value``."""
    return _fill(schema, type_ref, depth,
                 lambda kind, values, _path: sample_value(kind, variant, values), "", [0])


def from_digest(schema: Schema, type_ref: str, digest: bytes) -> Value:
    """The reference's value of ``type_ref`` from a SHA-256 ``digest``: the shape ``sample``
    gives, each leaf ``types.value_from_digest`` of SHA-256(digest + its path), the path being
    the field names and item indexes from the root joined by "/" (``Lines/0/Sku``)."""
    def leaf(kind: ParamType, values: tuple[str, ...], path: str) -> str:
        return value_from_digest(kind, hashlib.sha256(digest + path.encode()).digest(), values)
    return _fill(schema, type_ref, 0, leaf, "", [0])


def _fill(schema: Schema, type_ref: str, depth: int, leaf, path: str, nodes: list[int]
          ) -> Value:
    nodes[0] += 1
    if nodes[0] > MAX_VALUE_NODES or depth > MAX_NESTING:
        raise ValueError(f"a value of type {path.split('/', 1)[0] or type_ref} has more than "
                         f"{MAX_VALUE_NODES} elements or {MAX_NESTING} levels")
    simple = simple_kind(type_ref, schema)
    if simple is not None:
        return leaf(simple[0], simple[1], path)
    named = schema[type_ref]
    if named.item is not None:
        return [_fill(schema, named.item.type, depth + 1, leaf, f"{path}/{i}".lstrip("/"),
                      nodes) for i in range(ARRAY_ITEMS)]
    out: dict[str, Value] = {}
    for f in named.fields:
        nested = simple_kind(f.type, schema) is None
        if f.min_occurs == 0 and nested and depth + 1 >= MAX_FILL_DEPTH:
            continue  # bounded: a type containing itself stops here
        where = f"{path}/{f.name}".lstrip("/")
        if f.repeated:
            out[f.name] = [_fill(schema, f.type, depth + 1, leaf, f"{where}/{i}", nodes)
                           for i in range(ARRAY_ITEMS)]
        else:
            out[f.name] = _fill(schema, f.type, depth + 1, leaf, where, nodes)
    return out


def merged(schema: Schema, type_ref: str, generated: Value, given: Value) -> Value:
    """``given`` (a user's value) over ``generated``: fields not named keep their generated
    value; a list or a simple value replaces the generated one whole."""
    if isinstance(given, Mapping) and isinstance(generated, Mapping):
        named = schema.get(type_ref)
        types = {f.name: f.type for f in named.fields} if named else {}
        return {**generated, **{k: merged(schema, types.get(k, ""), generated.get(k), v)
                                for k, v in given.items()}}
    return given


def canonical(value: Value) -> str:
    """The text a structured value is digested and compared by: compact JSON, keys in the
    order given (the type's field order)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           separators=(",", ":"))


def validate(schema: Schema, type_ref: str, value: Any, path: str) -> Value:
    """A user's value of ``type_ref`` as a Value (numbers and booleans as their text);
    ValueError naming the path of what does not fit."""
    simple = simple_kind(type_ref, schema)
    if value is None:
        return None
    if path.count(".") + path.count("[") > MAX_NESTING:
        raise ValueError(f"{path[:80]}...: nested deeper than {MAX_NESTING} levels")
    if simple is not None:
        if isinstance(value, (Mapping, list)):
            raise ValueError(f"{path}: a {type_ref} is a single value, not {_json_kind(value)}")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if not simple[0].accepts(text, simple[1]):
            raise ValueError(f"{path}: {text!r} is not a {type_ref} ({simple[0].rule_id})")
        return text
    named = schema[type_ref]
    if named.item is not None:
        if not isinstance(value, list):
            raise ValueError(f"{path}: {type_ref} is an array: give a JSON list")
        return [validate(schema, named.item.type, v, f"{path}[{i}]")
                for i, v in enumerate(value)]
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: {type_ref} is a complex type: give a JSON object with "
                         f"fields {', '.join(f.name for f in named.fields)}")
    fields = {f.name: f for f in named.fields}
    out: dict[str, Value] = {}
    for key, v in value.items():
        f = fields.get(key)
        if f is None:
            raise ValueError(f"{path}.{key} is not a field of {type_ref} (fields: "
                             f"{', '.join(fields) or 'none'})")
        if f.repeated:
            if not isinstance(v, list):
                raise ValueError(f"{path}.{key}: repeated field: give a JSON list")
            out[key] = [validate(schema, f.type, item, f"{path}.{key}[{i}]")
                        for i, item in enumerate(v)]
        else:
            out[key] = validate(schema, f.type, v, f"{path}.{key}")
    return out


def _json_kind(value: Any) -> str:
    return "an object" if isinstance(value, Mapping) else "a list"


# ------------------------------------------------------------------------------ XML


def write(parent: etree._Element, ns: str, name: str, schema: Schema, type_ref: str,
          value: Value, nillable: bool = False) -> None:
    """``value`` as element ``name`` under ``parent`` as XmlSerializer writes it: None is left
    out, or ``xsi:nil="true"`` where the element is nillable (array items)."""
    if value is None:
        if nillable:
            etree.SubElement(parent, f"{{{ns}}}{name}", {_NIL: "true"})
        return
    element = etree.SubElement(parent, f"{{{ns}}}{name}")
    write_content(element, ns, schema, type_ref, value)


def write_content(element: etree._Element, ns: str, schema: Schema, type_ref: str,
                  value: Value) -> None:
    """The content of an element of ``type_ref`` holding ``value``."""
    if simple_kind(type_ref, schema) is not None or isinstance(value, str):
        element.text = value if isinstance(value, str) else ""
        return
    named = schema[type_ref]
    if named.item is not None:
        for item in value if isinstance(value, list) else ():
            write(element, ns, named.item.name, schema, named.item.type, item,
                  named.item.nillable)
        return
    given = value if isinstance(value, Mapping) else {}
    for f in named.fields:
        items = given.get(f.name)
        for item in (items if f.repeated and isinstance(items, list) else [items]):
            write(element, ns, f.name, schema, f.type, item, f.nillable)


def read(schema: Schema, type_ref: str, element: etree._Element, path: str = "") -> Value:
    """The value an element of ``type_ref`` holds, read as ASMX reads it: fields by name in
    any order (the first of a non-repeated one counts), unknown elements ignored, nil as None;
    ValueError naming the path of a leaf that is no value of its type."""
    if element.get(_NIL) in ("true", "1"):
        return None
    simple = simple_kind(type_ref, schema)
    children = element_children(element)
    if simple is not None:
        text = element.text or ""
        if not simple[0].accepts(text, simple[1]):
            raise ValueError(f"{path or type_ref}: {text[:40]!r} is not a {type_ref}")
        return text
    named = schema[type_ref]
    if named.item is not None:
        item = named.item
        return [read(schema, item.type, c, f"{path}/{i}")
                for i, c in enumerate(c for c in children if local_name(c) == item.name)]
    fields = {f.name: f for f in named.fields}
    out: dict[str, Value] = {}
    for c in children:
        f = fields.get(local_name(c))
        if f is None:
            continue
        value = read(schema, f.type, c, f"{path}/{f.name}")
        if f.repeated:
            out.setdefault(f.name, []).append(value)  # type: ignore[union-attr]
        else:
            out.setdefault(f.name, value)
    return {f.name: out[f.name] for f in named.fields if f.name in out}


def check(schema: Schema, type_ref: str, element: etree._Element, ns: str) -> list[str]:
    """What in ``element`` departs from ``type_ref`` as XmlSerializer writes it (empty when
    nothing): child elements in the service namespace, named and in the sequence's order,
    each as often as its occurrences allow, nil only where nillable, each leaf a value of its
    type (the R9-<TYPE> check of that type)."""
    problems: list[str] = []
    _check(schema, type_ref, element, ns, local_name(element), problems)
    return problems[:MAX_PROBLEMS]


def _check(schema: Schema, type_ref: str, element: etree._Element, ns: str, path: str,
           problems: list[str]) -> None:
    if len(problems) >= MAX_PROBLEMS:
        return
    children = element_children(element)
    simple = simple_kind(type_ref, schema)
    if simple is not None:
        text = element.text or ""
        if children:
            problems.append(f"{path}: a {type_ref} value, not child elements")
        elif not simple[0].lexical(text, simple[1]):
            problems.append(f"{path}: {text[:40]!r} is not a {type_ref} ({simple[0].rule_id})")
        return
    named = schema[type_ref]
    if (element.text or "").strip():
        problems.append(f"{path}: text {element.text.strip()[:40]!r} in a {type_ref}")
    names = [f.name for f in named.fields]
    at, count = -1, 0  # the field the last child was, and how often it came so far
    for child in children:
        name = local_name(child)
        where = f"{path}/{name}"
        if namespace(child) != ns:
            problems.append(f"{where}: in namespace {namespace(child)!r}, not {ns!r}")
            continue
        if name not in names:
            problems.append(f"{where}: not a field of {type_ref}")
            continue
        index = names.index(name, max(at, 0)) if name in names[max(at, 0):] else -1
        if index < 0:
            problems.append(f"{where}: out of order (the sequence is {' > '.join(names)})")
            continue
        if index != at:
            _missing(named.fields, at, count, index, path, problems)
            at, count = index, 0
        f = named.fields[at]
        count += 1
        if f.max_occurs is not None and count > f.max_occurs:
            problems.append(f"{where}: more than {f.max_occurs}")
        if child.get(_NIL) in ("true", "1"):
            if not f.nillable:
                problems.append(f"{where}: xsi:nil but {f.name} is not nillable")
            continue
        _check(schema, f.type, child, ns, where, problems)
    _missing(named.fields, at, count, len(names), path, problems)


def _missing(fields: tuple[Field, ...], at: int, count: int, before: int, path: str,
             problems: list[str]) -> None:
    """Required fields from ``at`` (seen ``count`` times) up to ``before`` that did not come."""
    for i in range(max(at, 0), before):
        seen = count if i == at else 0
        if seen < fields[i].min_occurs:
            problems.append(f"{path}: {fields[i].name} missing")
