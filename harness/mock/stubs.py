"""Stubs: answers written by hand in the contract's terms (``harness mock --stubs FILE``).

A stubs file (TOML, or the same as JSON) holds ``[[stub]]`` tables, each naming an operation,
optionally the values it matches, and what to answer::

    [[stub]]
    operation = "GetTokenDevice"
    when = { id = "dev-1" }          # omitted: any call of the operation
    result = "token-stubbed"

    [[stub]]
    operation = "AuthCode"
    fault = { code = "Client", reason = "code expired" }

    [[stub]]
    operation = "LogoutFromSchool"
    delay = "1.5s"

    [[stub]]
    operation = "GetTeacherGrpupsByID"
    inject = "reset"                 # a fault of harness.mock.faults, e.g. "trickle=5s"
    probability = 0.1                # the share of matching calls the stub takes

The answer is one of ``result`` (a value of the operation's result type: text, a list, a
table), ``fault`` (``code`` and ``reason``), ``status`` (with an optional ``body`` and
``content_type``), or ``answers``: a list of those, one per call in turn, then the last again.
``headers`` adds response headers. A stub with none of them answers what the mock would answer
without it (the recording's, the fallback's; a void operation's empty answer), delayed or
disrupted as it says. The answer is rendered in the asking binding's form by the contract, as
ASP.NET renders it, so one stub serves SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST.

``when`` matches each named parameter by meaning (its type reads the value: ``7`` is ``+007``
for an int) or, written ``{ pattern = "dev-[0-9]+" }``, by a regular expression the whole value
matches. The first stub that matches answers: stubs added at run time (the latest first), then
the files' in the order written. Anything the contract does not know (an operation, a
parameter, a value of the wrong type, a field of a result) is a ``FILE:LINE`` error with a
did-you-mean.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.contract import structure
from harness.contract.bindings import (
    Binding,
    FaultCode,
    build_fault,
    build_response,
    did_you_mean,
)
from harness.contract.model import Contract, Operation
from harness.contract.types import ParamType
from harness.errors import UsageError
from harness.mock import faults
from harness.mock.values import normal_arguments, shown
from harness.patterns import Pattern, PatternError, compile_pattern
from harness.traffic.exchange import HttpResponse, replace_header
from harness.traffic.redaction import is_pseudonym, shown_secret

#: Keys of a stub, and of one answer of its ``answers``.
ANSWER_KEYS = ("result", "fault", "status", "body", "content_type", "headers", "delay",
               "inject")
STUB_KEYS = ("operation", "when", "answers", "probability", "id", *ANSWER_KEYS)
#: Largest stubs file read (a stubs file is written by hand).
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Longest pattern of a ``when`` (a regular expression is compiled once, matched per call).
MAX_PATTERN = 1000


class StubError(UsageError):
    """A stub the contract cannot serve: ``FILE:LINE: what is wrong``."""


# ----------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Match:
    """What one parameter's value must be: equal by meaning, or matching a pattern."""

    parameter: str
    at: int  # the parameter's position in the operation's values
    equals: str | None = None  # the normal form (harness.mock.values)
    pattern: Pattern | None = None
    written: str = ""  # as the stub wrote it (listing)

    def matches(self, value: str, pseudonymise: Pseudonymise | None) -> bool:
        """``pseudonymise`` (the recording's key): a call carrying pseudonyms (a replay of a
        redacted recording) matches the value they stand for."""
        if self.pattern is not None:
            return self.pattern.fullmatch(value) is not None
        if value == self.equals:
            return True
        return (pseudonymise is not None and self.equals is not None and is_pseudonym(value)
                and pseudonymise(self.parameter, self.equals) == value)


#: (parameter, value) -> the value as the recording holds it (its pseudonym when sensitive).
Pseudonymise = Callable[[str, str], str]


