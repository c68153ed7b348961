"""Steps of the conformance features: words glued to harness.certify.engine, nothing more.

Imported with ``*`` by steps/conftest.py: pytest-bdd registers each step as a module-level
fixture, so there is deliberately no ``__all__``.
"""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from harness.certify.engine import Call, Service, expect
from harness.reports.allure_bridge import attach_call

RULE_ID = r"(?P<rule>[A-Z0-9]+(?:-[A-Z0-9]+)+)"


@given("the service under test")
def service_under_test(service: Service) -> None:
    """The target (``--target``) or the embedded reference."""


@when(parsers.re(r"the client calls (?P<operation>\S+) over (?P<binding>.+?)"
                 r"(?: with (?P<values>\S+) values)?"))
def call(operation: str, binding: str, values: str | None, service: Service,
         calls: list[Call], tagged_rules: list[str]) -> None:
    made = service.call(operation, binding, values, tagged_rules)
    calls.append(made)
    attach_call(made)


@when(parsers.re(r"the client fetches the WSDL of (?P<endpoint>\S+)"))
def fetch_wsdl(endpoint: str, service: Service, calls: list[Call]) -> None:
    made = service.wsdl(endpoint)
    calls.append(made)
    attach_call(made)


@then(parsers.re(r"(?P<sentence>.+) \(" + RULE_ID + r"\)"))
def rule_holds(rule: str, calls: list[Call], tagged_rules: list[str]) -> None:
    expect(rule, calls, tagged_rules)


@then(parsers.parse("the request went to the endpoint {path}"))
def request_went_to(path: str, calls: list[Call]) -> None:
    wrong = [c.exchange.request.path for c in calls
             if not (c.exchange.request.path.endswith(path)
                     or c.exchange.request.path.rsplit("/", 1)[0].endswith(path))]
    assert not wrong, f"expected requests to {path}, sent to {', '.join(wrong)}"


@then("both calls went to the same path")
def both_calls_same_path(calls: list[Call]) -> None:
    paths = {c.exchange.request.path for c in calls}
    assert len(calls) == 2 and len(paths) == 1, f"expected one path, sent to {sorted(paths)}"
