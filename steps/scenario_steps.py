"""The vocabulary of functional scenarios: sentences a QA team writes its own Gherkin with,
glued to harness.scenarios (calls with given values, answers read, checks) and nothing more.

Each step's docstring is its entry in the step reference (docs, generated at build time): the
sentence on the first line, what it does, and an example that must match it. Arguments are
named for what they hold (``operation``, ``binding``, ``path``, ``regex``, ``status``, ``code``,
``name``...): ``harness.scenarios.lint`` checks a feature's steps by these names before a run.

Imported with ``*`` by steps/conftest.py (pytest-bdd steps are module-level fixtures).
"""

from __future__ import annotations

import re

import pytest
from pytest_bdd import given, parsers, step, then, when

from harness import patterns
from harness.certify.engine import Call, Service
from harness.contract.bindings import Binding
from harness.reports.allure_bridge import attach_call
from harness.scenarios import checks
from harness.scenarios.state import ScenarioState
from harness.scenarios.values import (
    ELEMENTS_TABLE,
    NAME,
    ValueProblem,
    call_arguments,
    shape_of,
    table_rows,
)

#: The binding of a call sentence: one label, never "all four bindings" nor a table's colon.
BINDING = r"(?P<binding>(?!all four bindings)[^:]+?)"
#: A path of local names (no blank, no quote).
PATH = r"(?P<path>[^\s\"]+)"
ALL_FOUR = tuple(b.label for b in Binding)


def _make(service: Service, state: ScenarioState, calls: list[Call], tagged: list[str],
          operation: str, bindings: tuple[str, ...], datatable: list[list[str]] | None) -> None:
    """The calls of one When step: over each binding, with the table's values (or the
    generated ones), the scenario's headers; judged by the scenario's rule tags."""
    op = service.contract.find(operation)
    made = []
    for binding in bindings:
        arguments = None
        if datatable is not None and op is not None:
            try:
                arguments = call_arguments(op, datatable, state.saved)
            except ValueProblem as exc:
                raise AssertionError(str(exc)) from None
        call = service.call(operation, binding, None, tagged, arguments=arguments,
                            headers=[(n, state.fill(v)) for n, v in state.headers])
        attach_call(call)
        made.append(call)
    calls.extend(made)
    state.called(made)


def _offered(service: Service, operation: str) -> tuple[str, ...]:
    op = service.contract.find(operation)
    names = service.contract.bindings_of(op) if op is not None else ()
    return tuple(Binding(b).label for b in names) or ALL_FOUR


# ------------------------------------------------------------------------------------ Given


@step(parsers.re(r'the request header "(?P<header>[^"]+)" is "(?P<value>.*)"', re.DOTALL))
def request_header(header: str, value: str, scenario_state: ScenarioState) -> None:
    """Given the request header "<header>" is "<value>"

    Every later call of the scenario carries this header (over a generated one of the same
    name, e.g. SOAPAction); ``${name}`` in the value is replaced when the call is made.

    Example: Given the request header "Authorization" is "Bearer ${token}"
    """
    scenario_state.headers = [(n, v) for n, v in scenario_state.headers
                              if n.lower() != header.lower()] + [(header, value)]


@given(parsers.re(r'the recorded values are pseudonyms under key "(?P<key>[^"]*)"'))
def pseudonym_key(key: str, service: Service, scenario_state: ScenarioState) -> None:
    """Given the recorded values are pseudonyms under key "<key id>"

    The values the scenario expects by pseudonym (``the result's pseudonym is``) were redacted
    by capture under the key of this id (the recording's ``key_id``): certify finds the key in
    your key store, or takes it from ``--key-file``. ``harness scenarios`` writes this step.

    Example: Given the recorded values are pseudonyms under key "3f9a0c12ab34"
    """
    from harness.traffic.keys import key_of_id, key_store

    found = key_of_id(key, service.settings.key)
    if found is None:
        raise AssertionError(f"the pseudonym key {key} is not in your key store "
                             f"({key_store()}): give certify --key-file FILE (the recording's "
                             "key) to compare the redacted values")
    scenario_state.pseudonym_key = found


# ------------------------------------------------------------------------------------- When


