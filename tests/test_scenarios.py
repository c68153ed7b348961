"""The step vocabulary of a team's own features (``certify --features DIR``), sentence by
sentence, each once where it holds and once where it does not, against the embedded reference
(School Mobile, and the orders service's arrays and complex types); the check of a feature
before a run (one line, file and line, exit 2); and ``harness scenarios`` turning a recording
into features that pass against the recorded deployment and fail, naming the scenario and the
value, against one that answers differently. (The real ASMX runtime:
tests/test_scenarios_interop.py.)"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.capture.process import CaptureProcess
from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, load, reference_result, sample_arguments
from harness.contract.structure import canonical
from harness.contract.xmlsafe import parse_xml
from harness.errors import UsageError
from harness.scenarios.lint import check_features, vocabulary
from harness.scenarios.record import escape_cell
from harness.traffic.exchange import HttpResponse
from harness.traffic.keys import KEY_STORE_ENV

ORDERS = Path(__file__).parent / "services" / "orders" / "contract.json"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "scenarios.md"


def docs_feature() -> str:
    """The first Gherkin block of the docs' "Write your own scenarios"."""
    page = DOCS.read_text(encoding="utf-8")
    return re.search(r"^```gherkin\n(.*?)^```$", page, re.M | re.S).group(1)


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, check=False)


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    data: dict
    #: scenario name -> (outcome, the failure's message)
    scenarios: dict[str, tuple[str, str]]
    folder: Path


def junit_scenarios(path: Path) -> dict[str, tuple[str, str]]:
    """The SCENARIO suite's cases of certify's JUnit: scenario name -> (outcome, message)."""
    cases = {}
    for suite in parse_xml(path.read_bytes()):
        if suite.get("name") != "SCENARIO":
            continue
        for case in suite:
            if case.tag != "testcase":
                continue
            name = case.get("name").split(" [", 1)[0]
            failure = case.find("failure")
            skipped = case.find("skipped")
            outcome = "failed" if failure is not None else (
                "skipped" if skipped is not None else "passed")
            cases[name] = (outcome, failure.get("message") if failure is not None else "")
    return cases


def certify_features(folder: Path, features: dict[str, str], *args: str) -> Run:
    mine = folder / "features"
    mine.mkdir(parents=True, exist_ok=True)
    for name, text in features.items():
        (mine / name).write_text(text, encoding="utf-8")
    out, junit = folder / "certify.json", folder / "junit.xml"
    for stale in (out, junit):
        stale.unlink(missing_ok=True)
    done = harness("certify", "--no-html", "--features", str(mine), "--json", str(out),
                   "--junit", str(junit), "--report-dir", str(folder / "reports"), *args,
                   cwd=folder)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    cases = junit_scenarios(junit) if junit.exists() else {}
    return Run(done.returncode, done.stdout, done.stderr, data, cases, folder)


def token(identifier: str, contract: Contract) -> str:
    """The embedded reference's GetTokenDevice result (sha256 of the id)."""
    return str(reference_result(contract.operation("GetTokenDevice"), {"id": identifier}))


# ------------------------------------------------------------------------- the vocabulary


#: Each sentence the issue asks for, as a feature writes it: exactly one sentence reads it.
ISSUE_SENTENCES = [
    ("given", "the service under test"),
    ("when", "the client calls GetTokenDevice over SOAP 1.1"),
    ("when", "the client calls GetTokenDevice over SOAP 1.2"),
    ("when", "the client calls GetTokenDevice over HTTP GET"),
    ("when", "the client calls GetTokenDevice over HTTP POST"),
    ("when", "the client calls GetTokenDevice over SOAP 1.1 with:"),
    ("then", 'the result is "token-for-dev-77"'),
    ("then", 'the result matches "token-for-[0-9]+"'),
    ("then", "the result is empty"),
    ("then", 'the element order/Lines/OrderLine[2]/Quantity is "3"'),
    *(("then", f'the answer is a SOAP fault with code "{code}"')
      for code in ("Client", "Server", "Sender", "Receiver", "VersionMismatch")),
    ("then", "the HTTP status is 500"),
    ("then", "the result is saved as token"),
    ("when", "the result is saved as token"),  # And after a When step
    ("then", "the calls over all four bindings give the same result"),
    ("then", "the call returns HTTP status 200 (R4-STATUS)"),
]


@pytest.mark.parametrize(("keyword", "text"), ISSUE_SENTENCES)
def test_the_issues_sentences_each_read_as_one_sentence(keyword: str, text: str) -> None:
    matching = [s for s in vocabulary() if s.keyword in (None, keyword) and s.matches(text)]
    assert len(matching) == 1, (text, [s.template for s in matching])


def test_every_sentence_has_its_reference_entry() -> None:
    """The docs' step reference is made from the docstrings: each says its sentence, what it
    does and an example that reads as that sentence and no other."""
    sentences = vocabulary()
    assert len(sentences) >= 30
    for sentence in sentences:
        keyword = sentence.template.split(" ", 1)[0]
        assert keyword in ("Given", "When", "Then", "And"), sentence.template
        if sentence.keyword:
            assert keyword in (sentence.keyword.capitalize(), "And"), sentence.template
        assert sentence.example, f"{sentence.template}: no Example"
        step = sentence.example[0].split(" ", 1)[1]
        kind = sentence.keyword or {"Given": "given", "When": "when"}.get(keyword, "then")
        readers = [s for s in sentences if s.keyword in (None, kind) and s.matches(step)]
        assert readers == [sentence], (sentence.example[0], [s.template for s in readers])
        # a table below a step ending with ':' (some sentences take one only with words)
        assert (len(sentence.example) > 1) == (sentence.takes_table
                                               and sentence.example[0].endswith(":")), \
            sentence.template


