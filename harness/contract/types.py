"""The XSD simple types ASMX publishes for parameters and results, each with ONE lexical check.

``ParamType.accepts`` is the single check per type: the reference refuses what it rejects and the
R9-<TYPE> rules judge requests with it, so the two never disagree. The checks follow what ASMX
(XmlConvert / XmlSerializer) reads: surrounding whitespace is ignored, integers are range-checked,
``guid`` and ``char`` are the types ASMX publishes in ``http://microsoft.com/wsdl/types/``
(a ``char`` travels as its UTF-16 code, an integer 0-65535).
"""

from __future__ import annotations

import base64
import math
import re
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from harness.contract.http_dates import accepts_http_datetime

#: Namespace of the types ASMX adds to a schema for System.Guid and System.Char.
MS_TYPES_NS = "http://microsoft.com/wsdl/types/"


class ParamType(StrEnum):
    """XSD type of a parameter or result (GET/POST carry every one of them as text)."""

    STRING = "string"
    INT = "int"
    LONG = "long"
    SHORT = "short"
    BYTE = "byte"  # C# sbyte
    UNSIGNED_BYTE = "unsignedByte"  # C# byte
    UNSIGNED_SHORT = "unsignedShort"
    UNSIGNED_INT = "unsignedInt"
    UNSIGNED_LONG = "unsignedLong"
    BOOLEAN = "boolean"
    DECIMAL = "decimal"
    DOUBLE = "double"
    FLOAT = "float"
    DATETIME = "dateTime"
    DATE = "date"
    TIME = "time"
    GUID = "guid"
    CHAR = "char"
    BASE64 = "base64Binary"
    # The other XSD built-ins (XSD 1.0 part 2, 3.2-3.3; XSD 1.1's additions): .NET reads each
    # as a string (byte[] for hexBinary, XmlQualifiedName for QName, object for anyType),
    # published with XmlElement(DataType=...).
    INTEGER = "integer"
    NON_NEGATIVE_INTEGER = "nonNegativeInteger"
    POSITIVE_INTEGER = "positiveInteger"
    NON_POSITIVE_INTEGER = "nonPositiveInteger"
    NEGATIVE_INTEGER = "negativeInteger"
    NORMALIZED_STRING = "normalizedString"
    TOKEN = "token"
    LANGUAGE = "language"
    NAME = "Name"
    NCNAME = "NCName"
    NMTOKEN = "NMTOKEN"
    NMTOKENS = "NMTOKENS"
    ID = "ID"
    IDREF = "IDREF"
    IDREFS = "IDREFS"
    ENTITY = "ENTITY"
    ENTITIES = "ENTITIES"
    QNAME = "QName"
    NOTATION = "NOTATION"
    ANY_URI = "anyURI"
    DURATION = "duration"
    YEAR_MONTH_DURATION = "yearMonthDuration"
    DAY_TIME_DURATION = "dayTimeDuration"
    DATETIME_STAMP = "dateTimeStamp"
    G_YEAR = "gYear"
    G_YEAR_MONTH = "gYearMonth"
    G_MONTH = "gMonth"
    G_MONTH_DAY = "gMonthDay"
    G_DAY = "gDay"
    HEX_BINARY = "hexBinary"
    ANY_SIMPLE_TYPE = "anySimpleType"
    ANY_ATOMIC_TYPE = "anyAtomicType"
    ANY_TYPE = "anyType"
    #: A named simpleType restricting string to listed values (a C# enum).
    ENUM = "enumeration"
    #: An array or complex type: recognised and compared by its structure, not generated.
    COMPLEX = "complex"

    @property
    def rule_id(self) -> str:
        """The R9 rule judging this type's lexical form (R9-INT, R9-DATETIME, ...)."""
        return "R9-" + self.name.replace("_", "")

    @property
    def is_value_type(self) -> bool:
        """A .NET value type: never omitted (minOccurs=1) and bound as 0/false when missing."""
        return self in _VALUE_TYPES

    @property
    def is_simple(self) -> bool:
        return self is not ParamType.COMPLEX

    @property
    def any_text(self) -> bool:
        """Every text is a value of it (string, normalizedString, token, anyURI, the ur-types):
        no R9 rule judges its values."""
        return self in _ANY_TEXT

    @property
    def http_result(self) -> ParamType:
        """The type a GET/POST result document of this type holds, by the .NET type behind it:
        a ``<string>`` for the types .NET reads as a string (integer, token, gYear...), a
        ``<base64Binary>`` for hexBinary (a byte[], its DataType left out there: checked on
        the real runtime, tests/services/builtins)."""
        if self is ParamType.HEX_BINARY:
            return ParamType.BASE64
        return ParamType.STRING if self in _LEXICAL and self is not ParamType.QNAME else self

    def accepts(self, text: str, values: tuple[str, ...] = (), *, http: bool = False) -> bool:
        """Whether ``text`` is a value of this type as ASMX reads it (``values``: the
        enumeration's members). ``http``: a GET/POST field, which ASMX converts with
        System.Convert rather than XmlConvert: a char is the character itself, a boolean is
        True/False in any case, numbers may group thousands with commas, an enumeration may be
        given by its number, and dates take DateTime.Parse's many forms (``http_dates``).
        Surrounding white space is ignored except in a SOAP enumeration and a GET/POST char,
        as .NET defines it: XML's four characters in SOAP (XmlConvert), the six ASCII ones and
        trailing NULs for a GET/POST number (Int32.Parse and its siblings), every Unicode
        space for a GET/POST boolean or enumeration (String.Trim); never a no-break, em or
        ideographic space elsewhere (Python's str.strip would take them). Each form was
        checked against ASP.NET on Mono (tests/test_lexical_forms.py)."""
        if http:
            trimmed = text if self is ParamType.CHAR else _http_trimmed(self, text)
            if (check := _HTTP_CHECKS.get(self)) is not None:
                return check(trimmed, values)
            check = _CHECKS.get(self)
            return True if check is None else check(trimmed)
        if self is ParamType.ENUM:
            return text in values
        check = _CHECKS.get(self)
        return True if check is None else check(text.strip(XML_WHITE))

    def lexical(self, text: str, values: tuple[str, ...] = (), *, http: bool = False) -> bool:
        """Whether ``text`` is in this type's XSD lexical space (after its white space
        facet): what a WSDL of the type promises, which a client's request and a service's
        result are held to. Where ASMX reads the type by XmlConvert, the same as ``accepts``;
        the types .NET reads as a string (integer, token, gYear, anyURI...) ASMX takes any
        text for, while their lexical space is XSD's (a value outside it breaks the WSDL,
        although ASMX passes it on). ``http``: a GET/POST field, which carries the text of
        those types as it is (and numbers, dates and bytes in System.Convert's forms)."""
        check = _LEXICAL.get(self)
        if check is None or (http and self is ParamType.HEX_BINARY):
            return self.accepts(text, values, http=http)
        if self in _LISTS:  # collapsed: one space between items
            return check(" ".join(i for i in text.translate(_XML_WHITE_AS_SPACE).split(" ") if i))
        return check(text.strip(XML_WHITE))


