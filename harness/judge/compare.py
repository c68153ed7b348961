"""The one comparison of two HTTP responses: replay (recorded vs new), diff (primary vs
candidate) and certify's recorded traffic (through replay) all use it.

Every difference is said in words (``Difference.summary``) beside its exact values. What is
compared, in this order:

- the outcome: a result on one side and an error on the other (a SOAP fault, an HTTP error) is
  ONE difference naming the error (fault code and its reason's first line); nothing else is
  compared then, as every other difference would only restate it;
- the status, the Content-Type (media type and charset);
- the body, by what it is. Two SOAP envelopes: their version (a SOAP 1.1 envelope where SOAP 1.2
  is expected is one difference; the rest is compared as if the versions matched), their header
  blocks, their faults by code (version-neutral; the reason and detail are prose: warnings only),
  their payloads. Two WSDLs as contracts (``harness.judge.compare_wsdl``). A text/plain answer
  against an XML document holding one value, by the value: the form is the difference, named on
  the Content-Type. Other XML structurally, other bodies byte for byte.

XML is aligned by namespace and local name, never by position: same-named siblings (arrays) are
compared in order, a sibling missing on one side is named as missing. Prefixes, whitespace-only
text, the XML declaration and attribute order do not matter, nor the prefix of a QName value such
as ``soap:Client``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from lxml import etree

from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.errors import XMLRejected
from harness.traffic.exchange import (
    HttpResponse,
    content_type_params,
    media_type,
    normalise_content_type,
)
from harness.traffic.redaction import is_pseudonym

#: How an absent Content-Type is written, in every command.
NO_CONTENT_TYPE = "no Content-Type"
SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
SOAP_VERSIONS = {SOAP11_NS: "SOAP 1.1", SOAP12_NS: "SOAP 1.2"}
WSDL_NS = "http://schemas.xmlsoap.org/wsdl/"
#: SOAP 1.2 fault codes by their SOAP 1.1 name: compared across versions by meaning.
_SOAP12_CODES = {"Client": "Sender", "Server": "Receiver"}
_QNAME = re.compile(r"([A-Za-z_][\w.-]*):([A-Za-z_][\w.-]*)")
#: Longest first line of an error (fault reason, text/plain message) quoted in a summary.
_CAUSE_CHARS = 160


@dataclass(frozen=True)
class Difference:
    """One way the actual response differs from the expected one.

    ``summary`` is the difference in words, without the values of one call where it can be
    (no argument, no operation name): the cause text under which the findings of many calls
    are grouped, e.g. "SOAP 1.2 answered with a SOAP 1.1 envelope", "faultcode
    VersionMismatch vs Client, Upgrade header missing", "soap12 binding missing". ``expected``
    and ``actual`` are the exact values, ``path`` where they sit (element path by local names,
    e.g. /Envelope/Body/XResponse/XResult; "" for the HTTP status and headers).
    """

    #: What differs: outcome (a result vs an error) | status | content-type | body | element |
    #: attribute | text | missing | extra | order | wsdl (noise is learned by kind and path)
    kind: str
    path: str
    expected: str | None
    actual: str | None
    warning: bool = False
    summary: str = ""

    @property
    def aspect(self) -> str:
        """The aspect of the answer it belongs to, which diff's and replay's rule IDs follow:
        status (an outcome too), content-type or body."""
        return _ASPECTS.get(self.kind, "body")

    @property
    def prose(self) -> bool:
        """A difference of human prose (a fault's reason or detail, an error message): never
        more than a warning."""
        return self.warning and ("/Fault/" in self.path or self.kind == "body")

    def describe(self) -> str:
        """One line: the summary, where, and the exact values."""
        where = f" at {self.path}" if self.path else ""
        if self.summary and all(str(v) in self.summary for v in (self.expected, self.actual)):
            return f"{self.summary}{where}"  # the summary names both values already
        return f"{self.summary or self.kind}{where}: expected {_shown(self.expected)}, " \
               f"actual {_shown(self.actual)}"


    def shown(self) -> tuple[str, str]:
        """(expected, actual) as a finding shows them: an absent value said as such, and
        where the values sit when they sit in the body."""
        where = f" (at {self.path})" if self.path else ""
        return tuple(f"{'(none)' if v is None else v}{where}"  # type: ignore[return-value]
                     for v in (self.expected, self.actual))


_ASPECTS = {"outcome": "status", "status": "status", "content-type": "content-type"}


def _shown(value: str | None) -> str:
    return "nothing" if value is None else repr(value)


def compare_responses(expected: HttpResponse, actual: HttpResponse, *,
                      ignore: Iterable[str] = (),
                      wildcard: Callable[[str | None], bool] = is_pseudonym,
                      actual_document: etree._Element | None = None) -> list[Difference]:
    """Differences of ``actual`` from ``expected``; empty when they match.

    ``ignore`` holds element path patterns (fnmatch, e.g. ``*/Timestamp``) whose subtree is not
    compared; ``wildcard`` tells expected text that matches any actual text (a pseudonym);
    ``actual_document`` is ``actual``'s body already parsed (replay's rules read it), so it is
    not parsed twice.
    """
    exp_raw, act_raw = expected.content_type, actual.content_type
    if (expected.status == actual.status and exp_raw == act_raw
            and expected.body == actual.body):  # the same answer: nothing to parse (replay)
        return []
    exp, act = _Side(expected), _Side(actual, actual_document)
    if exp.failed != act.failed:
        return [_outcome_difference(exp, act)]
    diffs: list[Difference] = []
    if expected.status != actual.status:
        summary = f"HTTP status {expected.status} expected, {actual.status} given"
        if exp.failed and exp.fault is None and act.fault is None:
            # two errors of different kinds: their bodies and types differ by consequence
            return [Difference("outcome", "", exp.outcome(), act.outcome(), summary=summary)]
        diffs.append(Difference("status", "", str(expected.status), str(actual.status),
                                summary=summary))
    typed = None
    if exp_raw != act_raw:  # the same text normalises alike
        exp_type = normalise_content_type(exp_raw) or NO_CONTENT_TYPE
        act_type = normalise_content_type(act_raw) or NO_CONTENT_TYPE
        if exp_type != act_type:
            typed = Difference("content-type", "", exp_type, act_type,
                               summary=_typed_summary(exp_type, act_type))
    body = _compare_bodies(exp, act, tuple(ignore), wildcard)
    form = next((d for d in body if d.kind == "form"), None)
    if form is not None:  # the same value in another form: the form is the difference
        body.remove(form)
        typed = replace(typed, summary=form.summary) if typed else replace(form, kind="body")
    if typed is not None:
        diffs.append(typed)
    return diffs + body


def _typed_summary(expected: str, actual: str) -> str:
    if expected == NO_CONTENT_TYPE:
        return f"Content-Type {actual} where none is expected"
    if actual == NO_CONTENT_TYPE:
        return f"{NO_CONTENT_TYPE} where {expected} is expected"
    return f"Content-Type {expected} expected, {actual} given"


def compare_bodies(expected: HttpResponse, actual: HttpResponse, *, ignore: tuple[str, ...] = (),
                   wildcard: Callable[[str | None], bool] = is_pseudonym,
                   actual_document: etree._Element | None = None) -> list[Difference]:
    """The bodies' differences alone (see ``compare_responses``)."""
    if expected.body == actual.body:
        return []
    return _compare_bodies(_Side(expected), _Side(actual, actual_document), ignore, wildcard)