# ----------------------------------------------------- each sentence, holding and not holding


def school_mobile_catalogue(contract: Contract) -> str:
    """Scenarios named ``passes: ...`` hold against the reference, ``fails: ...`` do not."""
    a10, dev77 = token("A10", contract), token("dev-77", contract)
    chained = token(dev77, contract)
    return f"""Feature: The vocabulary against the embedded reference

  Background:
    Given the service under test

  Scenario: passes: a call with generated values and a check of its status
    When the client calls GetTokenDevice over HTTP GET
    Then the HTTP status is 200
    And the call succeeds
    And the result is "{a10}"

  Scenario: fails: the HTTP status
    When the client calls GetTokenDevice over HTTP GET
    Then the HTTP status is 500

  Scenario: passes: a table's values, the result by its text, a regular expression, a shape
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result is "{dev77}"
    And the result matches "[0-9a-f]{{64}}"
    And the result is a non-empty string
    And the result is not empty
    And the element GetTokenDeviceResult is "{dev77}"
    And the element GetTokenDeviceResult matches "[0-9a-f]+"
    And the element GetTokenDeviceResult exists
    And the element Nothing does not exist
    And the element GetTokenDeviceResult occurs 1 time
    And the response header "Content-Type" is "text/xml; charset=utf-8"
    And the response header "Content-Type" contains "charset"
    And the answer contains "GetTokenDeviceResponse"

  Scenario: fails: the result's text
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result is "token-for-dev-77"

  Scenario: fails: a regular expression
    When the client calls GetTokenDevice over SOAP 1.2 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result matches "token-for-[0-9]+"

  Scenario: fails: a shape
    When the client calls GetTokenDevice over HTTP POST with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result is an int

  Scenario: fails: an empty result
    When the client calls GetTokenDevice over HTTP POST with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result is empty

  Scenario: passes: an empty result, a parameter left out
    When the client calls LogoutFromSchool over SOAP 1.1 with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | id_row_central | 7          |
    Then the result is empty
    When the client calls LogoutFromSchool over HTTP POST with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | id_row_central | 7          |
    Then the HTTP status is 500
    And the answer contains "Missing parameter: UuId"

  Scenario: fails: a result that is not empty
    When the client calls LogoutFromSchool over SOAP 1.1 with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | UuId           | u-1        |
      | id_row_central | 7          |
    Then the result is not empty

  Scenario: fails: an element
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the element GetTokenDeviceResult is "token-for-dev-77"

  Scenario: fails: an element that is not there
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the element GetTokenDeviceResult/Token exists

  Scenario: fails: an element that should not be there
    When the client calls GetTokenDevice over SOAP 1.2 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the element GetTokenDeviceResult does not exist

  Scenario: fails: how often an element occurs
    When the client calls GetTokenDevice over SOAP 1.2 with:
      | parameter | value  |
      | id        | dev-77 |
    Then the element GetTokenDeviceResult occurs 2 times

  Scenario: fails: an element's pattern
    When the client calls GetTokenDevice over HTTP GET with:
      | parameter | value  |
      | id        | dev-77 |
    Then the element string matches "token-.*"

  Scenario: fails: a response header
    When the client calls GetTokenDevice over SOAP 1.2
    Then the response header "Content-Type" is "text/xml; charset=utf-8"

  Scenario: fails: a response header's part
    When the client calls GetTokenDevice over SOAP 1.2
    Then the response header "X-Nothing" contains "x"

  Scenario: fails: what the answer contains
    When the client calls GetTokenDevice over SOAP 1.2
    Then the answer contains "Fault"

  Scenario: passes: a SOAP fault for a non-integer id_row_central, over both SOAP versions
    When the client calls LogoutFromSchool over SOAP 1.1 with:
      | parameter      | value      |
      | PhoneNumber    | 0501234567 |
      | UuId           | u-1        |
      | id_row_central | abc        |
    Then the answer is a SOAP fault with code "Client"
    And the HTTP status is 500
    When the client calls LogoutFromSchool over SOAP 1.2 with:
      | parameter      | value |
      | id_row_central | abc   |
    Then the answer is a SOAP fault with code "Client"
    And the answer is a SOAP fault with code "Sender"
    And the answer is a SOAP fault

  Scenario: fails: a fault's code
    When the client calls LogoutFromSchool over SOAP 1.1 with:
      | parameter      | value |
      | id_row_central | abc   |
    Then the answer is a SOAP fault with code "Server"

  Scenario: fails: a SOAP fault over HTTP GET
    When the client calls LogoutFromSchool over HTTP GET with:
      | parameter      | value |
      | id_row_central | abc   |
    Then the answer is a SOAP fault with code "Client"

  Scenario: fails: a fault where the call succeeds
    When the client calls GetTokenDevice over SOAP 1.1
    Then the answer is a SOAP fault

  Scenario: fails: a result where the answer is a fault
    Given the request header "SOAPAction" is "http://tempuri.org/Nothing"
    When the client calls LogoutFromSchool over SOAP 1.1
    Then the result is empty

  Scenario: passes: a saved result sent on
    When the client calls GetTokenDevice over SOAP 1.1 with:
      | parameter | value  |
      | id        | dev-77 |
    And the result is saved as token
    And the element GetTokenDeviceResult is saved as same
    When the client calls GetTokenDevice over HTTP POST with:
      | parameter | value    |
      | id        | ${{token}} |
    Then the result is "{chained}"
    And the result is saved as second
    And the result matches "${{second}}"
    And the element string is "${{second}}"
    And the answer contains "${{second}}"

  Scenario: fails: saving a result there is none of
    When the client calls AuthCode over HTTP GET
    Then the result is saved as nothing

  Scenario: passes: the same result over the four bindings
    When the client calls GetTokenDevice over all four bindings with:
      | parameter | value  |
      | id        | dev-77 |
    Then the result is "{dev77}"
    And the calls over all four bindings give the same result

  Scenario: passes: the four bindings called one by one
    When the client calls GetTokenDevice over SOAP 1.1
    And the client calls GetTokenDevice over SOAP 1.2
    And the client calls GetTokenDevice over HTTP GET
    And the client calls GetTokenDevice over HTTP POST
    Then the calls over all four bindings give the same result

  Scenario: fails: different results over the bindings
    When the client calls GetTokenDevice over SOAP 1.1
    And the client calls GetTokenDevice over SOAP 1.2
    And the client calls GetTokenDevice over HTTP GET
    When the client calls GetTokenDevice over HTTP POST with:
      | parameter | value |
      | id        | other |
    Then the calls over all four bindings give the same result

  Scenario: fails: not every binding called
    When the client calls GetTokenDevice over SOAP 1.1
    Then the calls over all four bindings give the same result

  Scenario: passes: a request header
    Given the request header "SOAPAction" is "http://tempuri.org/GetTokenDevice"
    When the client calls GetTokenDevice over SOAP 1.1
    Then the call succeeds

  Scenario: fails: a request header the service refuses
    Given the request header "SOAPAction" is "http://tempuri.org/Nothing"
    When the client calls GetTokenDevice over SOAP 1.1
    Then the call succeeds

  @R4-STATUS
  Scenario: passes: a rule's step
    When the client calls GetTokenDevice over HTTP POST with plain values
    Then the call returns HTTP status 200 (R4-STATUS)

  Scenario Outline: passes: an outline over the four bindings, <binding>
    When the client calls GetTokenDevice over <binding> with:
      | parameter | value |
      | id        | <id>  |
    Then the result is "<token>"

    Examples:
      | binding   | id     | token     |
      | SOAP 1.1  | A10    | {a10}     |
      | SOAP 1.2  | dev-77 | {dev77}   |
      | HTTP GET  | A10    | {a10}     |
      | HTTP POST | dev-77 | {dev77}   |
"""


