"""Pseudonyms for personal data in recordings.

A sensitive value is replaced by ``redacted-`` and 16 hex digits of an HMAC-SHA256 keyed with a
per-recording secret that never enters the recording: the same value maps to the same pseudonym
within a recording (so replays stay consistent) and cannot be looked up without the key.

``Redactor`` applies it to whole HTTP messages before anything touches the disk:

- SOAP and XML bodies: the text of every element whose local name is sensitive (any prefix,
  any namespace), plus the root of a bare result document (GET/POST ``string``) of an operation
  whose result is sensitive. The rest of the body stays byte-exact: the document is parsed once
  (``harness.contract.xmlsafe.parse_xml``) to find the values, then only those text spans are
  replaced in the raw text; when the raw text cannot be matched span for span against the parsed
  tree (CDATA, mixed content, a non-UTF-8 encoding) the tree itself is rewritten and re-serialised.
- query strings and form bodies: the value of every sensitive field, other fields untouched.
- JSON bodies: the value of every sensitive member, at any depth.
- a successful answer of an operation whose result is sensitive (``response(operation=...)``)
  in any other form: text/plain (spyne over GET/POST) in its charset becomes the pseudonym of
  its text, JSON has every string and number replaced; one that cannot be decoded is dropped.
- headers named in ``headers`` (Authorization, Cookie, Set-Cookie... by default) and every
  credential-looking header (``X-...-Key``, ``...-Token``, ``Api-Key``): whole value.

Content-Length follows the rewritten body; a body in a content coding (gzip, deflate, br,
zstd) is decoded, rewritten and re-encoded; one that cannot be decoded is dropped (never
written unchecked) and the drop is said in ``Exchange.meta["redaction_dropped"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from lxml import etree
from mitmproxy.net import encoding as content_coding
from mitmproxy.net.http import headers as http_headers

from harness.contract.bindings import unquote_plus
from harness.contract.model import Contract
from harness.contract.xmlsafe import parse_xml, utf8_by_its_start
from harness.errors import XMLRejected
from harness.traffic.exchange import (
    Exchange,
    Headers,
    HttpRequest,
    HttpResponse,
    content_type_params,
    media_type,
)
from harness.traffic.keys import KEY_BYTES, key_id, load_or_create_key  # noqa: F401 (API)

PSEUDONYM_PREFIX = "redacted-"
_PSEUDONYM = re.compile(r"redacted-[0-9a-f]{16}")
#: Headers whose whole value is personal or a credential.
DEFAULT_HEADERS = ("Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie")
#: Header names that look like credentials, whatever the service calls them: any ``X-...-Key``
#: (X-Api-Key, X-Gateway-Key), any ``...-Token`` (X-Auth-Token, X-CSRF-Token), ``Api-Key`` and
#: ``ApiKey``. Redacted by default, with DEFAULT_HEADERS.
CREDENTIAL_HEADER_PATTERN = re.compile(r"x-.+-key|.+-token|x?-?api-?key", re.IGNORECASE)
#: Elements whose text is a credential in any message: a WS-Security UsernameToken's
#: Password (a phone's WSE client behind capture; PasswordText is the password itself).
CREDENTIAL_ELEMENTS = frozenset({"Password"})
#: What a credential header's value becomes in a report (Allure, JSON, JUnit, console).
REPORT_REDACTED = "[redacted]"
_credential_names = frozenset(name.lower() for name in DEFAULT_HEADERS)
#: The names of the headers this run's ``-H`` (or the config's ``headers``) adds to every
#: request (``add_credential_headers``): whatever they are called, their values are secrets.
_sent_names: set[str] = set()


#: Secrets the run was given (``add_report_secrets``): every ReportRedaction made after shows
#: them by their pseudonyms wherever they appear.
_given: dict[str, None] = {}


def add_report_secrets(values: Iterable[str]) -> None:
    """Treat ``values`` as secrets in every report of this process's run: ``-H`` and the
    config's header values, passwords, ``--values`` of sensitive parameters."""
    _given.update((v, None) for v in values if v)


