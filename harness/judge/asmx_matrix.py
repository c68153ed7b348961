"""The real ASMX runtime's answers to requests outside the spec's happy path, as a matrix.

``harness/contract/asmx_matrix.json`` holds the rows: each a request a client may send that
the spec does not describe (a Content-Type or charset, parameter names in another case,
duplicated or reordered parameters, another method, another SOAPAction form, an envelope
variant, a missing or extra value), the rule that judges it, and what the real ASMX runtime
answers (``scripts/asmx_matrix`` writes that part from the runtime: stock, customErrors On,
hardened). This module builds each row's request for any operation of a contract and judges
an answer: certify (``features/asmx_matrix.feature``) and probe judge one target,
``diff --errors`` compares two.

What ASMX answers is one of two things:

- a fixed answer: a status, a media type, a body form (``empty``, ``page``, ``text``, a fault
  of a code), e.g. 415 and an empty body for a SOAP 1.1 call typed ``application/xml``;
- the answer of a spec call: "as" the same call made as the spec says with the same values
  (``same``), the values joined with "," (``joined``, duplicated GET/POST fields), the first of
  them (``first``, duplicated SOAP elements), without parameters (``none``, names ASMX does not
  read), without the string ones (``none-strings``, xsi:nil), or each non-ASCII byte read as
  "?" (``ascii``, text/xml without charset read as US-ASCII). The target's own answer to that
  spec call (the *control*) is the measure, so the row holds for any implementation's values.

Verdicts: where the spec speaks, a failure (a SOAP answer is an envelope of the request's
version, typed as rule 7 says; a GET/POST result is typed as 4.7 says). A success that carries
another value than the control's, on a row where ASMX keeps the value, is a failure: a value
lost or changed. Any other difference from ASMX is a warning: the spec is silent, and a client
that follows it never sends such a request.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from harness.contract.bindings import (
    Binding,
    build_request,
    code_words,
    read_response,
    soap_payload,
)
from harness.contract.model import Contract, Operation, ParamType, sample_arguments
from harness.contract.xmlsafe import local_name, namespace
from harness.judge.compare.difference import NO_CONTENT_TYPE, Difference
from harness.judge.findings import Finding, Verdict
from harness.judge.odd_requests import SpecProblem, answer_problem
from harness.judge.words import shown_value
from harness.traffic.exchange import (
    HttpRequest,
    HttpResponse,
    media_type,
    normalise_content_type,
    replace_header,
)
from harness.traffic.redaction import for_report

MATRIX = Path(__file__).resolve().parents[1] / "contract" / "asmx_matrix.json"
#: The words each equivalence is said with ("answered as the same call with ...").
AS_WORDS = {"same": "the same values", "joined": "the values joined with commas",
            "first": "the first values", "none": "no parameters",
            "none-strings": "no string parameter",
            "ascii": "each non-ASCII byte read as a question mark"}
#: The header block a must-understand row adds (a namespace nobody knows).
HEADER_NS = "urn:harness-matrix"
#: The field a row adds that no operation has.
EXTRA_FIELD = "harnessUnknown"


@dataclass(frozen=True)
class Expected:
    """What ASMX answers to a row: ``same_as`` (an equivalence of AS_WORDS: the answer to that
    spec call), or a fixed ``status``, ``media`` (None: no Content-Type) and ``form``."""

    same_as: str | None = None
    #: The statuses ASMX answers with (one per configuration where they differ: the
    #: Documentation protocol removed swaps 405 and 500 for other methods).
    statuses: tuple[int, ...] = ()
    media: str | None = None
    form: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Expected:
        status = data.get("status", ())
        return cls(data.get("as"), tuple(status) if isinstance(status, list) else (status,),
                   data.get("type"), data.get("form"))

    def to_dict(self) -> dict[str, Any]:
        if self.same_as is not None:
            return {"as": self.same_as}
        status: int | list[int] = (self.statuses[0] if len(self.statuses) == 1
                                   else list(self.statuses))
        return {"status": status, "type": self.media, "form": self.form}

    def words(self) -> str:
        if self.same_as is not None:
            return f"answered as the spec call with {AS_WORDS[self.same_as]}"
        return self._statuses(Shape(self.statuses[0], self.media, self.form or "").words())

    def brief(self) -> str:
        return self._statuses(Shape(self.statuses[0], self.media, self.form or "").brief())

    def _statuses(self, text: str) -> str:
        return text.replace(f"HTTP {self.statuses[0]}",
                            "HTTP " + " or ".join(map(str, self.statuses)), 1)

    def holds(self, got: Shape) -> bool:
        """A fixed answer matched: one of the statuses, the form and (a body's) media type;
        a fault's version is the request's, which the spec check holds."""
        media = got.media == self.media or got.form == "empty"
        return got.status in self.statuses and got.form == self.form and media


@dataclass(frozen=True)
class Row:
    id: str
    rule: str
    binding: Binding
    #: What is odd, as a step says it after "with": "the parameter names in another case".
    words: str
    expected: Expected
    #: The verdict of a success carrying another value than ASMX's (FAILED: a value lost or
    #: changed; WARNING: ASMX itself loses it, and a target that keeps it differs only).
    other_value: Verdict
    why: str = ""

    @property
    def label(self) -> str:
        return f"{self.binding.label} with {self.words}"


@dataclass(frozen=True)
class Rule:
    id: str
    title: str


@dataclass(frozen=True)
class Matrix:
    rules: tuple[Rule, ...]
    rows: tuple[Row, ...]

    def row(self, binding: Binding, words: str) -> Row | None:
        return next((r for r in self.rows if r.binding is binding and r.words == words), None)


@lru_cache(maxsize=1)
def matrix() -> Matrix:
    """The rows of asmx_matrix.json, each with its request builder (KeyError when one has
    none: the data and the code travel together)."""
    data = json.loads(MATRIX.read_text(encoding="utf-8"))
    rules = tuple(Rule(r["id"], r["title"]) for r in data["rules"])
    rows = tuple(Row(r["id"], r["rule"], Binding(r["binding"]), r["request"],
                     Expected.of(r["asmx"]),
                     Verdict.FAILED if r.get("other_value") == "failure" else Verdict.WARNING,
                     r.get("why", "")) for r in data["rows"])
    missing = [r.id for r in rows if r.id not in BUILDERS]
    if missing:
        raise KeyError(f"asmx_matrix.json rows without a builder: {', '.join(missing)}")
    return Matrix(rules, rows)


def titles() -> dict[str, str]:
    """The title of every rule the rows use: the matrix's own and those of odd_requests."""
    from harness.judge import odd_requests

    own = {rule.id: rule.title for rule in matrix().rules}
    return {**own, **{r.rule: odd_requests.titles()[r.rule] for r in matrix().rows
                      if r.rule not in own}}


# ------------------------------------------------------------------------------ requests


@dataclass(frozen=True)
class MatrixRequest:
    """One row's request for one operation, and the spec call whose answer it must equal
    (``control``; None when ASMX's answer is a fixed one)."""

    row: Row
    operation: Operation
    request: HttpRequest
    control: HttpRequest | None = None
    #: The operation's plain spec call over the row's binding: a row is judged only where
    #: it is answered with 200.
    plain: HttpRequest | None = None

    @property
    def binding(self) -> Binding:
        return self.row.binding

    @property
    def kind(self) -> str:
        return self.row.words


@dataclass(frozen=True)
class Context:
    contract: Contract
    operation: Operation
    binding: Binding
    base: str
    #: The values of the plain call (certify's ``--values``); None: generated ones.
    given: Mapping[str, str] | None = None

    def call(self, values: Mapping[str, object], binding: Binding | None = None
             ) -> HttpRequest:
        return build_request(self.contract, self.operation, values, binding or self.binding,
                             self.base, leave_out_missing=True)

    @property
    def plain(self) -> dict[str, str]:
        """The plain call's values, one per parameter in table order."""
        values = sample_arguments(self.operation, 0, self.binding.value)
        if self.given is not None:
            values = {**values, **self.given}
        return {p.name: str(values[p.name]) for p in self.operation.parameters}

    @property
    def generated(self) -> dict[str, str]:
        """The plain generated values, never the run's own (``--values``): a row that renames
        a parameter sends its value under a name redaction does not know as the parameter's."""
        values = sample_arguments(self.operation, 0, self.binding.value)
        return {p.name: str(values[p.name]) for p in self.operation.parameters}

    @property
    def non_ascii(self) -> dict[str, str]:
        return _simple(sample_arguments(self.operation, 1, self.binding.value))

    @property
    def latin1(self) -> dict[str, str]:
        """Values ISO-8859-1 can carry, with a non-ASCII letter in each string."""
        plain = self.plain
        return {p.name: plain[p.name] + "\u00e9" if p.type is ParamType.STRING else plain[p.name]
                for p in self.operation.parameters}

    @property
    def strings(self) -> list[str]:
        return [p.name for p in self.operation.parameters if p.type is ParamType.STRING]


def _simple(values: Mapping[str, object]) -> dict[str, str]:
    return {k: str(v) for k, v in values.items()}


#: A builder: the odd request and the values of the equivalent spec call (None: the row's
#: answer is a fixed one); None when the row does not apply to the operation.
Built = tuple[HttpRequest, Mapping[str, str] | None] | None
Builder = Callable[[Context], Built]


def requests_for(contract: Contract, op: Operation, base: str,
                 rows: tuple[Row, ...] | None = None) -> Iterator[MatrixRequest]:
    """Every row (of ``rows``, default the whole matrix) that applies to ``op`` over a
    binding the contract offers it on."""
    offered = contract.bindings_of(op)
    for row in rows if rows is not None else matrix().rows:
        if row.binding.value in offered and (built := build(contract, op, row, base)):
            yield built


def build(contract: Contract, op: Operation, row: Row, base: str,
          values: Mapping[str, str] | None = None) -> MatrixRequest | None:
    """``row``'s request for ``op`` with ``values`` in the plain call (default: generated
    ones); None when the row does not apply (no parameter to rename, a structured one the
    row cannot write...)."""
    if any(not p.type.is_simple for p in op.parameters):
        return None  # rows write parameters as text: an array or complex one is not text
    ctx = Context(contract, op, row.binding, base, values)
    built = BUILDERS[row.id](ctx)
    if built is None:
        return None
    request, equivalent = built
    control = None
    if row.expected.same_as is not None:
        control = ctx.call(equivalent if equivalent is not None else ctx.plain)
    return MatrixRequest(row, op, request, control, ctx.call(ctx.plain))


# The builders, by row ID. Each starts from the spec call (``Context.call``) and changes one
# thing; text rewrites work on the bytes build_request writes (one known shape).


def _content_type(value: str | None) -> Builder:
    def make(ctx: Context) -> Built:
        return ctx.call(ctx.plain).with_header("Content-Type", value), ctx.plain
    return make


def _soap_charset(charset: str, declared: bool) -> Builder:
    """The SOAP call written in ``charset`` (ISO-8859-1, UTF-16), typed with it; the XML
    declaration names it too, or is left out."""
    def make(ctx: Context) -> Built:
        values = ctx.latin1 if charset == "iso-8859-1" else ctx.non_ascii
        request = ctx.call(values)
        text = request.body.decode("utf-8")
        head, _, rest = text.partition("?>")
        text = (head.replace('encoding="utf-8"', f'encoding="{charset}"') + "?>" + rest
                if declared else rest.lstrip())
        media = media_type(request.content_type)
        kind = f"{media}; charset={charset}"
        if media == "application/soap+xml" and "action=" in (request.content_type or ""):
            kind = request.content_type.replace("charset=utf-8", f"charset={charset}")
        return _body(request, text.encode(charset), kind), values
    return make


def _ascii_lossy(text: str) -> str:
    """``text``'s UTF-8 bytes read as US-ASCII, as .NET does: a '?' for each byte over 127."""
    return "".join(c if ord(c) < 128 else "?" * len(c.encode("utf-8")) for c in text)


def _no_charset_non_ascii(ctx: Context) -> Built:
    values = ctx.non_ascii
    if all(v.isascii() for v in values.values()):
        return None
    return (ctx.call(values).with_header("Content-Type", "text/xml"),
            {k: _ascii_lossy(v) for k, v in values.items()})


def _character_references(ctx: Context) -> Built:
    values = ctx.non_ascii
    request = ctx.call(values)
    text = request.body.decode("utf-8")
    at = text.index("<soap:Body>") if "<soap:Body>" in text else 0
    body = text[:at] + "".join(c if c.isascii() else f"&#{ord(c)};" for c in text[at:])
    return _body(request, body.encode("ascii")), values


def _cdata(ctx: Context) -> Built:
    values = _simple(sample_arguments(ctx.operation, 2, ctx.binding.value))  # XML-special
    if not ctx.strings:
        return None
    raw = {n: f"<![CDATA[{values[n]}]]>" for n in ctx.strings}
    return _with_params(ctx, _params_xml(ctx, values, raw)), values


def _gzip(ctx: Context) -> Built:
    request = ctx.call(ctx.plain)
    return _body(request, gzip.compress(request.body, mtime=0)).with_header(
        "Content-Encoding", "gzip"), None


def _element_case(ctx: Context) -> Built:
    if not ctx.operation.parameters:
        return None
    renamed = [(p.name.swapcase(), ctx.generated[p.name]) for p in ctx.operation.parameters]
    return _with_params(ctx, "".join(_element(n, v) for n, v in renamed)), {}


def _duplicated_elements(ctx: Context) -> Built:
    if not ctx.operation.parameters:
        return None
    first, second = ctx.plain, _second(ctx)
    xml = "".join(_element(p.name, first[p.name]) + _element(p.name, second[p.name])
                  for p in ctx.operation.parameters)
    return _with_params(ctx, xml), first


def _reordered_elements(ctx: Context) -> Built:
    if len(ctx.operation.parameters) < 2:
        return None
    xml = "".join(_element(p.name, ctx.plain[p.name])
                  for p in reversed(ctx.operation.parameters))
    return _with_params(ctx, xml), ctx.plain


def _action(value: Callable[[Context], str | None]) -> Builder:
    def make(ctx: Context) -> Built:
        return ctx.call(ctx.plain).with_header("SOAPAction", value(ctx)), None
    return make


def _action_as_usual(value: Callable[[Context], str | None]) -> Builder:
    def make(ctx: Context) -> Built:
        return ctx.call(ctx.plain).with_header("SOAPAction", value(ctx)), ctx.plain
    return make


def _bare_action(ctx: Context) -> str:
    return ctx.contract.soap_action(ctx.operation).strip('"')


def _soap12_action_unquoted(ctx: Context) -> Built:
    request = ctx.call(ctx.plain)
    kind = f"application/soap+xml; charset=utf-8; action={_bare_action(ctx)}"
    return request.with_header("Content-Type", kind), ctx.plain


def _soap12_with_soapaction(ctx: Context) -> Built:
    request = ctx.call(ctx.plain)
    return request.with_header("SOAPAction", ctx.contract.soap_action(ctx.operation)), ctx.plain


def _default_namespace(ctx: Context) -> Built:
    request = ctx.call(ctx.plain)
    text = request.body.decode("utf-8")
    prefix = re.search(r"<(\w+):Envelope", text)
    if prefix is None:
        return None
    p = prefix.group(1)
    text = text.replace(f"<{p}:", "<").replace(f"</{p}:", "</").replace(f"xmlns:{p}=", "xmlns=")
    return _body(request, text.encode("utf-8")), ctx.plain


def _prefixed(qualified: bool) -> Builder:
    """The operation element with a prefix; its parameters with it too (qualified), or in no
    namespace at all (a client that forgot elementFormDefault)."""
    def make(ctx: Context) -> Built:
        if not ctx.operation.parameters:
            return None
        op, ns = ctx.operation.name, ctx.contract.namespace
        q = "t:" if qualified else ""
        params = "".join(f"<{q}{p.name}>{_escape(ctx.plain[p.name])}</{q}{p.name}>"
                         for p in ctx.operation.parameters)
        call = f'<t:{op} xmlns:t="{ns}">{params}</t:{op}>'
        return _with_call(ctx, call), ctx.plain if qualified else {}
    return make


def _header_block(must_understand: str | None) -> Builder:
    def make(ctx: Context) -> Built:
        request = ctx.call(ctx.plain)
        text = request.body.decode("utf-8")
        p = re.search(r"<(\w+):Envelope", text).group(1)  # type: ignore[union-attr]
        mu = f' {p}:mustUnderstand="{must_understand}"' if must_understand else ""
        block = f'<{p}:Header><h:Trace xmlns:h="{HEADER_NS}"{mu}>1</h:Trace></{p}:Header>'
        text = text.replace(f"<{p}:Body>", block + f"<{p}:Body>", 1)
        return _body(request, text.encode("utf-8")), None if must_understand else ctx.plain
    return make


def _nil(ctx: Context) -> Built:
    if not ctx.strings:
        return None
    xml = "".join(f'<{p.name} xsi:nil="true" />' if p.type is ParamType.STRING
                  else _element(p.name, ctx.plain[p.name]) for p in ctx.operation.parameters)
    return _with_params(ctx, xml), {k: v for k, v in ctx.plain.items() if k not in ctx.strings}


def _comment_in_value(ctx: Context) -> Built:
    if not ctx.strings:
        return None
    raw = {n: _escape(ctx.plain[n][:1]) + "<!-- -->" + _escape(ctx.plain[n][1:])
           for n in ctx.strings}
    return _with_params(ctx, _params_xml(ctx, ctx.plain, raw)), None


def _method(method: str, keep_body: bool) -> Builder:
    def make(ctx: Context) -> Built:
        request = ctx.call(ctx.plain)
        if not keep_body:
            headers = replace_header(replace_header(request.headers, "Content-Length", None),
                                     "Content-Type", None)
            request = HttpRequest(request.method, request.url, headers, b"")
        return replace(request, method=method), None
    return make


# GET and POST fields


def _fields(ctx: Context, pairs: list[tuple[str, str]], *, encoding: str = "utf-8",
            content_type: str | None = None) -> HttpRequest:
    """The GET or POST call with exactly ``pairs`` as its fields."""
    request = ctx.call(ctx.plain)
    encoded = urlencode(pairs, encoding=encoding)
    if ctx.binding is Binding.HTTP_GET:
        parts = urlsplit(request.url)
        return replace(request, url=urlunsplit(parts._replace(query=encoded)))
    changed = _body(request, encoded.encode("ascii"))
    return changed.with_header("Content-Type", content_type) if content_type else changed


def _names_case(ctx: Context) -> Built:
    if not ctx.operation.parameters:
        return None
    return (_fields(ctx, [(n.swapcase(), v) for n, v in ctx.generated.items()]),
            ctx.generated)


#: .NET's byte[] types: ASMX's GET/POST read a repeated field of one as its bytes, one each.
_BYTE_ARRAYS = frozenset((ParamType.BASE64, ParamType.HEX_BINARY))


def _duplicated_fields(ctx: Context) -> Built:
    if not ctx.operation.parameters or any(p.type in _BYTE_ARRAYS
                                           for p in ctx.operation.parameters):
        return None  # ?value=1&value=2 is the byte array [1, 2], not the text "1,2"
    second = _second(ctx)
    pairs = [pair for n, v in ctx.plain.items() for pair in ((n, v), (n, second[n]))]
    return _fields(ctx, pairs), {n: f"{v},{second[n]}" for n, v in ctx.plain.items()}


def _extra_field(ctx: Context) -> Built:
    return _fields(ctx, [*ctx.plain.items(), (EXTRA_FIELD, "1")]), ctx.plain


def _name_without_value(ctx: Context) -> Built:
    if not ctx.operation.parameters:
        return None
    request = _fields(ctx, [])
    names = "&".join(quote(n) for n in ctx.plain)
    if ctx.binding is Binding.HTTP_GET:
        return replace(request, url=f"{request.url.split('?')[0]}?{names}"), {}
    return _body(request, names.encode("ascii")), {}


def _operation_case(ctx: Context) -> Built:
    request = ctx.call(ctx.plain)
    name = ctx.operation.name
    parts = urlsplit(request.url)
    path = parts.path[:-len(name)] + name.swapcase()
    return replace(request, url=urlunsplit(parts._replace(path=path))), None


def _form_latin1(ctx: Context) -> Built:
    values = ctx.latin1
    return _fields(ctx, list(values.items()), encoding="iso-8859-1",
                   content_type="application/x-www-form-urlencoded; charset=iso-8859-1"), values


def _multipart(ctx: Context) -> Built:
    boundary = "harness-matrix-boundary"
    parts = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n'
                    for n, v in ctx.plain.items()) + f"--{boundary}--\r\n"
    request = _body(ctx.call(ctx.plain), parts.encode("utf-8"),
                    f"multipart/form-data; boundary={boundary}")
    return request, None