@when(parsers.re(r"the client calls (?P<operation>\S+) over " + BINDING + " with:"))
def call_with(operation: str, binding: str, datatable: list[list[str]], service: Service,
              scenario_state: ScenarioState, calls: list[Call], tagged_rules: list[str]) -> None:
    """When the client calls <Operation> over <binding> with:

    Calls the operation over one binding (``SOAP 1.1``, ``SOAP 1.2``, ``HTTP GET``,
    ``HTTP POST``) with the values of the table below it, ``| parameter | value |``: a
    simple value as written, an array or complex one as JSON; a parameter without a row is
    left out of the request; ``${name}`` is a value saved earlier. Each value is checked
    against its parameter's type before the run: one that is not of it is an error, unless the
    scenario expects the error answer (a SOAP fault, an HTTP status other than 2xx).

    Example: When the client calls LogoutFromSchool over SOAP 1.1 with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | id_row_central | ${row}     |
    """
    _make(service, scenario_state, calls, tagged_rules, operation, (binding,), datatable)


@when(parsers.re(r"the client calls (?P<operation>\S+) over all four bindings"))
def call_over_all(operation: str, service: Service, scenario_state: ScenarioState,
                  calls: list[Call], tagged_rules: list[str]) -> None:
    """When the client calls <Operation> over all four bindings

    One call over each binding the contract offers the operation on, with generated values;
    the Then steps after it check every one of these calls.

    Example: When the client calls GetTokenDevice over all four bindings
    """
    _make(service, scenario_state, calls, tagged_rules, operation,
          _offered(service, operation), None)


@when(parsers.re(r"the client calls (?P<operation>\S+) over all four bindings with:"))
def call_over_all_with(operation: str, datatable: list[list[str]], service: Service,
                       scenario_state: ScenarioState, calls: list[Call],
                       tagged_rules: list[str]) -> None:
    """When the client calls <Operation> over all four bindings with:

    One call over each binding with the values of the table (as in ``over <binding> with:``);
    the Then steps after it check every one of these calls.

    Example: When the client calls GetTokenDevice over all four bindings with:
      | parameter | value  |
      | id        | dev-77 |
    """
    _make(service, scenario_state, calls, tagged_rules, operation,
          _offered(service, operation), datatable)


# --------------------------------------------------------------------------------- the result


@then(parsers.re(r'the result is "(?P<text>.*)"', re.DOTALL))
def result_is(text: str, scenario_state: ScenarioState) -> None:
    """Then the result is "<text>"

    The result is exactly this text (``${name}`` replaced); an array or complex result
    compares with the text read as JSON. An answer that is a fault or an error fails, saying
    what it is.

    Example: Then the result is "token-for-${id}"
    """
    checks.result_is(scenario_state.answers(), scenario_state.fill(text))


@then(parsers.re(r'the result matches "(?P<regex>.*)"', re.DOTALL))
def result_matches(regex: str, scenario_state: ScenarioState) -> None:
    """Then the result matches "<regex>"

    The whole result matches the regular expression (Python's syntax less backreferences and
    lookaround: patterns run on RE2, in time linear in the result; ``${name}`` is replaced by
    the saved value, matched literally).

    Example: Then the result matches "token-for-[0-9]+"
    """
    pattern = _pattern(scenario_state.fill(regex, patterns.escape))
    checks.result_matches(scenario_state.answers(), pattern)


@then(parsers.re(r'the result\'s pseudonym is "(?P<pseudonym>[^"]*)"'))
def result_pseudonym_is(pseudonym: str, scenario_state: ScenarioState) -> None:
    """Then the result's pseudonym is "<pseudonym>"

    The result, redacted in the recording, checked by its value all the same: its pseudonym
    under the recording's key (``the recorded values are pseudonyms under key``) is this one,
    so a changed result fails and the same one passes. A failure shows the result by its
    pseudonym, never in clear. ``harness scenarios`` writes it where it has the key.

    Example: Then the result's pseudonym is "redacted-0598a6acf36021a5"
    """
    if scenario_state.pseudonym_key is None:
        raise AssertionError("no pseudonym key: the scenario compares by pseudonym after "
                             "'Given the recorded values are pseudonyms under key \"...\"'")
    checks.result_pseudonym_is(scenario_state.answers(), pseudonym,
                               scenario_state.pseudonym_key)


@then("the result is empty")
def result_is_empty(scenario_state: ScenarioState) -> None:
    """Then the result is empty

    A successful answer with no result, or an empty one: what an operation returning nothing
    answers.

    Example: Then the result is empty
    """
    checks.result_is_empty(scenario_state.answers())