#: XML's white space: what XmlConvert trims around a SOAP value.
XML_WHITE = " \t\n\r"
_DROP_XML_WHITE = dict.fromkeys(map(ord, XML_WHITE))
_XML_WHITE_AS_SPACE = dict.fromkeys(map(ord, XML_WHITE), " ")
#: .NET's white space for number parsing (NumberStyles.AllowLeading/TrailingWhite).
_NUMBER_WHITE = " \t\n\x0b\x0c\r"
#: Char.IsWhiteSpace: what String.Trim removes (Boolean.Parse, Enum.Parse).
_NET_WHITE = "".join(map(chr, (*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680,
                                *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F,
                                0x3000)))


def _http_trimmed(type_: ParamType, text: str) -> str:
    """``text`` as System.Convert sees it once it has dropped the padding it ignores."""
    if type_ in (ParamType.BOOLEAN, ParamType.ENUM):
        return text.rstrip("\x00").strip(_NET_WHITE)
    if type_ in _NUMBER_TYPES:
        return text.rstrip("\x00").strip(_NUMBER_WHITE)
    return text.strip()  # dates: DateTime.Parse's own rules (harness.contract.http_dates)


_INT_RANGES = {
    ParamType.INT: (-(2**31), 2**31), ParamType.LONG: (-(2**63), 2**63),
    ParamType.SHORT: (-(2**15), 2**15), ParamType.BYTE: (-128, 128),
    ParamType.UNSIGNED_BYTE: (0, 256), ParamType.UNSIGNED_SHORT: (0, 2**16),
    ParamType.UNSIGNED_INT: (0, 2**32), ParamType.UNSIGNED_LONG: (0, 2**64),
    ParamType.CHAR: (0, 2**16),
}
#: Longest integer text worth converting: int() of 5,000 digits raises in Python 3.11+, and no
#: range above has more than 20 digits (leading zeros aside).
_MAX_INT_DIGITS = 64