def _fields_in_query(ctx: Context) -> Built:
    if not ctx.operation.parameters:
        return None
    request = _body(ctx.call(ctx.plain), b"")
    return replace(request, url=f"{request.url}?{urlencode(list(ctx.plain.items()))}"), {}


# helpers


def _second(ctx: Context) -> dict[str, str]:
    """A second value for each parameter, unlike the first (an int one more)."""
    plain = ctx.plain
    return {p.name: str(int(v) + 1) if p.type is not ParamType.STRING and _INTEGER.fullmatch(v)
            else f"{v}b" for p in ctx.operation.parameters if (v := plain[p.name]) is not None}


_INTEGER = re.compile(r"-?[0-9]+")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _element(name: str, value: str) -> str:
    return f"<{name}>{_escape(value)}</{name}>"


def _params_xml(ctx: Context, values: Mapping[str, str], raw: Mapping[str, str]) -> str:
    return "".join(f"<{p.name}>{raw[p.name]}</{p.name}>" if p.name in raw
                   else _element(p.name, values[p.name]) for p in ctx.operation.parameters)


def _with_params(ctx: Context, params: str) -> HttpRequest:
    op, ns = ctx.operation.name, ctx.contract.namespace
    return _with_call(ctx, f'<{op} xmlns="{ns}">{params}</{op}>')


