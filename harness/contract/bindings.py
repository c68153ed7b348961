"""The four bindings of spec clause 4.1, both ways.

``build_request`` turns (operation, arguments, binding) into the exact HTTP request of the
spec's table; ``classify`` turns any HTTP request back into (binding, operation, arguments) or
raises ClassificationError with the precise reason. ``build_response``/``build_fault`` and
``read_response`` do the same for the answers. Everything is driven by the Contract.
"""

from __future__ import annotations

import base64
import codecs
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from functools import cached_property
from urllib.parse import urlencode, urlsplit

from lxml import etree

from harness.contract import structure
from harness.contract.model import Contract, Operation, ParamType
from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.errors import ClassificationError, ServiceDescription, UsageError, XMLRejected
from harness.frozen import frozen
from harness.http_messages import HttpRequest, HttpResponse, content_type_params, media_type

SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
XSD_NS = "http://www.w3.org/2001/XMLSchema"
XML_DECLARATION = b'<?xml version="1.0" encoding="utf-8"?>'
FORM_TYPE = "application/x-www-form-urlencoded"


class Binding(StrEnum):
    # Its properties are read a dozen times per judged exchange: each is worked out once per
    # member (cached_property) and then read as a plain attribute.
    SOAP11 = "soap11"
    SOAP12 = "soap12"
    HTTP_GET = "get"
    HTTP_POST = "post"

    @cached_property
    def label(self) -> str:
        return _LABELS[self]

    @cached_property
    def is_soap(self) -> bool:
        return self in (Binding.SOAP11, Binding.SOAP12)

    @cached_property
    def envelope_ns(self) -> str | None:
        return {Binding.SOAP11: SOAP11_NS, Binding.SOAP12: SOAP12_NS}.get(self)

    @cached_property
    def method(self) -> str:
        return "GET" if self is Binding.HTTP_GET else "POST"

    @cached_property
    def request_content_type(self) -> str | None:
        """Content-Type of the request (spec 4.1 table); None for GET."""
        return _REQUEST_TYPES[self]

    @cached_property
    def soap_content_type(self) -> str | None:
        """Content-Type of a SOAP response (rule 4.1.7); None for GET/POST."""
        return _REQUEST_TYPES[self] if self.is_soap else None

    @classmethod
    def parse(cls, text: str) -> Binding:
        key = text.strip().lower().replace(" ", "").replace("_", "").replace(".", "")
        for binding in cls:
            aliases = {binding.value, binding.label.lower().replace(" ", "").replace(".", "")}
            if key in aliases or key == binding.name.lower().replace("_", ""):
                return binding
        raise UsageError(f"unknown binding {text!r} (use one of: {', '.join(b for b in cls)})")


_LABELS = {Binding.SOAP11: "SOAP 1.1", Binding.SOAP12: "SOAP 1.2",
           Binding.HTTP_GET: "HTTP GET", Binding.HTTP_POST: "HTTP POST"}
_REQUEST_TYPES = {Binding.SOAP11: "text/xml; charset=utf-8",
                  Binding.SOAP12: "application/soap+xml; charset=utf-8",
                  Binding.HTTP_GET: None,
                  Binding.HTTP_POST: FORM_TYPE}
_SOAP_BY_MEDIA = {"text/xml": Binding.SOAP11, "application/soap+xml": Binding.SOAP12}
_SOAP_BY_NS = {SOAP11_NS: Binding.SOAP11, SOAP12_NS: Binding.SOAP12}
#: The Body tag of each version's Envelope tag.
_BODY_OF = {f"{{{ns}}}Envelope": f"{{{ns}}}Body" for ns in _SOAP_BY_NS}
XML_CONTENT_TYPE = "text/xml; charset=utf-8"


# --------------------------------------------------------------------------------- requests


