"""A recorded pseudonym against a live value: compared by the live value's pseudonym.

Capture replaces a sensitive value by ``redacted-`` + 16 hex digits of an HMAC under the
recording's key (``harness.traffic.redaction``). With that key, the live value's pseudonym is
computed the way capture computed the recorded one and the two are compared: a changed token
fails, an equal one passes, whatever form carries it (a SOAP element, a ``<string>``
document, text/plain, JSON). Without the key a pseudonym cannot be compared: it is counted
(``uncompared``), and the command says how many values went uncompared; it is never taken for
a match silently.

A finding never shows the live value in clear: ``shown`` gives its pseudonym under the same
key, which reads against the recorded one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.judge.compare.difference import Difference
from harness.traffic.redaction import is_pseudonym, pseudonym


@dataclass
class Pseudonyms:
    """The key of one recording and what its comparisons counted."""

    #: The recording's key (None: not found; its pseudonyms are not compared).
    key: bytes | None = None
    #: Recorded pseudonyms compared with a live value, and those that could not be.
    compared: int = 0
    uncompared: int = 0

    def same(self, recorded: str | None, live: str | None) -> bool | None:
        """Whether ``live`` is the value the pseudonym ``recorded`` stands for; None when
        ``recorded`` is no pseudonym (the texts are compared as they are). Without a key:
        True, counted as not compared."""
        if not is_pseudonym(recorded):
            return None
        assert recorded is not None
        wanted = recorded.strip()
        text = (live or "").lstrip("\ufeff")
        if text.strip() == wanted:  # the very pseudonym (a mock answers what was recorded)
            return True
        if self.key is None:
            self.uncompared += 1
            return True
        self.compared += 1
        # capture took an element's text as it is, a text/plain body stripped
        return bool(text.strip()) and wanted in {pseudonym(text, self.key),
                                                 pseudonym(text.strip(), self.key)}

    def shown(self, live: str | None) -> str | None:
        """A live value as a finding shows it beside a recorded pseudonym: its own pseudonym
        under the recording's key (never the value in clear)."""
        text = (live or "").lstrip("\ufeff").strip()
        if not text or self.key is None or is_pseudonym(text):
            return live
        return pseudonym(text, self.key)


def compare_json(expected: str, actual: str, pseudonyms: Pseudonyms) -> list[Difference] | None:
    """Two JSON bodies member by member, a recorded pseudonym against the live value's
    (capture redacts a JSON value as the text of a string or number); None when either is no
    JSON or the expected one holds no pseudonym (then the bodies are compared as bytes)."""
    try:
        exp, act = json.loads(expected.lstrip("\ufeff")), json.loads(actual.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return None
    if not _holds_pseudonym(exp):
        return None
    out: list[Difference] = []
    _walk(exp, act, "$", pseudonyms, out)
    return out


def _holds_pseudonym(node: Any) -> bool:
    if isinstance(node, dict):
        return any(_holds_pseudonym(v) for v in node.values())
    if isinstance(node, list):
        return any(_holds_pseudonym(v) for v in node)
    return isinstance(node, str) and is_pseudonym(node)


def _walk(exp: Any, act: Any, path: str, pseudonyms: Pseudonyms, out: list[Difference]) -> None:
    if isinstance(exp, dict) and isinstance(act, dict):
        for name in exp.keys() | act.keys():
            where = f"{path}.{name}"
            if name not in act:
                out.append(Difference("missing", where, _text(exp[name]), None,
                                      summary=f"member {name} missing"))
            elif name not in exp:
                out.append(Difference("extra", where, None, _text(act[name]),
                                      summary=f"member {name} not expected"))
            else:
                _walk(exp[name], act[name], where, pseudonyms, out)
        return
    if isinstance(exp, list) and isinstance(act, list):
        for i, (e, a) in enumerate(zip(exp, act, strict=False)):
            _walk(e, a, f"{path}[{i}]", pseudonyms, out)
        if len(exp) != len(act):
            out.append(Difference("text", path, f"{len(exp)} items", f"{len(act)} items",
                                  summary="number of items differs"))
        return
    scalar = isinstance(act, (str, int, float)) and not isinstance(act, bool)
    same = pseudonyms.same(exp, str(act)) if isinstance(exp, str) and scalar else None
    if same or (same is None and exp == act):
        return
    shown = pseudonyms.shown(str(act)) if same is not None else _text(act)
    out.append(Difference("text", path, _text(exp), shown,
                          summary="value differs" + (" (compared by pseudonym under the "
                                                     "recording's key)" if same is not None
                                                     else "")))


def _text(node: Any) -> str:
    return node if isinstance(node, str) else json.dumps(node, ensure_ascii=False)
