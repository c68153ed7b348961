"""Words a person reads in a cause line: shortened at a word, an error message's own words
without what only a program reads (an exception's type, an unfilled ``{0}``).

The lowest layer of the judges (it imports nothing of theirs): the comparison, the rules and
the scenario steps all word an error with ``message_words``, so one error reads the same in
every command.
"""

from __future__ import annotations

import re

#: Longest error message quoted in a cause ("a result instead of Client fault: <message>").
MESSAGE_CHARS = 120
#: A .NET (or Java) exception's type before its message: "System.Web.HttpException: ".
_EXCEPTION_TYPE = re.compile(r"^(?:[A-Za-z_][\w`]*\.)+[A-Za-z_]\w*(?:Exception|Error)\s*:\s*")
#: ASP.NET's unfilled placeholders ("Missing parameter: {0}.") and where the message went on.
_PLACEHOLDER = re.compile(r"\{\d+\}")
_INNER = re.compile(r"\s*--->.*$")
_CLAUSE_END = re.compile(r"[:;,(]\s*[^:;,(]*$")


def shortened(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, "…" included, cut after a whole word."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rstrip()
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def message_words(text: str, limit: int = MESSAGE_CHARS) -> str:
    """What an error message says, for a cause: its first line with words, without the
    exception types before it or the inner exception after ``--->``, cut before an unfilled
    placeholder at the last clause ("Possible SOAP version mismatch: Envelope namespace {0}
    was unexpected" -> "Possible SOAP version mismatch"; "Missing parameter: {0}." ->
    "Missing parameter"), shortened at a word."""
    line = next((s.strip() for s in text.strip().splitlines() if s.strip()), "")
    line = _INNER.sub("", line)
    while (bare := _EXCEPTION_TYPE.sub("", line)) != line:
        line = bare
    placeholder = _PLACEHOLDER.search(line)
    if placeholder is not None:
        head = line[:placeholder.start()]
        clause = _CLAUSE_END.search(head)
        line = (head[:clause.start()] if clause is not None and clause.start() > 0
                else head).rstrip(" .:;,")
    return shortened(line, limit)


def version_words(request: str, answer: str) -> str:
    """An answer in another SOAP version than the request's, in the words every command uses
    (R5-ENVELOPE, diff, replay, odd requests): "SOAP 1.2 answered with a SOAP 1.1 envelope"."""
    return f"{request} answered with a {answer} envelope"


#: Characters a reader cannot see, by name.
_INVISIBLE = {"\x00": "NUL", "\t": "TAB", "\n": "LF", "\r": "CR", "\u00a0": "NO-BREAK SPACE",
              "\ufeff": "BOM", "\u202e": "RIGHT-TO-LEFT OVERRIDE", "\u200b": "ZERO WIDTH SPACE",
              "\ufffd": "REPLACEMENT CHARACTER"}
#: Longest value shown in a detail.
VALUE_CHARS = 40


def shown_value(text: str) -> str:
    """A value as a detail names it: as it is when it reads plainly (``2147483648``), its
    invisible characters named (``NUL``, ``" 7 "`` quoted for its spaces), an empty one as
    such, a long one cut with its length (``9999...9 (5000 characters)``)."""
    if text == "":
        return "an empty value"
    if len(text) == 1 and (text in _INVISIBLE or not text.isprintable()):
        return _INVISIBLE.get(text, f"U+{ord(text):04X}")
    if len(text) > VALUE_CHARS:
        return f"{shown_value(text[:VALUE_CHARS - 10])}... ({len(text)} characters)"
    if (text.isprintable() and text.strip() == text and " " not in text
            and not any(ch in _INVISIBLE for ch in text)):
        return text
    return '"' + "".join(ch if ch.isprintable() and ch not in _INVISIBLE and ch not in '"\\' else
                         f"<{_INVISIBLE.get(ch, f'U+{ord(ch):04X}')}>" for ch in text) + '"'