def _with_call(ctx: Context, call: str) -> HttpRequest:
    """The spec call with its operation element written as ``call``."""
    request = ctx.call(ctx.plain)
    text = request.body.decode("utf-8")
    start = text.index(f"<{ctx.operation.name} ")
    close = f"</{ctx.operation.name}>"
    end = text.index(close) + len(close) if close in text else text.index("/>", start) + 2
    return _body(request, (text[:start] + call + text[end:]).encode("utf-8"))


def _body(request: HttpRequest, body: bytes, content_type: str | None = None) -> HttpRequest:
    changed = replace(request, body=body).with_header("Content-Length", str(len(body)))
    return changed.with_header("Content-Type", content_type) if content_type else changed


BUILDERS: dict[str, Builder] = {
    # content types
    "soap11-application-xml": _content_type("application/xml"),
    "soap11-no-content-type": _content_type(None),
    "soap12-application-xml": _content_type("application/xml"),
    "soap11-upper-case-media": _content_type("TEXT/XML; CHARSET=UTF-8"),
    "soap12-no-charset": _content_type("application/soap+xml"),
    "post-no-content-type": _content_type(None),
    "post-multipart": _multipart,
    # charsets and encodings
    "soap11-iso-8859-1": _soap_charset("iso-8859-1", declared=True),
    "soap11-iso-8859-1-undeclared": _soap_charset("iso-8859-1", declared=False),
    "soap12-iso-8859-1": _soap_charset("iso-8859-1", declared=True),
    "soap11-utf-16": _soap_charset("utf-16", declared=True),
    "soap11-no-charset-non-ascii": _no_charset_non_ascii,
    "soap11-character-references": _character_references,
    "soap11-cdata": _cdata,
    "soap11-gzip": _gzip,
    "post-iso-8859-1": _form_latin1,
    # names
    "get-names-case": _names_case,
    "post-names-case": _names_case,
    "soap11-element-case": _element_case,
    "get-operation-case": _operation_case,
    # duplicates and order
    "get-duplicated": _duplicated_fields,
    "post-duplicated": _duplicated_fields,
    "soap11-duplicated": _duplicated_elements,
    "soap11-reordered": _reordered_elements,
    # methods
    "soap11-head": _method("HEAD", keep_body=False),
    "soap11-options": _method("OPTIONS", keep_body=False),
    "soap11-put": _method("PUT", keep_body=True),
    "get-head": _method("HEAD", keep_body=False),
    "get-options": _method("OPTIONS", keep_body=False),
    "post-put": _method("PUT", keep_body=True),
    # SOAPAction forms
    "soap11-action-unquoted": _action_as_usual(_bare_action),
    "soap11-action-missing": _action_as_usual(lambda ctx: None),
    "soap11-action-case": _action(
        lambda ctx: f'"{ctx.contract.namespace.rstrip("/")}/{ctx.operation.name.lower()}"'),
    "soap11-action-bare-name": _action(lambda ctx: f'"{ctx.operation.name}"'),
    "soap12-action-unquoted": _soap12_action_unquoted,
    "soap12-soapaction-header": _soap12_with_soapaction,
    # envelopes
    "soap11-default-namespace": _default_namespace,
    "soap11-prefixed-parameters": _prefixed(qualified=True),
    "soap11-unqualified-parameters": _prefixed(qualified=False),
    "soap11-must-understand": _header_block("1"),
    "soap12-must-understand": _header_block("true"),
    "soap11-optional-header": _header_block(None),
    "soap11-nil": _nil,
    "soap11-comment-in-value": _comment_in_value,
    # missing, extra, empty
    "get-extra-parameter": _extra_field,
    "post-extra-parameter": _extra_field,
    "get-name-without-value": _name_without_value,
    "post-fields-in-query": _fields_in_query,
}