def _integer(lo: int, hi: int, *, signed: bool = True):
    """An integer in [lo, hi); ``signed=False``: no sign at all (XmlConvert's unsigned types)."""
    def check(text: str) -> bool:
        sign = text[:1] if text[:1] in "+-" else ""
        digits = text[len(sign):]
        if (sign and not signed) or not (digits.isascii() and digits.isdigit()):
            return False
        digits = digits.lstrip("0") or "0"
        if len(digits) > _MAX_INT_DIGITS:
            return False
        value = -int(digits) if sign == "-" else int(digits)
        return lo <= value < hi
    return check


#: GET/POST values .NET parses as numbers (a byte[] travels as numbers, one per field).
_NUMBER_TYPES = frozenset((*(t for t in _INT_RANGES if t is not ParamType.CHAR),
                           ParamType.DECIMAL, ParamType.DOUBLE, ParamType.FLOAT,
                           ParamType.BASE64))

_DECIMAL_MAX = Decimal(2**96 - 1)
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
#: System.Convert's NumberStyles.Number: thousands commas anywhere in the integer part, a sign
#: before or after.
_HTTP_DECIMAL = re.compile(r"(?P<lead>[+-])?([0-9][0-9,]*(\.[0-9]*)?|\.[0-9]+)(?P<trail>[+-])?")
_FLOATING = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HTTP_FLOATING = re.compile(r"[+-]?([0-9][0-9,]*(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: Infinities and NaN: XmlConvert's INF and .NET's own Infinity in SOAP, only .NET's in GET/POST.
_SOAP_SPECIAL = frozenset(("INF", "-INF", "Infinity", "-Infinity", "NaN"))
_HTTP_SPECIAL = frozenset(("Infinity", "-Infinity", "NaN"))


def _decimal(pattern: re.Pattern[str]):
    def check(text: str) -> bool:
        m = pattern.fullmatch(text)
        if m is None or (m.groupdict().get("lead") and m.groupdict().get("trail")):
            return False
        number = text.replace(",", "").strip("+-")
        return len(number) <= _MAX_INT_DIGITS and Decimal(number) <= _DECIMAL_MAX
    return check


def _floating(pattern: re.Pattern[str], special: frozenset[str], *, single: bool):
    """A double (``single``: a float) that does not overflow; underflow reads as 0."""
    def check(text: str) -> bool:
        if text in special:
            return True
        if pattern.fullmatch(text) is None:
            return False
        value = float(text.replace(",", ""))
        if single:
            try:
                struct.pack("<f", value)
            except OverflowError:
                return False
        return math.isfinite(value)
    return check


def _http_enum(text: str, values: tuple[str, ...]) -> bool:
    """Enum.Parse: members joined by commas (flags syntax), or a number of the underlying int."""
    return all(part.strip() in values for part in text.split(",")) or _integer(
        -(2**31), 2**31)(text)


#: A zone: dateTime takes any two-digit offset hours (Mono's XmlConvert), date and time at most
#: 14 hours, as XSD says.
_ANY_ZONE = r"([Zz]|[+-]\d\d:[0-5]\d)?"
_ZONE = r"([Zz]|[+-]((0\d|1[0-3]):[0-5]\d|14:00))?"
_DATE = r"(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)"
_TIME = r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?"
#: XmlConvert's round-trip mode reads a dateTime as a date and time, a date, or a time alone.
_DATETIME_RE = re.compile(f"({_DATE}(T{_TIME})?|{_TIME}){_ANY_ZONE}", re.ASCII)
_DATE_RE = re.compile(f"{_DATE}{_ZONE}", re.ASCII)
_TIME_RE = re.compile(f"{_TIME}{_ZONE}", re.ASCII)
_HEX = "[0-9a-fA-F]"
_GUID_D = f"{_HEX}{{8}}-({_HEX}{{4}}-){{3}}{_HEX}{{12}}"
#: new Guid(text)'s formats: D, N (32 digits), B {D}, P (D) and X {0x..,0x..,0x..,{0x..,...}}.
_GUID_RE = re.compile(
    f"{_GUID_D}|{_HEX}{{32}}|\\{{{_GUID_D}\\}}|\\({_GUID_D}\\)"
    f"|\\{{0[xX]{_HEX}{{1,8}},0[xX]{_HEX}{{1,4}},0[xX]{_HEX}{{1,4}},"
    f"\\{{0[xX]{_HEX}{{1,2}}(,0[xX]{_HEX}{{1,2}}){{7}}\\}}\\}}")
#: Mono reads base64 leniently: the alphabet and whitespace, then any '=' padding; an
#: incomplete last group is dropped.
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]*=*")


def _full(pattern: re.Pattern[str] | _OnFirstUse):
    return lambda text: pattern.fullmatch(text) is not None


