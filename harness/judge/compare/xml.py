"""Two XML documents compared element by element, aligned by namespace and local name (never
by position): same-named siblings (arrays) in order; SOAP envelopes by version, header blocks
and faults (by code across versions; reason and detail as prose); two WSDLs as contracts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from lxml import etree

from harness.contract.bindings import same_fault
from harness.contract.xmlsafe import element_children, local_name, namespace
from harness.judge.compare.difference import ANSWERS, Difference, Sides, ignored_path
from harness.judge.compare.pseudonyms import Pseudonyms
from harness.judge.words import message_words, version_words
from harness.traffic.exchange import HttpResponse

SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
SOAP_VERSIONS = {SOAP11_NS: "SOAP 1.1", SOAP12_NS: "SOAP 1.2"}
WSDL_NS = "http://schemas.xmlsoap.org/wsdl/"
#: SOAP 1.2 fault codes by their SOAP 1.1 name: compared across versions by meaning.
_SOAP12_CODES = {"Client": "Sender", "Server": "Receiver"}
_QNAME = re.compile(r"([A-Za-z_][\w.-]*):([A-Za-z_][\w.-]*)")


def compare_documents(exp: etree._Element, act: etree._Element, exp_response: HttpResponse,
                      act_response: HttpResponse, ignore: tuple[str, ...],
                      pseudonyms: Pseudonyms | None = None,
                      request_version: Callable[[], str | None] = lambda: None,
                      sides: Sides = ANSWERS) -> list[Difference]:
    """The differences of two parsed bodies (their responses: a WSDL is read again by the
    WSDL reader). ``request_version``: the SOAP version of the request's envelope, asked only
    when the answers' versions differ, to say which side answered off it (``sides``)."""
    if exp.tag == act.tag == f"{{{WSDL_NS}}}definitions":
        from harness.judge.compare.wsdl import compare_wsdls

        found = compare_wsdls(exp_response.body, act_response.body)
        if found is not None:
            return [d for d in found if not ignored_path(d.path, ignore)]
    out: list[Difference] = []
    _Walk(ignore, pseudonyms, out, request_version, sides).documents(exp, act)
    return out


class _Walk:
    """One comparison of two XML documents, element by element, aligned by names."""

    def __init__(self, ignore: tuple[str, ...], pseudonyms: Pseudonyms | None,
                 out: list[Difference],
                 request_version: Callable[[], str | None] = lambda: None,
                 sides: Sides = ANSWERS) -> None:
        self.ignore, self.pseudonyms, self.out = ignore, pseudonyms, out
        self.request_version, self.sides = request_version, sides
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
            summary = self._versions(exp, exp_v, act_v)
            self.out.append(Difference(
                "element", "/Envelope", f"{exp_v} envelope ({exp_ns})",
                f"{act_v} envelope ({act_ns})", summary=summary))
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

    def _versions(self, exp: etree._Element, exp_v: str, act_v: str) -> str:
        """Two envelopes of two SOAP versions, in words that blame the side that answered
        off the request's version: the actual side as R5-ENVELOPE says it ("SOAP 1.2
        answered with a SOAP 1.1 envelope"), or the expected side by its name when it is the
        one ("the recording has a SOAP 1.1 envelope to a SOAP 1.2 request, the target
        answers in SOAP 1.2"). A VersionMismatch fault may come in either version."""
        if _version_mismatch(exp):
            return f"a {act_v} envelope where {exp_v} is expected"
        request = self.request_version()
        if request == act_v:
            return (f"{self.sides.expected} has a {exp_v} envelope to a {request} request, "
                    f"{self.sides.actual} answers in {act_v}")
        return version_words(exp_v, act_v)

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
        if exp_text != act_text:
            self.text(exp, act, exp_text, act_text, path, prose)
        self.children(exp, act, path, prose)

    def text(self, exp: etree._Element, act: etree._Element, exp_text: str | None,
             act_text: str | None, path: str, prose: bool) -> None:
        """Two texts that differ as written: a difference, unless the expected one is a
        pseudonym of the actual one (``Pseudonyms``), which a difference shows by pseudonym."""
        same = self.pseudonyms.same(exp.text, act.text) if self.pseudonyms else None
        if same:
            return
        if same is None:
            self.out.append(Difference("text", path, exp_text, act_text, prose,
                                       f"value of {_role(path)} differs"))
            return
        assert self.pseudonyms is not None
        self.out.append(Difference("text", path, exp_text, self.pseudonyms.shown(act.text),
                                   prose, f"value of {_role(path)} differs (compared by "
                                   "pseudonym under the recording's key)"))

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
        if kind == "missing":
            summary = f"{role} missing"
        elif role.startswith("the fault's "):
            summary = f"unexpected {local_name(element)} in the fault"
        else:
            summary = f"unexpected {role.removeprefix('the ')}"
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
        exp_code, act_code = fault_code(exp), fault_code(act)
        code_path = f"{path}/{'faultcode' if child(exp, 'faultcode') is not None else 'Code'}"
        exp_neutral, act_neutral = _neutral(exp, exp_code), _neutral(act, act_code)
        if exp_neutral != act_neutral and not ignored_path(code_path, self.ignore):
            shown_exp = local_code(exp_code) or "(none)"
            shown_act = local_code(act_code) or "(none)"
            if _refines(exp_neutral, act_neutral):
                # the same fault said more precisely (bindings.same_fault, as the steps read
                # it): "Client.SchemaValidationError" is a Client fault; a code less precise
                # than the expected one, or another refinement, is another fault
                self.out.append(Difference(
                    "text", code_path, exp_code, act_code, True,
                    f"faultcode {shown_exp} refined as {shown_act}"))
            else:
                self.out.append(Difference(
                    "text", code_path, exp_code, act_code,
                    summary=f"faultcode {shown_exp} vs {shown_act}"))
        exp_reason, act_reason = fault_reason(exp, whole=True), fault_reason(act, whole=True)
        spelled = "faultstring" if child(exp, "faultstring") is not None else "Reason"
        reason_path = f"{path}/{spelled}"
        if exp_reason != act_reason and not (
                self.pseudonyms and self.pseudonyms.same(exp_reason, act_reason)) \
                and not ignored_path(reason_path, self.ignore):
            self.out.append(Difference("text", reason_path, exp_reason, act_reason, True,
                                       "fault reason differs (prose)"))
        for names in (("detail", "Detail"), ("faultactor", "Role"), ("Node",)):
            e, a = child(exp, *names), child(act, *names)
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