# ------------------------------------------------------------------------------ answers


@dataclass(frozen=True)
class Shape:
    """What an answer is, in the terms rows compare: status, media type (None: no
    Content-Type), the body's form, the SOAP envelope's version, the result's value."""

    status: int
    media: str | None
    form: str  # empty | page | text | xml <root> | fault <Code> | answered <element>
    version: str | None = None
    value: str | None = None

    def words(self) -> str:
        """Everything: "HTTP 200 text/xml, GetTokenDeviceResponse in a SOAP 1.1
        envelope 'token-for-7'"."""
        kind = f" {self.media}" if self.media else ""
        shown = f" {self.value!r}" if self.value is not None else ""
        return f"HTTP {self.status}{kind}, {self._form()}{shown}"

    def brief(self) -> str:
        """The status and the form, as a cause line says them: "HTTP 500 Client fault"."""
        form = self._form()
        if self.form == "text":
            form = f"a {self.media or 'untyped'} body"
        return f"HTTP {self.status}, {form}".replace(" in a SOAP 1.1 envelope", "").replace(
            " in a SOAP 1.2 envelope", "")

    def _form(self) -> str:
        if self.form.startswith("fault "):
            return f"a {self.version + ' ' if self.version else ''}{self.form[6:]} fault"
        answered = self.form.removeprefix("answered ")  # "answered with" says it already
        if self.version and answered != self.form:
            return f"{answered} in a {self.version} envelope"
        return {"empty": "an empty body", "page": "an HTML page", "text": "a text body"}.get(
            self.form, answered)

    def without_value(self) -> Shape:
        return replace(self, value=None)

    def alike(self, other: Shape) -> bool:
        """The same answer but for its value; an empty body's Content-Type says nothing."""
        if self.form == other.form == "empty":
            return self.status == other.status
        return self.without_value() == other.without_value()