#: What each failing scenario's JUnit failure says (besides its step).
FAILURES = {
    "fails: the HTTP status": "expected HTTP status 500, actual HTTP 200",
    "fails: the result's text": 'expected the result "token-for-dev-77", actual "',
    "fails: a regular expression": 'expected a result matching "token-for-[0-9]+"',
    "fails: a shape": "expected the result to be an int",
    "fails: an empty result": "expected an empty result, actual",
    "fails: a result that is not empty": "expected a result, actual an empty one",
    "fails: an element": 'expected GetTokenDeviceResult "token-for-dev-77"',
    "fails: an element that is not there": "expected an element GetTokenDeviceResult/Token, "
                                           "there is none",
    "fails: an element that should not be there": "expected no element GetTokenDeviceResult",
    "fails: how often an element occurs": "expected GetTokenDeviceResult 2 time(s), actual 1",
    "fails: an element's pattern": 'expected string matching "token-.*"',
    "fails: a response header": 'expected the response header Content-Type "text/xml; '
                                'charset=utf-8", actual "application/soap+xml; charset=utf-8"',
    "fails: a response header's part": "X-Nothing containing \"x\", actual no such header",
    "fails: what the answer contains": 'expected the answer to contain "Fault"',
    "fails: a fault's code": 'expected a SOAP fault with code "Server", actual HTTP 500, SOAP '
                             "fault Client",
    "fails: a SOAP fault over HTTP GET": "answers errors with an HTTP status, never a SOAP fault",
    "fails: a fault where the call succeeds": "expected a SOAP fault, actual HTTP 200, result",
    "fails: a result where the answer is a fault": "expected a result, but the answer is HTTP "
                                                   "500, SOAP fault Client",
    "fails: saving a result there is none of": "nothing to save as nothing",
    "fails: different results over the bindings": "the bindings give different results",
    "fails: not every binding called": "called over SOAP 1.1: call over SOAP 1.2, HTTP GET, "
                                       "HTTP POST first",
    "fails: a request header the service refuses": "expected a successful answer, actual HTTP "
                                                   "500, SOAP fault Client",
}


@pytest.fixture(scope="module")
def school_mobile_run(tmp_path_factory, contract) -> Run:
    where_ = tmp_path_factory.mktemp("vocabulary")
    return certify_features(where_, {"vocabulary.feature": school_mobile_catalogue(contract)})


def test_each_sentence_holds_where_it_should(school_mobile_run: Run) -> None:
    run = school_mobile_run
    passing = {n for n in run.scenarios if n.startswith("passes:")}
    assert len(passing) == 13, run.stdout + run.stderr  # an outline's examples one by one
    wrong = {n: run.scenarios[n] for n in passing if run.scenarios[n][0] != "passed"}
    assert not wrong, wrong