# ------------------------------------------------------------------------- one response


class _Side:
    """One response as compared: its body parsed once, when it is XML and only when needed."""

    def __init__(self, response: HttpResponse, document: etree._Element | None = None) -> None:
        self.response = response
        self.media = media_type(response.content_type) or ""
        self.stripped = response.body.strip()
        self._document = document
        self._parsed = document is not None
        #: Why the body, which looks like XML, could not be read (None when it could).
        self.problem: str | None = None

    @property
    def xmlish(self) -> bool:
        return bool(self.stripped) and (self.media.endswith("xml")
                                        or self.stripped.startswith(b"<"))

    @property
    def document(self) -> etree._Element | None:
        if not self._parsed:
            self._parsed = True
            if self.xmlish:
                try:
                    self._document = parse_xml(self.response.body)
                except XMLRejected as exc:
                    self.problem = str(exc)
        return self._document

    @property
    def envelope(self) -> str | None:
        """The SOAP version of an envelope body ("SOAP 1.1"), None for any other body."""
        doc = self.document
        if doc is None or local_name(doc) != "Envelope":
            return None
        return SOAP_VERSIONS.get(namespace(doc) or "")

    @property
    def fault(self) -> etree._Element | None:
        doc = self.document
        if doc is None or self.envelope is None:
            return None
        body = _child(doc, "Body")
        payload = element_children(body)[:1] if body is not None else []
        return payload[0] if payload and local_name(payload[0]) == "Fault" else None

    @property
    def failed(self) -> bool:
        """An error answer: an HTTP error status or a SOAP fault."""
        return self.response.status >= 400 or self.fault is not None

    def error(self) -> tuple[str, str]:
        """The error in a few words and its cause, as R4-STATUS words a failed call:
        ("Server fault", the reason's first line), or ("HTTP 500", a text/plain message's
        first line or "")."""
        fault = self.fault
        if fault is not None:
            return f"{_local(_fault_code(fault)) or 'no code'} fault", \
                _fault_reason(fault) or ""
        text = self.text() if self.media == "text/plain" and self.stripped else ""
        return f"HTTP {self.response.status}", _first_line(text)

    def outcome(self) -> str:
        """What the answer is, for expected/actual: "HTTP 500: Server fault: <reason>",
        "HTTP 200: a SOAP 1.1 envelope with <XResponse>"."""
        if not self.failed:
            return f"HTTP {self.response.status}: {self.form()}"
        head, cause = self.error()
        if self.fault is not None:
            head = f"HTTP {self.response.status}: {head}"
        return f"{head}: {cause}" if cause else head

    def form(self) -> str:
        """The body's form in words: "a SOAP 1.1 envelope", "an XML <string> document"..."""
        if not self.stripped:
            return "an empty body"
        doc = self.document
        if doc is not None:
            if self.envelope:
                body = _child(doc, "Body")
                payload = element_children(body)[:1] if body is not None else []
                return f"a {self.envelope} envelope" + (
                    f" with <{local_name(payload[0])}>" if payload else "")
            return f"an XML <{local_name(doc)}> document"
        if self.xmlish:
            return "unreadable XML"
        return f"a {self.media} body" if self.media else "a body of no Content-Type"

    def text(self) -> str:
        charset = content_type_params(self.response.content_type).get("charset") or "utf-8"
        try:
            return self.response.body.decode(charset, "replace")
        except LookupError:  # an unknown charset
            return self.response.body.decode("utf-8", "replace")