@dataclass(frozen=True)
class Reply:
    """One answer of a stub, and what is done to it."""

    result: Any = None
    has_result: bool = False
    fault: tuple[FaultCode, str] | None = None
    status: int | None = None
    body: bytes | None = None
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: tuple[float, float] | None = None
    inject: tuple[faults.Fault, ...] = ()

    @property
    def answers(self) -> bool:
        """Whether it says what to answer (else: what the mock would answer without it)."""
        return self.has_result or self.fault is not None or self.status is not None

    def response(self, contract: Contract, op: Operation, binding: Binding) -> HttpResponse:
        """The answer over ``binding``, as ASP.NET renders it (``answers`` is True, or the
        operation is void)."""
        if self.fault is not None:
            response = build_fault(binding, *self.fault)
        elif self.has_result or self.status is None:
            response = build_response(contract, op, binding, self.result)
            if self.status is not None:
                response = HttpResponse(self.status, response.headers, response.body,
                                        faults.status_page(self.status).reason)
        elif self.body is not None:
            page = faults.status_page(self.status)
            response = HttpResponse(self.status, (("Content-Type", self.content_type
                                                   or "text/plain; charset=utf-8"),),
                                    self.body, page.reason)
        else:
            response = faults.status_page(self.status)
        for name, value in self.headers:
            response = HttpResponse(response.status, replace_header(response.headers, name,
                                                                    value),
                                    response.body, response.reason)
        return response

    def disrupted(self, answer, binding: Binding, rng: random.Random, injected: list[str]):
        """``answer`` delayed and disrupted as this reply says; ``injected`` gets the label of
        each fault done."""
        for fault in self.inject:
            if fault.hits(rng):
                answer = fault.applied(answer, binding, rng)
                injected.append(fault.label)
        if self.delay is not None:
            delay = faults.Fault("delay", *self.delay)
            answer = delay.applied(answer, binding, rng)
            injected.append(delay.label)
        return answer

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.has_result:
            data["result"] = self.result
        if self.fault is not None:
            data["fault"] = {"code": self.fault[0].value, "reason": self.fault[1]}
        if self.status is not None:
            data["status"] = self.status
        if self.body is not None:
            data["body"] = self.body.decode("utf-8", "replace")
        if self.content_type:
            data["content_type"] = self.content_type
        if self.headers:
            data["headers"] = dict(self.headers)
        if self.delay is not None:
            low, high = self.delay
            data["delay"] = f"{low:g}s" if low == high else f"{low:g}s-{high:g}s"
        if self.inject:
            data["inject"] = [f.label for f in self.inject]
        return data


@dataclass(frozen=True)
class Stub:
    id: str
    operation: str
    when: tuple[Match, ...]
    replies: tuple[Reply, ...]
    probability: float = 1.0
    where: str = ""  # FILE:LINE, or "added at run time"

    def matches(self, values: tuple[str, ...], pseudonymise: Pseudonymise | None) -> bool:
        return all(m.matches(values[m.at], pseudonymise) for m in self.when)

    def describe(self, sensitive: frozenset[str]) -> str:
        """``id='dev-1'``, ``id=~'dev-[0-9]+'`` (a pattern), ``any call``: what it matches, a
        sensitive value masked."""
        return ", ".join(
            f"{m.parameter}=" + ("~" + shown(m.written) if m.pattern is not None
                                 else shown_secret(m.written) if m.parameter in sensitive
                                 else shown(m.written))
            for m in self.when) or "any call"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "operation": self.operation}
        if self.when:
            data["when"] = {m.parameter: ({"pattern": m.written} if m.pattern is not None
                                          else m.written) for m in self.when}
        if len(self.replies) == 1:
            data.update(self.replies[0].to_data())
        else:
            data["answers"] = [r.to_data() for r in self.replies]
        if self.probability < 1:
            data["probability"] = self.probability
        data["where"] = self.where
        return data


# ------------------------------------------------------------------------------ the set


@dataclass
class Chosen:
    """The stub that takes a call, and its reply for this call."""

    stub: Stub
    reply: Reply