def _calendar(pattern: re.Pattern[str]):
    """A date form whose date, if it has one, exists (years 1-9999, no 30 February)."""
    def check(text: str) -> bool:
        if (m := pattern.fullmatch(text)) is None:
            return False
        if m.group("year") is None:
            return True
        try:
            date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        except ValueError:
            return False
        return True
    return check


_CHECKS = {
    **{t: _integer(lo, hi, signed=lo < 0) for t, (lo, hi) in _INT_RANGES.items()},
    ParamType.BOOLEAN: lambda text: text in ("true", "false", "1", "0"),
    ParamType.DECIMAL: _decimal(_DECIMAL),
    ParamType.DOUBLE: _floating(_FLOATING, _SOAP_SPECIAL, single=False),
    ParamType.FLOAT: _floating(_FLOATING, _SOAP_SPECIAL, single=True),
    ParamType.DATETIME: _calendar(_DATETIME_RE),
    ParamType.DATE: _calendar(_DATE_RE),
    ParamType.TIME: _full(_TIME_RE),
    ParamType.GUID: _full(_GUID_RE),
    # XmlConvert.FromBase64String skips XML white space anywhere (and nothing else).
    ParamType.BASE64: lambda text: _BASE64_RE.fullmatch(
        text.translate(_DROP_XML_WHITE)) is not None,
}

# ------------------------------------------------------------------- the other XSD built-ins

#: The .NET value types among them (never omitted, bound as 0/false when missing).
_VALUE_TYPES = frozenset((*_INT_RANGES, ParamType.BOOLEAN, ParamType.DECIMAL, ParamType.DOUBLE,
                          ParamType.FLOAT, ParamType.DATETIME, ParamType.DATE, ParamType.TIME,
                          ParamType.GUID, ParamType.ENUM))


def _unbounded(sign: str) -> Callable[[str], bool]:
    """An xs:integer (no bound), and of ``sign``: "+" at least 0, "++" at least 1, "-" at
    most 0, "--" at most -1 (XSD's nonNegative, positive, nonPositive, negativeInteger)."""
    def check(text: str) -> bool:
        if _INTEGER_RE.fullmatch(text) is None or len(text) > _MAX_INT_DIGITS:
            return False
        value = int(text)
        return {"": True, "+": value >= 0, "++": value >= 1, "-": value <= 0,
                "--": value <= -1}[sign]
    return check


def _items(check: Callable[[str], bool]) -> Callable[[str], bool]:
    """A list type (NMTOKENS, IDREFS, ENTITIES): one item or more, each ``check``ed."""
    return lambda text: bool(text) and all(check(item) for item in text.split(" "))


def _month_day(text: str) -> bool:
    m = _G_MONTH_DAY_RE.fullmatch(text)
    return m is not None and 1 <= int(m["day"]) <= _MONTH_DAYS[int(m["month"])]


_INTEGER_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: XML 1.0's Name (5th edition): start characters, then name characters.
_NAME_START = ("A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF"
               "\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF"
               "\uFDF0-\uFFFD\U00010000-\U000EFFFF")
_NAME_CHAR = _NAME_START + "\\-.0-9\u00B7\u0300-\u036F\u203F-\u2040"
_NCNAME = f"[{_NAME_START}][{_NAME_CHAR}]*"


class _OnFirstUse:
    """A pattern compiled on its first ``fullmatch``, not at import: the XML name patterns'
    Unicode ranges took ~36 ms to compile at every start of the harness (a tenth of lint's
    fixed cost), for types few contracts use."""

    __slots__ = ("_pattern", "_source")

    def __init__(self, source: str) -> None:
        self._source, self._pattern = source, None

    def fullmatch(self, text: str) -> re.Match[str] | None:
        if self._pattern is None:  # a race compiles it twice: the same pattern either way
            self._pattern = re.compile(self._source)
        return self._pattern.fullmatch(text)


