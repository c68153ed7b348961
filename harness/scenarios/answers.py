"""A call's answer read in the contract's terms, as a scenario's Then steps look at it: the HTTP
status, a SOAP fault's code, the result (a simple value's text, an array or complex value as
JSON data) and the elements below the response element, named by a path of local names.

A path such as ``GetOrderResult/Lines/OrderLine[2]/Quantity`` names elements by local name
(namespaces aside), ``[n]`` the n-th of that name (from 1). It starts below the SOAP response
element (``<Operation>Response``); it may leave out the result element, and it means the same
over HTTP GET and POST, whose document is the result itself: ``Lines/OrderLine[2]/Quantity``,
``GetOrderResult/Lines/...`` and ``Order/Lines/...`` (the result type's name, the GET/POST
root) all name the same element over every binding.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from lxml import etree

from harness.contract import structure
from harness.contract.bindings import ResponseReading, is_success, plain_result, read_response
from harness.contract.model import Operation
from harness.contract.structure import Value
from harness.contract.types import ParamType
from harness.contract.xmlsafe import element_children, local_name
from harness.judge.words import message_words
from harness.traffic.exchange import HttpResponse, media_type

if TYPE_CHECKING:
    from harness.judge.calls import Call

_SEGMENT = re.compile(r"([^/\[\]\s\"]+)(?:\[([1-9][0-9]{0,5})\])?")
#: The fault codes a scenario may expect: SOAP 1.1's words and SOAP 1.2's, either over both
#: versions (Client is Sender, Server is Receiver: the same blame in the other version's word).
FAULT_CODES = ("Client", "Server", "Sender", "Receiver", "VersionMismatch", "MustUnderstand")


def parse_path(text: str) -> tuple[tuple[str, int | None], ...]:
    """(local name, 1-based position or None when not given) per step of an element path;
    ValueError for another form."""
    steps = []
    for part in text.split("/"):
        m = _SEGMENT.fullmatch(part)
        if m is None:
            raise ValueError(f"{text!r} is not an element path (local names joined by /, "
                             "[n] for the n-th of a name: order/Lines/OrderLine[2]/Quantity)")
        steps.append((m.group(1), int(m.group(2)) if m.group(2) else None))
    return tuple(steps)


@dataclass(frozen=True)
class Answer:
    """What one call of a scenario got back."""

    call: Call

    @property
    def operation(self) -> Operation:
        return self.call.operation

    @property
    def where(self) -> str:
        return f"{self.call.operation.name} over {self.call.binding.label}"

    @property
    def response(self) -> HttpResponse | None:
        return self.call.exchange.response

    @property
    def status(self) -> int | None:
        return None if self.response is None else self.response.status

    @cached_property
    def reading(self) -> ResponseReading:
        if self.response is None:
            return ResponseReading()
        return read_response(self.call.operation, self.call.binding, self.response)

    @property
    def fault_code(self) -> str | None:
        """The SOAP fault's code (local part), None when the answer is no SOAP fault."""
        payload = self.reading.payload
        if payload is None or local_name(payload) != "Fault":
            return None
        return self.reading.fault_code or ""

    @property
    def succeeded(self) -> bool:
        """HTTP 2xx and no SOAP fault (``bindings.is_success``, as diff and replay read it)."""
        return self.status is not None and is_success(self.status, self.fault_code is not None)

    def summary(self) -> str:
        """The answer in a few words: ``HTTP 500, SOAP fault Client: Server was unable ...``."""
        if self.response is None:
            why = next((f.actual for f in self.call.findings if f.actual), "")
            return "no answer" + (f": {why}" if why else "")
        said = f"HTTP {self.status}"
        if self.fault_code is not None:
            reason = message_words(self.reading.fault_reason or "")
            return f"{said}, SOAP fault {self.fault_code}" + (f": {reason}" if reason else "")
        if self.succeeded:
            return f"{said}, result {_shown(self.result_text())}"
        body = message_words(self.response.body[:4096].decode("utf-8", "replace"))
        kind = media_type(self.response.content_type) or "no Content-Type"
        return f"{said}, {kind}" + (f": {body}" if body else ", empty body")

    # -------------------------------------------------------------------------- the result

    def require_success(self, what: str) -> None:
        """AssertionError naming what the answer is when it is no successful one."""
        if not self.succeeded:
            raise AssertionError(f"{self.where}: expected {what}, but the answer is "
                                 f"{self.summary()}")
        if self.reading.problem:
            raise AssertionError(f"{self.where}: expected {what}, but the answer cannot be "
                                 f"read: {self.reading.problem}")

    def result(self) -> Value:
        """The result: a simple value's text (None when the operation returns nothing or the
        result element is absent), an array or complex value as JSON data."""
        op = self.call.operation
        if self.reading.problem and self.succeeded and self.response is not None and (
                text := plain_result(op, self.call.binding, self.response)) is not None:
            return text  # read by value, as diff does (its form: OP-RESULT's to judge)
        self.require_success("a result")
        node = self.reading.result_node
        if op.result_type is not ParamType.COMPLEX or node is None:
            return self.reading.result
        try:
            return structure.read(op.schema, op.result or "", node, op.result_element or "")
        except ValueError as exc:
            raise AssertionError(f"{self.where}: the result is no {op.result}: {exc}") from None

    def result_text(self) -> str | None:
        """The result as text: a simple value as sent, an array or complex one as compact
        JSON (the form ``the result is "..."`` compares and ``saved as`` keeps)."""
        value = self.result()
        return value if value is None or isinstance(value, str) else structure.canonical(value)

    def result_is_empty(self) -> bool:
        node = self.reading.result_node
        value = self.result()
        if node is not None and self.call.operation.result_type is ParamType.COMPLEX:
            return not element_children(node) and not (node.text or "").strip()
        return value in (None, "")

    def expected_result(self, text: str) -> Value:
        """``text`` as a value of the operation's result: JSON data for an array or complex
        result (checked against its type), the text itself otherwise."""
        op = self.call.operation
        if op.result_type is not ParamType.COMPLEX:
            return text
        try:
            return structure.validate(op.schema, op.result or "", json.loads(text),
                                      op.result_element or "result")
        except (ValueError, RecursionError) as exc:
            raise AssertionError(f"{self.where}: the expected result is no {op.result} in "
                                 f"JSON: {str(exc)[:200]}") from None

    # ------------------------------------------------------------------------ the elements

    def elements(self, path: str) -> list[etree._Element]:
        """The elements ``path`` names: every one of its last name below their parent, or the
        one its last ``[n]`` picks; AssertionError naming the first step that is not there."""
        self.require_success(f"the element {path}")
        at, steps = self._start(list(parse_path(path)))
        walked: list[str] = []
        for i, (name, position) in enumerate(steps):
            found = [c for c in element_children(at) if local_name(c) == name]
            if i == len(steps) - 1 and position is None:
                return found
            walked.append(name + (f"[{position}]" if position else ""))
            if len(found) < (position or 1):
                under = "/".join(walked[:-1]) or local_name(at)
                raise AssertionError(f"{self.where}: no element {'/'.join(walked)}: {name} "
                                     f"occurs {len(found)} time(s) under {under}")
            at = found[(position or 1) - 1]
        return [at]

    def element(self, path: str) -> etree._Element:
        """The one element ``path`` names (the first of its name when it gives no position)."""
        found = self.elements(path)
        if not found:
            parent = path.rsplit("/", 1)[0] if "/" in path else "the response element"
            raise AssertionError(f"{self.where}: no element {path} (under {parent})")
        return found[0]

    def _start(self, steps: list[tuple[str, int | None]]
               ) -> tuple[etree._Element, list[tuple[str, int | None]]]:
        """Where a path starts, and its steps from there: the result node when the path names
        the result element (SOAP ``<Operation>Result``, the GET/POST root) or when the SOAP
        response element has no child of its first name; else the response element."""
        op, reading = self.call.operation, self.reading
        result, payload = reading.result_node, reading.payload
        (first, position), rest = steps[0], steps[1:]
        names = {op.result_element, op.result_root} | (
            {local_name(result)} if result is not None else set())
        if result is not None and first in names and position in (None, 1):
            return result, rest
        if self.call.binding.is_soap and payload is not None and any(
                local_name(c) == first for c in element_children(payload)):
            return payload, steps
        if result is None:
            raise AssertionError(f"{self.where}: no element {first}: the answer has no result "
                                 "element")
        return result, steps


def text_of(element: etree._Element, where: str, path: str) -> str:
    """The text of a leaf element; AssertionError for one holding elements."""
    if element_children(element):
        names = ", ".join(dict.fromkeys(local_name(c) for c in element_children(element)))
        raise AssertionError(f"{where}: {path} holds elements ({names}), not text: name one "
                             f"of them ({path}/{names.split(',')[0]})")
    return element.text or ""


def _shown(text: str | None) -> str:
    if text is None:
        return "empty (none)"
    return json.dumps(text if len(text) <= 120 else text[:117] + "...", ensure_ascii=False)