@dataclass
class Stubs:
    """The stubs of a mock: the files' and those added at run time (harness.mock.admin)."""

    written: list[Stub] = field(default_factory=list)
    added: list[Stub] = field(default_factory=list)
    rng: random.Random = field(default_factory=random.Random)
    pseudonymise: Pseudonymise | None = None
    _by_operation: dict[str, tuple[Stub, ...]] = field(default_factory=dict)
    _turns: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _numbers: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self._index()

    def _index(self) -> None:
        by_operation: dict[str, list[Stub]] = {}
        for stub in [*reversed(self.added), *self.written]:
            by_operation.setdefault(stub.operation, []).append(stub)
        self._by_operation = {name: tuple(found) for name, found in by_operation.items()}

    def __bool__(self) -> bool:
        return bool(self._by_operation)

    def of(self, operation: str) -> tuple[Stub, ...]:
        return self._by_operation.get(operation, ())

    def choose(self, operation: str, values: tuple[str, ...]) -> Chosen | None:
        """The first stub of ``operation`` matching ``values`` (normal forms) that takes the
        call (its probability), with its reply in turn; None when none does."""
        for stub in self._by_operation.get(operation, ()):
            if not stub.matches(values, self.pseudonymise):
                continue
            if stub.probability < 1 and self.rng.random() >= stub.probability:
                continue
            return Chosen(stub, self._turn(stub))
        return None

    def _turn(self, stub: Stub) -> Reply:
        if len(stub.replies) == 1:
            return stub.replies[0]
        with self._lock:
            turn = self._turns.get(stub.id, 0)
            self._turns[stub.id] = turn + 1
        return stub.replies[min(turn, len(stub.replies) - 1)]

    def add(self, stubs: list[Stub]) -> list[str]:
        """Add ``stubs`` (made by ``from_data`` without ids): their ids, ``added-N``."""
        with self._lock:
            named = [Stub(s.id or f"added-{next(self._numbers)}", s.operation, s.when,
                          s.replies, s.probability, s.where) for s in stubs]
            taken = {s.id for s in [*self.added, *self.written]}
            clash = [s.id for s in named if s.id in taken]
            if clash:
                raise ValueError(f"a stub with id {clash[0]!r} exists: remove it first")
            self.added.extend(named)
            self._index()
        return [s.id for s in named]

    def remove(self, stub_id: str | None = None) -> int:
        """Remove the stub ``stub_id`` (a file's too), or every stub added at run time."""
        with self._lock:
            if stub_id is None:
                gone = len(self.added)
                self.added.clear()
            else:
                before = len(self.added) + len(self.written)
                self.added = [s for s in self.added if s.id != stub_id]
                self.written = [s for s in self.written if s.id != stub_id]
                gone = before - len(self.added) - len(self.written)
            self._turns = {k: v for k, v in self._turns.items()
                           if any(s.id == k for s in [*self.added, *self.written])}
            self._index()
        return gone

    def listing(self) -> list[dict[str, Any]]:
        return [s.to_data() for s in [*reversed(self.added), *self.written]]


# ------------------------------------------------------------------------------- reading


def load_files(contract: Contract, paths: Sequence[str | Path]) -> list[Stub]:
    """The stubs of every file in ``paths``, in order; StubError (exit 2) at the first
    problem, naming its file and line."""
    stubs: list[Stub] = []
    for path in paths:
        stubs.extend(load_file(contract, Path(path)))
    return stubs