def test_each_sentence_fails_where_it_should_saying_why(school_mobile_run: Run) -> None:
    run = school_mobile_run
    failing = {n: v for n, v in run.scenarios.items() if n.startswith("fails:")}
    assert set(failing) == set(FAILURES), run.stdout + run.stderr
    wrong = {name: failing[name] for name, said in FAILURES.items()
             if failing[name][0] != "failed" or said not in failing[name][1]}
    assert not wrong, wrong
    assert run.code == 1 and "certify: FAILED" in run.stdout
    # the console names each failing scenario and its feature file, with what was found
    line = next(x for x in run.stdout.splitlines() if "fails: the result's text x" in x)
    assert 'GetTokenDevice over SOAP 1.1: expected the result "token-for-dev-77", actual "' \
           in line and line.endswith("-- fails: the result's text x vocabulary.feature "
                                     "[SCENARIO]"), line
    failed = next(f for f in run.data["findings"] if f["operation"] == "fails: the result's text")
    assert failed["expected"].startswith('Then the result is "token-for-dev-77" (line ')


def test_each_scenario_is_one_finding_one_junit_case_and_one_allure_test(
        school_mobile_run: Run, tmp_path_factory) -> None:
    run = school_mobile_run
    assert run.data["rules"]["SCENARIO"]["passed"] == 13
    assert run.data["rules"]["SCENARIO"]["failed"] == len(FAILURES)
    found = [f for f in run.data["findings"] if f["rule"] == "SCENARIO"]
    assert {f["operation"] for f in found} == set(FAILURES)
    assert {f["binding"] for f in found} == {"vocabulary.feature"}
    assert len([n for n in run.scenarios if "outline" in n]) == 4


def test_a_user_scenario_is_one_allure_test_with_its_calls(school_mobile_run: Run) -> None:
    folder = school_mobile_run.folder / "reports" / "allure-results"
    tests = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*-result.json")]
    chained = next(t for t in tests if t["name"] == "passes: a saved result sent on")
    calls = [s for s in chained["steps"] if s["name"].startswith("When the client calls")]
    assert len(calls) == 2
    attached = [a["name"] for s in calls for a in s.get("attachments", [])]
    assert "GetTokenDevice SOAP 1.1 request" in attached
    assert "GetTokenDevice HTTP POST response" in attached
    failed = next(t for t in tests if t["name"] == "fails: the result's text")
    assert failed["status"] == "failed"


def orders_catalogue(orders: Contract) -> str:
    """Arrays and complex values: element paths, JSON cells and results, against the
    reference serving the orders contract."""
    product = reference_result(orders.operation("GetProduct"), {"id": "7"})
    listed = reference_result(orders.operation("ListProducts"), {"category": "toys"})
    assert isinstance(product, dict) and isinstance(listed, list)
    return f"""Feature: Arrays and complex types

  Background:
    Given the service under test

  Scenario: passes: a complex result by its elements, over the four bindings
    When the client calls GetProduct over all four bindings with:
      | parameter | value |
      | id        | 7     |
    Then the element Product/Name is "{product['Name']}"
    And the element Name is "{product['Name']}"
    And the element GetProductResult/Price is "{product['Price']}"
    And the element Tags/string[2] is "{product['Tags'][1]}"
    And the element Tags/string occurs 2 times
    And the element Tags/string[3] does not exist
    And the element Price matches "[0-9]+\\.[0-9]{{2}}"
    And the elements are:
      | element | value              |
      | Id      | {product['Id']}    |
      | Name    | {product['Name']}  |
    And the result is "{escape_cell(canonical(product))}"
    And the result is saved as product
    And the element Id is saved as id
    And the calls over all four bindings give the same result
    When the client calls GetProduct over SOAP 1.2 with:
      | parameter | value |
      | id        | ${{id}} |
    Then the result is not empty

  Scenario: passes: an array result
    When the client calls ListProducts over HTTP GET with:
      | parameter | value |
      | category  | toys  |
    Then the element ArrayOfProduct/Product occurs 2 times
    And the element Product[2]/Name is "{listed[1]['Name']}"
    And the element ListProductsResult/Product[1]/Tags/string[1] is "{listed[0]['Tags'][0]}"

  Scenario: passes: structured values in JSON cells
    When the client calls SaveOrder over SOAP 1.1 with:
      | parameter | value |
      | order     | {{"Customer": "A", "Number": 40, "Lines": [{{"Sku": "A-1", "Quantity": 3}}]}} |
    Then the result is an int
    When the client calls Sum over all four bindings with:
      | parameter | value     |
      | values    | [1, 2, 3] |
    Then the result matches "-?[0-9]+"
    And the calls over all four bindings give the same result
    When the client calls Tags over all four bindings
    Then the element string[1] exists

  Scenario: fails: elements of a table
    When the client calls GetProduct over SOAP 1.1 with:
      | parameter | value |
      | id        | 7     |
    Then the elements are:
      | element  | value       |
      | Id       | 7           |
      | Tags/x   | nothing     |

  Scenario: fails: a complex result's JSON
    When the client calls GetProduct over HTTP POST with:
      | parameter | value |
      | id        | 7     |
    Then the result is "{{"Id": "7"}}"

  Scenario: fails: an element holding elements
    When the client calls GetProduct over SOAP 1.2 with:
      | parameter | value |
      | id        | 7     |
    Then the element Tags is "x"
"""


def test_arrays_and_complex_values(tmp_path: Path) -> None:
    orders = load(ORDERS)
    run = certify_features(tmp_path, {"orders.feature": orders_catalogue(orders)},
                           "--contract", str(ORDERS))
    assert {n: v[0] for n, v in run.scenarios.items()} == {
        "passes: a complex result by its elements, over the four bindings": "passed",
        "passes: an array result": "passed",
        "passes: structured values in JSON cells": "passed",
        "fails: elements of a table": "failed",
        "fails: a complex result's JSON": "failed",
        "fails: an element holding elements": "failed"}, run.stdout + run.stderr
    said = {n: v[1] for n, v in run.scenarios.items()}
    assert 'expected Id "7", actual "' in said["fails: elements of a table"]
    assert "no element Tags/x" in said["fails: elements of a table"]
    assert "expected the result " in said["fails: a complex result's JSON"]
    assert "Tags holds elements (string), not text" in said["fails: an element holding elements"]


