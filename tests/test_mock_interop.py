"""Interop lane: ``harness mock`` of what the real ASMX runtime answered real clients.

curl, zeep and Node's ``soap`` call School Mobile (and a second ASMX service, Inventory, with
--contract) over all four bindings through ``harness capture``; ``harness mock`` serves that
recording. Replaying the recording against the mock passes; zeep, loading the mock's WSDL,
gets the recorded results; a call recorded over SOAP 1.1 only is answered over GET and POST
with the result the runtime itself gives there; an unrecorded call is refused, or answered by
the reference with --fallback reference; and ``harness certify`` of that mock passes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from asmx_runtime import real_runtime
from test_capture_clients import _node, _zeep
from test_mock import Served

from harness.capture.process import CaptureProcess
from harness.capture.samples import zeep_arguments
from harness.contract.bindings import Binding, build_request, classify, read_response
from harness.contract.model import Contract, load, sample_arguments, school_mobile
from harness.reference.app import answer
from harness.reference.wsdl import service_name
from harness.traffic import send
from harness.traffic.exchange import HttpResponse
from harness.traffic.keys import find_key, recorded_key_id, stored_key_path
from harness.traffic.recording import read_exchanges
from harness.traffic.redaction import pseudonym

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "tests" / "services" / "inventory"


@dataclass
class Recorded:
    """A service on the real runtime and what capture recorded of real clients calling it."""

    contract: Contract
    options: list[str]  # the contract options of every command: [] or --contract FILE
    upstream: str
    recording: Path
    soap11_only: Path  # one call per operation, over SOAP 1.1 only, not redacted
    folder: Path


def _curl(contract: Contract, proxy: str) -> None:
    """Every operation over GET and POST where the contract offers them, by curl."""
    for op in contract.operations:
        for binding in ("get", "post"):
            if binding not in contract.bindings_of(op):
                continue
            query = urlencode(sample_arguments(op, 0, binding))
            url = f"{proxy}{op.endpoint}/{op.name}"
            command = (["curl", "-sS", f"{url}?{query}"] if binding == "get"
                       else ["curl", "-sS", "--data", query, url])
            done = subprocess.run([*command, "-o", "/dev/null", "-w", "%{http_code}"],
                                  capture_output=True, text=True, timeout=60, check=False)
            assert done.stdout == "200", (command, done.stdout, done.stderr)


ONLY_SOAP11 = "only-soap11"


def _soap11_values(op) -> dict[str, object]:
    """Values no other client sends: a string parameter set to ONLY_SOAP11."""
    args = sample_arguments(op, 1)
    for p in op.parameters:
        if p.type.value == "string":
            args[p.name] = ONLY_SOAP11
    return args


def _record(contract: Contract, upstream: str, folder: Path, options: list[str]) -> Recorded:
    recording = folder / "clients.jsonl"
    with CaptureProcess(upstream, recording, *options) as capture:
        _zeep(contract, capture.url)
        _node(contract, capture.url)
        _curl(contract, capture.url)
        code, _out, err = capture.stop()
    assert code == 0, err
    soap11_only = folder / "soap11-only.jsonl"
    with CaptureProcess(upstream, soap11_only, "--no-redact", *options) as capture, \
            send.client() as http:
        for op in contract.operations:
            request = build_request(contract, op, _soap11_values(op), Binding.SOAP11,
                                    capture.url)
            assert send.send(http, request).status == 200
        code, _out, err = capture.stop()
    assert code == 0, err
    return Recorded(contract, options, upstream, recording, soap11_only, folder)


@pytest.fixture(scope="module", params=["school-mobile", "inventory"])
def service(request, asmx_url, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"mock-{request.param}")
    if request.param == "school-mobile":
        yield _record(school_mobile(), asmx_url, folder, [])
        return
    home = request.getfixturevalue("asmx_home")
    contract_file = str(INVENTORY / "contract.json")
    with real_runtime(home, INVENTORY, folder / "runtime") as url:
        yield _record(load(contract_file), url, folder, ["--contract", contract_file])


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def mock(service):
    # capture's key: zeep and Node send real phone numbers and codes, recorded as pseudonyms
    served = Served(str(service.recording), str(service.soap11_only), *service.options,
                    "--key-file", str(stored_key_path(recorded_key_id(service.recording))),
                    cwd=service.folder)
    yield served
    served.stop()


@pytest.fixture(scope="module")
def fallback_mock(service):
    served = Served(str(service.recording), *service.options, "--fallback", "reference",
                    cwd=service.folder)
    yield served
    served.stop()


def test_replaying_the_recording_against_the_mock_exits_0(service, mock):
    out = service.folder / "replay.json"
    done = harness("replay", str(service.recording), *service.options, "--target", mock.url,
                   "--json", str(out), "--quiet", cwd=service.folder)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 0 and data["exchanges"] > 0


def test_zeep_loads_the_mocks_wsdl_and_gets_the_recorded_results(service, mock):
    """Through the mock's WSDL, over both SOAP ports, every operation gives what zeep got
    from the runtime when it was recorded (a redacted result: its pseudonym)."""
    import zeep

    recorded = _recorded_results(service)
    contract = service.contract
    for endpoint, ops in contract.endpoints.items():
        for suffix in ("Soap", "Soap12"):
            name = service_name(endpoint)
            client = zeep.Client(f"{mock.url}{endpoint}?WSDL")
            port = client.bind(name, f"{name}{suffix}")
            assert port._binding_options["address"] == f"{mock.url}{endpoint}"
            for op in ops:
                got = getattr(port, op.name)(**zeep_arguments(op, sample_arguments(op)))
                expected = recorded[op.name]
                assert _text(got) == expected, (op.name, suffix, got, expected)


def _recorded_results(service: Recorded) -> dict[str, str | None]:
    """The result text zeep's SOAP 1.1 call of each operation got when it was recorded."""
    found: dict[str, str | None] = {}
    for exchange in read_exchanges([service.recording]):
        agent = exchange.request.header("User-Agent") or ""
        if "zeep" not in agent.lower() or "operation" not in exchange.meta:
            continue
        call = classify(service.contract, exchange.request)
        reading = read_response(call.operation, call.binding, exchange.response)
        found[call.operation.name] = reading.result
    assert set(found) == {op.name for op in service.contract.operations}
    return found