def load_file(contract: Contract, path: Path) -> list[Stub]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise StubError(f"{path}: larger than {MAX_FILE_BYTES // 1024 // 1024} MB: not a "
                            "stubs file")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StubError(f"stubs file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StubError(f"cannot read stubs file {path}: "
                        f"{getattr(exc, 'strerror', None) or exc}") from None
    as_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".toml"
                                                 and text.lstrip()[:1] == "{")
    data = _parsed_json(text, path) if as_json else _parsed_toml(text, path)
    where = Locator(text, path, as_json)
    entries = data.get("stub") if isinstance(data, Mapping) else data
    if isinstance(data, Mapping):
        extra = [k for k in data if k != "stub"]
        if extra:
            raise StubError(f"{path}:{where.top(extra[0])}: {extra[0]!r} is no section of a "
                            f"stubs file{did_you_mean(extra[0], ['stub'])}; write [[stub]] "
                            "tables")
    if not isinstance(entries, list) or not entries:
        raise StubError(f"{path}:1: no stub: write [[stub]] tables, each with an operation")
    stubs = []
    for number, entry in enumerate(entries):
        try:
            stub = from_data(contract, entry)
        except Problem as exc:
            raise StubError(f"{path}:{where.line(number, exc.path)}: {exc}") from None
        line = where.line(number, ())
        stubs.append(Stub(stub.id or f"{path.name}:{line}", stub.operation, stub.when,
                          stub.replies, stub.probability, f"{path}:{line}"))
    return stubs


def _parsed_toml(text: str, path: Path) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = found.group(1) if found else "1"
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise StubError(f"{path}:{line}: not TOML: {reason}") from None


def _parsed_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StubError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise StubError(f"{path}:1: not JSON: nested too deeply") from None


class Problem(ValueError):
    """What is wrong with a stub, and where in it (its keys, for the line)."""

    def __init__(self, message: str, *path: str | int) -> None:
        super().__init__(message)
        self.path = path


def from_data(contract: Contract, data: Any) -> Stub:
    """A stub from its table (a file's, or JSON the admin API was sent); Problem when the
    contract cannot serve it."""
    if not isinstance(data, Mapping):
        raise Problem("a stub is a table (operation = ..., result = ...)")
    for key in data:
        if key not in STUB_KEYS:
            raise Problem(f"{key!r} is no key of a stub{did_you_mean(key, STUB_KEYS)}; keys: "
                          + ", ".join(STUB_KEYS), key)
    name = data.get("operation")
    if not isinstance(name, str) or not name:
        raise Problem("a stub names its operation: operation = \"GetTokenDevice\"")
    op = contract.find(name)
    if op is None:
        raise Problem(f"{name!r} is no operation of {contract.name}"
                      f"{did_you_mean(name, [o.name for o in contract.operations])}",
                      "operation")
    when = _when(op, data.get("when"))
    if "answers" in data:
        answers = data["answers"]
        mixed = [k for k in ANSWER_KEYS if k in data]
        if mixed:
            raise Problem(f"{mixed[0]!r} beside answers: put it in each answer", mixed[0])
        if not isinstance(answers, list) or not answers:
            raise Problem("answers is a list of answers, one per call in turn", "answers")
        replies = tuple(_reply(contract, op, a, ("answers", n)) for n, a in enumerate(answers))
    else:
        replies = (_reply(contract, op, data, ()),)
    share = 1.0
    if "probability" in data:
        try:
            share = faults.probability(data["probability"])
        except ValueError as exc:
            raise Problem(str(exc), "probability") from None
    stub_id = data.get("id")
    if stub_id is not None and (not isinstance(stub_id, str) or not stub_id.strip()):
        raise Problem("id is a name (text)", "id")
    return Stub(stub_id or "", op.name, when, replies, share)


def _when(op: Operation, given: Any) -> tuple[Match, ...]:
    if given is None:
        return ()
    if not isinstance(given, Mapping):
        raise Problem("when is a table of parameter values: when = { id = \"dev-1\" }", "when")
    matches = []
    for name, value in given.items():
        p = op.parameter(name)
        if p is None:
            raise Problem(f"{op.name} has no parameter {name!r}"
                          f"{did_you_mean(name, op.parameter_names)}; its parameters: "
                          f"{', '.join(op.parameter_names) or 'none'}", "when", name)
        at = op.parameters.index(p)
        if isinstance(value, Mapping) and set(value) == {"pattern"}:
            matches.append(Match(name, at, pattern=_pattern(value["pattern"], name),
                                 written=str(value["pattern"])))
            continue
        text = _value_of(op, p.type_name or p.type.value, value, name)
        equals = normal_arguments(op, {name: text}, http=False)[at]
        matches.append(Match(name, at, equals=equals, written=structure.canonical(text)))
    return tuple(matches)