def build_request(contract: Contract, op: Operation, arguments: Mapping[str, object],
                  binding: Binding, base_url: str = "http://localhost", *,
                  leave_out_missing: bool = False) -> HttpRequest:
    """The exact HTTP request of spec 4.1 for ``op`` over ``binding`` at ``base_url``; a
    parameter ``arguments`` does not name is sent empty, or left out of the request (no element,
    no field) with ``leave_out_missing``."""
    unknown = set(arguments) - set(op.parameter_names)
    if unknown:
        raise UsageError(f"{op.name} has no parameter {', '.join(sorted(unknown))}")
    values = [(p.name, arguments.get(p.name, "")) for p in op.parameters
              if p.name in arguments or not leave_out_missing]
    base = urlsplit(base_url)
    if not base.scheme or not base.netloc:
        raise UsageError(f"base URL {base_url!r} is not an absolute http(s) URL")
    root = f"{base.scheme}://{base.netloc}{base.path.rstrip('/')}{op.endpoint}"
    headers: list[tuple[str, str]] = [("Host", base.netloc)]
    if binding is Binding.HTTP_GET:
        return HttpRequest("GET", f"{root}/{op.name}?{urlencode(_fields(op, values))}",
                           tuple(headers))
    if binding is Binding.HTTP_POST:
        url, body = f"{root}/{op.name}", urlencode(_fields(op, values)).encode("ascii")
    else:
        url, body = root, soap_envelope(binding, _operation_element(contract, op, values))
    headers += [("Content-Type", binding.request_content_type or ""),
                ("Content-Length", str(len(body)))]
    if binding is Binding.SOAP11:
        headers.append(("SOAPAction", contract.soap_action(op)))
    return HttpRequest("POST", url, tuple(headers), body)


def _text(value: object) -> str:
    return str(value)


def _fields(op: Operation, values: list[tuple[str, object]]) -> list[tuple[str, str]]:
    """GET/POST fields: an array of a simple type as one field per item, as ASMX reads it."""
    fields = []
    for name, value in values:
        if isinstance(value, Mapping):
            raise UsageError(f"{op.name}: {name} is a complex type, which HTTP GET/POST cannot "
                             "carry")
        items = value if isinstance(value, list) else [value]
        fields += [(name, "" if item is None else _text(item)) for item in items]
    return fields


def _operation_element(contract: Contract, op: Operation,
                       values: list[tuple[str, object]]) -> etree._Element:
    """The SOAP operation element: a text child per simple parameter, an array or complex one
    as XmlSerializer writes it (``structure.write``; None left out)."""
    ns = contract.namespace
    element = _element(contract, op.name)
    for name, value in values:
        p = op.parameter(name)
        if isinstance(value, (list, Mapping)) or (value is None and p and p.type_name in op.schema):
            structure.write(element, ns, name, op.schema, p.type_name or "", value)
        else:
            etree.SubElement(element, f"{{{ns}}}{name}").text = _text(value)
    return element


def _element(contract: Contract, name: str, children: list[tuple[str, str]] | None = None,
             text: str | None = None) -> etree._Element:
    """``<name xmlns="{service_namespace}">`` with text children, as ASMX writes them."""
    ns = contract.namespace
    element = etree.Element(f"{{{ns}}}{name}", nsmap={None: ns})
    for child, value in children or ():
        etree.SubElement(element, f"{{{ns}}}{child}").text = value
    if text is not None:
        element.text = text
    return element


def soap_envelope(binding: Binding, payload: etree._Element) -> bytes:
    """A SOAP envelope of ``binding``'s version (prefix soap / soap12 as in spec 4.1)."""
    env_ns = binding.envelope_ns
    if env_ns is None:
        raise ValueError(f"{binding.label} has no SOAP envelope")
    prefix = "soap" if binding is Binding.SOAP11 else "soap12"
    envelope = etree.Element(f"{{{env_ns}}}Envelope",
                             nsmap={"xsi": XSI_NS, "xsd": XSD_NS, prefix: env_ns})
    etree.SubElement(envelope, f"{{{env_ns}}}Body").append(payload)
    return XML_DECLARATION + b"\n" + etree.tostring(envelope, encoding="utf-8")


@frozen
class Classification:
    """What an HTTP request is, in the contract's terms."""

    binding: Binding
    operation: Operation
    #: Arguments as sent, in the order sent (names as spelled by the client).
    arguments: tuple[tuple[str, str], ...]
    #: The contract endpoint the path names (may differ from the operation's own endpoint).
    endpoint: str
    #: SOAP only: the parsed envelope and the namespace of the operation element.
    envelope: etree._Element | None = None
    operation_namespace: str | None = None
    #: Set when the request is not exactly one of the contract's pairs but most likely meant
    #: this one: why it was attributed (e.g. "did you mean SendMarkNotes? (asked SendMarkNote)").
    guess: str | None = None
    #: SOAP only, when the body is not a SOAP envelope: why not.
    problem: str | None = None

    @property
    def args(self) -> dict[str, str]:
        return dict(self.arguments)


