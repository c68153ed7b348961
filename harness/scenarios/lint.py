"""The check of a team's own features before certify runs them (``certify --features DIR``).

Every step of every scenario (each example of an outline) must be one sentence of the
vocabulary (the packaged steps), under the right keyword, and what it names must exist: the
operation, the binding it is offered on, the parameters, the rule and its tag, the values saved
before (``${name}``), an element path, a regular expression, a status, a fault code; each value
of a call's table is of its parameter's type, unless the scenario expects the error answer. The
first problem is one UsageError naming the file and the line (exit 2), before anything is sent:
never a pytest traceback halfway through a run.

The step functions' arguments say what to check, by name (the convention the steps keep):
``operation``, ``binding``, ``values``, ``endpoint``, ``rule``, ``path``, ``regex``,
``status``, ``code``, ``shape``, ``pseudonym``, ``key``, ``name`` (saved), and a ``datatable``
parameter for a table.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.contract.bindings import Binding, closest, code_words
from harness.contract.model import Contract, Operation
from harness.errors import UsageError
from harness.patterns import PatternError, compile_pattern
from harness.scenarios.answers import FAULT_CODES, parse_path
from harness.scenarios.values import (
    ELEMENTS_TABLE,
    call_arguments,
    references,
    shape_of,
    table_rows,
    type_problems,
)
from harness.traffic.redaction import is_pseudonym

#: The step modules whose sentences a team's features may use (the recorded-traffic steps need
#: the fixtures of their own test module, steps/test_recorded_traffic.py).
VOCABULARY_MODULES = ("harness.certify.steps.conformance_steps",
                      "harness.certify.steps.scenario_steps",
                      "harness.certify.steps.mock_steps")
ALL_FOUR = tuple(b.label for b in Binding)
_PLACEHOLDER = re.compile(r"<([^<>]+)>")


@dataclass(frozen=True)
class Sentence:
    """One sentence of the vocabulary: a step definition of the packaged steps."""

    keyword: str | None  # given, when, then; None: any
    parser: Any  # pytest_bdd.parsers.StepParser
    function: Callable[..., object]

    @property
    def takes_table(self) -> bool:
        return "datatable" in inspect.signature(self.function).parameters

    @property
    def doc(self) -> list[str]:
        return inspect.cleandoc(self.function.__doc__ or "").splitlines()

    @property
    def template(self) -> str:
        """The sentence as a person writes it: ``Then the result is "<text>"``."""
        return self.doc[0] if self.doc else str(self.parser.name)

    @property
    def description(self) -> str:
        body = self.doc[1:]
        at = next((i for i, line in enumerate(body) if line.startswith("Example:")), len(body))
        return " ".join(" ".join(body[:at]).split())

    @property
    def example(self) -> list[str]:
        """The example's lines: the step, then its table's rows."""
        body = self.doc
        at = next((i for i, line in enumerate(body) if line.startswith("Example:")), None)
        if at is None:
            return []
        return [body[at].removeprefix("Example:").strip(),
                *(line.strip() for line in body[at + 1:] if line.strip())]

    def matches(self, text: str) -> bool:
        return bool(self.parser.is_matching(text))


@cache
def vocabulary() -> tuple[Sentence, ...]:
    """The sentences of the packaged steps a team's features may use, in the order they are
    defined (a function under two keywords once per keyword)."""
    import importlib

    from pytest_bdd.steps import step_function_context_registry

    for name in VOCABULARY_MODULES:
        importlib.import_module(name)
    found = [Sentence(ctx.type, ctx.parser, ctx.step_func)
             for ctx in list(step_function_context_registry.values())
             if ctx.step_func.__module__ in VOCABULARY_MODULES]
    order = {name: i for i, name in enumerate(VOCABULARY_MODULES)}
    unique = {(s.keyword, s.function.__module__, s.function.__qualname__, str(s.parser.name)): s
              for s in found}
    return tuple(sorted(unique.values(), key=lambda s: (order[s.function.__module__],
                                                         s.function.__code__.co_firstlineno)))


# ------------------------------------------------------------------------------- the check


def check_features(paths: Iterable[Path], contract: Contract) -> int:
    """Check the features at ``paths`` against the vocabulary and ``contract``; the number of
    scenarios (outline examples counted one by one). UsageError ``FILE:LINE: problem``."""
    from pytest_bdd.parser import FeatureParser

    count = 0
    for path in paths:
        feature = FeatureParser(str(path.parent), path.name).parse()
        rows = _example_rows(path)
        if not feature.scenarios:
            _no_scenario(path, feature)
        for template in feature.scenarios.values():
            for context, line in _examples(path, template, rows.get(template.line_number, [])):
                _check_scenario(path, template.render(context), template, contract, line)
                count += 1
    return count


_KEYWORD_LINE = re.compile(r"\s*(Scenario Outline|Scenario|Background|Examples|Rule|Given|When|"
                           r"Then|And|But)\b(?!:)")


def _no_scenario(path: Path, feature) -> None:
    """UsageError for a feature without a scenario, naming the line that likely meant one (a
    keyword without its colon reads as the feature's description)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if number > feature.line_number and _KEYWORD_LINE.match(line):
            raise UsageError(f"{path}:{number}: {line.strip()!r} reads as the feature's "
                             "description, not a step or a scenario: a colon missing after "
                             "its keyword (Scenario: NAME)?")
    raise UsageError(f"{path}:{feature.line_number}: the feature has no scenario (one starts "
                     "with 'Scenario: NAME' or 'Scenario Outline: NAME')")


def _example_rows(path: Path) -> dict[int, list[int]]:
    """Scenario line -> the line of each of its Examples rows, in order; UsageError for two
    scenarios of one name in the feature (pytest-bdd would run the last one only)."""
    from pytest_bdd.gherkin_parser import get_gherkin_document

    children = list(get_gherkin_document(str(path)).feature.children)
    for child in list(children):
        if child.rule:
            children.extend(child.rule.children)
    seen: dict[str, int] = {}
    rows: dict[int, list[int]] = {}
    for scenario in (child.scenario for child in children if child.scenario):
        line = scenario.location.line
        if scenario.name in seen:
            raise UsageError(f"{path}:{line}: a second scenario named {scenario.name!r} (the "
                             f"first is on line {seen[scenario.name]}): give each its own name")
        seen[scenario.name] = line
        rows[line] = [row.location.line for examples in scenario.examples
                      for row in examples.table_body or ()]
    return rows


def _examples(path: Path, template, lines: list[int]
              ) -> Iterator[tuple[Mapping[str, str], int | None]]:
    """Each example's context and the line of its row, or one empty context."""
    contexts = [context for examples in template.examples for context in examples.as_contexts()]
    if template.templated and not contexts:
        raise UsageError(f"{path}:{template.line_number}: the Scenario Outline "
                         f"{template.name!r} has no Examples rows")
    columns = {name for examples in template.examples for name in examples.example_params}
    for step in template.steps if template.templated else ():
        cells = [c.value for row in (step.datatable.rows if step.datatable else ())
                 for c in row.cells]
        for name in (n for text in (step.name, *cells) for n in _PLACEHOLDER.findall(text)):
            if name not in columns:
                raise UsageError(f"{path}:{step.line_number}: <{name}> is not a column of "
                                 f"the Examples (columns: {', '.join(sorted(columns))})")
    if not contexts:
        yield {}, None
        return
    yield from zip(contexts, [*lines, *[None] * len(contexts)][:len(contexts)], strict=True)


@dataclass
class _Walk:
    """What the steps before the current one did."""

    saved: set[str]
    called: bool = False


def _check_scenario(path: Path, scenario, template, contract: Contract,
                    row_line: int | None) -> None:
    tags = set(scenario.tags) | set(scenario.feature.tags)
    walk = _Walk(saved=set())
    steps = scenario.steps
    for i, step in enumerate(steps):
        where = f"{path}:{step.line_number}" + (f" (the example on line {row_line})"
                                                 if row_line else "")
        try:
            sentence, args = _sentence(step)
            _check_step(step, sentence, args, contract, tags, walk, steps[i + 1:])
        except (UsageError, ValueError) as exc:
            raise UsageError(f"{where}: {exc}") from None


def _sentence(step) -> tuple[Sentence, dict[str, Any]]:
    """The one sentence of the vocabulary ``step`` is, and its arguments."""
    keyword = step.type
    matching = [s for s in vocabulary() if s.keyword in (None, keyword) and s.matches(step.name)]
    if len(matching) == 1:
        return matching[0], matching[0].parser.parse_arguments(step.name) or {}
    if len(matching) > 1:
        raise UsageError(f"{step.keyword.strip()} {step.name!r} reads as more than one "
                         "sentence: " + "; ".join(s.template for s in matching))
    other = next((s for s in vocabulary() if s.matches(step.name)), None)
    if other is not None and other.keyword:
        word = other.keyword.capitalize()
        raise UsageError(f"{step.name!r} is a {word} sentence, here a {keyword.capitalize()} "
                         f"step (after {step.keyword.strip()}): start it with {word}")
    raise UsageError(f"no sentence of the vocabulary says {step.keyword.strip()} "
                     f"{step.name!r}{_nearest(step.name)}")


def _nearest(text: str) -> str:
    """``; did you mean ...`` with the sentence of the closest wording."""
    def wording(template: str) -> str:
        return template.split(" ", 1)[-1]
    templates = {wording(s.template): s.template for s in vocabulary()}
    best = difflib.get_close_matches(text, list(templates), n=1, cutoff=0.6)
    return f" (did you mean {templates[best[0]]!r}?)" if best else ""


def _check_step(step, sentence: Sentence, args: dict[str, Any], contract: Contract,
                tags: set[str], walk: _Walk, after: list) -> None:
    refs = [r for value in args.values() if isinstance(value, str) for r in references(value)]
    wants = step.name.rstrip().endswith(":")  # a table step ends so (some only with words)
    if step.datatable is not None and not (sentence.takes_table and wants):
        raise UsageError(f"{sentence.template!r} takes no table: remove the table below it")
    if sentence.takes_table and wants and step.datatable is None:
        raise UsageError(f"{sentence.template!r} needs a table below it")
    rows = step.datatable.raw() if step.datatable is not None else None
    if args.get("operation"):
        _check_call(contract, args, rows, after)
        walk.called = True
    elif rows is not None:
        for path, _value in table_rows(rows, ELEMENTS_TABLE):
            parse_path(path)
    if rows is not None:
        refs += [r for row in rows[1:] for cell in row for r in references(cell)]
    if args.get("endpoint"):
        if contract.endpoint(args["endpoint"]) is None:
            raise UsageError(f"{args['endpoint']!r} is not an endpoint of the {contract.name} "
                             f"contract (endpoints: {', '.join(contract.endpoints)})")
        walk.called = True
    if step.type == "then" and not walk.called:
        raise UsageError(f"{step.keyword.strip()} {step.name!r} checks a call, and no call "
                         "comes before it: call an operation in a When step first")
    _check_arguments(args, tags)
    unknown = [r for r in refs if r not in walk.saved]
    if unknown:
        raise UsageError(f"${{{unknown[0]}}} is not saved before this step (saved: "
                         f"{', '.join(sorted(walk.saved)) or 'none'}): save it first, e.g. "
                         f"And the result is saved as {unknown[0]}")
    if args.get("name"):
        walk.saved.add(args["name"])


def _check_call(contract: Contract, args: dict[str, Any], rows: list | None,
                after: list) -> None:
    """The operation, the binding(s) it is offered on, the value set, the table's parameters
    and values (of their types, unless the scenario expects the error)."""
    op = _operation(contract, args["operation"])
    bindings = _bindings(contract, op, args.get("binding"))
    if args.get("values"):
        _value_set(args["values"])
    if rows is None:
        return
    arguments = call_arguments(op, rows, None)
    if _expects_error(after):
        return
    for binding in bindings:
        problems = type_problems(op, arguments, binding)
        if problems:
            raise UsageError(f"{problems[0]} over {binding.label} (to send it on purpose, "
                             "expect the error after the call: Then the answer is a SOAP "
                             "fault with code \"Client\", or Then the HTTP status is 500)")


def _operation(contract: Contract, name: str) -> Operation:
    op = contract.find(name)
    if op is None:
        guess = closest(name, {o.name: o.name for o in contract.operations})
        raise UsageError(f"{name!r} is not an operation of the {contract.name} contract"
                         + (f" (did you mean {guess}?)" if guess else "")
                         + f"; its operations: {', '.join(o.name for o in contract.operations)}")
    return op


def _bindings(contract: Contract, op: Operation, binding: str | None) -> list[Binding]:
    """The bindings a call step names (one, or all the operation is offered on), each one
    the contract offers the operation over."""
    offered = [Binding(b) for b in contract.bindings_of(op)]
    if binding is None:
        return offered
    if binding not in ALL_FOUR:
        raise UsageError(f"unknown binding {binding!r}: use one of {', '.join(ALL_FOUR)}")
    how = Binding.parse(binding)
    if how not in offered:
        raise UsageError(f"{op.name} is not offered over {how.label} by the {contract.name} "
                         f"contract (only over {', '.join(b.label for b in offered)})")
    return [how]


def _value_set(name: str) -> None:
    from harness.contract.model import VALUE_SETS

    if name.lower() not in VALUE_SETS:
        raise UsageError(f"unknown value set {name!r} (use {', '.join(VALUE_SETS)})")


def _expects_error(after: list) -> bool:
    """Whether the steps after a call, up to the next call, expect an error answer."""
    for step in after:
        if step.type == "when":
            return False
        matching = [s for s in vocabulary() if s.keyword in (None, step.type)
                    and s.matches(step.name)]
        args = matching[0].parser.parse_arguments(step.name) if len(matching) == 1 else {}
        if "code" in (args or {}):
            return True
        status = (args or {}).get("status")
        if status and not 200 <= int(status) < 300:
            return True
    return False


def _check_arguments(args: dict[str, Any], tags: set[str]) -> None:
    """What the step's other arguments name exists and reads."""
    from harness.judge import rules

    rule = args.get("rule")
    if rule:
        if rule not in rules.catalogue_ids():
            raise UsageError(f"{rule} is not a rule of the catalogue (harness certify "
                             "--list-rules)")
        if rule not in tags:
            raise UsageError(f"the step checks {rule}, and the scenario is not tagged @{rule}: "
                             f"add @{rule} above the Scenario line")
    if args.get("path"):
        parse_path(args["path"])
    if args.get("regex") is not None:
        try:
            compile_pattern(re.sub(r"\$\{[^}]*\}", "x", args["regex"]))
        except PatternError as exc:
            raise UsageError(f"{args['regex']!r} is not a regular expression the harness "
                             f"runs: {exc}") from None
    code = args.get("code")
    if code is not None and code_words(code)[:1] not in [(c,) for c in FAULT_CODES]:
        raise UsageError(f"{code!r} is not a SOAP fault code (use one of "
                         f"{', '.join(FAULT_CODES)}, or one refined: Client.Authentication)")
    status = args.get("status")
    if status is not None and not 100 <= int(status) <= 599:
        raise UsageError(f"{status} is not an HTTP status")
    if args.get("shape"):
        shape_of(args["shape"])
    pseudonym = args.get("pseudonym")
    if pseudonym is not None and not is_pseudonym(pseudonym):
        raise UsageError(f"{pseudonym!r} is not a pseudonym (redacted- and 16 hex digits, as "
                         "a recording holds it)")
    key = args.get("key")
    if key is not None and not re.fullmatch(r"[0-9a-f]{12}", key):
        raise UsageError(f"{key!r} is not a key id (12 hex digits: a recording's key_id)")

