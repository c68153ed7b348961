"""Two HTTP responses compared: the outcome (a result or an error), the status, the
Content-Type, and the bodies by their form (XML, a text/plain value, empty, unreadable)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from lxml import etree

from harness.contract.bindings import is_success
from harness.contract.xmlsafe import element_children, local_name, namespace, parse_xml
from harness.errors import XMLRejected
from harness.judge.compare.difference import (
    ANSWERS,
    NO_CONTENT_TYPE,
    Difference,
    Sides,
    ignored_path,
)
from harness.judge.compare.pseudonyms import Pseudonyms, compare_json
from harness.judge.compare.xml import (
    SOAP_VERSIONS,
    child,
    compare_documents,
    fault_code,
    fault_reason,
    first_line,
    local_code,
)
from harness.traffic.exchange import (
    HttpRequest,
    HttpResponse,
    content_type_params,
    media_type,
    normalise_content_type,
)


def compare_responses(expected: HttpResponse, actual: HttpResponse, *,
                      ignore: Iterable[str] = (),
                      pseudonyms: Pseudonyms | None = None,
                      actual_document: etree._Element | None = None,
                      request: HttpRequest | None = None,
                      sides: Sides = ANSWERS) -> list[Difference]:
    """Differences of ``actual`` from ``expected``; empty when they match.

    ``ignore`` holds element path patterns (fnmatch, e.g. ``*/Timestamp``) whose subtree is not
    compared; ``pseudonyms`` compares an expected value that is a pseudonym (a recording's)
    with the actual value's pseudonym under the recording's key (None: texts as they are);
    ``actual_document`` is ``actual``'s body already parsed (replay's rules read it), so it is
    not parsed twice. ``request`` (what both answered) and ``sides`` (how the two answers are
    named) let the words say which side answered off the request's SOAP version.
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
        if exp.failed and (exp.fault is None or act.fault is None):
            # two errors of different kinds (not two faults, whose codes say more): their
            # bodies and types differ by consequence
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
    body = _compare_bodies(exp, act, tuple(ignore), pseudonyms,
                           lambda: request_version(request), sides)
    # "form" (of _compare_value) is no difference of its own: it names the Content-Type's
    form = next((d for d in body if d.kind == "form"), None)
    if form is not None:  # the same value in another form: the form is the difference
        body.remove(form)
        typed = replace(typed, summary=form.summary) if typed else replace(form, kind="body")
    if typed is not None:
        diffs.append(typed)
    return diffs + body


def request_version(request: HttpRequest | None) -> str | None:
    """The SOAP version of ``request``'s envelope ("SOAP 1.2"), None when it holds none."""
    if request is None or not request.body.lstrip().startswith(b"<"):
        return None
    try:
        document = parse_xml(request.body)
    except XMLRejected:
        return None
    return SOAP_VERSIONS.get(namespace(document) or "") if local_name(document) == "Envelope" \
        else None


def _typed_summary(expected: str, actual: str) -> str:
    if expected == NO_CONTENT_TYPE:
        return f"Content-Type {actual} where none is expected"
    if actual == NO_CONTENT_TYPE:
        return f"{NO_CONTENT_TYPE} where {expected} is expected"
    return f"Content-Type {expected} expected, {actual} given"


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
        body = child(doc, "Body")
        payload = element_children(body)[:1] if body is not None else []
        return payload[0] if payload and local_name(payload[0]) == "Fault" else None

    @property
    def failed(self) -> bool:
        """An error answer: no HTTP 2xx, or a SOAP fault (``bindings.is_success``)."""
        return not is_success(self.response.status, self.fault is not None)

    def error(self) -> tuple[str, str]:
        """The error in a few words and its cause, as R4-STATUS words a failed call:
        ("Server fault", the reason's first line), or ("HTTP 500", a text/plain message's
        first line or "")."""
        fault = self.fault
        if fault is not None:
            return f"{local_code(fault_code(fault)) or 'no code'} fault", \
                fault_reason(fault) or ""
        plain = self.media == "text/plain" or (not self.media and not self.xmlish)
        text = self.text() if plain and self.stripped else ""
        return f"HTTP {self.response.status}", first_line(text)

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
                body = child(doc, "Body")
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
    error = act if act.failed else exp
    head, cause = error.error()
    summary = f"{head} instead of a result" if act.failed else f"a result instead of {head}"
    if cause and error.fault is not None:  # an HTTP error's text names the call: left out
        summary = f"{summary}: {cause}"
    return Difference("outcome", "", exp.outcome(), act.outcome(), summary=summary)