def _outcome_difference(exp: _Side, act: _Side) -> Difference:
    """A result on one side, an error on the other: the one difference, naming the error."""
    kind = "outcome"
    error = act if act.failed else exp
    head, cause = error.error()
    summary = f"{head} instead of a result" if act.failed else f"a result instead of {head}"
    if cause and error.fault is not None:  # an HTTP error's text names the call: left out
        summary = f"{summary}: {cause}"
    return Difference(kind, "", exp.outcome(), act.outcome(), summary=summary)


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.strip().splitlines() if s.strip()), "")
    return line if len(line) <= _CAUSE_CHARS else line[:_CAUSE_CHARS] + "..."


# ------------------------------------------------------------------------------ bodies


def _compare_bodies(exp: _Side, act: _Side, ignore: tuple[str, ...],
                    wildcard: Callable[[str | None], bool]) -> list[Difference]:
    if exp.response.body == act.response.body:
        return []
    if not exp.stripped and not act.stripped:
        return []
    exp_doc = exp.document if exp.xmlish else None
    act_doc = act.document if act.xmlish else None
    if exp_doc is not None and act_doc is not None:
        return _compare_documents(exp_doc, act_doc, exp.response, act.response, ignore,
                                  wildcard)
    if exp.problem or act.problem:
        return [_unreadable(exp, act)]
    if exp_doc is not None or act_doc is not None:
        xml, text = (exp, act) if exp_doc is not None else (act, exp)
        if text.stripped and not text.xmlish and xml.envelope is None:
            return _compare_value(exp, act, xml, text, ignore, wildcard)
        return [Difference("body", "", _short(exp.response.body), _short(act.response.body),
                           summary=f"{exp.form()} expected, {act.form()} given")]
    if exp.stripped == act.stripped:
        return []
    # Two error messages (text/plain, an HTML page) are prose, like a fault reason.
    prose = exp.response.status >= 400 and act.response.status >= 400
    summary = "error message differs" if prose else "body differs"
    return [Difference("body", "", _short(exp.response.body), _short(act.response.body),
                       warning=prose, summary=summary)]