#: Query words of the documentation ASMX serves at an endpoint (``?WSDL``, ``?disco``, ...).
_DESCRIPTION_QUERIES = {"wsdl": "WSDL", "singlewsdl": "WSDL", "disco": "disco", "schema": "XSD",
                        "xsd": "XSD", "op": "help page"}
#: Path segments after the endpoint that ask for ASP.NET AJAX's JavaScript proxy.
_SCRIPT_PROXIES = {"js", "jsdebug"}


def service_description(contract: Contract, request: HttpRequest) -> str | None:
    """The kind of service description ``request`` asks for (``WSDL``, ``XSD``, ``disco``,
    ``help page``, ``script proxy``), or None when it is not a documentation request: a GET
    (or HEAD) of a contract endpoint with no operation after it, or of its script proxy."""
    if request.method.upper() not in ("GET", "HEAD"):
        return None
    parts = urlsplit(request.url)
    segments = [s for s in parts.path.split("/") if s]
    at = _endpoint_at(segments)
    if at is None or contract.endpoint(segments[at]) is None:
        return None
    return _description_kind(segments[at + 1:], parts.query)


def _description_kind(rest: Sequence[str], query: str) -> str | None:
    """What a GET of an endpoint followed by the path segments ``rest`` asks for, if it is
    documentation: the endpoint itself (by the query's first word), or its script proxy."""
    if rest:
        return "script proxy" if len(rest) == 1 and rest[0].lower() in _SCRIPT_PROXIES else None
    word = query.split("&", 1)[0].split("=", 1)[0].lower()
    return _DESCRIPTION_QUERIES.get(word, "help page")  # ASMX answers any other with its help


def _endpoint_at(segments: list[str]) -> int | None:
    for i, segment in enumerate(segments):  # a loop, not a generator: once per exchange
        if segment.lower().endswith(".asmx"):
            return i
    return None


def classify(contract: Contract, request: HttpRequest) -> Classification:
    """(binding, operation, arguments) of ``request``, or ClassificationError saying why not
    (ServiceDescription for a request of the service's documentation).

    Lenient where a rule can judge the deviation (a wrong Content-Type, a SOAPAction that
    names another operation, an operation asked at another endpoint, a name one or two edits
    away from the contract's, a body that is not an envelope): classification says what the
    request most likely meant (``guess`` says why when it is not exact); the rules catalogue
    says whether it is right.
    """
    parts = urlsplit(request.url)
    endpoint, guess, rest = _route(contract, parts.path)
    method = request.method.upper()
    # Documentation is served at the contract's own endpoints only (not at a guessed one).
    if (guess is None and method in ("GET", "HEAD")
            and (kind := _description_kind(rest, parts.query)) is not None):
        raise ServiceDescription(kind, parts.path)
    if rest:
        return _classify_http(contract, request, endpoint, rest[0], method, parts.query, guess)
    if method != "POST":
        raise ClassificationError(
            f"{method} {parts.path} names no operation (a SOAP call is a POST to the endpoint;"
            " GET/POST calls add /<Operation>)")
    return _classify_soap(contract, request, endpoint, guess)


def _route(contract: Contract, path: str) -> tuple[str, str | None, tuple[str, ...]]:
    """The contract endpoint ``path`` names (or most likely meant, with the guess) and the
    path's segments after it; ClassificationError when it names none. Kept for the last
    paths seen: a recording's requests take a handful of paths (the query aside), and
    working it out again took ~1 us of every exchange lint judges."""
    key = (id(contract), path)
    found = _ROUTES.get(key)
    if found is None or found[0] is not contract:  # (an id may be reused)
        if len(_ROUTES) >= _KEPT_ROUTES:
            _ROUTES.clear()
        try:
            segments = [s for s in path.split("/") if s]
            at = _endpoint_at(segments)
            if at is None:
                raise ClassificationError(f"path {path or '/'} names no .asmx endpoint")
            endpoint, guess = _endpoint(contract, segments[at])
            found = (contract, (endpoint, guess, tuple(segments[at + 1:])))
        except ClassificationError as exc:
            found = (contract, str(exc))  # said again, as it was, for each such request
        _ROUTES[key] = found
    route = found[1]
    if isinstance(route, str):
        raise ClassificationError(route)
    return route