# ------------------------------------------------------------------------------ bodies


def _compare_bodies(exp: _Side, act: _Side, ignore: tuple[str, ...],
                    pseudonyms: Pseudonyms | None,
                    request_version: Callable[[], str | None], sides: Sides
                    ) -> list[Difference]:
    if exp.response.body == act.response.body:
        return []
    if not exp.stripped and not act.stripped:
        return []
    exp_doc = exp.document if exp.xmlish else None
    act_doc = act.document if act.xmlish else None
    if exp_doc is not None and act_doc is not None:
        return compare_documents(exp_doc, act_doc, exp.response, act.response, ignore,
                                 pseudonyms, request_version, sides)
    if exp.problem or act.problem:
        return [_unreadable(exp, act)]
    if exp_doc is not None or act_doc is not None:
        xml, text = (exp, act) if exp_doc is not None else (act, exp)
        if text.stripped and not text.xmlish and xml.envelope is None:
            return _compare_value(exp, act, xml, text, ignore, pseudonyms)
        return [_form(exp, act)]
    if exp.stripped == act.stripped:
        return []
    if pseudonyms is not None and not exp.xmlish and not act.xmlish:
        by_value = _compare_plain(exp, act, pseudonyms)
        if by_value is not None:
            return by_value
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
                   pseudonyms: Pseudonyms | None) -> list[Difference]:
    """An XML document against a text body (ASMX's ``<string>`` document against a
    text/plain answer): compared by value when the document holds one; the form is the
    difference either way (named on the Content-Type)."""
    doc = xml.document
    assert doc is not None
    form = _form(exp, act)
    if element_children(doc):  # a structure, not one value
        return [form]
    path = f"/{local_name(doc)}"
    value, other = (doc.text or "").strip(), text.text().strip()
    expected, actual = (value, other) if xml is exp else (other, value)
    same = pseudonyms.same(expected, actual) if pseudonyms else None
    if same and pseudonyms and pseudonyms.key is None and expected != actual:
        return [form]  # a pseudonym not compared (no key): the form is all that differs
    if expected == actual or same or ignored_path(path, ignore):
        return [replace(form, summary=form.summary + " (the same value)")]
    summary = f"value differs ({exp.form()} vs {act.form()})"
    if same is not None:  # False: a pseudonym that is not the actual value's
        assert pseudonyms is not None
        actual = pseudonyms.shown(actual) or ""
        summary = summary[:-1] + ", compared by pseudonym under the recording's key)"
    return [form, Difference("text", path, expected, actual, summary=summary)]


def _compare_plain(exp: _Side, act: _Side, pseudonyms: Pseudonyms) -> list[Difference] | None:
    """Two bodies that are no XML, when the expected one holds pseudonyms: a text/plain value
    (spyne's GET/POST result) by its pseudonym, JSON member by member; None when the
    expected body holds no pseudonym (then compared byte for byte)."""
    if _is_json(exp) and _is_json(act):
        return compare_json(exp.text(), act.text(), pseudonyms)
    same = pseudonyms.same(exp.text().strip(), act.text())
    if same is None:
        return None
    if same:
        return []
    return [Difference("text", "", exp.text().strip(), pseudonyms.shown(act.text()),
                       summary="value differs (compared by pseudonym under the recording's "
                               "key)")]


def _is_json(side: _Side) -> bool:
    return side.media.endswith(("/json", "+json"))


def _form(exp: _Side, act: _Side) -> Difference:
    """Bodies of two forms (a document, a text, a fault, nothing): one difference, said on
    the Content-Type when that differs too (kind "form", see ``compare_responses``)."""
    return Difference("form", "", _short(exp.response.body), _short(act.response.body),
                      summary=f"answer form: {exp.form()} expected, {act.form()} given")


def _short(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."