def given_secrets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The secrets this process's run was given (``add_report_secrets``) and the names of its
    credential headers (``add_credential_headers``): what a worker process of the run is
    handed (``take_given_secrets``) so that its outputs show them by the same pseudonyms."""
    return tuple(_given), tuple(sorted(_sent_names))


def take_given_secrets(given: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
    """In a worker process: the run's secrets and credential header names (``given_secrets``
    of the process that started it)."""
    values, names = given
    add_report_secrets(values)
    add_credential_headers(names)


def passwords(auth: Any) -> list[str]:
    """The passwords of ``harness.traffic.auth.AuthOptions``, in clear: secrets of the run."""
    held = [getattr(auth, "password", None), getattr(auth, "cert_password", None),
            getattr(getattr(auth, "wsse", None), "password", None)]
    return [p.reveal() for p in held if p is not None]


def add_credential_headers(names: Iterable[str]) -> None:
    """Treat ``names`` (any case) as credential headers for the rest of the process: what
    ``-H`` or the config adds to every request is redacted wherever it shows (a target that
    echoes it, a report)."""
    _sent_names.update(name.lower() for name in names)


def is_credential_header(name: str, extra: Iterable[str] = ()) -> bool:
    """True for a header whose whole value is a credential or personal: DEFAULT_HEADERS, a
    name matching CREDENTIAL_HEADER_PATTERN, one of ``extra`` (lower-case names: what
    ``--redact`` names) or of the run's ``-H`` headers (``add_credential_headers``)."""
    low = name.lower()
    return (low in _credential_names or low in extra or low in _sent_names
            or CREDENTIAL_HEADER_PATTERN.fullmatch(low) is not None)


def redact_credentials(headers: Headers, extra: Iterable[str] = ()) -> Headers:
    """``headers`` with every credential header's value (``is_credential_header``; ``extra``
    names too, any case) replaced: what reports print (-H headers go on the wire only, and are
    redacted here should the target echo them). Recordings use ``Redactor`` (pseudonyms)."""
    names = frozenset(e.lower() for e in extra)
    if not any(is_credential_header(k, names) for k, _ in headers):
        return headers
    return tuple((k, REPORT_REDACTED if v and not is_pseudonym(v)  # a recording's face stays
                  and is_credential_header(k, names) else v) for k, v in headers)


#: Substring scrubbing (``ReportRedaction.text``) leaves alone secrets shorter than this: a
#: value of 1 to 3 characters would hit innocent text. (Where such a value sits in a
#: sensitive element, header or field, the structural redaction replaces it all the same.)
MIN_SCRUBBED = 4
#: Secrets a run hunts in free text, at most (the given ones first, then those met): memory
#: and the scrubbing's cost stay bounded in a long run. Beyond, a value is still replaced
#: where it sits in a sensitive element, field or header of a message.
MAX_SECRETS = 2000