def shape(op: Operation, binding: Binding, response: HttpResponse) -> Shape:
    """``response`` as a Shape; a sensitive result as reports show it (``for_report``: a
    pseudonym within certify's run, the same for the same value, so shapes still compare)."""
    response = for_report(response, op.name)  # type: ignore[assignment]
    media = media_type(response.content_type) or None
    if not response.body.strip():
        return Shape(response.status, media, "empty")
    reading = read_response(op, binding, response)
    document = reading.document
    if document is None:
        if media == "text/html":
            return Shape(response.status, media, "page")
        value = None  # a result as text/plain (4.7 says XML): its text is still its value
        if not binding.is_soap and op.result is not None and response.status == 200:
            value = response.body.decode("utf-8", errors="replace")
        return Shape(response.status, media, "text", None, value)
    if local_name(document) == "Envelope":
        version = {b.envelope_ns: b.label for b in (Binding.SOAP11, Binding.SOAP12)}.get(
            namespace(document) or "", "no SOAP")
        if reading.fault_code is not None:
            return Shape(response.status, media, f"fault {_code_class(reading.fault_code)}",
                         version)
        payload = soap_payload(document)
        form = f"answered {local_name(payload)}" if payload is not None else "xml Envelope"
        return Shape(response.status, media, form, version, reading.result)
    if media == "text/html" or local_name(document) == "html":
        return Shape(response.status, media, "page")
    if binding.is_soap:
        return Shape(response.status, media, f"xml {local_name(document)}")
    return Shape(response.status, media, f"answered {local_name(document)}", None,
                 reading.result if op.result else None)