def _pattern(text: Any, name: str) -> Pattern:
    if not isinstance(text, str) or len(text) > MAX_PATTERN:
        raise Problem(f"the pattern of {name} is a regular expression (text, at most "
                      f"{MAX_PATTERN} characters)", "when", name)
    try:
        return compile_pattern(text)
    except PatternError as exc:
        raise Problem(f"the pattern of {name} cannot be used: {exc}", "when", name) from None


def _value_of(op: Operation, type_ref: str, value: Any, name: str) -> Any:
    """A value of parameter ``name`` as the stub wrote it, checked against its type."""
    p = op.parameter(name)
    assert p is not None
    if p.type is ParamType.COMPLEX:
        try:
            return structure.validate(op.schema, type_ref, value, name)
        except ValueError as exc:
            raise Problem(str(exc), "when", name) from None
    if isinstance(value, (Mapping, list)):
        raise Problem(f"{name} is a {type_ref}: give one value, or {{ pattern = \"...\" }}",
                      "when", name)
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if not p.accepts(text):
        raise Problem(f"{text!r} is not a {type_ref} ({name})", "when", name)
    return text


def _reply(contract: Contract, op: Operation, data: Any, at: tuple[str | int, ...]) -> Reply:
    if not isinstance(data, Mapping):
        raise Problem("an answer is a table (result = ..., fault = ..., status = ...)", *at)
    for key in data:
        if key not in ANSWER_KEYS and at:
            raise Problem(f"{key!r} is no key of an answer{did_you_mean(key, ANSWER_KEYS)}",
                          *at, key)
    given = [k for k in ("result", "fault") if k in data]
    if len(given) > 1:
        raise Problem("one answer: a result or a fault, not both", *at, given[1])
    result, has_result = None, "result" in data
    if has_result:
        result = _result(op, data["result"], at)
    fault = _fault(data["fault"], at) if "fault" in data else None
    status = _status(data, at)
    if fault is not None and status is not None:
        raise Problem("a fault is answered 500 (as ASP.NET does): leave status out", *at,
                      "status")
    body = data.get("body")
    if body is not None and (status is None or has_result or not isinstance(body, str)):
        raise Problem("body (text) goes with status alone: the answer's raw body", *at, "body")
    content_type = data.get("content_type")
    if content_type is not None and (body is None or not isinstance(content_type, str)):
        raise Problem("content_type (text) goes with body", *at, "content_type")
    return Reply(result, has_result, fault, status,
                 body.encode("utf-8") if isinstance(body, str) else None, content_type,
                 _headers(data.get("headers"), at), _delay(data, at), _inject(data, at))


def _result(op: Operation, value: Any, at: tuple[str | int, ...]) -> Any:
    if op.result is None:
        raise Problem(f"{op.name} returns nothing: leave result out (its answer is empty)",
                      *at, "result")
    try:
        checked = structure.validate(op.schema, op.result, value, "result")
    except ValueError as exc:
        raise Problem(f"{exc} ({op.name} returns {op.result})", *at, "result") from None
    if op.result_type is not ParamType.COMPLEX and checked is None:
        raise Problem(f"result is a {op.result}", *at, "result")
    return checked