_NCNAME_RE = _OnFirstUse(_NCNAME)
_NAME_RE = _OnFirstUse(f"[{_NAME_START}:][{_NAME_CHAR}:]*")
_NMTOKEN_RE = _OnFirstUse(f"[{_NAME_CHAR}:]+")
_QNAME_RE = _OnFirstUse(f"({_NCNAME}:)?{_NCNAME}")
_LANGUAGE_RE = re.compile(r"[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*", re.ASCII)
#: Durations: at least one part, a "T" only before a time part.
_CLOCK = r"(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?"
_DURATION_RE = re.compile(rf"-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?{_CLOCK}", re.ASCII)
_YEAR_MONTH_DURATION_RE = re.compile(r"-?P(?=\d)(\d+Y)?(\d+M)?", re.ASCII)
_DAY_TIME_DURATION_RE = re.compile(rf"-?P(?=\d|T\d)(\d+D)?{_CLOCK}", re.ASCII)
_YEAR = r"-?([1-9]\d{4,}|\d{4})"
_MONTH = r"(0[1-9]|1[0-2])"
_G_YEAR_RE = re.compile(f"{_YEAR}{_ZONE}", re.ASCII)
_G_YEAR_MONTH_RE = re.compile(f"{_YEAR}-{_MONTH}{_ZONE}", re.ASCII)
_G_MONTH_RE = re.compile(f"--{_MONTH}{_ZONE}", re.ASCII)
_G_MONTH_DAY_RE = re.compile(rf"--(?P<month>{_MONTH})-(?P<day>\d\d){_ZONE}", re.ASCII)
_G_DAY_RE = re.compile(f"---(0[1-9]|[12]\\d|3[01]){_ZONE}", re.ASCII)
_MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: XSD's dateTime with its zone required (XSD 1.1's dateTimeStamp).
_STAMP_RE = re.compile(f"{_DATE}T{_TIME}([Zz]|[+-]((0\\d|1[0-3]):[0-5]\\d|14:00))", re.ASCII)
_HEX_RE = re.compile(r"([0-9a-fA-F]{2})*", re.ASCII)
#: What Mono reads as hexBinary: hex digits, white space anywhere (an odd last one dropped).
_ASMX_HEX_RE = re.compile(r"[0-9a-fA-F]*", re.ASCII)
_ANY = lambda text: True  # noqa: E731 (a check that takes every text)
#: The list types, whose white space collapses to single spaces between items.
_LISTS = frozenset((ParamType.NMTOKENS, ParamType.IDREFS, ParamType.ENTITIES))
#: The types whose values are names (a letter first, no space).
_NAMED = frozenset((ParamType.NAME, ParamType.NCNAME, ParamType.NMTOKEN, ParamType.ID,
                    ParamType.IDREF, ParamType.ENTITY, ParamType.QNAME, ParamType.NOTATION))

#: XSD's lexical check of each type ASMX reads as a string (``ParamType.lexical``); the
#: types of ``_CHECKS`` are held to ASMX's own (XmlConvert's) forms.
_LEXICAL: dict[ParamType, Callable[[str], bool]] = {
    ParamType.INTEGER: _unbounded(""), ParamType.NON_NEGATIVE_INTEGER: _unbounded("+"),
    ParamType.POSITIVE_INTEGER: _unbounded("++"),
    ParamType.NON_POSITIVE_INTEGER: _unbounded("-"),
    ParamType.NEGATIVE_INTEGER: _unbounded("--"),
    ParamType.NORMALIZED_STRING: _ANY, ParamType.TOKEN: _ANY,  # white space replaced first
    ParamType.LANGUAGE: _full(_LANGUAGE_RE), ParamType.NAME: _full(_NAME_RE),
    ParamType.NCNAME: _full(_NCNAME_RE), ParamType.ID: _full(_NCNAME_RE),
    ParamType.IDREF: _full(_NCNAME_RE), ParamType.ENTITY: _full(_NCNAME_RE),
    ParamType.NMTOKEN: _full(_NMTOKEN_RE), ParamType.NMTOKENS: _items(_full(_NMTOKEN_RE)),
    ParamType.IDREFS: _items(_full(_NCNAME_RE)), ParamType.ENTITIES: _items(_full(_NCNAME_RE)),
    ParamType.QNAME: _full(_QNAME_RE), ParamType.NOTATION: _full(_QNAME_RE),
    ParamType.ANY_URI: _ANY,  # XSD 1.1 3.3.17: any string; 1.0's processors differ
    ParamType.DURATION: _full(_DURATION_RE),
    ParamType.YEAR_MONTH_DURATION: _full(_YEAR_MONTH_DURATION_RE),
    ParamType.DAY_TIME_DURATION: _full(_DAY_TIME_DURATION_RE),
    ParamType.DATETIME_STAMP: _calendar(_STAMP_RE),
    ParamType.G_YEAR: _full(_G_YEAR_RE), ParamType.G_YEAR_MONTH: _full(_G_YEAR_MONTH_RE),
    ParamType.G_MONTH: _full(_G_MONTH_RE), ParamType.G_MONTH_DAY: _month_day,
    ParamType.G_DAY: _full(_G_DAY_RE), ParamType.HEX_BINARY: _full(_HEX_RE),
    ParamType.ANY_SIMPLE_TYPE: _ANY, ParamType.ANY_ATOMIC_TYPE: _ANY, ParamType.ANY_TYPE: _ANY,
}