# -------------------------------------------------------- the check of a feature before a run


def check(tmp_path: Path, steps: str, contract: Contract, *, head: str = "") -> str:
    """The one line check_features says of a feature whose scenario has ``steps``."""
    path = tmp_path / "mine.feature"
    path.write_text(f"Feature: mine\n\n  {head}Scenario: one\n    Given the service under test\n"
                    + steps, encoding="utf-8")
    with pytest.raises(UsageError) as raised:
        check_features([path], contract)
    return str(raised.value)


CALL = "    When the client calls GetTokenDevice over SOAP 1.1\n"
LINT_CASES = [
    ("    When the client calls GetTokenDevic over SOAP 1.1\n", ":5: 'GetTokenDevic' is not an "
     "operation of the School Mobile contract (did you mean GetTokenDevice?)"),
    ("    When the client calls GetTokenDevice over SOAP 1.3\n", ":5: unknown binding "
     "'SOAP 1.3': use one of SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with plain-ish values\n",
     ":5: unknown value set 'plain-ish'"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with:\n      | parameter | value |\n"
     "      | idd       | 1     |\n", ":5: GetTokenDevice has no parameter 'idd' (did you mean "
     "id?)"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with:\n      | name | value |\n"
     "      | id   | 1     |\n", ":5: the table's first row must be | parameter | value |"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with:\n      | parameter | value |\n"
     "      | id        | 1     |\n      | id        | 2     |\n", ":5: id has two rows"),
    ("    When the client calls LogoutFromSchool over HTTP GET with:\n"
     "      | parameter      | value |\n      | id_row_central | 1.5   |\n    Then the call "
     "succeeds\n", ":5: LogoutFromSchool's id_row_central is an int: '1.5' is not one over HTTP "
     "GET (to send it on purpose, expect the error after the call"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with:\n", ":5: 'When the client "
     "calls <Operation> over <binding> with:' needs a table below it"),
    (CALL + "      | parameter | value |\n      | id | 1 |\n", ":5: 'When the client calls "
     "<Operation> over <binding>' takes no table"),
    (CALL + '    Then the reslt is "x"\n', ":6: no sentence of the vocabulary says Then 'the "
     "reslt is \"x\"' (did you mean 'Then the result is \"<text>\"'?)"),
    (CALL + "    And the HTTP status is 200\n", ":6: 'the HTTP status is 200' is a Then "
     "sentence, here a When step (after And): start it with Then"),
    ("    When the client calls GetTokenDevice over SOAP 1.1 with:\n      | parameter | value  |\n"
     "      | id        | ${tok} |\n", ":5: ${tok} is not saved before this step (saved: none)"),
    (CALL + '    Then the result is "${tok}"\n', ":6: ${tok} is not saved before this step"),
    ('    Then the result is "x"\n', ":5: Then 'the result is \"x\"' checks a call, and no call "
     "comes before it"),
    (CALL + '    Then the answer is a SOAP fault with code "Clien"\n', ":6: 'Clien' is not a "
     "SOAP fault code (use one of Client, Server, Sender, Receiver, VersionMismatch"),
    (CALL + "    Then the element a//b is \"x\"\n", ":6: 'a//b' is not an element path"),
    (CALL + '    Then the result matches "([a-z"\n', ":6: '([a-z' is not a regular expression"),
    (CALL + "    Then it holds (R4-STATUS)\n", ":6: the step checks R4-STATUS, and the scenario "
     "is not tagged @R4-STATUS"),
    (CALL + "    Then it holds (R99-NOTHING)\n", ":6: R99-NOTHING is not a rule of the catalogue"),
    (CALL + "    Then the result is a number\n", ":6: 'a number' is not a shape"),
    (CALL + "    Then the HTTP status is 999\n", ":6: 999 is not an HTTP status"),
    ("    When the client fetches the WSDL of Nothing.asmx\n", ":5: 'Nothing.asmx' is not an "
     "endpoint of the School Mobile contract"),
    ("    Given a recorded exchange\n", ":5: no sentence of the vocabulary says Given 'a "
     "recorded exchange'"),
]


@pytest.mark.parametrize(("steps", "said"), LINT_CASES)
def test_a_step_that_cannot_run_is_one_line_naming_file_and_line(tmp_path, contract, steps,
                                                                  said) -> None:
    message = check(tmp_path, steps, contract)
    assert message.startswith(str(tmp_path / "mine.feature") + said), message
    assert "\n" not in message


def test_an_outline_is_checked_example_by_example(tmp_path, contract) -> None:
    path = tmp_path / "mine.feature"
    path.write_text("""Feature: mine

  Scenario Outline: over <binding>
    Given the service under test
    When the client calls GetTokenDevice over <binding>

    Examples:
      | binding  |
      | SOAP 1.1 |
      | SOAP 1.4 |
""", encoding="utf-8")
    with pytest.raises(UsageError, match=r"mine.feature:5 \(the example on line 10\): unknown "
                       r"binding 'SOAP 1.4'"):
        check_features([path], contract)
    path.write_text(path.read_text().replace("over <binding>\n\n", "over <bindin>\n\n"))
    with pytest.raises(UsageError, match=r":5: <bindin> is not a column of the Examples"):
        check_features([path], contract)
    path.write_text(path.read_text().replace("over <bindin>\n\n", "over <binding>\n\n")
                    .replace("SOAP 1.4", "HTTP GET"))
    assert check_features([path], contract) == 2