def _code_class(code: str) -> str:
    """A fault code's class: its first word as written ("Client.Schema" -> "Client",
    "Sender/x" -> "Sender"): a refined code is the same fault (``bindings.code_words``)."""
    return (code_words(code) or ("uncoded",))[0]


def spec_problem(mreq: MatrixRequest, response: HttpResponse) -> SpecProblem | None:
    """What the answer breaks of the spec, if anything, on a row whose ASMX answer is a SOAP
    one (a result, or a fault): over SOAP any XML body or any 200 is an envelope of the
    request's version typed as rule 7 says (``odd_requests.answer_problem``, the odd
    requests' own check); a GET/POST result is typed as 4.7 says. A row that ASMX refuses at
    the HTTP level (415, 405, 400) was never a spec call: the spec says nothing of its
    answer."""
    row = mreq.row
    if row.expected.same_as is None and not (row.expected.form or "").startswith("fault"):
        return None
    if row.binding.is_soap:
        return answer_problem(row.binding, response)
    if response.status == 200 and mreq.operation.result is not None:
        want = normalise_content_type("text/xml; charset=utf-8")
        if normalise_content_type(response.content_type) != want:
            shown = response.content_type or NO_CONTENT_TYPE
            return SpecProblem("content-type", f"Content-Type {want}", f"Content-Type {shown}",
                               f"Content-Type {shown}, not {want} (4.7)")
    return None


