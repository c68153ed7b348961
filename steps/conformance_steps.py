"""Steps of the conformance features: words glued to harness.certify.engine, nothing more.

Imported with ``*`` by steps/conftest.py: pytest-bdd registers each step as a module-level
fixture, so there is deliberately no ``__all__``.
"""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, then, when

from harness.certify.engine import Call, Service, expect
from harness.reports.allure_bridge import attach_call, step_verdict
from harness.scenarios.state import ScenarioState

RULE_ID = r"(?P<rule>[A-Z0-9]+(?:-[A-Z0-9]+)+)"


@given("the service under test")
def service_under_test(service: Service) -> None:
    """Given the service under test

    The deployment ``--target`` names, or the embedded reference without it.

    Example: Given the service under test
    """


@when(parsers.re(r"the client calls (?P<operation>\S+) over (?P<binding>(?!all four bindings)"
                 r"[^:]+?)(?: with (?P<values>\S+) values)?"))
def call(operation: str, binding: str, values: str | None, service: Service,
         calls: list[Call], tagged_rules: list[str], scenario_state: ScenarioState) -> None:
    """When the client calls <Operation> over <binding>

    Calls the operation over one binding (``SOAP 1.1``, ``SOAP 1.2``, ``HTTP GET``,
    ``HTTP POST``) with generated values (``--values`` gives real ones); ``with plain values``,
    ``with non-ASCII values`` or ``with XML-special values`` picks the generated set. The
    call is judged by the rules the scenario is tagged with.

    Example: When the client calls GetTokenDevice over HTTP GET with non-ASCII values
    """
    made = service.call(operation, binding, values, tagged_rules,
                        headers=[(n, scenario_state.fill(v)) for n, v in scenario_state.headers])
    calls.append(made)
    scenario_state.called([made])
    attach_call(made)


@when(parsers.re(r"the client fetches the WSDL of (?P<endpoint>\S+)"))
def fetch_wsdl(endpoint: str, service: Service, calls: list[Call]) -> None:
    """When the client fetches the WSDL of <endpoint>

    GETs the endpoint's ``?WSDL``, judged by the WSDL rules the scenario is tagged with.

    Example: When the client fetches the WSDL of CenterlogOut.asmx
    """
    made = service.wsdl(endpoint)
    calls.append(made)
    attach_call(made)


@when(parsers.re(r"the client sends (?P<operation>\S+) over (?P<binding>SOAP 1\.[12]|HTTP GET|"
                 r"HTTP POST) with (?P<kind>.+)"))
def send_odd(operation: str, binding: str, kind: str, service: Service,
             calls: list[Call]) -> None:
    """When the client sends <Operation> over <binding> with <an odd thing>

    Sends a request the spec does not describe: over SOAP ``a wrong SOAPAction``, ``an empty
    SOAPAction``, ``another operation's SOAPAction`` (over SOAP 1.2 the Content-Type's
    ``action``), ``an unknown extra element``, ``text/xml without charset`` (SOAP 1.1); over
    any binding a row of the ASMX matrix by its words (``harness/contract/asmx_matrix.json``,
    e.g. ``the parameter names in another case``). The answer is judged as the real ASMX
    answers it (``ODD-*`` rules); a matrix row against the target's own answer to the
    equivalent spec call, sent once.

    Example: When the client sends GetTokenDevice over HTTP GET with each parameter twice
    """
    made = service.odd(operation, binding, kind)
    calls.append(made)
    attach_call(made)


@when(parsers.re(r"the client GETs (?P<endpoint>\S+) without an operation"))
def get_bare_endpoint(endpoint: str, service: Service, calls: list[Call]) -> None:
    """When the client GETs <endpoint> without an operation

    A GET of the endpoint itself (no ``/<Operation>`` in the path), judged as ASMX answers it
    (ODD-BARE-GET).

    Example: When the client GETs /CenterlogOut.asmx without an operation
    """
    made = service.bare_get(endpoint)
    calls.append(made)
    attach_call(made)


@then(parsers.re(r"(?P<sentence>.+) \(" + RULE_ID + r"\)"))
def rule_holds(rule: str, calls: list[Call], tagged_rules: list[str],
               request: pytest.FixtureRequest) -> None:
    """Then <any words> (<RULE-ID>)

    The rule of the catalogue (``harness certify --list-rules``) holds for every call of the
    scenario; the words before it are free, and the scenario carries the rule's tag
    (``@RULE-ID``).

    Example: Then the call returns HTTP status 200 (R4-STATUS)
    """
    step_verdict(request, expect(rule, calls, tagged_rules))


@then(parsers.parse("the request went to the endpoint {endpoint}"))
def request_went_to(endpoint: str, calls: list[Call]) -> None:
    """Then the request went to the endpoint <endpoint>

    Every call of the scenario went to this endpoint's path.

    Example: Then the request went to the endpoint /CenterlogOut.asmx
    """
    wrong = [c.exchange.request.path for c in calls
             if not (c.exchange.request.path.endswith(endpoint)
                     or c.exchange.request.path.rsplit("/", 1)[0].endswith(endpoint))]
    assert not wrong, f"expected requests to {endpoint}, sent to {', '.join(wrong)}"


@then("both calls went to the same path")
def both_calls_same_path(calls: list[Call]) -> None:
    """Then both calls went to the same path

    Example: Then both calls went to the same path
    """
    paths = {c.exchange.request.path for c in calls}
    assert len(calls) == 2 and len(paths) == 1, f"expected one path, sent to {sorted(paths)}"