class ReportRedaction:
    """One face for every secret of a run, in every output: its pseudonym under the run's key.

    A run's secrets are the values the contract marks sensitive (found in every message shown,
    by capture's own ``Redactor``, and noted), the values of credential headers (``-H``, the
    config's, Authorization, cookies...) and those given at the start (``add``: ``-H`` values,
    passwords, ``--values`` of sensitive parameters). Every message a report shows goes through
    ``message`` (structural redaction, credential headers by pseudonym, then every known secret
    wherever it is, e.g. echoed by the target under another name); every finding's words
    through ``text``. The key is the recording's for commands that read one (so a value reads
    as in the recording), ``--key-file``'s, or a key of the run's own that is never written.

    Picklable: worker processes get a copy, and hand what they met back (``learned``,
    ``merge``).
    """

    def __init__(self, contract: Contract | None, key: bytes) -> None:
        self.key = key
        #: Every secret met or given (at most MAX_SECRETS), in clear, and its pseudonym.
        self.secrets: dict[str, str] = {}
        self._fresh: dict[str, str] = {}
        self.redactor = (Redactor.for_contract(contract, key, learned=self.secrets)
                         if contract is not None else
                         Redactor(key, frozenset(), learned=self.secrets))
        self._reset()
        self.add(_given)

    def _reset(self) -> None:
        self._pattern: re.Pattern[str] | None = None
        self._forms: dict[str, str] = {}  # a form of a settled secret -> its pseudonym
        self._settled = 0  # secrets in _pattern
        self._pending: list[tuple[str, str]] = []  # (form, pseudonym) of the others
        self._seen = 0  # secrets when _pending was last brought up to date

    def __getstate__(self) -> dict[str, Any]:
        return {"key": self.key, "secrets": dict(self.secrets), "redactor": self.redactor}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.key, self.secrets, self._fresh = state["key"], state["secrets"], {}
        self.redactor = replace(state["redactor"], learned=self.secrets)
        self._reset()
        self._refresh()
        self._fresh = {}  # what the parent knows is nothing to hand back

    def add(self, values: Iterable[str]) -> None:
        """Treat each of ``values`` as a secret for the rest of the run."""
        for value in values:
            if (value and value not in self.secrets and not is_pseudonym(value)
                    and len(self.secrets) < MAX_SECRETS):
                self.secrets[value] = pseudonym(value, self.key)

    def merge(self, learned: dict[str, str]) -> None:
        """Secrets another process of the run met (``learned``)."""
        for value, made in learned.items():
            if value not in self.secrets and len(self.secrets) < MAX_SECRETS:
                self.secrets[value] = made

    def learned(self) -> dict[str, str]:
        """The secrets met since the last call (what a worker hands back to its parent)."""
        self._refresh()
        fresh, self._fresh = self._fresh, {}
        return fresh

    def pseudonym(self, value: str) -> str:
        """``value``'s one face in this run (noted as a secret); a pseudonym as it is."""
        if is_pseudonym(value):
            return value
        self.add([value])
        return self.secrets.get(value) or pseudonym(value, self.key)

    # -- messages ------------------------------------------------------------------------

    def message(self, message: HttpRequest | HttpResponse, operation: str | None = None
                ) -> HttpRequest | HttpResponse:
        """``message`` as a report shows it: the contract's sensitive values and credential
        headers by their pseudonyms (noted as secrets), then every known secret wherever it
        is. ``operation``: the one a response answers (its result, sensitive, is redacted in
        any form: text/plain, JSON)."""
        if isinstance(message, HttpRequest):
            message = self.redactor.request(message)
        else:
            message = self.redactor.response(message, operation=operation)
        headers = tuple((k, self.pseudonym(v) if v and is_credential_header(k) else v)
                        for k, v in message.headers)
        headers = tuple((k, self.text(v)) for k, v in headers)
        body = self._body(message.body)
        if isinstance(message, HttpRequest):
            return replace(message, url=self.text(message.url), headers=headers, body=body)
        return replace(message, headers=headers, body=body)

    def observe(self, request: HttpRequest | None, response: HttpResponse | None,
                operation: str | None = None) -> None:
        """Note the secrets of an exchange (before its findings are shown)."""
        if request is not None:
            self.message(request)
        if response is not None:
            self.message(response, operation)

    def _body(self, body: bytes) -> bytes:
        if not body or not self.secrets:
            return body
        text = body.decode("utf-8", "surrogateescape")
        scrubbed = self.text(text)
        return body if scrubbed == text else scrubbed.encode("utf-8", "surrogateescape")

    # -- words ---------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """``text`` with every known secret (in clear, XML-escaped or URL-encoded) replaced by
        its pseudonym; pseudonyms already there are left alone."""
        if not text or not self.secrets:
            return text
        self._refresh()
        if self._pattern is None and not self._pending:
            return text
        pieces = _PSEUDONYM.split(text)
        kept = _PSEUDONYM.findall(text)
        out = [self._scrubbed(piece) for piece in pieces]
        return "".join(piece + (kept[i] if i < len(kept) else "")
                       for i, piece in enumerate(out))

    def _scrubbed(self, piece: str) -> str:
        if self._pattern is not None:
            piece = self._pattern.sub(lambda m: self._forms[m.group(0)], piece)
        for form, made in self._pending:
            if form in piece:
                piece = piece.replace(form, made)
        return piece

    def _refresh(self) -> None:
        """Bring the forms up to date with the secrets: new ones wait in ``_pending`` (plain
        replacements), folded into the one pattern once they are a quarter of the settled
        ones (so the pattern is rebuilt a few dozen times at most in a run)."""
        count = len(self.secrets)
        if count == self._seen:
            return
        new = list(self.secrets.items())[self._seen:]
        self._seen = count
        self._fresh.update(new)
        if count - self._settled >= max(32, self._settled // 4):
            forms: dict[str, str] = {}
            for value, made in self.secrets.items():
                forms.update(_forms(value, made))
            self._forms, self._settled, self._pending = forms, count, []
            self._pattern = (re.compile("|".join(re.escape(f) for f in
                                                 sorted(forms, key=len, reverse=True)))
                             if forms else None)
            return
        for value, made in new:
            self._pending += _forms(value, made).items()
        self._pending.sort(key=lambda pair: len(pair[0]), reverse=True)


def _forms(value: str, made: str) -> dict[str, str]:
    """The forms a secret takes in a report's text (in clear, XML-escaped, URL-encoded)."""
    if len(value) < MIN_SCRUBBED:
        return {}
    return dict.fromkeys((value, html.escape(value, quote=False), html.escape(value),
                          quote_plus(value), quote(value, safe="")), made)