def _text(value) -> str | None:
    """zeep's typed value as the XML text ASMX wrote (None for a void operation)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if hasattr(value, "isoformat"):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def test_a_call_recorded_over_soap11_only_is_answered_over_get_and_post(service, mock):
    """The mock's GET and POST answers to calls it holds over SOAP 1.1 only are the ones the
    runtime itself gives over GET and POST (curl to both, byte for byte)."""
    contract = service.contract
    asked = 0
    for op in contract.operations:
        values = _soap11_values(op)
        for binding in (Binding.HTTP_GET, Binding.HTTP_POST):
            if binding.value not in contract.bindings_of(op):
                continue
            from_mock, from_runtime = (_curl_call(contract, op, values, binding, base)
                                       for base in (mock.url, service.upstream))
            assert from_mock == from_runtime, (op.name, binding)
            with httpx.Client(trust_env=False, timeout=30) as http:
                source = _send(http, build_request(contract, op, values, binding, mock.url)
                               ).headers["X-Harness-Mock"]
            assert source == "recorded", (op.name, binding)
            asked += 1
    assert asked >= 2 * (len(contract.operations) - 1)


def _curl_call(contract, op, values, binding, base) -> tuple[str, bytes]:
    request = build_request(contract, op, values, binding, base)
    command = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", request.url]
    if binding is Binding.HTTP_POST:
        command += ["--data", request.body.decode("ascii")]
    done = subprocess.run(command, capture_output=True, timeout=60, check=False)
    body, _, status = done.stdout.rpartition(b"\n")
    return status.decode(), body


def test_an_unrecorded_call_is_refused_and_answered_by_the_reference_with_fallback(
        service, mock, fallback_mock):
    contract = service.contract
    op = next(op for op in contract.operations if op.parameters and op.result)
    values = sample_arguments(op, 2, "get")
    values[next(p.name for p in op.parameters if p.type.value == "string")] = "never-recorded"
    with httpx.Client(trust_env=False, timeout=30) as http:
        for binding in Binding:
            if binding.value not in contract.bindings_of(op):
                continue
            refused = _send(http, build_request(contract, op, values, binding, mock.url))
            assert refused.status_code == 500, binding
            assert refused.headers["X-Harness-Mock"] == "unmatched"
            assert f"no recorded answer for {op.name}(" in refused.text
            reference_request = build_request(contract, op, values, binding, fallback_mock.url)
            fallback = _send(http, reference_request)
            expected = answer(contract, reference_request)
            assert (fallback.status_code, fallback.content) == (expected.status,
                                                                expected.body), binding
            assert fallback.headers["X-Harness-Mock"] == "reference"


def _send(http: httpx.Client, request) -> httpx.Response:
    headers = [(k, v) for k, v in request.headers if k.lower() != "host"]
    return http.request(request.method, request.url, headers=headers,
                        content=request.body or None)


def test_certify_of_the_mock_with_fallback_reference_exits_0(service, fallback_mock):
    out = service.folder / "certify.json"
    done = harness("certify", "--target", fallback_mock.url, *service.options, "--json",
                   str(out), "--report-dir", str(service.folder / "reports"), "--no-html",
                   cwd=service.folder)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["counts"]["failed"] == 0


def test_record_through_the_real_runtime_then_answered_from_the_recording(contract, asmx_url,
                                                                          tmp_path):
    """``--fallback <real ASMX> --record FILE``: an unrecorded call is answered by the real
    ASMX runtime and recorded; the next mock of that recording answers it without the
    runtime, over the binding it was recorded over and another one."""
    from test_mock_stubs import curl

    record = tmp_path / "through.jsonl"
    served = Served("--fallback", asmx_url, "--record", str(record), cwd=tmp_path)
    first = curl(contract, served.url, "GetTokenDevice", {"id": "dev-77"}, Binding.SOAP11,
                 "-i")
    code, out, err = served.stop()
    assert code == 0 and "Traceback" not in err, err
    assert "x-harness-mock: forwarded" in first.stdout.lower()
    assert "harness mock: 1 call(s) answered: 0 from the recording, 1 forwarded to the " \
           "fallback" in out
    assert "recorded-through: #1" in out and "GetTokenDevice 200" in out
    runtime = subprocess.run(["curl", "-sS", "-H", "Content-Type: text/xml; charset=utf-8",
                              "-H", 'SOAPAction: "http://tempuri.org/GetTokenDevice"',
                              "--data-binary", build_request(
                                  contract, contract.operation("GetTokenDevice"),
                                  {"id": "dev-77"}, Binding.SOAP11, asmx_url).body.decode(),
                              f"{asmx_url}/PushNotificationMobile.asmx"],
                             capture_output=True, text=True, timeout=60, check=False).stdout
    assert [e.request.url.split("/")[-1] for e in read_exchanges([record])] == [
        "PushNotificationMobile.asmx"]
    key, key_file = find_key(record)
    again = Served(str(record), "--key-file", str(key_file), cwd=tmp_path)
    soap = curl(contract, again.url, "GetTokenDevice", {"id": "dev-77"}, Binding.SOAP11)
    get = curl(contract, again.url, "GetTokenDevice", {"id": "dev-77"}, Binding.HTTP_GET)
    code, out, _err = again.stop()
    assert code == 0 and "2 call(s) answered: 2 from the recording" in out
    token = read_response(contract.operation("GetTokenDevice"), Binding.SOAP11,
                          HttpResponse(200, (("Content-Type", "text/xml"),),
                                            runtime.encode())).result
    assert token and token not in record.read_text(encoding="utf-8")  # redacted as captured
    secret = pseudonym(token, key)
    # the runtime's bytes, its sensitive result as the recording holds it
    assert soap.stdout.rsplit("\n", 1) == [runtime.replace(token, secret), "200"]
    assert "<string" in get.stdout and get.stdout.endswith("\n200")