#: The types every text is a value of (their white space facet applied first).
_ANY_TEXT = frozenset((ParamType.STRING, *(t for t, check in _LEXICAL.items() if check is _ANY)))


def _asmx_qname(text: str) -> bool:
    """What XmlSerializer reads as a QName without the document's prefixes at hand: no
    prefix (the default namespace's), or one prefix before a name (declared or not: a
    request that uses an undeclared one gets a Client fault, which only the document
    tells)."""
    return text.count(":") <= 1 and not text.endswith(":")


#: How ASMX (Mono 6.8, tests/services/builtins) reads them in SOAP: every other one as any
#: text (a string), trimmed of XML white space.
_CHECKS.update({
    ParamType.HEX_BINARY: lambda text: _ASMX_HEX_RE.fullmatch(
        text.translate(_DROP_XML_WHITE)) is not None,
    ParamType.QNAME: _asmx_qname,
})


def _text_only(check):
    """A check of the text alone, for the table of GET/POST checks (which also get members)."""
    return lambda text, _values: check(text)


_HTTP_CHECKS = {
    # System.Convert takes a sign on unsigned types too ("-0" is 0).
    **{t: _text_only(_integer(lo, hi)) for t, (lo, hi) in _INT_RANGES.items()
       if lo == 0 and t is not ParamType.CHAR},
    ParamType.CHAR: _text_only(lambda text: len(text) == 1),
    ParamType.BOOLEAN: _text_only(lambda text: text.lower() in ("true", "false")),
    ParamType.DECIMAL: _text_only(_decimal(_HTTP_DECIMAL)),
    ParamType.DOUBLE: _text_only(_floating(_HTTP_FLOATING, _HTTP_SPECIAL, single=False)),
    ParamType.FLOAT: _text_only(_floating(_HTTP_FLOATING, _HTTP_SPECIAL, single=True)),
    ParamType.ENUM: _http_enum,
    # A byte[] travels in GET/POST as repeated fields of one byte each.
    ParamType.BASE64: _text_only(_integer(0, 256)),
    # A byte[] as hexBinary travels as base64Binary's does: one field per byte.
    ParamType.HEX_BINARY: _text_only(_integer(0, 256)),
    # ASMX converts a GET/POST date with DateTime.Parse whatever its XSD type.
    ParamType.DATETIME: _text_only(accepts_http_datetime),
    ParamType.DATE: _text_only(accepts_http_datetime),
    ParamType.TIME: _text_only(accepts_http_datetime),
}