#: How reports of the current run show messages and words (``redacting_reports``).
_report_redaction: ReportRedaction | None = None


@contextlib.contextmanager
def redacting_reports(redaction: ReportRedaction | None) -> Iterator[None]:
    """Within this block, ``for_report`` shows every message through ``redaction`` (the run's
    one face for every secret) and ``report_redaction`` returns it."""
    global _report_redaction
    before, _report_redaction = _report_redaction, redaction
    try:
        yield
    finally:
        _report_redaction = before


def use_report_redaction(redaction: ReportRedaction | None) -> None:
    """Set the run's redaction for the rest of this process (a worker process of the run)."""
    global _report_redaction
    _report_redaction = redaction


def report_redaction() -> ReportRedaction | None:
    """The current run's ReportRedaction (None outside one)."""
    return _report_redaction


def shown_secret(value: str) -> str:
    """A secret as the current run's outputs show it: its pseudonym within a run
    (``redacting_reports``, ``use_report_redaction``), REPORT_REDACTED outside one."""
    redaction = _report_redaction
    return redaction.pseudonym(value) if redaction is not None else REPORT_REDACTED


def for_report(message: HttpRequest | HttpResponse, operation: str | None = None
               ) -> HttpRequest | HttpResponse:
    """``message`` as a report may show it: through the run's ReportRedaction (secrets by
    their pseudonyms); outside a run, credential headers as REPORT_REDACTED."""
    redaction = _report_redaction
    if redaction is not None:
        return redaction.message(message, operation)
    headers = redact_credentials(message.headers)
    return message if headers is message.headers else replace(message, headers=headers)


_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"
_PART_NAME = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)
_PART_HEAD_END = re.compile(rb"\r?\n\r?\n")


@lru_cache(maxsize=4096)
def pseudonym(value: str, key: bytes) -> str:
    # Memoised: the same phone numbers and device ids come back in call after call, and
    # capture's writer redacts every exchange.
    digest = hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:16]


def is_pseudonym(text: str | None) -> bool:
    """True for a value written by ``pseudonym``: comparisons treat it as 'any value'."""
    return bool(text) and _PSEUDONYM.fullmatch(text.strip()) is not None  # type: ignore[union-attr]


