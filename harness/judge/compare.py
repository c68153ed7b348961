"""The one comparison of two HTTP responses: replay (recorded vs new) and diff (primary vs
candidate) both use it.

Status, normalised Content-Type, and bodies: XML structurally (namespace-aware, prefix-
insensitive, whitespace-only text, the XML declaration and attribute order ignored; QName
values such as ``soap:Client`` compared by namespace, not prefix), other bodies byte for byte.
A SOAP fault's reason text and a text/plain error message only ever give warnings.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lxml import etree

from harness.contract.xmlsafe import element_children, parse_xml
from harness.errors import XMLRejected
from harness.traffic.exchange import HttpResponse, media_type, normalise_content_type
from harness.traffic.redaction import is_pseudonym

#: Elements whose text is human prose: a difference there is a warning, never a failure.
PROSE_ELEMENTS = frozenset({"faultstring", "Reason", "Text", "detail", "Detail", "faultactor"})
_QNAME = re.compile(r"([A-Za-z_][\w.-]*):([A-Za-z_][\w.-]*)")


@dataclass(frozen=True)
class Difference:
    kind: str  # status | content-type | body | element | attribute | text | missing | extra
    path: str  # element path by local names, e.g. /Envelope/Body/XResponse/XResult; "" for HTTP
    expected: str | None
    actual: str | None
    warning: bool = False

    def describe(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.kind}{where}: expected {self.expected!r}, actual {self.actual!r}"


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
    diffs: list[Difference] = []
    if expected.status != actual.status:
        diffs.append(Difference("status", "", str(expected.status), str(actual.status)))
    exp_raw, act_raw = expected.content_type, actual.content_type
    if exp_raw != act_raw:  # the same text normalises alike (replay's usual case)
        exp_type, act_type = normalise_content_type(exp_raw), normalise_content_type(act_raw)
        if exp_type != act_type:
            diffs.append(Difference("content-type", "", exp_type, act_type))
    diffs += compare_bodies(expected, actual, ignore=tuple(ignore), wildcard=wildcard,
                            actual_document=actual_document)
    return diffs


def compare_bodies(expected: HttpResponse, actual: HttpResponse, *, ignore: tuple[str, ...] = (),
                   wildcard: Callable[[str | None], bool] = is_pseudonym,
                   actual_document: etree._Element | None = None) -> list[Difference]:
    if expected.body == actual.body:  # the same bytes: nothing to parse (replay's usual case)
        return []
    exp_body, act_body = expected.body.strip(), actual.body.strip()
    if not exp_body and not act_body:
        return []
    if _looks_xml(expected) or _looks_xml(actual):
        try:
            exp_doc = parse_xml(expected.body) if exp_body else None
            act_doc = actual_document
            if act_doc is None and act_body:
                act_doc = parse_xml(actual.body)
        except XMLRejected as exc:
            if exp_body == act_body:
                return []
            return [Difference("body", "", _short(expected.body), f"{_short(actual.body)} ({exc})")]
        if exp_doc is None or act_doc is None:
            return [Difference("body", "", _short(expected.body), _short(actual.body))]
        diffs: list[Difference] = []
        _compare_element(exp_doc, act_doc, "", ignore, wildcard, diffs)
        return diffs
    if exp_body == act_body:
        return []
    # A text/plain error message is prose, like a fault reason.
    prose = expected.status >= 400 and actual.status >= 400
    return [Difference("body", "", _short(expected.body), _short(actual.body), warning=prose)]


def _looks_xml(response: HttpResponse) -> bool:
    media = media_type(response.content_type) or ""
    return media.endswith("xml") or response.body.lstrip().startswith(b"<")


def _short(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "..."


def _compare_element(exp: etree._Element, act: etree._Element, parent: str,
                     ignore: tuple[str, ...], wildcard: Callable[[str | None], bool],
                     out: list[Difference]) -> None:
    exp_q, act_q = etree.QName(exp), etree.QName(act)
    path = f"{parent}/{exp_q.localname}"
    if ignored_path(path, ignore):
        return
    if (exp_q.namespace, exp_q.localname) != (act_q.namespace, act_q.localname):
        out.append(Difference("element", path, exp_q.text, act_q.text))
        return
    prose = exp_q.localname in PROSE_ELEMENTS
    exp_attrs, act_attrs = dict(exp.attrib), dict(act.attrib)
    if exp_attrs != act_attrs:
        out.append(Difference("attribute", path, _attrs(exp_attrs), _attrs(act_attrs), prose))
    exp_text, act_text = _text_value(exp), _text_value(act)
    if exp_text != act_text and not wildcard(exp.text):
        out.append(Difference("text", path, exp_text, act_text, prose))
    exp_kids, act_kids = element_children(exp), element_children(act)
    for e, a in zip(exp_kids, act_kids, strict=False):
        _compare_element(e, a, path, ignore, wildcard, out)
    # An ignored element is ignored also when only one side has it (e.g. an added Timestamp).
    for e in exp_kids[len(act_kids):]:
        if not ignored_path(f"{path}/{etree.QName(e).localname}", ignore):
            out.append(Difference("missing", f"{path}/{etree.QName(e).localname}",
                                  etree.QName(e).text, None, prose))
    for a in act_kids[len(exp_kids):]:
        if not ignored_path(f"{path}/{etree.QName(a).localname}", ignore):
            out.append(Difference("extra", f"{path}/{etree.QName(a).localname}",
                                  None, etree.QName(a).text, prose))


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