def test_the_checks_of_a_feature_of_another_contract(tmp_path) -> None:
    orders = load(ORDERS)
    assert "SaveOrder is not offered over HTTP GET by the Orders contract (only over SOAP 1.1, "\
           "SOAP 1.2)" in check(tmp_path, "    When the client calls SaveOrder over HTTP GET\n",
                                orders)
    said = check(tmp_path, "    When the client calls SaveOrder over SOAP 1.1 with:\n"
                 "      | parameter | value |\n      | order | {\"Number\": \"x\"} |\n", orders)
    assert ":5: order.Number: 'x' is not a int (R9-INT)" in said
    said = check(tmp_path, "    When the client calls Sum over SOAP 1.1 with:\n"
                 "      | parameter | value |\n      | values | 1, 2 |\n", orders)
    assert ":5: values is a ArrayOfInt: give it as JSON (a list or an object)" in said


def test_twin_scenarios_and_a_feature_without_one(tmp_path, contract) -> None:
    assert ":5: a second scenario named 'one' (the first is on line 3)" in check(
        tmp_path, "  Scenario: one\n    Given the service under test\n", contract)
    path = tmp_path / "none.feature"
    path.write_text("Feature: none\n  Scenario one\n    Given the service under test\n")
    with pytest.raises(UsageError, match=r"none.feature:2: 'Scenario one' reads as the "
                       r"feature's description"):
        check_features([path], contract)


@pytest.mark.parametrize(("text", "said"), [
    ("Feature: x\n  Scenario: y\n    Given the service under test\n    the client calls X\n",
     "x.feature:4: a line Gherkin cannot read (Feature:, Scenario:, Examples: end with a colon; "
     "a step starts with Given, When, Then, And or But): 'the client calls X'"),
    ("Feature: x\n  Scenario: y\n    Given the service under test\n    When the client calls "
     "GetTokenDevice over SOAP 1.1 with:\n      | parameter | value |\n      | id | 1 | 2 |\n",
     "x.feature:6: inconsistent cell count within the table: '| id | 1 | 2 |'"),
    ("Feature: x\n  Scenario: y\n    Given the service under test\n    When the client calls "
     "Nothing over HTTP GET\n", "x.feature:4: 'Nothing' is not an operation"),
])
def test_certify_refuses_a_feature_in_one_line_exit_2(tmp_path, text, said) -> None:
    mine = tmp_path / "features"
    mine.mkdir()
    (mine / "x.feature").write_text(text, encoding="utf-8")
    done = harness("certify", "--no-html", "--features", str(mine), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------- features from recorded traffic


def _send_all(contract: Contract, proxy: str) -> None:
    """Every operation over every binding with generated values, twice (duplicates), a
    non-integer id_row_central over every binding, GetTokenDevice with ids of its own by curl,
    and a WSDL (a service description)."""
    with httpx.Client(trust_env=False, timeout=60) as http:
        def send(request) -> None:
            http.request(request.method, request.url, content=request.body or None,
                         headers=[h for h in request.headers
                                  if h[0].lower() not in ("host", "content-length")])
        for _ in range(2):
            for op in contract.operations:
                for binding in Binding:
                    send(build_request(contract, op, sample_arguments(op), binding, proxy))
        op = contract.operation("LogoutFromSchool")
        for binding in Binding:
            send(build_request(contract, op, {**sample_arguments(op), "id_row_central": "x"},
                               binding, proxy))
        http.get(f"{proxy}/PushNotificationMobile.asmx?WSDL")
    url = f"{proxy}/PushNotificationMobile.asmx/GetTokenDevice"
    for identifier in ("dev-1", "dev|2"):
        subprocess.run(["curl", "-sS", "-o", "/dev/null", "--data-urlencode",
                        f"id={identifier}", url], check=True, timeout=60)


@pytest.fixture(scope="module")
def recorded(contract, reference_url, tmp_path_factory) -> Path:
    """Traffic of the embedded reference, recorded by harness capture (not redacted, and
    redacted)."""
    folder = tmp_path_factory.mktemp("recorded")
    for name, extra in (("clear.jsonl", ("--no-redact",)), ("redacted.jsonl", ())):
        with CaptureProcess(reference_url, folder / name, *extra) as capture:
            _send_all(contract, capture.url)
            code, _out, err = capture.stop()
        assert code == 0, err
    return folder


def test_recorded_traffic_becomes_one_feature_per_operation(recorded: Path, contract) -> None:
    done = harness("scenarios", "clear.jsonl", "-o", "features", cwd=recorded)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (recorded / "features").glob("*.feature"))
    assert written == sorted(f"{op.name}.feature" for op in contract.operations)
    assert "left out 1 exchange(s): service descriptions (WSDL, help pages)" in done.stdout
    token = (recorded / "features" / "GetTokenDevice.feature").read_text(encoding="utf-8")
    assert "Scenario Outline: GetTokenDevice over <binding> answers as recorded (<recorded>)" \
        in token
    assert '    And the result is "<result>"' in token
    # duplicates merged (each generated call was made twice), each distinct call one row
    assert token.count("(+1 alike)") == 4
    assert re.search(r"\| HTTP POST \| dev\\\|2 +\| 200 +\| " + token_of("dev|2", contract),
                     token), token
    logout = (recorded / "features" / "LogoutFromSchool.feature").read_text(encoding="utf-8")
    assert 'And the answer is a SOAP fault with code "<code>"' in logout
    assert re.search(r"\| SOAP 1\.2 +\| A10 +\| A11 +\| x +\| 500 +\| Sender", logout)
    assert "answers the recorded HTTP status" in logout  # GET/POST: 500 text/plain
    # written again: refused unless --force
    again = harness("scenarios", "clear.jsonl", "-o", "features", cwd=recorded)
    assert again.returncode == 2 and "exists: move it away, or give --force" in again.stderr
    assert harness("scenarios", "clear.jsonl", "-o", "features", "--force",
                   cwd=recorded).returncode == 0