@then("the result is not empty")
def result_is_not_empty(scenario_state: ScenarioState) -> None:
    """Then the result is not empty

    A successful answer holding a result that is not empty.

    Example: Then the result is not empty
    """
    checks.result_is_empty(scenario_state.answers(), empty=False)


@then(parsers.re(r"the result is (?P<shape>a non-empty string|an? [A-Za-z]+)"))
def result_has_shape(shape: str, scenario_state: ScenarioState) -> None:
    """Then the result is a non-empty string

    The result's shape rather than its value: ``a non-empty string``, or a value of an XSD
    type (``an int``, ``a dateTime``, ``a guid``, ``a boolean``...). ``harness scenarios``
    writes it where the recording holds a redacted value.

    Example: Then the result is an int
    """
    try:
        kind = shape_of(shape)
    except ValueProblem as exc:
        raise AssertionError(str(exc)) from None
    checks.result_has_shape(scenario_state.answers(), kind)


@step(parsers.re(r"the result is saved as (?P<name>" + NAME + ")"))
def result_saved(name: str, scenario_state: ScenarioState) -> None:
    """And the result is saved as <name>

    Keeps the result (of the last call) as ``${name}`` for the later steps of the scenario:
    a table cell, an expected text, a header.

    Example: And the result is saved as token
    """
    answer = scenario_state.answers()[-1]
    scenario_state.save(name, answer.result_text(), f"the result of {answer.where}")


# ------------------------------------------------------------------------------- the elements


@then(parsers.re(r"the element " + PATH + r' is "(?P<text>.*)"', re.DOTALL))
def element_is(path: str, text: str, scenario_state: ScenarioState) -> None:
    """Then the element <path> is "<text>"

    The text of the element the path names: local names below the response element, ``[n]``
    for the n-th of a name (the first when none is given). The result element may be left out,
    and the path means the same over every binding.

    Example: Then the element GetOrderResult/Lines/OrderLine[2]/Quantity is "3"
    """
    checks.element_is(scenario_state.answers(), path, scenario_state.fill(text))


@then(parsers.re(r"the element " + PATH + r' matches "(?P<regex>.*)"', re.DOTALL))
def element_matches(path: str, regex: str, scenario_state: ScenarioState) -> None:
    """Then the element <path> matches "<regex>"

    The element's whole text matches the regular expression.

    Example: Then the element Product/Price matches "[0-9]+\\.[0-9]{2}"
    """
    pattern = _pattern(scenario_state.fill(regex, patterns.escape))
    checks.element_matches(scenario_state.answers(), path, pattern)


@then(parsers.re(r"the element " + PATH + r" exists"))
def element_exists(path: str, scenario_state: ScenarioState) -> None:
    """Then the element <path> exists

    Example: Then the element Product/Tags exists
    """
    checks.element_exists(scenario_state.answers(), path)


@then(parsers.re(r"the element " + PATH + r" does not exist"))
def element_absent(path: str, scenario_state: ScenarioState) -> None:
    """Then the element <path> does not exist

    Example: Then the element Order/Lines/OrderLine[3] does not exist
    """
    checks.element_exists(scenario_state.answers(), path, exists=False)


@then(parsers.re(r"the element " + PATH + r" occurs (?P<count>[0-9]+) times?"))
def element_occurs(path: str, count: str, scenario_state: ScenarioState) -> None:
    """Then the element <path> occurs <n> times

    How many elements of the path's last name there are below their parent: the items of an
    array.

    Example: Then the element ArrayOfProduct/Product occurs 2 times
    """
    checks.element_occurs(scenario_state.answers(), path, int(count))


@then("the elements are:")
def elements_are(datatable: list[list[str]], scenario_state: ScenarioState) -> None:
    """Then the elements are:

    Several elements at once, a table ``| element | value |`` of paths and texts (as
    ``the element <path> is "<text>"``).

    Example: Then the elements are:
      | element           | value  |
      | Product/Id        | 7      |
      | Product/Name      | item-7 |
    """
    try:
        rows = table_rows(datatable, ELEMENTS_TABLE)
    except ValueProblem as exc:
        raise AssertionError(str(exc)) from None
    problems = []
    for path, text in rows:
        try:
            checks.element_is(scenario_state.answers(), path, scenario_state.fill(text))
        except AssertionError as exc:
            problems.append(str(exc))
    if problems:
        raise AssertionError("\n".join(problems))