def _unreadable(exp: _Side, act: _Side) -> Difference:
    """A body that looks like XML but cannot be read, pinned on the side that has it."""
    expected, actual = _short(exp.response.body), _short(act.response.body)
    if exp.problem and act.problem:
        return Difference("body", "", f"{expected} ({exp.problem})", f"{actual} ({act.problem})",
                          summary="neither answer is well-formed XML, and they differ")
    if exp.problem:
        return Difference("body", "", f"{expected} ({exp.problem})", actual,
                          summary="the expected answer is not well-formed XML")
    return Difference("body", "", expected, f"{actual} ({act.problem})",
                      summary="the answer is not well-formed XML")


def _compare_value(exp: _Side, act: _Side, xml: _Side, text: _Side, ignore: tuple[str, ...],
                   wildcard: Callable[[str | None], bool]) -> list[Difference]:
    """An XML document against a text body (ASMX's ``<string>`` document against a
    text/plain answer): compared by value when the document holds one; the form is the
    difference either way (named on the Content-Type)."""
    doc = xml.document
    assert doc is not None
    form = Difference("form", "", None, None,
                      summary=f"answer form: {exp.form()} expected, {act.form()} given")
    if element_children(doc):  # a structure, not one value
        return [form, Difference("body", "", _short(exp.response.body),
                                 _short(act.response.body),
                                 summary=f"{exp.form()} expected, {act.form()} given")]
    path = f"/{local_name(doc)}"
    value, other = (doc.text or "").strip(), text.text().strip()
    if value == other or ignored_path(path, ignore):
        return [replace(form, summary=form.summary + " (the same value)")]
    if xml is exp and wildcard(doc.text):
        return [form]
    expected, actual = (value, other) if xml is exp else (other, value)
    return [form, Difference("text", path, expected, actual,
                             summary=f"value differs ({exp.form()} vs {act.form()})")]