def token_of(identifier: str, contract: Contract) -> str:
    return re.escape(token(identifier, contract))


def test_recorded_features_pass_against_the_recorded_deployment(recorded: Path) -> None:
    harness("scenarios", "clear.jsonl", "-o", "same", cwd=recorded)
    run = certify_features(recorded / "run-same", {}, "--features", str(recorded / "same"))
    assert run.code == 0, run.stdout + run.stderr
    assert run.scenarios and set(v[0] for v in run.scenarios.values()) == {"passed"}
    assert run.data["rules"]["SCENARIO"]["passed"] == len(run.scenarios) >= 30


def _changed_token(contract: Contract, op, binding: Binding, response: HttpResponse):
    """GetTokenDevice answering another token: a deployment that answers differently."""
    from faulty import _body

    body = re.sub(rb"(<GetTokenDeviceResult>|<string xmlns=\"http://tempuri.org/\">)([0-9a-f]+)",
                  rb"\1changed-\2", response.body)
    return _body(response, body)


def test_recorded_features_fail_naming_the_scenario_and_the_value(recorded: Path,
                                                                   contract) -> None:
    from faulty import serve_fault, where

    harness("scenarios", "clear.jsonl", "-o", "other", cwd=recorded)
    with serve_fault(where(operation="GetTokenDevice", change=_changed_token)) as url:
        run = certify_features(recorded / "run-other", {}, "--features",
                               str(recorded / "other"), "--target", url)
    assert run.code == 1, run.stdout + run.stderr
    failed = {n: m for n, (o, m) in run.scenarios.items() if o == "failed"}
    assert len(failed) == 6 and all(n.startswith("GetTokenDevice over ") for n in failed)
    name = "GetTokenDevice over HTTP POST answers as recorded (clear.jsonl #"
    dev1 = token("dev-1", contract)
    messages = [m for n, m in failed.items() if n.startswith(name)]
    # the expected token is the feature's own text (a recording made without redaction); the
    # live one, a sensitive result, shows by its pseudonym in every output, never in clear
    assert messages and not [m for m in messages if f"changed-{dev1}" in m], messages
    assert any(re.search(f'expected the result "{dev1}", actual "redacted-[0-9a-f]{{16}}"', m)
               for m in messages), messages


def test_recorded_features_hold_against_a_harmless_variation(recorded: Path) -> None:
    """Other prefixes, pretty-printed XML: the paths are local names, the results values."""
    from faulty import harmless, serve_fault

    harness("scenarios", "clear.jsonl", "-o", "harmless", cwd=recorded)
    with serve_fault(harmless) as url:
        run = certify_features(recorded / "run-harmless", {}, "--features",
                               str(recorded / "harmless"), "--target", url)
    assert run.code == 0, run.stdout + run.stderr


def test_a_redacted_result_is_checked_by_its_pseudonym_under_the_recordings_key(
        recorded: Path, contract) -> None:
    """Issue 30 item 5: with the recording's key (found in the key store capture put it in),
    a redacted result is checked by its pseudonym: the recorded deployment passes, one that
    answers another token fails naming the result, by pseudonym only (never in clear)."""
    from faulty import serve_fault, where

    done = harness("scenarios", "redacted.jsonl", "-o", "redacted", cwd=recorded)
    assert done.returncode == 0, done.stderr
    assert "GetTokenDeviceResult (redacted) checked by pseudonym under key " in done.stdout
    token_feature = (recorded / "redacted" / "GetTokenDevice.feature").read_text("utf-8")
    assert 'And the recorded values are pseudonyms under key "' in token_feature
    assert "And the result's pseudonym is \"<result>\"" in token_feature
    assert "| redacted-" in token_feature and "checked by its shape" not in token_feature
    auth = (recorded / "redacted" / "AuthCode.feature").read_text(encoding="utf-8")
    assert "Redacted in the recording: code, phone, sent as the recorded pseudonyms" in \
        " ".join(auth.split())
    run = certify_features(recorded / "run-redacted", {}, "--features",
                           str(recorded / "redacted"))
    assert run.code == 0, run.stdout + run.stderr
    with serve_fault(where(operation="GetTokenDevice", change=_changed_token)) as url:
        run = certify_features(recorded / "run-redacted-changed", {}, "--features",
                               str(recorded / "redacted"), "--target", url)
    assert run.code == 1, run.stdout + run.stderr
    failed = {n: m for n, (o, m) in run.scenarios.items() if o == "failed"}
    assert failed and all(n.startswith("GetTokenDevice over ") for n in failed)
    assert all("expected the result's pseudonym \"redacted-" in m and
               "actual \"redacted-" in m for m in failed.values()), failed
    dev1 = token("dev-1", contract)
    assert dev1 not in run.stdout + json.dumps(run.data)
    # a failure's message and its Allure attachment show the live token by one pseudonym,
    # the recording's (certify runs under the key the features name)
    shown = {re.search(r'actual "(redacted-[0-9a-f]{16})"', m).group(1)
             for m in failed.values()}
    attached = "".join(p.read_text("utf-8", "replace") for p in
                       (run.folder / "reports" / "allure-results").glob("*-attachment.*"))
    assert shown and all(face in attached for face in shown), shown