@dataclass(frozen=True)
class Judged:
    verdict: Verdict
    expected: str
    actual: str
    cause: str = ""
    #: Which values, where a value comes back changed (``Finding.detail``).
    detail: str | None = None


@dataclass(frozen=True)
class Answers:
    """A target's answers to a matrix request: the request's own, the row's spec call's
    (``control``; rows with a fixed answer have none) and the plain spec call's of the same
    operation and binding (``plain``; often the same request as the control)."""

    response: HttpResponse | None
    control: HttpResponse | None = None
    plain: HttpResponse | None = None


def verdict(mreq: MatrixRequest, answers: Answers) -> Judged:
    """The row's verdict (see the module's docstring). Nothing is judged where the binding's
    plain call fails itself (R4-STATUS says so); a spec rule the plain or control call breaks
    alike is theirs (R5-ENVELOPE, OP-RESULT...), not the row's."""
    row, op = mreq.row, mreq.operation
    expected = row.expected.words()
    if answers.response is None:
        return Judged(Verdict.NOT_APPLICABLE, expected, "", "no answer to judge")
    plain = answers.plain
    if plain is None or plain.status != 200:
        why = "no answer" if plain is None else f"HTTP {plain.status}"
        return Judged(Verdict.NOT_APPLICABLE, expected, "",
                      f"the plain {row.binding.label} call fails too ({why}): nothing to "
                      "compare with")
    got = shape(op, row.binding, answers.response)
    problem = spec_problem(mreq, answers.response)
    if problem is not None and problem not in (spec_problem(mreq, plain), answers.control
                                               and spec_problem(mreq, answers.control)):
        cause = problem.words if problem.version else f"{row.label}: answered with " \
                                                      f"{problem.words}"
        detail = None
        if answers.control is not None and row.other_value is Verdict.FAILED:  # and a value
            # changed too: said too, the values as its detail
            want = shape(op, row.binding, answers.control)
            if got.status == want.status == 200 and got.value != want.value:
                cause += "; the value changed too"
                detail = _changed(got, want)
        return Judged(Verdict.FAILED, problem.expected, problem.actual, cause, detail)
    if row.expected.same_as is None:
        if row.expected.holds(got):
            return Judged(Verdict.PASSED, expected, got.words())
        return Judged(Verdict.WARNING, expected, got.words(),
                      f"{row.label}: answered with {got.brief()} where ASMX answers with "
                      f"{row.expected.brief()}")
    if answers.control is None:
        return Judged(Verdict.NOT_APPLICABLE, expected, got.words(),
                      "the spec call to compare with got no answer")
    want = shape(op, row.binding, answers.control)
    spec_call = f"the spec call with {AS_WORDS[row.expected.same_as]}"
    if got == want or (got.alike(want) and got.value == want.value):
        return Judged(Verdict.PASSED, f"as {spec_call}: {want.words()}", got.words())
    if got.alike(want) and got.status == 200:
        lost = row.other_value is Verdict.FAILED
        return Judged(row.other_value, f"{want.value!r}, as {spec_call}", repr(got.value),
                      f"{row.label}: another value comes back than {spec_call} gives"
                      + (" (a value lost or changed)" if lost else
                         " (ASMX loses it too; the spec is silent)"), _changed(got, want))
    return Judged(Verdict.WARNING, f"as {spec_call}: {want.words()}", got.words(),
                  f"{row.label}: answered with {got.brief()}, {spec_call} with "
                  f"{want.brief()} (ASMX answers both alike)")  # both the target's answers