#: Values the generators use per type, by value set (plain, non-ASCII, XML-special): edges of
#: each type's range, so an implementation that narrows a type shows.
SAMPLE_VALUES: dict[ParamType, tuple[str, ...]] = {
    ParamType.STRING: ("A1", "طالب-ملاحظة Ünïcødé", "<a&b>\"'ok'"),
    ParamType.INT: ("42", "0", "-7"),
    ParamType.LONG: ("9007199254740993", "0", "-9223372036854775808"),
    ParamType.SHORT: ("12", "-32768", "32767"),
    ParamType.BYTE: ("7", "-128", "127"),
    ParamType.UNSIGNED_BYTE: ("7", "0", "255"),
    ParamType.UNSIGNED_SHORT: ("8", "0", "65535"),
    ParamType.UNSIGNED_INT: ("9", "0", "4294967295"),
    ParamType.UNSIGNED_LONG: ("10", "0", "18446744073709551615"),
    ParamType.BOOLEAN: ("true", "false", "true"),
    ParamType.DECIMAL: ("12.5", "0", "-79228162514264337593543950335"),
    ParamType.DOUBLE: ("1.5", "-0.25", "1E+300"),
    ParamType.FLOAT: ("1.5", "-2", "3.25"),
    ParamType.DATETIME: ("2024-01-31T12:34:56", "2000-02-29T00:00:00Z",
                         "1999-12-31T23:59:59.5+02:00"),
    ParamType.DATE: ("2024-01-31", "2000-02-29", "1999-12-31"),
    ParamType.TIME: ("12:34:56", "00:00:00", "23:59:59.5"),
    ParamType.GUID: ("0f8fad5b-d9cb-469f-a165-70867728950e",
                     "00000000-0000-0000-0000-000000000000",
                     "7c9e6679-7425-40de-944b-e07fc1f90ae7"),
    ParamType.CHAR: ("65", "1605", "38"),  # 'A', 'م', '&' as ASMX sends a char
    ParamType.BASE64: ("AQID", "", "3q2+7w=="),
    ParamType.INTEGER: ("42", "-123456789012345678901234567890", "0"),
    ParamType.NON_NEGATIVE_INTEGER: ("7", "0", "123456789012345678901234567890"),
    ParamType.POSITIVE_INTEGER: ("7", "1", "123456789012345678901234567890"),
    ParamType.NON_POSITIVE_INTEGER: ("-7", "0", "-123456789012345678901234567890"),
    ParamType.NEGATIVE_INTEGER: ("-7", "-1", "-123456789012345678901234567890"),
    ParamType.NORMALIZED_STRING: ("A1", "طالب Ünïcødé", "<a&b>\"'ok'"),
    ParamType.TOKEN: ("A1", "طالب Ünïcødé", "<a&b> 'ok'"),
    ParamType.LANGUAGE: ("en", "ar-SA", "x-harness-1"),
    ParamType.NAME: ("A1", "طالب", "a:b.c-d"),
    ParamType.NCNAME: ("A1", "طالب", "a_b.c-d"),
    ParamType.NMTOKEN: ("A1", "طالب", "1:b.c-d"),
    ParamType.NMTOKENS: ("A1", "طالب Ünï", "1:b c-d"),
    ParamType.ID: ("A1", "طالب", "a_b.c-d"),
    ParamType.IDREF: ("A1", "طالب", "a_b.c-d"),
    ParamType.IDREFS: ("A1", "طالب Ünï", "a_b c-d"),
    ParamType.ENTITY: ("A1", "طالب", "a_b.c-d"),
    ParamType.ENTITIES: ("A1", "طالب Ünï", "a_b c-d"),
    # no prefix: a prefix would need a declaration in the request (XmlSerializer refuses one
    # it cannot resolve with a Client fault)
    ParamType.QNAME: ("A1", "طالب", "a_b.c-d"),
    ParamType.NOTATION: ("A1", "طالب", "a_b.c-d"),
    ParamType.ANY_URI: ("http://example.org/a?b=1", "urn:طالب", "http://example.org/?a=1&b='2'"),
    ParamType.DURATION: ("P1Y2M3DT4H5M6S", "PT0.5S", "-P1D"),
    ParamType.YEAR_MONTH_DURATION: ("P1Y2M", "P0M", "-P13M"),
    ParamType.DAY_TIME_DURATION: ("P3DT4H5M6S", "PT0.5S", "-PT1H"),
    ParamType.DATETIME_STAMP: ("2024-01-31T12:34:56Z", "2000-02-29T00:00:00+14:00",
                               "1999-12-31T23:59:59.5-05:00"),
    ParamType.G_YEAR: ("2024", "-0044", "12345"),
    ParamType.G_YEAR_MONTH: ("2024-01", "2000-02Z", "1999-12+02:00"),
    ParamType.G_MONTH: ("--01", "--02Z", "--12+02:00"),
    ParamType.G_MONTH_DAY: ("--01-31", "--02-29", "--12-31Z"),
    ParamType.G_DAY: ("---01", "---29Z", "---31+02:00"),
    ParamType.HEX_BINARY: ("0A0B0C", "", "DEADBEEF"),
    ParamType.ANY_SIMPLE_TYPE: ("A1", "طالب Ünïcødé", "<a&b>\"'ok'"),
    ParamType.ANY_ATOMIC_TYPE: ("A1", "طالب Ünïcødé", "<a&b>\"'ok'"),
    ParamType.ANY_TYPE: ("A1", "طالب Ünïcødé", "<a&b>\"'ok'"),
}


#: GET/POST carries a byte[] as repeated fields of one byte each (a single field here).
_HTTP_SAMPLE_VALUES = {ParamType.BASE64: ("1", "0", "255"), ParamType.HEX_BINARY: ("1", "0", "255")}


def sample_value(type_: ParamType, variant: int, values: tuple[str, ...] = (),
                 *, http: bool = False) -> str:
    """The value set ``variant``'s value of ``type_`` (an enumeration cycles its members;
    ``http``: as a GET/POST field, where a char is the character itself and a byte[] one
    byte)."""
    if type_ is ParamType.ENUM:
        return values[variant % len(values)] if values else ""
    samples = (http and _HTTP_SAMPLE_VALUES.get(type_)) or SAMPLE_VALUES.get(type_, ("",))
    value = samples[variant % len(samples)]
    return chr(int(value)) if http and type_ is ParamType.CHAR else value


