"""Interop lane: a team's own features and features written from recorded traffic, against the
real ASMX runtime (../shared/asmx: GetTokenDevice answers "token-for-" and the id) and against
the embedded reference (whose tokens differ): they pass on the deployment they describe and
fail, naming the scenario and the value, on the other. The recordings are made by real clients
(curl, zeep, Node's soap) through ``harness capture``; another ASMX service (the orders
service's arrays and complex types) comes in with ``--contract``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from asmx_runtime import real_runtime
from test_capture_clients import _curl, _node, _zeep
from test_scenarios import ORDERS, certify_features, docs_feature, harness

from harness.capture.process import CaptureProcess
from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, load, sample_arguments
from harness.traffic.keys import KEY_STORE_ENV

pytestmark = pytest.mark.interop

#: The first feature of the docs' "Write your own scenarios", written with only the sentences
#: issue 26 names: a chained token, an outline over the four bindings, a Client fault for a
#: non-integer id_row_central.
ISSUE_FEATURE = docs_feature()


def test_the_issues_feature_passes_on_asmx_and_fails_on_the_reference(asmx_url: str,
                                                                      tmp_path: Path) -> None:
    on_asmx = certify_features(tmp_path / "asmx", {"tokens.feature": ISSUE_FEATURE},
                               "--target", asmx_url)
    assert on_asmx.code == 0, on_asmx.stdout + on_asmx.stderr
    assert len(on_asmx.scenarios) == 8
    assert {outcome for outcome, _ in on_asmx.scenarios.values()} == {"passed"}
    on_reference = certify_features(tmp_path / "reference", {"tokens.feature": ISSUE_FEATURE})
    assert on_reference.code == 1, on_reference.stdout + on_reference.stderr
    failed = {n for n, (outcome, _) in on_reference.scenarios.items() if outcome == "failed"}
    assert failed == {"A token saved and sent on", *(f"The token over {b.label}"
                                                     for b in Binding)}
    message = on_reference.scenarios["The token over HTTP GET"][1]
    assert 'expected the result "token-for-42", actual "' in message
    assert on_reference.scenarios["A non-integer id_row_central is the client's fault"][0] \
        == "passed"


def _recorded_by_clients(contract: Contract, proxy: str) -> None:
    """zeep and Node's soap over SOAP 1.1 and 1.2, curl over GET and POST, then tokens of
    ids of their own and a non-integer id_row_central over every binding."""
    _zeep(contract, proxy)
    _node(contract, proxy)
    _curl(contract, proxy)
    url = f"{proxy}/PushNotificationMobile.asmx/GetTokenDevice"
    for identifier in ("dev-1", "dev 2"):
        for extra in ((), ("--get",)):
            subprocess.run(["curl", "-sS", "-o", "/dev/null", *extra, "--data-urlencode",
                            f"id={identifier}", url], check=True, timeout=60)
    op = contract.operation("LogoutFromSchool")
    with httpx.Client(trust_env=False, timeout=60) as http:
        for binding in Binding:
            request = build_request(contract, op, {**sample_arguments(op), "id_row_central": "x"},
                                    binding, proxy)
            http.request(request.method, request.url, content=request.body or None,
                         headers=[h for h in request.headers
                                  if h[0].lower() not in ("host", "content-length")])


@pytest.fixture(scope="module")
def recorded(contract, asmx_url, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("asmx-recorded")
    for name, extra in (("clients.jsonl", ("--no-redact",)), ("redacted.jsonl", ())):
        with CaptureProcess(asmx_url, folder / name, *extra) as capture:
            _recorded_by_clients(contract, capture.url)
            code, _out, err = capture.stop()
        assert code == 0, err
    return folder


def test_recorded_clients_traffic_passes_on_asmx_and_fails_on_the_reference(
        recorded: Path, asmx_url: str) -> None:
    done = harness("scenarios", "clients.jsonl", "-o", "features", cwd=recorded)
    assert done.returncode == 0, done.stderr
    assert "service descriptions (WSDL, help pages)" in done.stdout  # zeep's and node's WSDLs
    token = (recorded / "features" / "GetTokenDevice.feature").read_text(encoding="utf-8")
    assert "| token-for-dev 2 |" in token.replace("  ", " ")
    on_asmx = certify_features(recorded / "on-asmx", {}, "--features",
                               str(recorded / "features"), "--target", asmx_url)
    assert on_asmx.code == 0, on_asmx.stdout + on_asmx.stderr
    assert {outcome for outcome, _ in on_asmx.scenarios.values()} == {"passed"}
    on_reference = certify_features(recorded / "on-reference", {}, "--features",
                                    str(recorded / "features"))
    assert on_reference.code == 1
    failed = {n: m for n, (o, m) in on_reference.scenarios.items() if o == "failed"}
    assert failed and all(n.startswith("GetTokenDevice over ") for n in failed), failed
    assert any('expected the result "token-for-dev-1", actual "' in m for m in failed.values())
    assert len(failed) == len([n for n in on_reference.scenarios
                               if n.startswith("GetTokenDevice over ")])


def test_a_redacted_recording_checks_the_token_by_its_shape(recorded: Path, asmx_url: str,
                                                             tmp_path: Path) -> None:
    """Without the recording's key (another machine's key store), the token is checked by its
    shape, and the features pass on the recorded deployment. (With the key, by its pseudonym:
    tests/test_interop_pseudonyms.py.)"""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "scenarios", "redacted.jsonl", "-o", "redacted"],
        cwd=recorded, text=True, capture_output=True, timeout=300, check=False,
        env={**os.environ, KEY_STORE_ENV: str(tmp_path / "no-keys")})
    assert done.returncode == 0, done.stderr
    token = (recorded / "redacted" / "GetTokenDevice.feature").read_text(encoding="utf-8")
    assert "token-for-" not in token and "| a non-empty string |" in token
    assert "redacted-" not in token
    run = certify_features(recorded / "redacted-on-asmx", {}, "--features",
                           str(recorded / "redacted"), "--target", asmx_url)
    assert run.code == 0, run.stdout + run.stderr


def _orders_calls(orders: Contract, proxy: str) -> None:
    """Every operation over every binding it is offered on, generated values."""
    with httpx.Client(trust_env=False, timeout=60) as http:
        for op in orders.operations:
            for name in orders.bindings_of(op):
                binding = Binding(name)
                request = build_request(orders, op, sample_arguments(op, 0, name), binding,
                                        proxy)
                answered = http.request(request.method, request.url,
                                        content=request.body or None,
                                        headers=[h for h in request.headers if h[0].lower()
                                                 not in ("host", "content-length")])
                assert answered.status_code == 200, (op.name, name, answered.text[:300])


def test_another_services_recording_with_its_contract(asmx_home: Path, tmp_path: Path) -> None:
    orders = load(ORDERS)
    with real_runtime(asmx_home, ORDERS.parent, tmp_path / "work") as url:
        with CaptureProcess(url, tmp_path / "orders.jsonl", "--contract", str(ORDERS),
                            "--no-redact") as capture:
            _orders_calls(orders, capture.url)
            code, _out, err = capture.stop()
        assert code == 0, err
        done = harness("scenarios", "orders.jsonl", "--contract", str(ORDERS), "-o",
                       "features", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        product = (tmp_path / "features" / "GetProduct.feature").read_text(encoding="utf-8")
        assert '"Name":"item-' in product  # the complex result, as JSON
        on_asmx = certify_features(tmp_path / "on-asmx", {}, "--features",
                                   str(tmp_path / "features"), "--contract", str(ORDERS),
                                   "--target", url)
    assert on_asmx.code == 0, on_asmx.stdout + on_asmx.stderr
    assert len(on_asmx.scenarios) >= 15
    on_reference = certify_features(tmp_path / "on-reference", {}, "--features",
                                    str(tmp_path / "features"), "--contract", str(ORDERS))
    assert on_reference.code == 1
    failed = {n.split(" over ")[0] for n, (o, _) in on_reference.scenarios.items()
              if o == "failed"}
    assert {"GetProduct", "ListProducts", "Tags"} <= failed