@dataclass(frozen=True)
class Redactor:
    """Rewrites HTTP messages so that no sensitive value reaches a recording."""

    key: bytes
    #: Parameter and element names (exact spelling) whose values are personal data.
    names: frozenset[str]
    #: Root element names of a bare result document (GET/POST) whose text is personal data.
    roots: frozenset[str] = frozenset()
    #: Header names (any case) whose whole value is replaced.
    headers: frozenset[str] = field(default_factory=lambda: frozenset(
        h.lower() for h in DEFAULT_HEADERS))
    #: Also replace every header whose name looks like a credential (CREDENTIAL_HEADER_PATTERN).
    credential_patterns: bool = True
    #: Operations whose result is sensitive: a successful answer to one of them that is not
    #: XML (text/plain, JSON, any charset) is itself the value (``response(operation=...)``).
    result_operations: frozenset[str] = frozenset()
    #: Where every value replaced is noted (value -> pseudonym), when given: a run's reports
    #: then show each of them by its pseudonym wherever else it appears (``ReportRedaction``).
    learned: dict[str, str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def for_contract(cls, contract: Contract, key: bytes, extra: Iterable[str] = (),
                     learned: dict[str, str] | None = None) -> Redactor:
        """The contract's sensitive names; ``extra`` names (parameters, elements or headers)
        are added to both the names and the headers. ``learned``: see the field."""
        extra = tuple(extra)
        roots = {op.result for op in contract.operations if op.result_sensitive and op.result}
        return cls(key, contract.sensitive_names() | frozenset(extra) | CREDENTIAL_ELEMENTS,
                   frozenset(roots),
                   frozenset([*(h.lower() for h in DEFAULT_HEADERS),
                              *(e.lower() for e in extra)]),
                   result_operations=frozenset(op.name for op in contract.operations
                                               if op.result_sensitive),
                   learned=learned)

    def settings(self) -> dict[str, Any]:
        """What the recording's header says about redaction (never the key)."""
        return {"names": sorted(self.names), "result_roots": sorted(self.roots),
                "result_operations": sorted(self.result_operations),
                "headers": sorted(self.headers),
                "header_patterns": ([CREDENTIAL_HEADER_PATTERN.pattern]
                                    if self.credential_patterns else []),
                "key_id": key_id(self.key)}

    def value(self, name: str, value: str) -> str:
        """``value`` as recorded under field ``name``: a pseudonym when the name is sensitive."""
        return self._pseudo(value) if name in self.names else value

    def arguments(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, self.value(name, value)) for name, value in pairs]

    # -- messages ------------------------------------------------------------------------

    def exchange(self, exchange: Exchange) -> Exchange:
        notes: list[str] = []
        request = self.request(exchange.request, notes=notes)
        response = (self.response(exchange.response, notes=notes,
                                  operation=exchange.meta.get("operation"))
                    if exchange.response else None)
        meta = {**exchange.meta, "redaction_dropped": notes} if notes else exchange.meta
        return replace(exchange, request=request, response=response, meta=meta)

    def request(self, request: HttpRequest, *, envelope: etree._Element | None = None,
                notes: list[str] | None = None) -> HttpRequest:
        """``request`` redacted. ``envelope`` is its body already parsed (by classification),
        so the body is not parsed twice."""
        url = request.url
        base, sep, query = url.partition("?")
        if sep:
            url = base + "?" + self._pairs(query)
        body = self._body(request.body, request.headers, envelope, notes, "request")
        headers = self._headers(request.headers, len(body) if body != request.body else None)
        if (url, headers, body) == (request.url, request.headers, request.body):
            return request
        return HttpRequest(request.method, url, headers, body, request.http_version)

    def response(self, response: HttpResponse, *, notes: list[str] | None = None,
                 operation: str | None = None) -> HttpResponse:
        """``response`` redacted; ``operation`` is the one its request was classified as: a
        successful answer of an operation whose result is sensitive is redacted whatever its
        form (XML, text/plain, JSON, any charset)."""
        whole = operation in self.result_operations and 200 <= response.status < 300
        body = self._body(response.body, response.headers, None, notes, "response", whole)
        headers = self._headers(response.headers, len(body) if body != response.body else None)
        if (headers, body) == (response.headers, response.body):
            return response
        return HttpResponse(response.status, headers, body, response.reason, response.http_version)

    def _headers(self, headers: Headers, length: int | None) -> Headers:
        """``headers`` with sensitive values replaced and Content-Length set to ``length``
        (unless None); the same tuple when nothing changes (most responses)."""
        out: list[tuple[str, str]] | None = None
        for at, (name, value) in enumerate(headers):
            low = name.lower()
            if value and (low in self.headers or (
                    self.credential_patterns and CREDENTIAL_HEADER_PATTERN.fullmatch(low))):
                value = self._pseudo(value)
            elif low == "content-length" and length is not None:
                value = str(length)
            else:
                continue
            if out is None:
                out = list(headers)
            out[at] = (name, value)
        return headers if out is None else tuple(out)

    def _body(self, body: bytes, headers: Headers, envelope: etree._Element | None,
              notes: list[str] | None, where: str, whole: bool = False) -> bytes:
        if not body:
            return body
        coding, content_type = _coding_and_type(headers)
        if coding and coding.lower() not in ("identity",):
            plain = _decode(body, coding)
            if plain is None:  # cannot be checked, so it cannot be written
                if notes is not None:
                    notes.append(f"{where} body in content coding {coding!r} could not be "
                                 "decoded to check it for personal data and was left out")
                return b""
            rest = tuple(h for h in headers if h[0].lower() != "content-encoding")
            redacted = self._body(plain, rest, None, notes, where, whole)
            return body if redacted == plain else _encode(redacted, coding)
        media = media_type(content_type)
        if media == _FORM:
            return self._form(body)
        if media == _MULTIPART:
            return self._multipart(body, content_type, notes, where)
        if media is not None and (media.endswith("/json") or media.endswith("+json")):
            return self._json(body, content_type, whole, notes, where)
        if whole and not _looks_like_xml(body, media):
            return self._text(body, content_type, notes, where)
        if where == "request" and b"=" in body and not _looks_like_xml(body, media):
            # Form pairs under no or another Content-Type (a client's slip, the ASMX matrix's
            # rows): a server may still read them, so they are redacted as a form's.
            return self._form(body)
        # Parsed already: look in the tree; else a regex search, far cheaper than parsing.
        if envelope is not None or self._mentions_names(body):
            return self._xml(body, envelope)
        return body

    # -- query strings and forms ------------------------------------------------------------

    def _pairs(self, encoded: str) -> str:
        """``a=1&phone=...``: sensitive values replaced, everything else byte for byte."""
        parts = encoded.split("&")
        for i, part in enumerate(parts):
            name, sep, value = part.partition("=")
            if not (sep and value):
                continue
            if (("%" in name or "+" in name) and unquote_plus(name, "replace") in self.names) \
                    or name in self.names:
                plain = unquote_plus(value, "replace")
                parts[i] = f"{name}={quote_plus(self._pseudo(plain))}"
        return "&".join(parts)

    def _form(self, body: bytes) -> bytes:
        text = body.decode("latin-1")  # URL-encoded: ASCII; latin-1 keeps any byte as it was
        return self._pairs(text).encode("latin-1")

    def _multipart(self, body: bytes, content_type: str | None, notes: list[str] | None,
                   where: str) -> bytes:
        """``multipart/form-data`` (a form POST a browser or the ASMX matrix sends): each
        part named sensitive has its content replaced, everything else byte for byte."""
        parsed = http_headers.parse_content_type(content_type or "")
        boundary = (parsed[2].get("boundary") or "").encode("latin-1") if parsed else b""
        if not boundary:
            if self._mentions_names_in_text(body):
                return _dropped(notes, f"{where} body (multipart without a boundary) could "
                                "not be parsed to redact it and was left out")
            return body
        parts = body.split(b"--" + boundary)
        for i, part in enumerate(parts):
            head_end = _PART_HEAD_END.search(part)
            name = _PART_NAME.search(part, 0, head_end.start()) if head_end else None
            if name is None or name.group(1).decode("latin-1") not in self.names:
                continue
            content = part[head_end.end():]
            tail = len(content) - len(content.rstrip(b"\r\n"))
            value = content[:len(content) - tail].decode("utf-8", "replace")
            if not value:
                continue
            parts[i] = (part[:head_end.end()] + pseudonym(value, self.key).encode("ascii")
                        + content[len(content) - tail:])
        return (b"--" + boundary).join(parts)

    # -- text and JSON ------------------------------------------------------------------------

    def _text(self, body: bytes, content_type: str | None, notes: list[str] | None,
              where: str) -> bytes:
        """A sensitive result answered as text (spyne's text/plain over GET/POST): the whole
        text, in the body's charset, becomes its pseudonym."""
        charset = _charset(body, content_type)
        try:
            text = body.decode(charset)
        except (LookupError, UnicodeDecodeError):
            return _dropped(notes, f"{where} body (a sensitive result) in charset {charset!r} "
                            "could not be decoded to redact it and was left out")
        text = text.lstrip("\ufeff").strip()
        return self._pseudo(text).encode(charset) if text else body

    def _json(self, body: bytes, content_type: str | None, whole: bool,
              notes: list[str] | None, where: str) -> bytes:
        """JSON: the value of every sensitive member (any depth) becomes its pseudonym; for a
        sensitive result (``whole``), every string and number in it."""
        charset = _charset(body, content_type)
        try:
            data = json.loads(body.decode(charset).lstrip("\ufeff"))
        except (LookupError, UnicodeDecodeError, ValueError, RecursionError):
            if whole or self._mentions_names_in_text(body):
                return _dropped(notes, f"{where} body (JSON) could not be parsed to redact it "
                                "and was left out")
            return body
        changed = [False]

        def walk(node: Any, hidden: bool) -> Any:
            if isinstance(node, dict):
                return {k: walk(v, hidden or k in self.names) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v, hidden) for v in node]
            if hidden and isinstance(node, (str, int, float)) and not isinstance(node, bool) \
                    and node != "":
                changed[0] = True
                return self._pseudo(str(node))
            return node

        redacted = walk(data, whole)
        if not changed[0]:
            return body
        return json.dumps(redacted, ensure_ascii=False).encode(charset)

    def _mentions_names_in_text(self, body: bytes) -> bool:
        return any(n.encode("utf-8") in body for n in self.names)

    # -- XML --------------------------------------------------------------------------------

    @cached_property
    def _tag_search(self) -> re.Pattern[bytes]:
        # Starts with a literal "<", which the regex engine scans for quickly: a third of the
        # time of "[<:]name", which tried the names at every ":" of the namespace URIs too.
        names = b"|".join(re.escape(n.encode("utf-8")) for n in sorted(self.names | self.roots))
        return re.compile(rb"<(?:[^\s<>/:]+:)?(?:" + names + rb")[\s/>]")

    @cached_property
    def _any_namespace(self) -> tuple[str, ...]:
        """The sensitive names as lxml tag filters that match them in any namespace or none."""
        return tuple(f"{{*}}{name}" for name in sorted(self.names) if name)

    def _mentions_names(self, body: bytes) -> bool:
        """Cheap test before parsing: could ``body`` hold a sensitive element at all?"""
        head = body[:4]
        if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
            return True  # UTF-16/32: names are not visible as bytes; parse to know
        return self._tag_search.search(body) is not None

    def _xml(self, body: bytes, root: etree._Element | None) -> bytes:
        if root is None:
            try:
                root = parse_xml(body)
            except XMLRejected:
                if b"<" in body[:64] and self._mentions_names(body):
                    # Broken XML (or an encoding libxml2 does not name, such as "latin-1")
                    # with sensitive names: rewrite the spans we can see, result roots too.
                    return _rewrite_spans(body, self._span_pattern(self.names | self.roots),
                                          self._pseudo)
                return body
        root_name = _local(root.tag) if isinstance(root.tag, str) else ""
        targets = [root] if (root.text and root_name in self.roots
                             and root_name not in self.names) else []
        if self._any_namespace:  # (no filter at all would mean every element)
            targets += [e for e in root.iter(*self._any_namespace) if e.text]  # filtered in C
        if not targets:
            return body
        names = frozenset([_local(e.tag) for e in targets])
        encoding = "utf-8" if utf8_by_its_start(body) else (
            root.getroottree().docinfo.encoding or "utf-8").lower()
        if encoding in ("utf-8", "utf8", "us-ascii", "ascii"):
            expected = [e.text or "" for e in targets]
            found: list[str] = []

            def rewrite(text: str) -> str:
                found.append(_normalise(text))
                return self._pseudo(found[-1])

            rewritten = _rewrite_spans(body, self._span_pattern(names), rewrite)
            if found == expected:
                return rewritten
        for element in targets:  # the careful path failed: rewrite the tree
            element.text = self._pseudo(element.text or "")
        return _serialise(root, body)

    def _pseudo(self, text: str) -> str:
        """``text``'s pseudonym (an empty text, or one that is a pseudonym already, as it is),
        noted in ``learned`` when the Redactor keeps one."""
        if not text or is_pseudonym(text):
            return text
        made = pseudonym(text, self.key)
        if self.learned is not None and len(self.learned) < MAX_SECRETS:
            self.learned.setdefault(text, made)
        return made

    def _span_pattern(self, names: frozenset[str]) -> re.Pattern[bytes]:
        cached = _SPANS.get(names)
        if cached is None:
            cached = _SPANS[names] = _span_regex(tuple(sorted(names)))
        return cached