_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def value_from_digest(type_: ParamType, digest: bytes, values: tuple[str, ...] = ()) -> str:
    """The reference's result of ``type_`` derived from a SHA-256 ``digest``.

    The documented rule (every implementation of the reference agrees on it): with ``n`` the
    first 8 bytes of the digest as an unsigned big-endian integer, a string is the digest's
    lowercase hex; an integer type is ``lo + n mod (hi - lo)`` over its range; a boolean is
    ``n`` odd; a decimal is ``n mod 10^8 / 100`` with two decimals; double and float are
    ``n mod 10^6 / 4``; dateTime/date/time is 2000-01-01T00:00:00Z plus ``n mod 10^9``
    seconds (in UTC, ``Z``; date and time its parts); a guid is the first 16 bytes as a UUID;
    base64Binary the first 12 bytes in base64; an enumeration the member ``n mod count``; an
    xs:integer ``n - 2**63`` (nonNegative ``n``, positive ``n + 1``, nonPositive ``-n``,
    negative ``-n - 1``); a name ``h`` and the first 8 bytes' hex (a list: two such), a
    language ``x-`` and them; anyURI ``urn:harness:`` and them; a duration ``PT<n mod
    10**9>S``; gYear and its kin the dateTime's parts; hexBinary the first 12 bytes.
    """
    n = int.from_bytes(digest[:8], "big")
    if type_ in _INT_RANGES:
        lo, hi = _INT_RANGES[type_]
        return str(lo + n % (hi - lo))
    make = _FROM_DIGEST.get(type_)
    return make(n, digest, values) if make else digest.hex()


def _moment(n: int, pattern: str) -> str:
    return (_EPOCH + timedelta(seconds=n % 10**9)).strftime(pattern)


#: ``value_from_digest``'s rendering of every other type, from ``n``, the digest and the
#: enumeration's values; built once (made anew for each value, it cost the reference ~15 us
#: an answer).
_FROM_DIGEST: dict[ParamType, Callable[[int, bytes, tuple[str, ...]], str]] = {
    ParamType.BOOLEAN: lambda n, d, v: "true" if n % 2 else "false",
    ParamType.DECIMAL: lambda n, d, v: f"{n % 10**8 / 100:.2f}",
    ParamType.DOUBLE: lambda n, d, v: repr(n % 10**6 / 4),
    ParamType.FLOAT: lambda n, d, v: repr(n % 10**6 / 4),
    ParamType.DATETIME: lambda n, d, v: _moment(n, "%Y-%m-%dT%H:%M:%SZ"),
    ParamType.DATE: lambda n, d, v: _moment(n, "%Y-%m-%d"),
    ParamType.TIME: lambda n, d, v: _moment(n, "%H:%M:%S"),
    ParamType.GUID: lambda n, d, v: str(uuid.UUID(bytes=d[:16])),
    ParamType.BASE64: lambda n, d, v: base64.b64encode(d[:12]).decode("ascii"),
    ParamType.ENUM: lambda n, d, v: v[n % len(v)] if v else "",
    ParamType.INTEGER: lambda n, d, v: str(n - 2**63),
    ParamType.NON_NEGATIVE_INTEGER: lambda n, d, v: str(n),
    ParamType.POSITIVE_INTEGER: lambda n, d, v: str(n + 1),
    ParamType.NON_POSITIVE_INTEGER: lambda n, d, v: str(-n),
    ParamType.NEGATIVE_INTEGER: lambda n, d, v: str(-n - 1),
    ParamType.LANGUAGE: lambda n, d, v: f"x-{d[:4].hex()}-{d[4:8].hex()}",
    **dict.fromkeys(_NAMED, lambda n, d, v: f"h{d[:8].hex()}"),
    **dict.fromkeys(_LISTS, lambda n, d, v: f"h{d[:4].hex()} h{d[4:8].hex()}"),
    ParamType.ANY_URI: lambda n, d, v: f"urn:harness:{d[:8].hex()}",
    ParamType.DURATION: lambda n, d, v: f"PT{n % 10**9}S",
    ParamType.YEAR_MONTH_DURATION: lambda n, d, v: f"P{n % 100}Y{n % 12}M",
    ParamType.DAY_TIME_DURATION: lambda n, d, v: f"PT{n % 10**9}S",
    ParamType.DATETIME_STAMP: lambda n, d, v: _moment(n, "%Y-%m-%dT%H:%M:%SZ"),
    ParamType.G_YEAR: lambda n, d, v: _moment(n, "%Y"),
    ParamType.G_YEAR_MONTH: lambda n, d, v: _moment(n, "%Y-%m"),
    ParamType.G_MONTH: lambda n, d, v: _moment(n, "--%m"),
    ParamType.G_MONTH_DAY: lambda n, d, v: _moment(n, "--%m-%d"),
    ParamType.G_DAY: lambda n, d, v: _moment(n, "---%d"),
    ParamType.HEX_BINARY: lambda n, d, v: d[:12].hex().upper(),
}