@step(parsers.re(r"the element " + PATH + r" is saved as (?P<name>" + NAME + ")"))
def element_saved(path: str, name: str, scenario_state: ScenarioState) -> None:
    """And the element <path> is saved as <name>

    Keeps the element's text as ``${name}`` for the later steps of the scenario.

    Example: And the element Product/Id is saved as product
    """
    from harness.scenarios.answers import text_of

    answer = scenario_state.answers()[-1]
    scenario_state.save(name, text_of(answer.element(path), answer.where, path),
                        f"{path} of {answer.where}")


# ---------------------------------------------------------------------- status, fault, headers


@then(parsers.re(r'the answer is a SOAP fault(?: with code "(?P<code>[^"]*)")?'))
def answer_is_fault(code: str | None, scenario_state: ScenarioState) -> None:
    """Then the answer is a SOAP fault with code "<code>"

    A SOAP fault whose code is ``Client``, ``Server``, ``VersionMismatch`` or
    ``MustUnderstand``; SOAP 1.2's ``Sender`` and ``Receiver`` are the same blame as
    ``Client`` and ``Server``, so one code serves both SOAP versions. A refinement of the code
    is that fault too (``Client.SchemaValidationError``, a SOAP 1.2 Subcode under
    ``Sender``), as diff, replay and probe take it; ``Client.Authentication`` asks for that
    refinement. Without ``with code``, any SOAP fault. HTTP GET and POST answer errors with a
    status, not a fault: check the status.

    Example: Then the answer is a SOAP fault with code "Client"
    """
    checks.is_fault(scenario_state.answers(), code)


@then("the call succeeds")
def call_succeeds(scenario_state: ScenarioState) -> None:
    """Then the call succeeds

    HTTP 2xx and no SOAP fault.

    Example: Then the call succeeds
    """
    checks.succeeds(scenario_state.answers())


@then(parsers.re(r"the HTTP status is (?P<status>[0-9]{3})"))
def status_is(status: str, scenario_state: ScenarioState) -> None:
    """Then the HTTP status is <n>

    Example: Then the HTTP status is 500
    """
    checks.status_is(scenario_state.answers(), int(status))


@then(parsers.re(r'the response header "(?P<header>[^"]+)" is "(?P<value>.*)"', re.DOTALL))
def response_header_is(header: str, value: str, scenario_state: ScenarioState) -> None:
    """Then the response header "<header>" is "<value>"

    Example: Then the response header "Content-Type" is "text/xml; charset=utf-8"
    """
    checks.header_is(scenario_state.answers(), header, scenario_state.fill(value))


@then(parsers.re(r'the response header "(?P<header>[^"]+)" contains "(?P<value>.*)"',
                 re.DOTALL))
def response_header_contains(header: str, value: str, scenario_state: ScenarioState) -> None:
    """Then the response header "<header>" contains "<text>"

    Example: Then the response header "Content-Type" contains "charset=utf-8"
    """
    checks.header_is(scenario_state.answers(), header, scenario_state.fill(value),
                     contains=True)


@then(parsers.re(r'the answer contains "(?P<text>.*)"', re.DOTALL))
def answer_contains(text: str, scenario_state: ScenarioState) -> None:
    """Then the answer contains "<text>"

    The body of the answer, as text, contains this text anywhere.

    Example: Then the answer contains "GetTokenDeviceResult"
    """
    checks.answer_contains(scenario_state.answers(), scenario_state.fill(text))


@then("the calls over all four bindings give the same result")
def same_result(service: Service, scenario_state: ScenarioState) -> None:
    """Then the calls over all four bindings give the same result

    The latest call of the operation over each binding (by one step over all four bindings,
    or by one step per binding) gave the same result.

    Example: Then the calls over all four bindings give the same result
    """
    from harness.scenarios.answers import Answer

    if not scenario_state.made:
        pytest.fail("no call to compare: call the operation over each binding first")
    operation = scenario_state.made[-1].operation.name
    latest = {c.binding: c for c in scenario_state.made if c.operation.name == operation}
    checks.same_results([Answer(c) for c in latest.values()], _offered(service, operation))


def _pattern(text: str) -> patterns.Pattern:
    """A step's regular expression, on RE2 (linear time: no catastrophic backtracking)."""
    try:
        return patterns.compile_pattern(text)
    except patterns.PatternError as exc:
        raise AssertionError(f"{text!r} is not a regular expression the harness runs: "
                             f"{exc}") from None
