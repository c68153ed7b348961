"""The checks of a scenario's Then steps: each a plain function over the answers of the last
When step (one call, or one per binding), raising AssertionError whose message names each
call that fails, what was expected and what came back."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from harness.contract.bindings import same_fault
from harness.contract.structure import Value
from harness.judge.compare.pseudonyms import Pseudonyms
from harness.patterns import Pattern
from harness.scenarios.answers import Answer, text_of
from harness.scenarios.values import has_shape


def _each(answers: Sequence[Answer], check: Callable[[Answer], str | None]) -> None:
    """Run ``check`` on every answer (it returns what is wrong, or None); one AssertionError
    listing every failure."""
    wrong = []
    for answer in answers:
        try:
            problem = check(answer)
        except AssertionError as exc:
            problem = str(exc)
        if problem:
            wrong.append(problem)
    if wrong:
        raise AssertionError("\n".join(wrong))


def _quoted(text: str | None) -> str:
    return "nothing" if text is None else json.dumps(text, ensure_ascii=False)


def result_is(answers: Sequence[Answer], expected: str) -> None:
    def check(a: Answer) -> str | None:
        value = a.result()
        if value == a.expected_result(expected) or (value is None and expected == ""):
            return None
        return (f"{a.where}: expected the result {_quoted(expected)}, actual "
                f"{_quoted(a.result_text())}")
    _each(answers, check)


def result_matches(answers: Sequence[Answer], pattern: Pattern) -> None:
    def check(a: Answer) -> str | None:
        text = a.result_text()
        if text is not None and pattern.fullmatch(text):
            return None
        return (f"{a.where}: expected a result matching {_quoted(pattern.pattern)}, actual "
                f"{_quoted(text)}")
    _each(answers, check)


def result_pseudonym_is(answers: Sequence[Answer], expected: str, key: bytes) -> None:
    """The result's pseudonym under ``key`` is ``expected`` (a recording's redacted result);
    a failure shows the actual result by its pseudonym only."""
    def check(a: Answer) -> str | None:
        text = a.result_text()
        values = Pseudonyms(key)
        if text is not None and values.same(expected, text):
            return None
        shown = values.shown(text) if text else text
        return (f"{a.where}: expected the result's pseudonym {_quoted(expected)}, actual "
                f"{_quoted(shown)}")
    _each(answers, check)


def result_is_empty(answers: Sequence[Answer], empty: bool = True) -> None:
    def check(a: Answer) -> str | None:
        if a.result_is_empty() == empty:
            return None
        if empty:
            return f"{a.where}: expected an empty result, actual {_quoted(a.result_text())}"
        return f"{a.where}: expected a result, actual an empty one"
    _each(answers, check)


def result_has_shape(answers: Sequence[Answer], shape: str) -> None:
    def check(a: Answer) -> str | None:
        text = a.result_text()
        if text is not None and has_shape(text, shape):
            return None
        return f"{a.where}: expected the result to be {_article(shape)} {shape}, actual " \
               f"{_quoted(text)}"
    _each(answers, check)


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def element_is(answers: Sequence[Answer], path: str, expected: str) -> None:
    def check(a: Answer) -> str | None:
        text = text_of(a.element(path), a.where, path)
        if text == expected:
            return None
        return f"{a.where}: expected {path} {_quoted(expected)}, actual {_quoted(text)}"
    _each(answers, check)


def element_matches(answers: Sequence[Answer], path: str, pattern: Pattern) -> None:
    def check(a: Answer) -> str | None:
        text = text_of(a.element(path), a.where, path)
        if pattern.fullmatch(text):
            return None
        return (f"{a.where}: expected {path} matching {_quoted(pattern.pattern)}, actual "
                f"{_quoted(text)}")
    _each(answers, check)


def element_occurs(answers: Sequence[Answer], path: str, count: int) -> None:
    def check(a: Answer) -> str | None:
        found = len(a.elements(path))
        if found == count:
            return None
        return f"{a.where}: expected {path} {count} time(s), actual {found}"
    _each(answers, check)


def element_exists(answers: Sequence[Answer], path: str, exists: bool = True) -> None:
    def check(a: Answer) -> str | None:
        try:
            found = bool(a.elements(path))
        except AssertionError:
            if exists:
                raise
            found = False
        if found == exists:
            return None
        return f"{a.where}: expected " + (f"an element {path}, there is none" if exists else
                                          f"no element {path}, there is one")
    _each(answers, check)


def is_fault(answers: Sequence[Answer], code: str | None) -> None:
    """A SOAP fault (of ``code``, in either SOAP version's word, or a refinement of it: the
    fault diff, replay and probe take for the same, ``bindings.same_fault``)."""
    def check(a: Answer) -> str | None:
        got = a.fault_code
        if got is not None and (code is None or same_fault(code, got)):
            return None
        want = "a SOAP fault" + (f" with code {_quoted(code)}" if code else "")
        if got is None and not a.call.binding.is_soap:
            return (f"{a.where}: expected {want}, actual {a.summary()} ({a.call.binding.label} "
                    "answers errors with an HTTP status, never a SOAP fault: check "
                    "the HTTP status)")
        return f"{a.where}: expected {want}, actual {a.summary()}"
    _each(answers, check)


def succeeds(answers: Sequence[Answer]) -> None:
    _each(answers, lambda a: None if a.succeeded else
          f"{a.where}: expected a successful answer, actual {a.summary()}")


def status_is(answers: Sequence[Answer], status: int) -> None:
    _each(answers, lambda a: None if a.status == status else
          f"{a.where}: expected HTTP status {status}, actual {a.summary()}")


def header_is(answers: Sequence[Answer], name: str, expected: str, *,
              contains: bool = False) -> None:
    def check(a: Answer) -> str | None:
        value = a.response.header(name) if a.response is not None else None
        if value is not None and (expected in value if contains else value == expected):
            return None
        how = "containing " if contains else ""
        return (f"{a.where}: expected the response header {name} {how}{_quoted(expected)}, "
                f"actual " + (_quoted(value) if value is not None else "no such header"))
    _each(answers, check)


def answer_contains(answers: Sequence[Answer], text: str) -> None:
    def check(a: Answer) -> str | None:
        body = a.response.body.decode("utf-8", "replace") if a.response is not None else ""
        if text in body:
            return None
        return f"{a.where}: expected the answer to contain {_quoted(text)}, actual {a.summary()}"
    _each(answers, check)


def same_results(answers: Sequence[Answer], bindings: Sequence[str]) -> None:
    """The answers (one per binding, in the contract's order) give one result; ``bindings``
    the labels that must be there."""
    by_binding = {a.call.binding.label: a for a in answers}
    missing = [b for b in bindings if b not in by_binding]
    if missing:
        called = ", ".join(by_binding) or "none"
        raise AssertionError(f"expected a call over each of {', '.join(bindings)}; called over "
                             f"{called}: call over {', '.join(missing)} first")
    results: dict[str, Value] = {}
    problems = []
    for label in bindings:
        try:
            results[label] = by_binding[label].result()
        except AssertionError as exc:
            problems.append(str(exc))
    if problems:
        raise AssertionError("\n".join(problems))
    first = bindings[0]
    differ = [label for label in bindings[1:] if results[label] != results[first]]
    if differ:
        raise AssertionError("the bindings give different results: " + "; ".join(
            f"{label} {_quoted(by_binding[label].result_text())}"
            for label in bindings))