_KEPT_ROUTES = 1024
#: (id(contract), path) -> (contract, its route or why it has none): see ``_route``.
_ROUTES: dict[tuple[int, str], tuple[Contract, tuple[str, str | None, tuple[str, ...]] | str]
              ] = {}


def _endpoint(contract: Contract, segment: str) -> tuple[str, str | None]:
    """The contract endpoint ``segment`` names, or the one it most likely meant (one or two
    edits away, unique), with the guess; ClassificationError when there is none."""
    endpoint = contract.endpoint(segment)
    if endpoint is not None:
        return endpoint, None
    meant = closest(segment.lower(), {e.strip("/").lower(): e for e in contract.endpoints})
    if meant is None:
        raise ClassificationError(f"endpoint /{segment} is not in the contract (nor one or two "
                                  "edits away from one of its endpoints)")
    return meant, f"did you mean {meant}? (asked /{segment})"


def closest(name: str, candidates: Mapping[str, str], limit: int = 2) -> str | None:
    """The value of the one key of ``candidates`` at the fewest edits (at most ``limit``) from
    ``name``; None when none is that close or two tie."""
    scored = sorted(((edit_distance(name, key, limit), value)
                     for key, value in candidates.items()), key=lambda pair: pair[0])
    scored = [(d, v) for d, v in scored if d <= limit]
    if not scored or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean X?)`` naming the candidate ``word`` most likely meant (the same but
    for case, a few edits away, or much alike), or "" when none is close."""
    names = list(candidates)
    meant = next((n for n in names if n.lower() == word.lower()), None) or closest(
        word, {n: n for n in names})
    if meant is None:
        found = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
        meant = found[0] if found else None
    return f" (did you mean {meant}?)" if meant else ""


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` as soon as it exceeds
    ``limit`` (names are short; the bound keeps a hostile long name cheap)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _operation(contract: Contract, endpoint: str, name: str
               ) -> tuple[Operation | None, str | None]:
    """The operation ``name`` spells, or the one of ``endpoint`` it most likely meant (case
    aside, or one or two edits away), with the guess."""
    op = contract.find(name)
    if op is not None:
        return op, None
    ops = contract.endpoints.get(endpoint, ())
    meant = (next((o for o in ops if o.name.lower() == name.lower()), None)
             or closest(name, {o.name: o for o in ops}))
    return meant, (f"did you mean {meant.name}? (asked {name})" if meant else None)


def _classify_http(contract: Contract, request: HttpRequest, endpoint: str, name: str,
                   method: str, query: str, guess: str | None) -> Classification:
    op, op_guess = _operation(contract, endpoint, name)
    if op is None:
        serves = ", ".join(o.name for o in contract.endpoints.get(endpoint, ()))
        raise ClassificationError(f"operation {name!r} in the path is not in the contract "
                                  f"({endpoint} serves {serves})")
    guess = op_guess or guess
    if method in ("GET", "HEAD"):  # HEAD: a GET without the body; BIND-METHOD-PATH says so
        return Classification(Binding.HTTP_GET, op, _pairs(query), endpoint, guess=guess)
    # POST, or another method with a body: the form binding; BIND-METHOD-PATH judges the
    # method and BIND-REQUEST-CONTENT-TYPE the type; fields are read when they are a form.
    try:
        arguments = _pairs(_form_text(request.body))
    except ClassificationError:
        if media_type(request.content_type) in (FORM_TYPE, None):
            raise
        arguments = ()
    return Classification(Binding.HTTP_POST, op, arguments, endpoint, guess=guess)


def _form_text(body: bytes) -> str:
    try:
        return body.decode("ascii")
    except UnicodeDecodeError:
        raise ClassificationError("form body is not URL-encoded ASCII") from None


def _pairs(encoded: str) -> tuple[tuple[str, str], ...]:
    """``parse_qsl(encoded, keep_blank_values=True, errors="strict")``, several times faster on
    percent-encoded non-ASCII values (capture's recording writer classifies every exchange)."""
    pairs = []
    try:
        for part in encoded.split("&"):
            if not part:
                continue
            name, _sep, value = part.partition("=")
            pairs.append((unquote_plus(name), unquote_plus(value)))
    except UnicodeDecodeError:
        raise ClassificationError("query string or form fields are not percent-encoded UTF-8"
                                  ) from None
    return tuple(pairs)


_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def unquote_plus(text: str, errors: str = "strict") -> str:
    """A query or form field's text: ``+`` is a space, each ``%XX`` a byte, the bytes UTF-8
    (``errors`` as for ``bytes.decode``: ``strict`` raises UnicodeDecodeError); a ``%`` that
    does not start an escape stays as it is, as in ``urllib.parse.unquote_plus``."""
    if "+" in text:
        text = text.replace("+", " ")
    if "%" not in text:
        return text
    try:  # every "%XX" as "\\xXX", decoded in C: a seventh of the time of urllib (or a regex)
        raw = codecs.escape_decode(text.replace("\\", "\\\\").replace("%", "\\x"))[0]
    except ValueError:  # a "%" that is no escape, or a lone surrogate: one run at a time
        return _ESCAPES.sub(lambda m: bytes.fromhex(m.group().replace("%", "")).decode(
            "utf-8", errors), text)
    return raw.decode("utf-8", errors)


def _classify_soap(contract: Contract, request: HttpRequest, endpoint: str,
                   guess: str | None) -> Classification:
    by_media = _SOAP_BY_MEDIA.get(media_type(request.content_type) or "")
    try:
        envelope = parse_xml(request.body)
    except XMLRejected as exc:
        return _unreadable_soap(contract, request, endpoint, by_media, f"{exc}", guess)
    binding = by_media or _SOAP_BY_NS.get(namespace(envelope) or "")
    if binding is None:
        raise ClassificationError(
            f"POST {request.path} is neither SOAP 1.1 nor 1.2: Content-Type "
            f"{request.content_type!r} and root element {envelope.tag!r}")
    payload = soap_payload(envelope)
    if payload is None:
        return _unreadable_soap(contract, request, endpoint, binding,
                                "the SOAP envelope has no Body element with an operation in it",
                                guess, envelope)
    name = local_name(payload)
    op, op_guess = _operation(contract, endpoint, name)
    if op is None:
        raise ClassificationError(
            f"SOAP body element {name!r} is not an operation of the contract "
            f"(nor one or two edits away from one served at {endpoint})")
    arguments = tuple([(local_name(c), c.text or "")
                       for c in payload.iterchildren(etree.Element)])
    return Classification(binding, op, arguments, endpoint, envelope, namespace(payload),
                          guess=op_guess or guess)


def _unreadable_soap(contract: Contract, request: HttpRequest, endpoint: str,
                     binding: Binding | None, problem: str, guess: str | None,
                     envelope: etree._Element | None = None) -> Classification:
    """A SOAP POST whose body names no operation, attributed to the operation it most likely
    meant: the one its SOAPAction names, else the endpoint's only one."""
    action = (request.header("SOAPAction") or "").strip().strip('"')
    op = contract.find(action.rsplit("/", 1)[-1]) if action else None
    ops = contract.endpoints.get(endpoint, ())
    if op is None and len(ops) == 1:
        op = ops[0]
    binding = binding or (Binding.SOAP11 if action else None)
    if op is None or binding is None:
        raise ClassificationError(f"SOAP body rejected: {problem}" if envelope is None
                                  else problem[0].upper() + problem[1:])
    return Classification(binding, op, (), endpoint, envelope, guess=guess, problem=problem)


def structured_argument(call: Classification, name: str) -> structure.Value:
    """An array or complex argument of ``call`` as ASMX reads it: in SOAP the first element
    of that name (XmlSerializer: fields by name, unknown ones ignored; None when absent); in
    GET/POST an array of a simple type as the values of its repeated field. ValueError naming
    what does not convert."""
    op = call.operation
    p = op.parameter(name)
    schema, type_name = op.schema, (p.type_name if p else None) or ""
    if call.binding.is_soap:
        payload = soap_payload(call.envelope) if call.envelope is not None else None
        element = argument_element(payload, name)
        return None if element is None else structure.read(schema, type_name, element, name)
    named = schema.get(type_name)
    kind = structure.simple_kind(named.item.type, schema) if named and named.item else None
    if kind is None:  # a complex type: not offered over HTTP
        raise ValueError(f"{name}: a {type_name} does not travel as fields")
    values = [v for n, v in call.arguments if n == name]
    bad = next((v for v in values if not kind[0].accepts(v, kind[1], http=True)), None)
    if bad is not None:
        raise ValueError(f"{bad!r} is not a {named.item.type}")
    return values


def argument_element(payload: etree._Element | None, name: str) -> etree._Element | None:
    """The first child of a SOAP operation element named ``name`` (XmlSerializer reads fields
    by name, in any order); None when there is none."""
    if payload is None:
        return None
    return next((c for c in element_children(payload) if local_name(c) == name), None)


def call_arguments(call: Classification) -> dict[str, structure.Value]:
    """The call's arguments by parameter (the first of repeated SOAP ones; an array or complex
    one read by ``structured_argument``); ValueError when a structured one does not convert."""
    args = call.args
    return {p.name: structured_argument(call, p.name) if p.type is ParamType.COMPLEX
            else args.get(p.name) for p in call.operation.parameters}


def soap_body(envelope: etree._Element) -> etree._Element | None:
    """The Body element of an envelope of either version (None when there is none)."""
    body_tag = _BODY_OF.get(envelope.tag)
    if body_tag is not None:
        # By index: a third of lxml's iterchildren(tag), which sets up a tag matcher per call
        # (capture's writer classifies every exchange, lint and replay read every answer).
        for at in range(len(envelope)):
            child = envelope[at]
            if child.tag == body_tag:
                return child
    return None


def soap_payload(envelope: etree._Element) -> etree._Element | None:
    """The first element inside the envelope's Body."""
    body = soap_body(envelope)
    if body is not None:
        for at in range(len(body)):
            child = body[at]
            if isinstance(child.tag, str):  # not a comment or processing instruction
                return child
    return None


def soap_version(media: str | None) -> Binding | None:
    return _SOAP_BY_MEDIA.get(media or "")


# -------------------------------------------------------------------------------- responses


def build_response(contract: Contract, op: Operation, binding: Binding,
                   result: structure.Value = None) -> HttpResponse:
    """A successful response of ``op`` over ``binding``, the way ASMX writes it (an array or
    complex ``result``, a list or dict, as XmlSerializer writes it)."""
    ns, complex_result = contract.namespace, op.result_type is ParamType.COMPLEX
    if binding.is_soap:
        payload = _element(contract, op.response_element)
        if op.result_element and complex_result:
            structure.write(payload, ns, op.result_element, op.schema, op.result or "", result)
        elif op.result_element:
            etree.SubElement(payload, f"{{{ns}}}{op.result_element}").text = _result_text(result)
        return _xml_response(200, binding.soap_content_type or "", soap_envelope(binding, payload))
    if op.result is None:
        return HttpResponse(200, (("Content-Length", "0"),), b"", "OK")
    if not complex_result:
        text = _result_text(result)
        if op.result_type is ParamType.HEX_BINARY:  # a byte[]: base64 in GET/POST's document
            text = _hex_as_base64(text)
        document = _element(contract, op.result_root or op.result, text=text)
        return _xml_response(200, XML_CONTENT_TYPE,
                             XML_DECLARATION + b"\n" + etree.tostring(document, encoding="utf-8"))
    # XmlSerializer's document: xsd and xsi declared on the root, indented two spaces
    document = etree.Element(f"{{{ns}}}{op.result}", nsmap={"xsd": XSD_NS, "xsi": XSI_NS,
                                                            None: ns})
    structure.write_content(document, ns, op.schema, op.result or "", result)
    body = etree.tostring(document, encoding="utf-8", pretty_print=True).rstrip(b"\n")
    return _xml_response(200, XML_CONTENT_TYPE, XML_DECLARATION + b"\n" + body)


def _result_text(result: structure.Value) -> str:
    return result if isinstance(result, str) else ""


def _hex_as_base64(text: str) -> str:
    try:
        return base64.b64encode(bytes.fromhex("".join(text.split()))).decode("ascii")
    except ValueError:  # no hex: as it is
        return text


class FaultCode(StrEnum):
    """Who is to blame, in SOAP 1.1 words; SOAP 1.2 says Sender / Receiver.

    VersionMismatch (an envelope of the other SOAP version) is spelled alike in both."""

    CLIENT = "Client"
    SERVER = "Server"
    VERSION_MISMATCH = "VersionMismatch"
    MUST_UNDERSTAND = "MustUnderstand"

    def for_binding(self, binding: Binding) -> str:
        if binding is Binding.SOAP12:
            return _SOAP12_CODES.get(self, self.value)
        return self.value


_SOAP12_CODES = {FaultCode.CLIENT: "Sender", FaultCode.SERVER: "Receiver"}
#: SOAP 1.2's words for a blame, read as SOAP 1.1's.
_SOAP11_WORDS = {"Sender": FaultCode.CLIENT.value, "Receiver": FaultCode.SERVER.value}


def fault_words(code: str) -> tuple[str, ...]:
    """A fault code as the words that say what it is, most general first: its parts (a SOAP
    1.2 Value and its Subcodes, joined by "/") and their dotted refinements (SOAP 1.1 4.4.1:
    "Client.Authentication"), each without its prefix; SOAP 1.2's Sender and Receiver read
    as Client and Server. ``"soap:Client.SchemaValidationError"`` -> ``("Client",
    "SchemaValidationError")``; ``"soap:Sender/x:Busy"`` -> ``("Client", "Busy")``."""
    words = list(code_words(code))
    if words:
        words[0] = _SOAP11_WORDS.get(words[0], words[0])
    return tuple(words)


def code_words(code: str) -> tuple[str, ...]:
    """A fault code's words as written (``fault_words`` before SOAP 1.2's are read as 1.1's):
    ``"soap:Client.Busy"`` -> ``("Client", "Busy")``, ``"Sender/x:Busy"`` -> ``("Sender",
    "Busy")``."""
    return tuple(word for part in code.split("/") for word in
                 part.strip().rpartition(":")[2].split(".") if word)


def fault_class(code: str | None) -> str | None:
    """The blame a fault code carries, in SOAP 1.1's word ("Client" for
    ``Client.SchemaValidationError``, ``soap:Sender`` and ``Sender/x:Busy``); None for none."""
    if code is None:
        return None
    words = fault_words(code)
    return words[0] if words else ""


def in_its_version(request: Binding, answered: Binding | None, code: str | None) -> bool:
    """Whether an answer's SOAP envelope is of the version it should be, for a request of
    ``request``'s: the same version, or a VersionMismatch fault in either (SOAP 1.2 part 1,
    5.4.7 and appendix A: the one answer that may take the other version; ASMX gives every
    VersionMismatch in SOAP 1.1). The one answer of R5-ENVELOPE, probe's ROB-FAULT-SHAPE and
    the odd requests."""
    return answered is request or (answered is not None and code is not None
                                   and fault_class(code) == FaultCode.VERSION_MISMATCH.value)


def is_success(status: int, fault: bool) -> bool:
    """A call that succeeded: HTTP 2xx and no SOAP fault. The one answer of the scenario
    steps (``the call succeeds``), the comparison (a result vs an error) and diff's check of
    one result over every binding."""
    return 200 <= status < 300 and not fault


def same_fault(expected: str, actual: str) -> bool:
    """Whether a fault of code ``actual`` is the fault ``expected`` names: the same code in
    either SOAP version's words, or a refinement of it ("Client.SchemaValidationError" and
    "Sender/x:Busy" are "Client" faults; a "Client.Busy" is no "Client.Timeout"). The one
    answer of every command and step (scenario steps, diff, replay, probe, odd requests)."""
    want, got = fault_words(expected), fault_words(actual)
    return bool(want) and got[:len(want)] == want


def build_fault(binding: Binding, code: FaultCode, message: str) -> HttpResponse:
    """An error response as ASMX gives it: a SOAP fault (status 500) of the request's version,
    or 500 text/plain for GET/POST."""
    if not binding.is_soap:
        return HttpResponse(500, (("Content-Type", "text/plain; charset=utf-8"),),
                            message.encode("utf-8"), "Internal Server Error")
    env_ns = binding.envelope_ns
    fault = etree.Element(f"{{{env_ns}}}Fault")
    value = f"soap:{code.for_binding(binding)}"
    if binding is Binding.SOAP11:
        etree.SubElement(fault, "faultcode").text = value
        etree.SubElement(fault, "faultstring").text = message
        etree.SubElement(fault, "detail")
    else:
        code_el = etree.SubElement(fault, f"{{{env_ns}}}Code")
        etree.SubElement(code_el, f"{{{env_ns}}}Value").text = value
        reason = etree.SubElement(fault, f"{{{env_ns}}}Reason")
        text = etree.SubElement(reason, f"{{{env_ns}}}Text")
        text.set("{http://www.w3.org/XML/1998/namespace}lang", "en")
        text.text = message
        etree.SubElement(fault, f"{{{env_ns}}}Detail")
    envelope = etree.Element(f"{{{env_ns}}}Envelope",
                             nsmap={"soap": env_ns, "xsi": XSI_NS, "xsd": XSD_NS})
    etree.SubElement(envelope, f"{{{env_ns}}}Body").append(fault)
    body = XML_DECLARATION + etree.tostring(envelope, encoding="utf-8")
    return _xml_response(500, binding.soap_content_type or "", body, "Internal Server Error")


def _xml_response(status: int, content_type: str, body: bytes,
                  reason: str = "OK") -> HttpResponse:
    return HttpResponse(status, (("Content-Type", content_type),
                                 ("Content-Length", str(len(body)))), body, reason)


@frozen  # built for every response judged
class ResponseReading:
    """What a response says in the contract's terms; fields are None where absent."""

    document: etree._Element | None = None
    #: SOAP: the envelope's binding, by its namespace.
    envelope_binding: Binding | None = None
    #: SOAP: the element in Body (response element or Fault); GET/POST: the root element.
    payload: etree._Element | None = None
    fault_code: str | None = None
    fault_reason: str | None = None
    #: The result text (GetTokenDeviceResult or the ``string`` root), when there is one.
    result: str | None = None
    problem: str | None = None  # why the body could not be read, when it could not
    #: The element holding the result (<Operation>Result, or the GET/POST root): an array or
    #: complex result is judged by its structure.
    result_node: etree._Element | None = None


def read_response(op: Operation, binding: Binding, response: HttpResponse) -> ResponseReading:
    """Read ``response`` as an answer to ``op`` over ``binding`` without judging it."""
    if not response.body.strip():
        return ResponseReading()
    if not binding.is_soap and media_type(response.content_type) == "text/plain":
        return ResponseReading(problem="text/plain body")
    try:
        document = parse_xml(response.body)
    except XMLRejected as exc:
        return ResponseReading(problem=str(exc))
    if not binding.is_soap:
        return ResponseReading(document, None, document, result=document.text or "",
                               result_node=document)
    envelope_binding = _SOAP_BY_NS.get(namespace(document) or "")
    payload = soap_payload(document)
    if payload is None:
        return ResponseReading(document, envelope_binding, problem="no element in SOAP Body")
    if local_name(payload) == "Fault":
        code, reason = _fault_fields(payload)
        return ResponseReading(document, envelope_binding, payload, code, reason)
    result = node = None
    if op.result_element:
        found = [c for c in element_children(payload) if local_name(c) == op.result_element]
        node = found[0] if found else None
        result = (node.text or "") if node is not None else None
    return ResponseReading(document, envelope_binding, payload, result=result, result_node=node)


def plain_result(op: Operation, binding: Binding, response: HttpResponse) -> str | None:
    """The value of a text/plain GET/POST answer to an operation with a simple result (a
    stack without ASMX's ``<string>`` document: spyne's ``token-for-7``), in its charset, one
    line end dropped: the result read by value, the same in the scenario steps and diff's
    check of one result over every binding (its form is OP-RESULT's to judge)."""
    if (binding.is_soap or not op.result_element or op.result_type is ParamType.COMPLEX
            or media_type(response.content_type) != "text/plain"):
        return None
    charset = content_type_params(response.content_type).get("charset") or "utf-8"
    try:
        text = response.body.decode(charset)
    except (LookupError, UnicodeDecodeError):
        return None
    return text.removesuffix("\n").removesuffix("\r")


def _fault_fields(fault: etree._Element) -> tuple[str | None, str | None]:
    """(code, reason) of a SOAP 1.1 or 1.2 fault; the code's prefix resolved to its local part."""
    texts: dict[str, str] = {}
    for e in fault.iter():  # the first of a name: Code/Value, not a Subcode's Value
        if isinstance(e.tag, str):
            texts.setdefault(local_name(e), (e.text or "").strip())
    code = texts.get("faultcode") or texts.get("Value")
    reason = texts.get("faultstring") or texts.get("Text")
    if code and ":" in code:
        code = code.split(":", 1)[1]
    return code, reason