def child(element: etree._Element, *names: str) -> etree._Element | None:
    """The first child element of one of ``names`` (local names)."""
    return next((c for c in element_children(element) if local_name(c) in names), None)


def _version_mismatch(envelope: etree._Element) -> bool:
    body = child(envelope, "Body")
    fault = child(body, "Fault") if body is not None else None
    return fault is not None and local_code(fault_code(fault)) == "VersionMismatch"


def _must_understand(block: etree._Element) -> bool:
    value = next((v for k, v in block.attrib.items() if k.endswith("}mustUnderstand")), "")
    return value.strip() in ("1", "true")


def fault_code(fault: etree._Element) -> str | None:
    """The fault's code as written: SOAP 1.1 faultcode, SOAP 1.2 Code/Value (with its
    Subcode values after a slash)."""
    code = child(fault, "faultcode")
    if code is not None:
        return (code.text or "").strip()
    values = []
    node = child(fault, "Code")
    while node is not None:
        value = child(node, "Value")
        if value is not None:
            values.append((value.text or "").strip())
        node = child(node, "Subcode")
    return "/".join(values) if values else None


def _neutral(fault: etree._Element, code: str | None) -> str | None:
    """A code comparable across versions and prefixes: each part as {namespace}local, with
    the envelope namespace left out and SOAP 1.1's Client/Server read as Sender/Receiver."""
    if code is None:
        return None
    holder = child(fault, "faultcode")
    if holder is None:
        holder = child(fault, "Code")
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


def _refines(expected: str | None, actual: str | None) -> bool:
    """Whether the neutral code ``actual`` (``_neutral``) is ``expected`` said more
    precisely (``bindings.same_fault``); a code of another namespace refines none."""
    if expected is None or actual is None or expected.startswith("{"):
        return False
    return same_fault(expected, actual)


def local_code(code: str | None) -> str | None:
    """The local part of each part of a code: "soap:Sender/x:Busy" -> "Sender/Busy"."""
    if code is None:
        return None
    return "/".join(part.rpartition(":")[2] for part in code.split("/"))


def fault_reason(fault: etree._Element, whole: bool = False) -> str | None:
    """The fault's reason (faultstring, or SOAP 1.2 Reason/Text): its first line, or the
    whole text."""
    reason = child(fault, "faultstring")
    if reason is None:
        holder = child(fault, "Reason")
        reason = child(holder, "Text") if holder is not None else None
    if reason is None:
        return None
    text = reason.text or ""
    return text if whole else first_line(text)


def first_line(text: str) -> str:
    """What an error's text says first, for a summary (``words.message_words``: no exception
    type, no unfilled ``{0}``, shortened at a word)."""
    return message_words(text)


def _text_value(element: etree._Element) -> str | None:
    """The element's own text (and tails of its children) with whitespace-only text dropped and
    a QName value resolved to ``{namespace}local`` so that its prefix does not matter."""
    pieces = [element.text or ""] + [kid.tail or "" for kid in element]
    text = "".join(pieces)
    if not text.strip():
        return None
    match = _QNAME.fullmatch(text.strip())
    if match and match.group(1) in (element.nsmap or {}):
        return f"{{{element.nsmap[match.group(1)]}}}{match.group(2)}"
    return text


def _attrs(attrs: dict[str, str]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in sorted(attrs.items()))