def _looks_like_xml(body: bytes, media: str | None) -> bool:
    if media is not None and (media.endswith("/xml") or media.endswith("+xml")):
        return True
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"<") or head.startswith((b"\xff\xfe<", b"\xfe\xff\x00<"))


def _charset(body: bytes, content_type: str | None) -> str:
    """The charset a text body is in: its BOM, else the Content-Type's, else UTF-8."""
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    return content_type_params(content_type).get("charset") or "utf-8"


def _dropped(notes: list[str] | None, note: str) -> bytes:
    if notes is not None:
        notes.append(note)
    return b""


def _span_regex(names: tuple[str, ...]) -> re.Pattern[bytes]:
    alternatives = b"|".join(re.escape(n.encode("utf-8")) for n in names)
    return re.compile(rb"(<((?:[\w.-]+:)?(?:" + alternatives + rb"))(?:\s[^<>]*)?>)"
                      rb"([^<]*)(</\2\s*>)")


#: Span patterns by the set of names they find (few sets: one per operation, roughly).
_SPANS: dict[frozenset[str], re.Pattern[bytes]] = {}


def _rewrite_spans(body: bytes, pattern: re.Pattern[bytes], rewrite) -> bytes:
    """Each ``<name ...>text</name>`` span with its text (unescaped) passed through ``rewrite``;
    pseudonyms are plain ASCII letters, digits and '-', so they need no escaping."""
    def one(match: re.Match[bytes]) -> bytes:
        raw = match.group(3)
        if not raw:
            return match.group(0)
        text = html.unescape(raw.decode("utf-8", "replace"))
        return match.group(1) + rewrite(text).encode("utf-8") + match.group(4)

    return pattern.sub(one, body)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]  # "{ns}name" -> "name", without building a QName