def _changed(got: Shape, want: Shape) -> str:
    """Which values, as a detail: ``token-for- for token-for-A10`` (what came back, for
    what the spec call gives)."""
    return f"{shown_value(got.value or '')} for {shown_value(want.value or '')}"


def judge(mreq: MatrixRequest, answers: Answers, *, index: int | None = None,
          source: str | None = None) -> Finding:
    """The one finding of a matrix request's answer, under its row's rule."""
    judged = verdict(mreq, answers)
    message = "" if judged.verdict is not Verdict.WARNING else (
        "the spec is silent; the real ASMX answers otherwise")
    return Finding(mreq.row.rule, judged.verdict, mreq.operation.name, mreq.binding.label,
                   expected=judged.expected, actual=judged.actual, message=message,
                   index=index, source=source, extra={"matrix": mreq.row.id},
                   cause=judged.cause, detail=judged.detail)


def compare(mreq: MatrixRequest, primary: HttpResponse, candidate: HttpResponse
            ) -> list[Difference]:
    """``diff --errors``: the candidate's answer to a matrix request against the primary's,
    by their shapes. What the candidate breaks of the spec fails; a success carrying another
    value than the primary's is the row's ``other_value``; any other difference a warning."""
    row, op = mreq.row, mreq.operation
    want, got = shape(op, row.binding, primary), shape(op, row.binding, candidate)
    problem = spec_problem(mreq, candidate)
    if problem is not None and spec_problem(mreq, primary) is None:
        if problem.aspect == "content-type":  # in the words plain calls' differences use:
            # one line with them when the stack types every answer so
            return [Difference("content-type", "", primary.content_type,
                               candidate.content_type, summary=f"Content-Type "
                               f"{primary.content_type} expected, "
                               f"{candidate.content_type or NO_CONTENT_TYPE} given")]
        return [Difference("body", "", problem.expected, problem.actual,
                           summary=problem.words if problem.version
                           else f"{row.label}: the candidate answers with {problem.words}")]
    if got == want or (got.alike(want) and got.value == want.value) or (
            row.expected.same_as is None and row.expected.holds(got)
            and row.expected.holds(want)):
        return []  # two configurations of ASMX may answer an odd method 405 or 500
    if got.alike(want) and got.status == 200:
        return [Difference("text", _result_path(op, got), want.value, got.value,
                           row.other_value is not Verdict.FAILED,
                           f"{row.label}: another value comes back than the primary's")]
    if got.status == 404 and want.status != 404:  # not served (spec 4.1: four bindings):
        # a failure, one line with every other call of the binding diff finds not served
        return [Difference("outcome", "", want.words(), got.words(), False,
                           "HTTP 404: the call is not served")]
    return [Difference("outcome", "", want.words(), got.words(), True,
                       f"{row.label}: the candidate answers with {got.brief()} where the "
                       f"primary answers with {want.brief()} (the spec is silent)")]


def _result_path(op: Operation, got: Shape) -> str:
    """Where the result sits, as body comparisons name it (``--ignore`` paths hold)."""
    answered = got.form.removeprefix("answered ")
    if got.version is not None:
        return f"/Envelope/Body/{answered}/{op.result_element or ''}"
    return f"/{answered}"


def rows_of(binding: Binding) -> tuple[Row, ...]:
    return tuple(r for r in matrix().rows if r.binding is binding)


def as_data() -> dict[str, Any]:
    """asmx_matrix.json as loaded (the script that regenerates it rewrites this)."""
    return json.loads(MATRIX.read_text(encoding="utf-8"))


#: Sends one request; None when no answer came.
Send = Callable[[HttpRequest], "HttpResponse | None"]


class Sent:
    """Each distinct request a run of the matrix sends once (the spec calls rows share)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self._answers: dict[tuple[Any, ...], HttpResponse | None] = {}

    def once(self, request: HttpRequest | None) -> HttpResponse | None:
        if request is None:
            return None
        key = (request.method, request.url, request.headers, request.body)
        if key not in self._answers:
            self._answers[key] = self.send(request)
        return self._answers[key]

    def answers(self, mreq: MatrixRequest, response: HttpResponse | None) -> Answers:
        """``response`` with the row's control and plain call, each sent at most once."""
        if response is None:
            return Answers(None)
        return Answers(response, self.once(mreq.control), self.once(mreq.plain))


def run(contract: Contract, base: str, send: Send, rows: tuple[Row, ...] | None = None,
        operations: tuple[Operation, ...] | None = None
        ) -> Iterator[tuple[MatrixRequest, Answers]]:
    """Each row's request for each operation (of ``operations``, default all) sent with
    ``send``, with its answers (each distinct spec call sent once)."""
    sent = Sent(send)
    for op in operations if operations is not None else contract.operations:
        for mreq in requests_for(contract, op, base, rows):
            yield mreq, sent.answers(mreq, send(mreq.request))