def test_without_the_key_a_redacted_result_is_checked_by_its_shape_and_said(
        recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_STORE_ENV, str(tmp_path / "no-keys"))
    done = harness("scenarios", "redacted.jsonl", "-o", "keyless", cwd=recorded)
    assert done.returncode == 0, done.stderr
    assert "checked by shape only: no key for redacted.jsonl" in done.stdout
    token_feature = (recorded / "keyless" / "GetTokenDevice.feature").read_text("utf-8")
    assert "GetTokenDeviceResult, checked by its shape (the result is a non-empty string), " \
           "not by its value (no key at hand for redacted.jsonl)" in " ".join(token_feature.split())
    assert "answers a result of the recorded shape" in token_feature
    assert "| a non-empty string |" in token_feature and "| redacted-" not in token_feature
    run = certify_features(recorded / "run-keyless", {}, "--features",
                           str(recorded / "keyless"))
    assert run.code == 0, run.stdout + run.stderr


def test_a_har_recording_too(recorded: Path) -> None:
    assert harness("export", "clear.jsonl", "--har", "clear.har", cwd=recorded).returncode == 0
    done = harness("scenarios", "clear.har", "-o", "from-har", "--max-examples", "2",
                   cwd=recorded)
    assert done.returncode == 0, done.stderr
    token = (recorded / "from-har" / "GetTokenDevice.feature").read_text(encoding="utf-8")
    assert "more call(s) left out (--max-examples)" in " ".join(token.split())
    assert token.count("| clear.har #") == 2
    assert check_features(sorted((recorded / "from-har").glob("*.feature")),
                          load_school_mobile()) >= 16


def load_school_mobile() -> Contract:
    from harness.contract.model import school_mobile

    return school_mobile()


@pytest.mark.parametrize(("args", "said"), [
    (("nothing.jsonl",), "recording nothing.jsonl does not exist"),
    (("empty.har",), "no call of the School Mobile contract in empty.har"),
])
def test_scenarios_errors_are_one_line(tmp_path: Path, args, said) -> None:
    (tmp_path / "empty.har").write_text('{"log": {"version": "1.2", "entries": []}}')
    done = harness("scenarios", *args, "-o", "out", cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


def test_values_a_cell_must_escape_read_back_as_sent(tmp_path: Path, contract,
                                                    reference_url: str) -> None:
    """A pipe, a backslash, a newline and ${ in a recorded value: the feature sends exactly
    it again (the reference's token is the sha256 of the id: any change shows)."""
    from harness.reference.app import answer
    from harness.scenarios.record import write_features
    from harness.traffic.exchange import Exchange

    op = contract.operation("GetTokenDevice")
    odd = "a|b\\c\nd${e}f"
    exchanges = []
    for i, binding in enumerate((Binding.SOAP11, Binding.HTTP_POST), 1):
        request = build_request(contract, op, {"id": odd}, binding, "http://127.0.0.1")
        exchanges.append(Exchange(request, answer(contract, request), index=i,
                                  source="odd.jsonl"))
    write_features(["odd.jsonl"], exchanges, contract, tmp_path / "odd")
    run = certify_features(tmp_path, {}, "--features", str(tmp_path / "odd"))
    assert run.code == 0 and len(run.scenarios) == 2, run.stdout + run.stderr


def test_the_docs_example_error_is_what_certify_says(tmp_path: Path, contract) -> None:
    """The page quotes the one line a misspelt operation gets: it is certify's own."""
    page = DOCS.read_text(encoding="utf-8")
    quoted = re.search(r"^harness certify: error: features/tokens.feature(:.*)$", page, re.M)
    mine = tmp_path / "features"
    mine.mkdir()
    feature = docs_feature().replace("calls GetTokenDevice over", "calls GetTokenDevic over", 1)
    assert feature.splitlines()[5].endswith("GetTokenDevic over SOAP 1.1 with:")
    (mine / "tokens.feature").write_text(feature, encoding="utf-8")
    done = harness("certify", "--no-html", "--features", "features", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(quoted.group(1)), done.stderr


def test_certify_s_own_features_read_as_the_vocabulary(tmp_path: Path, contract) -> None:
    """The packaged features, and those certify writes for another contract, pass the check
    a team's features get (a team starts from a copy of them)."""
    from harness.certify.engine import FEATURE_FILES, FEATURES
    from harness.certify.generate import WSDL_FEATURE, write_features

    packaged = [FEATURES / name for name in (*FEATURE_FILES, WSDL_FEATURE)]
    assert check_features(packaged, contract) >= 60
    inventory = load(Path(__file__).parent / "services" / "inventory" / "contract.json")
    written = write_features(inventory, FEATURES, FEATURE_FILES, tmp_path)
    assert check_features([tmp_path / name for name in written], inventory) >= 30
    # A WSDL with the SOAP 1.1 binding only (spyne's): the matrix keeps its SOAP 1.1 scenario
    soap11_only = dataclasses.replace(inventory, bindings=("soap11",))
    written = write_features(soap11_only, FEATURES, FEATURE_FILES, tmp_path / "soap11")
    matrix = (tmp_path / "soap11" / "asmx_matrix.feature").read_text()
    assert "over SOAP 1.1, sent" in matrix and "over HTTP GET" not in matrix
    assert check_features([tmp_path / "soap11" / name for name in written], soap11_only) >= 10