def _normalise(text: str) -> str:
    # XML parsers turn CR LF into LF; compare the raw span the way the parser saw it.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _serialise(root: etree._Element, original: bytes) -> bytes:
    docinfo = root.getroottree().docinfo
    declared = original.lstrip().startswith((b"<?xml", b"\xef\xbb\xbf<?xml"))
    return etree.tostring(root.getroottree(), encoding=docinfo.encoding or "utf-8",
                          xml_declaration=declared, standalone=docinfo.standalone)


def _coding_and_type(headers: Headers) -> tuple[str | None, str | None]:
    """The first Content-Encoding and the first Content-Type of ``headers``, in one pass."""
    coding = content_type = None
    for name, value in headers:
        low = name.lower()
        if low == "content-encoding":
            coding = value if coding is None else coding
        elif low == "content-type":
            content_type = value if content_type is None else content_type
    return coding, content_type


#: A coded body that decodes to more than this is not decoded (a gzip bomb must not take the
#: capture writer's memory): it cannot be checked, so it is left out, and said.
MAX_DECODED_BYTES = 64 * 1024 * 1024


def _decode(body: bytes, coding: str) -> bytes | None:
    from harness.traffic.send import DECODING_ERRORS, decoded_pieces

    pieces, decoded = decoded_pieces(coding, iter((body,)))
    if decoded:  # gzip, deflate, br: piece by piece, within MAX_DECODED_BYTES
        out, size = [], 0
        try:
            for piece in pieces:
                size += len(piece)
                if size > MAX_DECODED_BYTES:
                    return None
                out.append(piece)
        except DECODING_ERRORS:
            return None
        return b"".join(out)
    try:
        decoded_body = content_coding.decode(body, coding.strip().lower())
    except ValueError:
        return None
    return decoded_body if isinstance(decoded_body, bytes) else None


def _encode(body: bytes, coding: str) -> bytes:
    encoded = content_coding.encode(body, coding.strip().lower())
    return encoded if isinstance(encoded, bytes) else body