def _fault(value: Any, at: tuple[str | int, ...]) -> tuple[FaultCode, str]:
    if not isinstance(value, Mapping):
        raise Problem("fault is a table: fault = { code = \"Client\", reason = \"...\" }", *at,
                      "fault")
    for key in value:
        if key not in ("code", "reason"):
            raise Problem(f"{key!r} is no key of a fault{did_you_mean(key, ['code', 'reason'])}"
                          "; keys: code, reason", *at, "fault", key)
    code_text = str(value.get("code", "Server"))
    code = faults.FAULT_CODES.get(code_text.lower())
    if code is None:
        names = ["Client", "Server", "VersionMismatch", "Sender", "Receiver"]
        raise Problem(f"fault code {code_text!r} is none of Client, Server, VersionMismatch "
                      f"(SOAP 1.2: Sender, Receiver){did_you_mean(code_text, names)}", *at,
                      "fault", "code")
    reason = value.get("reason", faults.FAULT_TEXT)
    if not isinstance(reason, str):
        raise Problem("the reason of a fault is text", *at, "fault", "reason")
    return code, reason


def _status(data: Mapping[str, Any], at: tuple[str | int, ...]) -> int | None:
    if "status" not in data:
        return None
    status = data["status"]
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise Problem(f"status is an HTTP status from 100 to 599, not {status!r}", *at,
                      "status")
    return status


def _headers(value: Any, at: tuple[str | int, ...]) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and re.fullmatch(r"[!#-'*+.0-9A-Z^-z|~]+",
                                                                      k)
            and "\r" not in v and "\n" not in v for k, v in value.items()):
        raise Problem("headers is a table of header names and text values", *at, "headers")
    return tuple(value.items())


def _delay(data: Mapping[str, Any], at: tuple[str | int, ...]) -> tuple[float, float] | None:
    if "delay" not in data:
        return None
    try:
        return faults.seconds(data["delay"])
    except ValueError as exc:
        raise Problem(str(exc), *at, "delay") from None


def _inject(data: Mapping[str, Any], at: tuple[str | int, ...]) -> tuple[faults.Fault, ...]:
    given = data.get("inject")
    if given is None:
        return ()
    specs = given if isinstance(given, list) else [given]
    found = []
    for spec in specs:
        if not isinstance(spec, str):
            raise Problem("inject is a fault such as \"reset\" (or a list of them)", *at,
                          "inject")
        try:
            found.append(faults.parse(spec))
        except ValueError as exc:
            raise Problem(f"inject: {exc}", *at, "inject") from None
    return tuple(found)


# ----------------------------------------------------------------------------- the lines


class Locator:
    """The line of a stub's key in the file's text (a problem's ``FILE:LINE``): tomllib and
    json say no positions, so the text is searched: the stub's table, then each key of the
    path after the previous one's."""

    def __init__(self, text: str, path: Path, as_json: bool) -> None:
        self.text, self.as_json = text, as_json
        self.starts = _json_elements(text) if as_json else [
            m.start() for m in re.finditer(r"(?m)^[ \t]*\[\[[ \t]*stub[ \t]*\]\]", text)]

    def top(self, key: str) -> int:
        found = re.search(self._key(key), self.text)
        return self._line(found.start("key") if found else 0)

    def line(self, number: int, path: Sequence[str | int]) -> int:
        if number >= len(self.starts):
            return 1
        at = self.starts[number]
        end = self.starts[number + 1] if number + 1 < len(self.starts) else len(self.text)
        for key in path:
            if isinstance(key, int):
                continue  # the key searched next is in that element, after this point
            found = re.compile(self._key(key)).search(self.text, at, end)
            if found is None:
                break
            at = found.start("key")
        return self._line(at)

    def _key(self, key: str) -> str:
        name = re.escape(key)
        if self.as_json:
            return rf'(?P<key>"{name}")\s*:'
        return rf'(?m)(?:^|[{{,\s])(?P<key>{name}|"{name}"|\'{name}\')[ \t]*='

    def _line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


def _json_elements(text: str) -> list[int]:
    """Where each stub of a JSON stubs file starts: the elements of its ``"stub"`` array (or
    of the top-level array)."""
    found = re.search(r'"stub"\s*:\s*\[', text)
    at = found.end() if found else text.find("[") + 1
    if at <= 0:
        return []
    decoder, starts = json.JSONDecoder(), []
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] == "]":
            return starts
        starts.append(at)
        try:
            _value, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return starts