def _short(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------------------ XML


def _compare_documents(exp: etree._Element, act: etree._Element, exp_response: HttpResponse,
                       act_response: HttpResponse, ignore: tuple[str, ...],
                       wildcard: Callable[[str | None], bool]) -> list[Difference]:
    if exp.tag == act.tag == f"{{{WSDL_NS}}}definitions":
        from harness.judge.compare_wsdl import compare_wsdls

        found = compare_wsdls(exp_response.body, act_response.body)
        if found is not None:
            return [d for d in found if not ignored_path(d.path, ignore)]
    out: list[Difference] = []
    _Walk(ignore, wildcard, out).documents(exp, act)
    return out


class _Walk:
    """One comparison of two XML documents, element by element, aligned by names."""

    def __init__(self, ignore: tuple[str, ...], wildcard: Callable[[str | None], bool],
                 out: list[Difference]) -> None:
        self.ignore, self.wildcard, self.out = ignore, wildcard, out
        #: Actual namespace -> the expected one it stands for (the other SOAP version's
        #: envelope, a payload in another namespace): said once, then compared as equal.
        self.renamed: dict[str, str] = {}
        self.soap = False

    def documents(self, exp: etree._Element, act: etree._Element) -> None:
        exp_ns, act_ns = namespace(exp) or "", namespace(act) or ""
        self.soap = local_name(exp) == local_name(act) == "Envelope" and (
            exp_ns in SOAP_VERSIONS or act_ns in SOAP_VERSIONS)
        if self.soap and exp_ns != act_ns:
            exp_v, act_v = SOAP_VERSIONS.get(exp_ns, exp_ns), SOAP_VERSIONS.get(act_ns, act_ns)
            self.out.append(Difference(
                "element", "/Envelope", f"{exp_v} envelope ({exp_ns})",
                f"{act_v} envelope ({act_ns})",
                summary=f"{exp_v} answered with a {act_v} envelope"))
            self.renamed[act_ns] = exp_ns
        if self._key(act) != exp.tag:
            if local_name(exp) != local_name(act):
                self.out.append(Difference(
                    "element", f"/{local_name(exp)}", _tag(exp), _tag(act),
                    summary=f"document root <{local_name(exp)}> expected, "
                            f"<{local_name(act)}> given"))
                return
            self._namespace(exp, act, f"/{local_name(exp)}")
        self.element(exp, act, "")
        if self.soap:
            self._upgrade_with_fault_code()

    # -- one element and its children

    def element(self, exp: etree._Element, act: etree._Element, parent: str,
                prose: bool = False) -> None:
        name = local_name(exp)
        path = f"{parent}/{name}"
        if self.ignore and ignored_path(path, self.ignore):
            return
        if self.soap and name == "Fault" and parent == "/Envelope/Body":
            self.fault(exp, act, path)
            return
        exp_attrs, act_attrs = dict(exp.attrib), dict(act.attrib)
        if exp_attrs != act_attrs:
            self.out.append(Difference("attribute", path, _attrs(exp_attrs), _attrs(act_attrs),
                                       prose, f"attributes of {_role(path)} differ"))
        exp_text, act_text = _text_value(exp), _text_value(act)
        if exp_text != act_text and not self.wildcard(exp.text):
            self.out.append(Difference("text", path, exp_text, act_text, prose,
                                       f"value of {_role(path)} differs"))
        self.children(exp, act, path, prose)

    def children(self, exp: etree._Element, act: etree._Element, path: str,
                 prose: bool) -> None:
        exp_kids, act_kids = element_children(exp), element_children(act)
        exp_tags = [e.tag for e in exp_kids]
        act_tags = [self._key(a) for a in act_kids]
        if exp_tags == act_tags:  # the usual case: the same elements in the same order
            for e, a in zip(exp_kids, act_kids, strict=True):
                self.element(e, a, path, prose)
            return
        pairs, missing, extra = _align(exp_kids, exp_tags, act_kids, act_tags)
        if not missing and not extra:
            self.out.append(Difference(
                "order", path, " ".join(local_name(e) for e in exp_kids),
                " ".join(local_name(a) for a in act_kids), prose,
                f"elements of {_role(path)} in another order"))
        missing, extra = self._matched_leftovers(missing, extra, path, pairs)
        for e, a in pairs:
            self.element(e, a, path, prose)
        for e in missing:
            self._presence("missing", e, path, prose)
        for a in extra:
            self._presence("extra", a, path, prose)

    def _matched_leftovers(self, missing: list[etree._Element], extra: list[etree._Element],
                           path: str, pairs: list[tuple[etree._Element, etree._Element]]
                           ) -> tuple[list[etree._Element], list[etree._Element]]:
        """Leftovers that are one element under another name: the same local name in another
        namespace (said, then compared as equal), or the one missing and the one extra
        element at this level (another name, not compared further)."""
        by_local = {local_name(a): a for a in extra}
        for e in list(missing):
            a = by_local.get(local_name(e))
            if a is not None and a in extra:
                self._namespace(e, a, f"{path}/{local_name(e)}")
                pairs.append((e, a))
                missing.remove(e)
                extra.remove(a)
        if len(missing) == 1 and len(extra) == 1 and not (
                self.soap and path == "/Envelope/Header"):
            e, a = missing[0], extra[0]
            at = f"{path}/{local_name(e)}"
            if not ignored_path(at, self.ignore):
                self.out.append(Difference("element", at, _tag(e), _tag(a),
                                           summary=f"{_role(at)} has another name"))
            return [], []
        return missing, extra

    def _namespace(self, exp: etree._Element, act: etree._Element, path: str) -> None:
        exp_ns, act_ns = namespace(exp) or "", namespace(act) or ""
        self.out.append(Difference(
            "element", path, _tag(exp), _tag(act),
            summary=f"namespace of {_role(path)}: {exp_ns or 'none'} expected, "
                    f"{act_ns or 'none'} given"))
        self.renamed[act_ns] = exp_ns

    def _presence(self, kind: str, element: etree._Element, parent: str, prose: bool) -> None:
        path = f"{parent}/{local_name(element)}"
        if ignored_path(path, self.ignore):  # also when only one side has it
            return
        if self.soap and path == "/Envelope/Header":
            # The header blocks are what a client reads, not the Header element: an empty
            # Header is none; each block missing or extra is named.
            for block in element_children(element):
                self._presence(kind, block, path, prose)
            return
        warning = prose or (kind == "extra" and self.soap and parent == "/Envelope/Header"
                            and not _must_understand(element))
        role = _role(path)
        summary = f"{role} missing" if kind == "missing" else \
            f"unexpected {role.removeprefix('the ')}"
        value = _tag(element)
        self.out.append(Difference(kind, path, value if kind == "missing" else None,
                                   value if kind == "extra" else None, warning, summary))

    def _key(self, element: etree._Element) -> str:
        """An actual element's tag with a renamed namespace read as the expected one."""
        tag = element.tag
        if self.renamed and tag[:1] == "{":
            ns = tag[1:tag.index("}")]
            if ns in self.renamed:
                return f"{{{self.renamed[ns]}}}{tag[tag.index('}') + 1:]}"
        return tag

    # -- SOAP faults

    def fault(self, exp: etree._Element, act: etree._Element, path: str) -> None:
        """Two faults by meaning: the code (SOAP 1.1 and 1.2 names alike), then the reason,
        detail and actor as prose (warnings)."""
        exp_code, act_code = _fault_code(exp), _fault_code(act)
        code_path = f"{path}/{'faultcode' if _child(exp, 'faultcode') is not None else 'Code'}"
        if (_neutral(exp, exp_code) != _neutral(act, act_code)
                and not ignored_path(code_path, self.ignore)):
            self.out.append(Difference(
                "text", code_path, exp_code, act_code,
                summary=f"faultcode {_local(exp_code) or '(none)'} vs "
                        f"{_local(act_code) or '(none)'}"))
        exp_reason, act_reason = _fault_reason(exp, whole=True), _fault_reason(act, whole=True)
        spelled = "faultstring" if _child(exp, "faultstring") is not None else "Reason"
        reason_path = f"{path}/{spelled}"
        if exp_reason != act_reason and not self.wildcard(exp_reason) and not ignored_path(
                reason_path, self.ignore):
            self.out.append(Difference("text", reason_path, exp_reason, act_reason, True,
                                       "fault reason differs (prose)"))
        for names in (("detail", "Detail"), ("faultactor", "Role"), ("Node",)):
            e, a = _child(exp, *names), _child(act, *names)
            if e is not None and a is not None:
                self.element(e, a, path, prose=True)
            elif e is not None or a is not None:
                self._presence("missing" if e is not None else "extra",
                               e if e is not None else a, path, True)  # type: ignore[arg-type]

    def _upgrade_with_fault_code(self) -> None:
        """A VersionMismatch fault names the envelopes it takes in an Upgrade header (SOAP
        1.2, part 1, 5.4.7): a missing one is said with a differing fault code, as one cause."""
        upgrade = next((d for d in self.out if d.kind == "missing"
                        and d.path == "/Envelope/Header/Upgrade"), None)
        code = next((d for d in self.out if d.summary.startswith("faultcode ")), None)
        if upgrade is not None and code is not None:
            self.out[self.out.index(code)] = replace(
                code, summary=f"{code.summary}, Upgrade header missing")
            self.out.remove(upgrade)


# ------------------------------------------------------------------------ helpers


def _align(exp_kids: list[etree._Element], exp_tags: list[str], act_kids: list[etree._Element],
           act_tags: list[str]) -> tuple[list[tuple[etree._Element, etree._Element]],
                                         list[etree._Element], list[etree._Element]]:
    """Children paired by tag (the n-th of a name with the n-th of that name), in the
    expected order; the expected ones without a partner, the actual ones without one."""
    by_tag: dict[str, list[etree._Element]] = {}
    for tag, a in zip(act_tags, act_kids, strict=True):
        by_tag.setdefault(tag, []).append(a)
    used: dict[str, int] = {}
    pairs, missing = [], []
    for tag, e in zip(exp_tags, exp_kids, strict=True):
        n = used.get(tag, 0)
        same = by_tag.get(tag, ())
        if n < len(same):
            pairs.append((e, same[n]))
            used[tag] = n + 1
        else:
            missing.append(e)
    seen: dict[str, int] = {}
    extra = []
    for tag, a in zip(act_tags, act_kids, strict=True):
        seen[tag] = seen.get(tag, 0) + 1
        if seen[tag] > used.get(tag, 0):
            extra.append(a)
    return pairs, missing, extra


def _role(path: str) -> str:
    """Where ``path`` is, in words that hold for every operation and binding: "the response
    element", "the result" (<X>Result in SOAP, the document of HTTP GET/POST), "the Upgrade
    header", "the fault's detail", "<Name> in the result"."""
    parts = path.strip("/").split("/")
    if parts[0] != "Envelope":  # an HTTP GET/POST answer: its document is the result
        return "the result" if len(parts) == 1 else f"<{parts[-1]}> in the result"
    if len(parts) == 1:
        return "the envelope"
    if parts[1] == "Header":
        return "the SOAP Header" if len(parts) == 2 else (
            f"the {parts[2]} header" if len(parts) == 3 else f"<{parts[-1]}> in the "
                                                               f"{parts[2]} header")
    if parts[1] != "Body":
        return f"<{parts[-1]}> in the envelope"
    if len(parts) == 2:
        return "the SOAP Body"
    if parts[2] == "Fault":
        return "the fault" if len(parts) == 3 else f"the fault's {parts[-1]}"
    if len(parts) == 3:
        return "the response element"
    if len(parts) == 4 and parts[3].endswith("Result"):
        return "the result"
    return f"<{parts[-1]}> in the result" if parts[3].endswith("Result") else \
        f"<{parts[-1]}> in the response"


def _tag(element: etree._Element) -> str:
    ns = namespace(element)
    return f"{{{ns}}}{local_name(element)}" if ns else local_name(element)


def _child(element: etree._Element, *names: str) -> etree._Element | None:
    return next((c for c in element_children(element) if local_name(c) in names), None)


def _must_understand(block: etree._Element) -> bool:
    value = next((v for k, v in block.attrib.items() if k.endswith("}mustUnderstand")), "")
    return value.strip() in ("1", "true")


def _fault_code(fault: etree._Element) -> str | None:
    """The fault's code as written: SOAP 1.1 faultcode, SOAP 1.2 Code/Value (with its
    Subcode values after a slash)."""
    code = _child(fault, "faultcode")
    if code is not None:
        return (code.text or "").strip()
    values = []
    node = _child(fault, "Code")
    while node is not None:
        value = _child(node, "Value")
        if value is not None:
            values.append((value.text or "").strip())
        node = _child(node, "Subcode")
    return "/".join(values) if values else None


def _neutral(fault: etree._Element, code: str | None) -> str | None:
    """A code comparable across versions and prefixes: each part as {namespace}local, with
    the envelope namespace left out and SOAP 1.1's Client/Server read as Sender/Receiver."""
    if code is None:
        return None
    holder = _child(fault, "faultcode")
    if holder is None:
        holder = _child(fault, "Code")
    scope = holder if holder is not None else fault
    parts = []
    for part in code.split("/"):
        prefix, colon, local = part.rpartition(":")
        ns = (scope.nsmap or {}).get(prefix) if colon else None
        if ns in SOAP_VERSIONS:
            parts.append(_SOAP12_CODES.get(local, local))
        else:
            parts.append(f"{{{ns}}}{local}" if ns else part)
    return "/".join(parts)


def _local(code: str | None) -> str | None:
    """The local part of each part of a code: "soap:Sender/x:Busy" -> "Sender/Busy"."""
    if code is None:
        return None
    return "/".join(part.rpartition(":")[2] for part in code.split("/"))


def _fault_reason(fault: etree._Element, whole: bool = False) -> str | None:
    """The fault's reason (faultstring, or SOAP 1.2 Reason/Text): its first line, or the
    whole text."""
    reason = _child(fault, "faultstring")
    if reason is None:
        holder = _child(fault, "Reason")
        reason = _child(holder, "Text") if holder is not None else None
    if reason is None:
        return None
    text = reason.text or ""
    return text if whole else _first_line(text)


def ignored_path(path: str, ignore: Iterable[str]) -> bool:
    """True when the element path matches one of the ``ignore`` patterns (fnmatch)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in ignore)


def _text_value(element: etree._Element) -> str | None:
    """The element's own text (and tails of its children) with whitespace-only text dropped and
    a QName value resolved to ``{namespace}local`` so that its prefix does not matter."""
    pieces = [element.text or ""] + [child.tail or "" for child in element]
    text = "".join(pieces)
    if not text.strip():
        return None
    match = _QNAME.fullmatch(text.strip())
    if match and match.group(1) in (element.nsmap or {}):
        return f"{{{element.nsmap[match.group(1)]}}}{match.group(2)}"
    return text


def _attrs(attrs: dict[str, str]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in sorted(attrs.items()))
