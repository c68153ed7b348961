"""What makes two calls the same call: the operation and its parameter values *by meaning*.

A value is read as the parameter's type reads it, so a call recorded over one binding matches
the same call over any other (``id_row_central=7`` in a query is ``<id_row_central> 7
</id_row_central>`` in an envelope). The normal form of each type:

- integers (int, long, short, byte and the unsigned ones): the number (``+007`` is ``7``;
  GET/POST thousands commas dropped);
- boolean: ``true``/``false`` (SOAP's ``1``/``0``, any case over GET/POST);
- decimal, double, float: the number (``1.50`` is ``1.5``; ``INF`` is ``Infinity``);
- dateTime, date, time: the ISO form when Python reads it as ISO 8601, else the text trimmed
  (a GET/POST date in another of DateTime.Parse's forms matches only itself);
- guid: lowercase, hyphenated (``{...}``, ``(...)``, 32 digits all alike);
- char: the character's code (SOAP sends the code, GET/POST the character);
- base64Binary: the bytes (GET/POST sends one field per byte);
- enumeration: the member (a number over GET/POST names the member at that position);
- string: exactly as sent (spaces are significant);
- arrays and complex types: the structure, each leaf by its type.

A parameter missing from a SOAP call is its default, as ASMX binds it (a string: empty, a
number: 0, false). A recording's pseudonym (``redacted-...``) is kept as it is for any type.
The key of a call is a 64-bit BLAKE2b digest of its operation and normal forms.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import uuid
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal

from harness.contract.bindings import edit_distance
from harness.contract.model import Operation
from harness.contract.structure import Schema, Value, simple_kind
from harness.contract.types import ParamType
from harness.traffic.redaction import is_pseudonym, shown_secret

_INTEGERS = frozenset({ParamType.INT, ParamType.LONG, ParamType.SHORT, ParamType.BYTE,
                       ParamType.UNSIGNED_BYTE, ParamType.UNSIGNED_SHORT,
                       ParamType.UNSIGNED_INT, ParamType.UNSIGNED_LONG})
_DEFAULTS = {**dict.fromkeys(_INTEGERS, "0"), ParamType.BOOLEAN: "false",
             ParamType.DECIMAL: "0", ParamType.DOUBLE: "0.0", ParamType.FLOAT: "0.0"}
#: Longest text normalised as a number (a longer one is kept as text: no big-int work for a
#: hostile value).
_MAX_NUMBER = 64
_SEP = "\x1f"


def normal(kind: ParamType, text: str, members: tuple[str, ...] = (), *,
           http: bool = False) -> str:
    """``text`` (a value of ``kind`` as it travelled: ``http`` over GET/POST) in its normal
    form; the text itself when it is no value of the type (the binding rules refuse those
    before any lookup)."""
    if kind is ParamType.STRING:  # the most common: exactly as sent, a pseudonym too
        return text
    if is_pseudonym(text):
        return text.strip()
    if not text.strip() and kind in _DEFAULTS:
        return _DEFAULTS[kind]  # a missing SOAP parameter: ASMX binds the default
    try:
        return _NORMALISERS.get(kind, _as_is)(text, members, http)
    except (ValueError, ArithmeticError, TypeError, binascii.Error):
        return text


def _as_is(text: str, _members: tuple[str, ...], _http: bool) -> str:
    return text


def _integer(text: str, _members: tuple[str, ...], http: bool) -> str:
    digits = text.strip().replace(",", "") if http else text.strip()
    if len(digits) > _MAX_NUMBER:
        raise ValueError("too long")
    return str(int(digits))


def _boolean(text: str, _members: tuple[str, ...], _http: bool) -> str:
    word = text.strip().lower()
    return {"1": "true", "0": "false"}.get(word, word)


def _decimal(text: str, _members: tuple[str, ...], _http: bool) -> str:
    number = text.strip().replace(",", "")
    if len(number) > 1 and number[-1] in "+-":  # System.Convert's trailing sign
        number = number[-1] + number[:-1]
    if len(number) > _MAX_NUMBER:
        raise ValueError("too long")
    value = Decimal(number)
    return format(value.normalize(), "f") if value else "0"


def _floating(text: str, _members: tuple[str, ...], _http: bool) -> str:
    word = text.strip().replace(",", "")
    if len(word) > _MAX_NUMBER:
        raise ValueError("too long")
    value = float({"INF": "inf", "-INF": "-inf"}.get(word, word))
    return "NaN" if math.isnan(value) else repr(value + 0.0)  # -0.0 and 0.0 alike


def _moment(text: str, _members: tuple[str, ...], _http: bool) -> str:
    word = text.strip()
    for kind in (datetime, date, time):
        try:
            return kind.fromisoformat(word.replace("z", "Z")).isoformat()
        except ValueError:
            continue
    return word


def _guid(text: str, _members: tuple[str, ...], _http: bool) -> str:
    word = text.strip()
    if word[:1] == "(" and word[-1:] == ")":
        word = word[1:-1]
    return str(uuid.UUID(word))


def _char(text: str, _members: tuple[str, ...], http: bool) -> str:
    return str(ord(text)) if http else str(int(text.strip()))


def _base64(text: str, _members: tuple[str, ...], http: bool) -> str:
    if http:  # one field per byte, joined with "," as ASMX reads repeated fields
        return bytes(int(b) for b in text.split(",")).hex()
    return base64.b64decode("".join(text.split()) + "==", validate=False).hex()


def _enum(text: str, members: tuple[str, ...], http: bool) -> str:
    if not http:
        return text
    word = text.strip()
    if word.lstrip("-").isdigit() and 0 <= int(word) < len(members):
        return members[int(word)]  # a C# enum without explicit values numbers them 0, 1, ...
    return ",".join(part.strip() for part in word.split(","))


_NORMALISERS = {**dict.fromkeys(_INTEGERS, _integer), ParamType.BOOLEAN: _boolean,
                ParamType.DECIMAL: _decimal, ParamType.DOUBLE: _floating,
                ParamType.FLOAT: _floating, ParamType.DATETIME: _moment,
                ParamType.DATE: _moment, ParamType.TIME: _moment, ParamType.GUID: _guid,
                ParamType.CHAR: _char, ParamType.BASE64: _base64, ParamType.ENUM: _enum}


def structured(schema: Schema, type_ref: str, value: Value, *, http: bool = False) -> Value:
    """A structured value with each leaf in its normal form (fields in the type's order)."""
    if value is None:
        return None
    simple = simple_kind(type_ref, schema)
    if simple is not None:
        return normal(simple[0], value, simple[1], http=http) if isinstance(value, str) \
            else value
    named = schema.get(type_ref)
    if named is None:
        return value
    if named.item is not None:
        items = value if isinstance(value, list) else [value]
        return [structured(schema, named.item.type, v, http=http) for v in items]
    if not isinstance(value, Mapping):
        return value
    types = {f.name: f.type for f in named.fields}
    return {name: ([structured(schema, types[name], v, http=http) for v in item]
                   if isinstance(item, list) else structured(schema, types[name], item,
                                                             http=http))
            for name, item in value.items() if name in types}


def normal_arguments(op: Operation, arguments: Mapping[str, Value], *, http: bool
                     ) -> tuple[str, ...]:
    """The call's values in the operation's parameter order, each in its normal form (a
    structured one as compact JSON)."""
    out = []
    for p in op.parameters:
        value = arguments.get(p.name)
        if p.type is ParamType.COMPLEX:
            out.append(_canonical(structured(op.schema, p.type_name or "", value, http=http)))
        else:
            text = value if isinstance(value, str) else ""
            out.append(normal(p.type, text, p.values, http=http))
    return tuple(out)


def _canonical(value: Value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def call_key(op: Operation, values: tuple[str, ...]) -> int:
    """The 64-bit key of ``op`` called with ``values`` (``normal_arguments``)."""
    text = _SEP.join((op.name, *values)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


# -------------------------------------------------------------------------- saying a call

#: Longest value shown in a console line or a refusal.
SHOWN = 40


def shown(value: str) -> str:
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "...")


def describe_call(op: Operation, values: tuple[str, ...], sensitive: frozenset[str] = frozenset()
                  ) -> str:
    """``GetTokenDevice(id='q')``; the values of ``sensitive`` parameters masked (what the
    console and the JSON summary print: never personal data in clear)."""
    return f"{op.name}({_pairs(op, values, sensitive)})"


def _pairs(op: Operation, values: tuple[str, ...], sensitive: frozenset[str],
           only: set[str] | None = None) -> str:
    return ", ".join(f"{p.name}={_masked(p.name, v, sensitive)}"
                     for p, v in zip(op.parameters, values, strict=False)
                     if only is None or p.name in only)


def _masked(name: str, value: str, sensitive: frozenset[str]) -> str:
    return shown_secret(value) if name in sensitive and value and not is_pseudonym(value) \
        else shown(value)


def nearest(op: Operation, values: tuple[str, ...], candidates: list[tuple[str, ...]]
            ) -> tuple[str, ...] | None:
    """The recorded values closest to ``values``: the most parameters equal, then the fewest
    edits over the differing ones (each counted up to 32), then the latest recorded; None
    when ``candidates`` is empty."""
    best, best_score = None, None
    for candidate in candidates:
        differing = [(a, b) for a, b in zip(values, candidate, strict=False) if a != b]
        score = (len(differing), sum(edit_distance(a[:64], b[:64], 32) for a, b in differing))
        if best_score is None or score <= best_score:
            best, best_score = candidate, score
    return best


def describe_nearest(op: Operation, values: tuple[str, ...], found: tuple[str, ...] | None,
                     sensitive: frozenset[str] = frozenset()) -> str:
    """``id='dev-a'``: the parameters where the nearest recorded call differs."""
    if found is None:
        return f"none (the recording has no {op.name} call)"
    differing = {p.name for p, a, b in zip(op.parameters, values, found, strict=False)
                 if a != b}
    return _pairs(op, found, sensitive, differing) or "the same values"
