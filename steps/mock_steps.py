"""The vocabulary of a mock as the target (``harness mock``, certified with ``harness certify
--features DIR --target MOCK``): stubs set by a scenario, and the calls the mock received,
verified. Glue to the mock's admin API (harness.mock.client); the stubs a scenario sets are
removed when it ends, and the calls it verifies are those received since it began.

Imported with ``*`` by steps/conftest.py (pytest-bdd steps are module-level fixtures).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from pytest_bdd import given, parsers, then

from harness.certify.engine import Service
from harness.contract.model import Operation
from harness.contract.types import ParamType
from harness.scenarios.state import ScenarioState
from harness.scenarios.values import ValueProblem, call_arguments
from harness.traffic.redaction import REPORT_REDACTED

if TYPE_CHECKING:  # the mock's engine loads with the first mock scenario, not with certify
    from harness.mock.client import MockAdmin

#: What makes a stub step match only the calls with the values of the table below it.
WHEN = r"(?P<matched> when called with:)?"
#: The faults a scenario can have the mock inject, by their words.
DISRUPTIONS = {"a connection reset": "reset", "an empty reply": "empty",
               "a malformed body": "malformed", "a trickled body": "trickle"}


def _operation(service: Service, operation: str) -> Operation:
    op = service.contract.find(operation)
    if op is None:
        raise AssertionError(f"{operation!r} is not an operation of the "
                             f"{service.contract.name} contract")
    return op


def _values(op: Operation, datatable: list[list[str]] | None, matched: str | None,
            state: ScenarioState) -> dict:
    """The parameter values of the table below a step (``| parameter | value |``)."""
    if bool(matched) != (datatable is not None):
        raise AssertionError("a step ending with ':' takes a table of values below it, and "
                             "only such a step does")
    if datatable is None:
        return {}
    try:
        return call_arguments(op, datatable, state.saved)
    except ValueProblem as exc:
        raise AssertionError(str(exc)) from None


def _set(service: Service, mock_admin: MockAdmin, state: ScenarioState, operation: str,
         datatable: list[list[str]] | None, matched: str | None, **answer: object) -> None:
    op = _operation(service, operation)
    stub: dict[str, object] = {"operation": op.name, **answer}
    when = _values(op, datatable, matched, state)
    if when:
        stub["when"] = when
    mock_admin.add_stub(stub)


# ------------------------------------------------------------------------------------ Given


@given(parsers.re(r'the mock answers (?P<operation>\S+) with "(?P<text>.*)"' + WHEN + "$",
                  re.DOTALL))
def mock_answers_result(operation: str, text: str, service: Service, mock_admin: MockAdmin,
                        scenario_state: ScenarioState, matched: str | None = None,
                        datatable: list[list[str]] | None = None) -> None:
    """Given the mock answers <Operation> with "<text>"

    The mock (the target: ``harness mock``) answers every call of the operation with this
    result, over every binding, in each binding's form, for the rest of the scenario; with
    ``when called with:`` and a table ``| parameter | value |``, only the calls with those
    values (by meaning). An array or complex result is written as JSON; ``${name}`` is
    replaced.

    Example: Given the mock answers GetTokenDevice with "token-stubbed" when called with:
      | parameter | value |
      | id        | dev-1 |
    """
    op = _operation(service, operation)
    result: object = scenario_state.fill(text)
    if op.result_type is ParamType.COMPLEX:
        try:
            result = json.loads(str(result))
        except ValueError:
            raise AssertionError(f"{op.name} returns {op.result}: write the result as JSON") \
                from None
    _set(service, mock_admin, scenario_state, operation, datatable, matched, result=result)


@given(parsers.re(r'the mock answers (?P<operation>\S+) with a SOAP fault with code '
                  r'"(?P<code>[^"]*)"(?: and reason "(?P<reason>[^"]*)")?' + WHEN + "$"))
def mock_answers_fault(operation: str, code: str, service: Service, mock_admin: MockAdmin,
                       scenario_state: ScenarioState, reason: str | None = None,
                       matched: str | None = None,
                       datatable: list[list[str]] | None = None) -> None:
    """Given the mock answers <Operation> with a SOAP fault with code "<code>"

    The mock answers the operation's calls with a SOAP fault of the asking version (``Client``
    is ``soap:Sender`` over SOAP 1.2), and ``500 text/plain`` over HTTP GET and POST, as ASMX
    gives its errors; `` and reason "<text>"`` sets its text. ``when called with:`` and a table
    narrows it to those values.

    Example: Given the mock answers AuthCode with a SOAP fault with code "Client" and reason "old"
    """
    fault = {"code": code, **({"reason": scenario_state.fill(reason)} if reason else {})}
    _set(service, mock_admin, scenario_state, operation, datatable, matched, fault=fault)


@given(parsers.re(r"the mock answers (?P<operation>\S+) with HTTP status (?P<status>[0-9]{3})"
                  + WHEN + "$"))
def mock_answers_status(operation: str, status: str, service: Service, mock_admin: MockAdmin,
                        scenario_state: ScenarioState, matched: str | None = None,
                        datatable: list[list[str]] | None = None) -> None:
    """Given the mock answers <Operation> with HTTP status <n>

    The mock answers the operation's calls with this status and HTTP.sys's error page (503:
    "The service is unavailable"), on every binding.

    Example: Given the mock answers GetTokenDevice with HTTP status 503
    """
    _set(service, mock_admin, scenario_state, operation, datatable, matched,
         status=int(status))


@given(parsers.re(r"the mock answers (?P<operation>\S+) with (?P<disruption>"
                  + "|".join(DISRUPTIONS) + ")" + WHEN + "$"))
def mock_answers_disrupted(operation: str, disruption: str, service: Service,
                           mock_admin: MockAdmin, scenario_state: ScenarioState,
                           matched: str | None = None,
                           datatable: list[list[str]] | None = None) -> None:
    """Given the mock answers <Operation> with a connection reset

    The mock does this wrong to the operation's calls: ``a connection reset`` (TCP RST, no
    answer), ``an empty reply`` (the connection closed, no answer), ``a malformed body`` (the
    answer cut in half), ``a trickled body`` (sent in small pieces over 3 s). The answer is
    otherwise what the mock would give (a void operation's empty answer).

    Example: Given the mock answers GetTeacherGrpupsByID with a connection reset
    """
    _set(service, mock_admin, scenario_state, operation, datatable, matched,
         inject=DISRUPTIONS[disruption])


@given(parsers.re(r"the mock answers (?P<operation>\S+) after (?P<seconds>[0-9]+(?:\.[0-9]+)?) "
                  r"seconds?" + WHEN + "$"))
def mock_answers_late(operation: str, seconds: str, service: Service, mock_admin: MockAdmin,
                      scenario_state: ScenarioState, matched: str | None = None,
                      datatable: list[list[str]] | None = None) -> None:
    """Given the mock answers <Operation> after <n> seconds

    The mock's answer to the operation's calls (what it would answer otherwise: a void
    operation's empty answer) comes this much later: a spinner, a timeout.

    Example: Given the mock answers LogoutFromSchool after 1.5 seconds
    """
    _set(service, mock_admin, scenario_state, operation, datatable, matched,
         delay=f"{seconds}s")


# ------------------------------------------------------------------------------------- Then


@then(parsers.re(r"the mock received (?P<count>[0-9]+) calls? of (?P<operation>\S+)"
                 r"(?: over (?P<binding>SOAP 1\.1|SOAP 1\.2|HTTP GET|HTTP POST))?"
                 r"(?P<matched> with:)?$"))
def mock_received(count: str, operation: str, service: Service, mock_admin: MockAdmin,
                  scenario_state: ScenarioState, scenario_started: float,
                  binding: str | None = None, matched: str | None = None,
                  datatable: list[list[str]] | None = None) -> None:
    """Then the mock received <n> calls of <Operation>

    The mock (the target) received exactly this many calls of the operation since the
    scenario began, over any binding (or `` over <binding>``); with ``with:`` and a table
    ``| parameter | value |``, only the calls with those values, compared by meaning (a
    sensitive value through its pseudonym: the mock keeps none in clear).

    Example: Then the mock received 1 call of LogoutFromSchool with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | id_row_central | 7          |
    """
    op = _operation(service, operation)
    values = _values(op, datatable, matched, scenario_state)
    query = {"operation": op.name, "since": repr(scenario_started),
             **({"binding": binding} if binding else {}),
             **{k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}}
    found = mock_admin.calls(**query)
    if found["count"] == int(count):
        return
    sensitive = service.contract.sensitive_names()
    what = op.name + (f" over {binding}" if binding else "") + (
        " with " + ", ".join(f"{k}={REPORT_REDACTED if k in sensitive else repr(v)}"
                             for k, v in query.items() if k in values) if values else "")
    seen = mock_admin.calls(operation=op.name, since=repr(scenario_started))["calls"]
    listed = "; ".join(f"{c['binding']} {c['values']} ({c['answered']})" for c in seen[-5:])
    raise AssertionError(f"the mock received {found['count']} call(s) of {what} since the "
                         f"scenario began, expected {count}"
                         + (f"; its calls of {op.name}: {listed}" if seen else
                            f"; it received no call of {op.name}"))
