"""``harness mock``: recorded answers served back over every binding, by meaning.

Recordings here are built as capture writes them, with answers the reference would never give
(``staging-...``), so an answer from the mock is visibly the recording's. The mock runs on
loopback behind the same server as ``harness serve``; clients are httpx and zeep. The ASMX
runtime's recordings are in tests/test_mock_interop.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.contract.bindings import (
    Binding,
    FaultCode,
    build_fault,
    build_request,
    build_response,
    read_response,
)
from harness.contract.model import Contract, load
from harness.contract.types import ParamType
from harness.mock import Mock, Options
from harness.mock import index as mock_index
from harness.mock.values import normal
from harness.reference.app import Delayed, answer, create_app
from harness.reference.server import running
from harness.traffic import recording, send
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.har import write_har
from harness.traffic.recording import RecordingWriter
from harness.traffic.redaction import Redactor, load_or_create_key

ROOT = Path(__file__).resolve().parents[1]
HARNESS = str(Path(sys.executable).parent / "harness")
ORDERS = load(ROOT / "tests" / "services" / "orders" / "contract.json")
INVENTORY = load(ROOT / "tests" / "services" / "inventory" / "contract.json")
STAGING = "http://staging.example:8080"


# -- recordings as capture writes them ------------------------------------------------------


def call(contract: Contract, op: str, args: dict, binding: Binding,
         base: str = STAGING) -> HttpRequest:
    return build_request(contract, contract.operation(op), args, binding, base)


def recorded(contract: Contract, op: str, args: dict, binding: Binding, result=None, *,
             response: HttpResponse | None = None, duration: float | None = None) -> Exchange:
    """The exchange a capture of ``op(args)`` over ``binding`` records, answered ``result``
    (or ``response``) as staging would."""
    answer_ = response or build_response(contract, contract.operation(op), binding, result)
    timings = {"duration": duration} if duration is not None else {}
    return Exchange(call(contract, op, args, binding), answer_, timings=timings)


def write(path: Path, exchanges: list[Exchange], **header) -> Path:
    with RecordingWriter(path, upstream=STAGING, redacted=False, **header) as writer:
        for exchange in exchanges:
            writer.write(exchange)
    return path


@contextlib.contextmanager
def mocked(contract: Contract, paths: list[Path], **options) -> Iterator[tuple[str, Mock,
                                                                              list[str]]]:
    """The mock of ``paths`` on loopback: (base URL, the mock, the unmatched lines said)."""
    said: list[str] = []
    index = mock_index.load(contract, paths)
    mock = Mock(contract, index, Options(**options), on_unmatched=said.append)
    try:
        with running(contract, app=create_app(contract, mock.respond)) as url:
            yield url, mock, said
    finally:
        index.close()


def ask(contract: Contract, url: str, op: str, args: dict, binding: Binding) -> HttpResponse:
    with send.client() as http:
        return send.send(http, call(contract, op, args, binding, url))


def result_of(contract: Contract, op: str, binding: Binding, response: HttpResponse):
    return read_response(contract.operation(op), binding, response)


# -- matching by meaning ----------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "soap", "http"), [
    (ParamType.INT, " +007 ", "7"),
    (ParamType.UNSIGNED_LONG, "18446744073709551615", "18446744073709551615"),
    (ParamType.BOOLEAN, "1", "True"),
    (ParamType.DECIMAL, "1.50", "1.5"),
    (ParamType.DECIMAL, "-12.5", "12.5-"),
    (ParamType.DOUBLE, "INF", "Infinity"),
    (ParamType.DOUBLE, "-0", "0"),
    (ParamType.GUID, "{0F8FAD5B-D9CB-469F-A165-70867728950E}",
     "0f8fad5b-d9cb-469f-a165-70867728950e"),
    (ParamType.CHAR, "65", "A"),
    (ParamType.BASE64, "AQID", "1,2,3"),
    (ParamType.DATETIME, "2024-01-31T12:34:56Z", "2024-01-31T12:34:56+00:00"),
    (ParamType.DATETIME, "2024-01-31", "2024-01-31T00:00:00"),
])
def test_a_value_over_soap_equals_the_same_value_over_get(kind, soap, http):
    assert normal(kind, soap) == normal(kind, http, http=True)


@pytest.mark.parametrize(("kind", "a", "b"), [
    (ParamType.STRING, " a", "a"),  # a string is exactly what was sent
    (ParamType.INT, "7", "8"),
    (ParamType.BOOLEAN, "true", "false"),
    (ParamType.DECIMAL, "1.5", "1.05"),
])
def test_different_values_stay_different(kind, a, b):
    assert normal(kind, a) != normal(kind, b)


def test_an_enumeration_number_over_get_names_its_member():
    members = ("Red", "Green", "Blue")
    assert normal(ParamType.ENUM, "1", members, http=True) == normal(ParamType.ENUM, "Green",
                                                                       members)


def test_a_hostile_number_is_kept_as_text_not_computed():
    assert normal(ParamType.INT, "9" * 5000) == "9" * 5000
    assert normal(ParamType.DECIMAL, "1" * 5000) == "1" * 5000


# -- over every binding ---------------------------------------------------------------------


def test_a_call_recorded_over_soap11_is_answered_over_every_binding(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    with mocked(contract, [path]) as (url, mock, said):
        for binding in Binding:
            response = ask(contract, url, "GetTokenDevice", {"id": "7"}, binding)
            reading = result_of(contract, "GetTokenDevice", binding, response)
            assert response.status == 200 and reading.result == "staging-7", binding
            assert response.header("X-Harness-Mock") == "recorded"
            # in the asking binding's own form: its envelope version, or the bare document
            assert response.content_type == (binding.soap_content_type
                                             or "text/xml; charset=utf-8")
            if binding.is_soap:
                assert reading.envelope_binding is binding
        assert mock.stats.answered["recorded"] == 4 and not said


def test_over_the_recorded_binding_the_answer_is_byte_for_byte_the_recorded_one(contract,
                                                                                 tmp_path):
    body = (b'<?xml version="1.0" encoding="utf-8"?>\n<string xmlns="http://tempuri.org/">'
            b"as   staging   wrote it</string>")
    staged = HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),
                                ("X-AspNet-Version", "4.0.30319"), ("Content-Length", "999"),
                                ("Date", "Mon, 01 Jan 2024 00:00:00 GMT")), body)
    path = write(tmp_path / "r.jsonl", [recorded(contract, "GetTokenDevice", {"id": "7"},
                                                 Binding.HTTP_GET, response=staged)])
    with mocked(contract, [path]) as (url, _mock, _said):
        response = ask(contract, url, "GetTokenDevice", {"id": "7"}, Binding.HTTP_GET)
    assert response.body == body
    assert response.header("X-AspNet-Version") == "4.0.30319"
    assert response.header("Content-Length") == str(len(body))  # the connection's, not recorded
    assert response.header("Date") is None


def test_a_call_recorded_over_several_bindings_is_answered_as_recorded_over_the_asking_one(
        contract, tmp_path):
    """LogoutFromSchool recorded over SOAP 1.1, then SOAP 1.2: the SOAP 1.1 call gets the
    SOAP 1.1 exchange's own bytes and headers (it was the SOAP 1.2 one, re-rendered)."""
    args = {"PhoneNumber": "0501234567", "id_row_central": "7"}
    op = contract.operation("LogoutFromSchool")
    soap11 = build_response(contract, op, Binding.SOAP11)
    staged = HttpResponse(200, (*soap11.headers, ("X-Staging", "soap11")),
                          soap11.body.replace(b"?>", b"?>\n", 1))
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "LogoutFromSchool", args, Binding.SOAP11, response=staged),
        recorded(contract, "LogoutFromSchool", args, Binding.SOAP12)])
    with mocked(contract, [path]) as (url, _mock, _said):
        got = ask(contract, url, "LogoutFromSchool", args, Binding.SOAP11)
        soap12 = ask(contract, url, "LogoutFromSchool", args, Binding.SOAP12)
    assert got.body == staged.body and got.header("X-Staging") == "soap11"
    assert got.header("X-Harness-Mock") == "recorded"
    assert soap12.header("X-Staging") is None and soap12.status == 200


def test_typed_values_match_across_bindings(tmp_path):
    """Inventory's PriceOf(sku, long quantity, decimal discount) recorded over SOAP 1.2 is
    the same call as a GET spelling the numbers otherwise; another number is another call."""
    args = {"sku": "A-1", "quantity": "3", "discount": "1.50"}
    path = write(tmp_path / "r.jsonl", [
        recorded(INVENTORY, "PriceOf", args, Binding.SOAP12, "6.00")])
    with mocked(INVENTORY, [path]) as (url, _mock, said):
        same = ask(INVENTORY, url, "PriceOf", {"sku": "A-1", "quantity": "+003",
                                               "discount": "1.5"}, Binding.HTTP_GET)
        other = ask(INVENTORY, url, "PriceOf", {"sku": "A-1", "quantity": "4",
                                                "discount": "1.5"}, Binding.HTTP_POST)
    assert result_of(INVENTORY, "PriceOf", Binding.HTTP_GET, same).result == "6.00"
    assert other.status == 500 and other.header("X-Harness-Mock") == "unmatched"
    assert said == ["no recorded answer for PriceOf(sku='A-1', quantity='4', discount='1.5') "
                    "over HTTP POST; nearest recorded: quantity='3'"]


def test_structured_values_match_by_their_leaves(tmp_path):
    """Orders' Sum(ArrayOfInt) recorded over SOAP 1.1 answers the same array over GET
    (repeated fields); GetProduct's complex result is rendered as GET's document."""
    product = {"Id": "7", "Name": "staging widget", "Price": "2.50", "Tags": ["a", "b"]}
    path = write(tmp_path / "r.jsonl", [
        recorded(ORDERS, "Sum", {"values": ["1", "2"]}, Binding.SOAP11, "303"),
        recorded(ORDERS, "GetProduct", {"id": "7"}, Binding.SOAP11, product)])
    with mocked(ORDERS, [path]) as (url, _mock, said):
        summed = ask(ORDERS, url, "Sum", {"values": ["+1", "02"]}, Binding.HTTP_GET)
        got = ask(ORDERS, url, "GetProduct", {"id": "7"}, Binding.HTTP_POST)
    assert result_of(ORDERS, "Sum", Binding.HTTP_GET, summed).result == "303", said
    expected = build_response(ORDERS, ORDERS.operation("GetProduct"), Binding.HTTP_POST,
                              product)
    assert got.status == 200 and got.body == expected.body


def test_a_recorded_fault_is_answered_in_the_asking_bindings_form(contract, tmp_path):
    fault = build_fault(Binding.SOAP11, FaultCode.CLIENT, "device dev-9 is unknown")
    path = write(tmp_path / "r.jsonl", [recorded(contract, "GetTokenDevice", {"id": "dev-9"},
                                                 Binding.SOAP11, response=fault)])
    with mocked(contract, [path]) as (url, _mock, _said):
        soap12 = ask(contract, url, "GetTokenDevice", {"id": "dev-9"}, Binding.SOAP12)
        get = ask(contract, url, "GetTokenDevice", {"id": "dev-9"}, Binding.HTTP_GET)
    reading = result_of(contract, "GetTokenDevice", Binding.SOAP12, soap12)
    assert soap12.status == 500 and reading.envelope_binding is Binding.SOAP12
    assert (reading.fault_code, reading.fault_reason) == ("Sender", "device dev-9 is unknown")
    assert get.status == 500 and get.content_type == "text/plain; charset=utf-8"
    assert get.body == b"device dev-9 is unknown"


def test_an_answer_the_contract_cannot_read_is_served_as_recorded_on_every_binding(contract,
                                                                                   tmp_path):
    gateway = HttpResponse(503, (("Content-Type", "text/html"), ("Retry-After", "30")),
                           b"<html>maintenance</html>", "Service Unavailable")
    path = write(tmp_path / "r.jsonl", [recorded(contract, "GetTokenDevice", {"id": "7"},
                                                 Binding.SOAP11, response=gateway)])
    with mocked(contract, [path]) as (url, _mock, _said):
        for binding in Binding:
            response = ask(contract, url, "GetTokenDevice", {"id": "7"}, binding)
            assert (response.status, response.body) == (503, gateway.body), binding
            assert response.header("Retry-After") == "30"


# -- unmatched calls ------------------------------------------------------------------------


def test_an_unmatched_call_is_refused_with_the_nearest_recorded_one(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "dev-a"}, Binding.SOAP11, "staging-a"),
        recorded(contract, "GetTokenDevice", {"id": "zzzzzzzz"}, Binding.SOAP11, "staging-z")])
    with mocked(contract, [path]) as (url, mock, said):
        get = ask(contract, url, "GetTokenDevice", {"id": "dev-q"}, Binding.HTTP_GET)
        soap = ask(contract, url, "GetTokenDevice", {"id": "dev-q"}, Binding.SOAP12)
        ask(contract, url, "AuthCode", {"code": "1", "phone": "2"}, Binding.SOAP11)
    line = ("no recorded answer for GetTokenDevice(id='dev-q') over HTTP GET; nearest "
            "recorded: id='dev-a'")
    assert (get.status, get.body.decode()) == (500, line)
    assert get.header("X-Harness-Mock") == "unmatched"
    reading = result_of(contract, "GetTokenDevice", Binding.SOAP12, soap)
    assert soap.status == 500 and reading.fault_code == "Sender"
    assert reading.fault_reason == line.replace("HTTP GET", "SOAP 1.2")
    assert said[0] == line
    assert "nearest recorded: none (the recording has no AuthCode call)" in said[2]
    # personal values never reach the console in clear
    assert "phone=[redacted]" in said[2] and "'2'" not in said[2]
    assert mock.stats.answered["unmatched"] == 3


def test_fallback_reference_answers_an_unmatched_call_as_the_reference(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    with mocked(contract, [path], fallback="reference") as (url, mock, said):
        for binding in Binding:
            response = ask(contract, url, "GetTokenDevice", {"id": "8"}, binding)
            reference = answer(contract, call(contract, "GetTokenDevice", {"id": "8"},
                                              binding, url))
            assert (response.status, response.body) == (reference.status, reference.body)
            assert response.header("X-Harness-Mock") == "reference"
        recorded_one = ask(contract, url, "GetTokenDevice", {"id": "7"}, Binding.HTTP_GET)
    assert result_of(contract, "GetTokenDevice", Binding.HTTP_GET,
                     recorded_one).result == "staging-7"
    assert mock.stats.answered["reference"] == 4 and len(said) == 4
    assert said[0].endswith("; answered by the reference")


def test_the_binding_rules_are_kept_before_any_lookup(contract, tmp_path):
    """A request the reference refuses is refused the same way, recorded or not: a
    non-integer int, markup in a GET value, a SOAP 1.1 envelope sent as SOAP 1.2."""
    args = {"PhoneNumber": "p", "UuId": "u", "id_row_central": "x"}
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "LogoutFromSchool", args, Binding.SOAP11)])
    requests = [call(contract, "LogoutFromSchool", args, b, STAGING) for b in Binding]
    requests.append(call(contract, "GetTokenDevice", {"id": "<script>"}, Binding.HTTP_GET))
    wrong_type = call(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11)
    requests.append(wrong_type.with_header("Content-Type", "application/soap+xml"))
    with mocked(contract, [path]) as (url, mock, said), send.client() as http:
        for request in requests:
            got = send.send(http, send.retarget(request, url))
            expected = answer(contract, send.retarget(request, url))
            assert (got.status, got.content_type, got.body) == (
                expected.status, expected.content_type, expected.body), request.url
    assert not said and mock.stats.other == len(requests)


# -- several answers, timing, descriptions --------------------------------------------------


def _answers(contract, url, times):
    return [result_of(contract, "GetTokenDevice", Binding.HTTP_GET,
                      ask(contract, url, "GetTokenDevice", {"id": "7"}, Binding.HTTP_GET)
                      ).result for _ in range(times)]


def test_several_recorded_answers_the_last_by_default_in_order_with_sequence(contract,
                                                                             tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "first"),
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.HTTP_POST, "second"),
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP12, "third")])
    with mocked(contract, [path]) as (url, _mock, _said):
        assert _answers(contract, url, 2) == ["third", "third"]
    with mocked(contract, [path], sequence=True) as (url, _mock, _said):
        assert _answers(contract, url, 4) == ["first", "second", "third", "third"]


def test_worker_processes_keep_the_recorded_order(contract, tmp_path, monkeypatch):
    """A recording indexed in many byte ranges by two processes: the answers to one call
    recorded in every range come in recorded order."""
    monkeypatch.setattr(mock_index, "RANGE_BYTES", 8 * 1024)
    exchanges = []
    for n in range(120):
        exchanges.append(recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11,
                                  f"answer-{n:03d}"))
        exchanges.append(recorded(contract, "GetTokenDevice", {"id": f"other-{n}"},
                                  Binding.HTTP_GET, "x"))
    path = write(tmp_path / "r.jsonl", exchanges)
    index = mock_index.load(contract, [path], workers=2)
    assert index.calls == 240 and list(index.keys) == sorted(index.keys)
    mock = Mock(contract, index, Options(sequence=True))
    got = [read_response(contract.operation("GetTokenDevice"), Binding.HTTP_POST,
                         mock.respond(contract, call(contract, "GetTokenDevice", {"id": "7"},
                                                     Binding.HTTP_POST))).result
           for _ in range(121)]
    index.close()
    assert got == [f"answer-{n:03d}" for n in range(120)] + ["answer-119"]


def test_a_stop_while_indexing_stops_the_worker_processes_at_once(contract, tmp_path,
                                                                  monkeypatch):
    """Ctrl-C (or SIGTERM) while worker processes index: they are stopped, not waited for
    over every range left."""
    import multiprocessing

    monkeypatch.setattr(mock_index, "RANGE_BYTES", 4 * 1024)
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": f"d-{n}"}, Binding.SOAP11, "x")
        for n in range(300)])

    shutdowns: list[dict] = []

    class Pool(mock_index.ProcessPoolExecutor):
        def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
            shutdowns.append({"wait": wait, "cancel_futures": cancel_futures})
            super().shutdown(wait, cancel_futures=cancel_futures)

    def interrupted(_exchanges: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(mock_index, "ProcessPoolExecutor", Pool)
    with pytest.raises(KeyboardInterrupt):
        mock_index.load(contract, [path], workers=2, on_progress=interrupted)
    assert shutdowns[0] == {"wait": False, "cancel_futures": True}  # the ranges left dropped
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_a_later_recording_is_more_recent(contract, tmp_path):
    early = write(tmp_path / "early.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "early")])
    late = write(tmp_path / "late.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "late")])
    with mocked(contract, [early, late]) as (url, _mock, _said):
        assert _answers(contract, url, 1) == ["late"]


def test_latency_recorded_waits_the_recorded_duration(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "slow", duration=0.3),
        recorded(contract, "AuthCode", {"code": "c", "phone": "p"}, Binding.SOAP11,
                 duration=0.01)])
    from harness.mock import summary

    with mocked(contract, [path], latency="recorded") as (url, mock, _said):
        direct = mock.respond(contract, call(contract, "GetTokenDevice", {"id": "7"},
                                             Binding.HTTP_GET, url))
        assert isinstance(direct, Delayed) and direct.seconds == 0.3
        started = time.monotonic()
        assert _answers(contract, url, 1) == ["slow"]
        assert time.monotonic() - started >= 0.3  # a lower bound: cannot flake
        ask(contract, url, "AuthCode", {"code": "c", "phone": "p"}, Binding.SOAP12)
    lines = summary.console_lines(mock.stats)
    assert "latency (recorded) GetTokenDevice: p50 300 ms, p95 300 ms over 2 answer(s)" in lines
    assert "latency (recorded) AuthCode: p50 10 ms, p95 10 ms over 1 answer(s)" in lines


@pytest.mark.parametrize(("duration", "waited", "said"), [
    (1e12, 3600.0, "took 1e+12 s by its timings: answered after 3600 s"),
    (float("inf"), 3600.0, "took inf s by its timings: answered after 3600 s"),
    (10 ** 400, 3600.0, "took inf s by its timings: answered after 3600 s"),
    ("abc", 0.0, "took 'abc' s by its timings, no number: answered at once"),
    ([1], 0.0, "took '[1]' s by its timings, no number: answered at once"),
    (float("nan"), 0.0, "took 'nan' s by its timings, no number: answered at once"),
    (-5, 0.0, None),
    (3599.5, 3599.5, None)])
def test_latency_recorded_bounds_what_a_recording_says(contract, tmp_path, duration, waited,
                                                      said):
    """A recorded duration of 1e12 s (a clock that jumped, a hand-edited file) is waited an
    hour at most, and one that is no number not at all; either is said once, in one line
    naming where it was recorded (a string was a 500 with no line)."""
    path = tmp_path / "r.jsonl"
    write(path, [recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "x",
                          duration=0.5)])
    lines = path.read_text(encoding="utf-8").splitlines()
    exchange = json.loads(lines[1])
    exchange["timings"]["duration"] = duration
    path.write_text(f"{lines[0]}\n{json.dumps(exchange)}\n", encoding="utf-8")
    errors: list[str] = []
    index = mock_index.load(contract, [path])
    mock = Mock(contract, index, Options(latency="recorded"), on_error=errors.append)
    try:
        for _ in range(2):
            answered = mock.respond(contract, call(contract, "GetTokenDevice", {"id": "7"},
                                                   Binding.HTTP_GET))
            assert isinstance(answered, Delayed) and answered.seconds == waited
    finally:
        index.close()
    if said is None:
        assert errors == []
    else:
        assert len(errors) == 1  # said once: the answer is kept
        assert errors[0].startswith(f"GetTokenDevice: the answer recorded at {path}:2 {said}")


def test_the_wsdl_is_the_contracts_addressed_to_the_mock_and_zeep_calls_it(contract,
                                                                           tmp_path):
    import zeep

    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.HTTP_POST, "staging-7")])
    with mocked(contract, [path]) as (url, mock, _said):
        client = zeep.Client(f"{url}/PushNotificationMobile.asmx?WSDL")
        assert client.service._binding_options["address"] == \
            f"{url}/PushNotificationMobile.asmx"
        assert client.service.GetTokenDevice(id="7") == "staging-7"
        soap12 = client.bind("PushNotificationMobile", "PushNotificationMobileSoap12")
        assert soap12.GetTokenDevice(id="7") == "staging-7"
        with pytest.raises(zeep.exceptions.Fault, match="no recorded answer"):
            soap12.GetTokenDevice(id="8")
    assert mock.stats.descriptions["contract"] == 1


def test_recorded_descriptions_are_served_with_the_mocks_address(contract, tmp_path):
    from harness.reference.wsdl import wsdl_document

    body = wsdl_document(contract, "/PushNotificationMobile.asmx",
                         f"{STAGING}/PushNotificationMobile.asmx").replace(
        b"<wsdl:types>", b"<!-- as staging published it --><wsdl:types>")
    wsdl = Exchange(HttpRequest("GET", f"{STAGING}/PushNotificationMobile.asmx?WSDL"),
                    HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),), body))
    path = write(tmp_path / "r.jsonl", [wsdl, recorded(
        contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    with mocked(contract, [path], descriptions="recorded") as (url, mock, _said), \
            send.client() as http:
        got = send.send(http, HttpRequest("GET", f"{url}/pushnotificationmobile.asmx?wsdl"))
        other = send.send(http, HttpRequest("GET", f"{url}/AuthCodeSending.asmx?WSDL"))
    assert b"as staging published it" in got.body
    assert STAGING.encode() not in got.body
    assert f'location="{url}/PushNotificationMobile.asmx"'.encode() in got.body
    assert other.status == 200 and b"AuthCode" in other.body  # none recorded: the contract's
    assert dict(mock.stats.descriptions) == {"recorded": 1, "contract": 1}


# -- pseudonyms -------------------------------------------------------------------------------


def _redacted_recording(contract: Contract, tmp_path: Path) -> tuple[Path, Path]:
    key_file = tmp_path / "r.jsonl.key"
    redactor = Redactor.for_contract(contract, load_or_create_key(key_file))
    exchanges = [redactor.exchange(recorded(contract, "AuthCode",
                                            {"code": "1234", "phone": "0501234567"},
                                            Binding.SOAP11)),
                 redactor.exchange(recorded(contract, "GetTokenDevice", {"id": "7"},
                                            Binding.SOAP11, "tok-7"))]
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, upstream=STAGING, redacted=True,
                         redaction=redactor.settings()) as writer:
        for exchange in exchanges:
            writer.write(exchange)
    return path, key_file


def test_a_redacted_recording_answers_its_pseudonyms(contract, tmp_path):
    path, _key = _redacted_recording(contract, tmp_path)
    with mocked(contract, [path], redacted=True) as (url, _mock, said):
        token = ask(contract, url, "GetTokenDevice", {"id": "7"}, Binding.HTTP_GET)
        real = ask(contract, url, "AuthCode", {"code": "1234", "phone": "0501234567"},
                   Binding.HTTP_POST)
    assert result_of(contract, "GetTokenDevice", Binding.HTTP_GET,
                     token).result.startswith("redacted-")  # never the real value
    assert real.status == 500 and "--key-file matches real ones" in real.body.decode()
    assert "0501234567" not in said[0] and "1234" not in said[0]


def test_key_file_lets_real_values_find_their_pseudonymised_record(contract, tmp_path):
    path, key_file = _redacted_recording(contract, tmp_path)
    from harness.commands.mock import _headers, _redactor

    redactor = _redactor(str(key_file), _headers([str(path)]))
    with mocked(contract, [path], redacted=True, redactor=redactor) as (url, mock, said):
        for binding in Binding:
            response = ask(contract, url, "AuthCode", {"code": "1234", "phone": "0501234567"},
                           binding)
            assert response.status == 200 and response.header("X-Harness-Mock") == "recorded"
        wrong = ask(contract, url, "AuthCode", {"code": "1234", "phone": "0509999999"},
                    Binding.SOAP11)
    assert wrong.status == 500 and "phone=[redacted]" in said[0]
    assert mock.stats.answered["recorded"] == 4


def test_the_key_is_found_where_capture_put_it(contract, tmp_path):
    """Issue 30 item 5: no --key-file: the key in the key store (by the recording's key id)
    lets real values find their pseudonymised record."""
    from harness.commands.mock import _headers, _redactor
    from harness.traffic.keys import key_id, read_key, stored_key_path, write_key

    path, key_file = _redacted_recording(contract, tmp_path)
    beside = _redactor(None, _headers([str(path)]), [str(path)])  # r.jsonl.key, as before
    key = read_key(key_file)
    assert beside is not None and beside.key == key
    key_file.rename(tmp_path / "elsewhere.key")
    assert _redactor(None, _headers([str(path)]), [str(path)]) is None  # nowhere to be found
    write_key(stored_key_path(key_id(key)), key)
    redactor = _redactor(None, _headers([str(path)]), [str(path)])
    assert redactor is not None and redactor.key == key
    with mocked(contract, [path], redacted=True, redactor=redactor) as (url, _mock, _said):
        response = ask(contract, url, "AuthCode", {"code": "1234", "phone": "0501234567"},
                       Binding.HTTP_GET)
    assert response.status == 200 and response.header("X-Harness-Mock") == "recorded"


def test_the_command_shows_a_personal_value_by_its_recorded_pseudonym(contract, tmp_path):
    """Issue 30 item 6: the console and the JSON show a call's personal value by its
    pseudonym under the recording's key (as the recording shows it), not as [redacted]."""
    from harness.traffic.keys import key_id, read_key, stored_key_path, write_key
    from harness.traffic.redaction import pseudonym

    path, key_file = _redacted_recording(contract, tmp_path)
    key = read_key(key_file)
    key_file.rename(tmp_path / "elsewhere.key")
    write_key(stored_key_path(key_id(key)), key)
    served = Served(str(path), "--json", str(tmp_path / "mock.json"), cwd=tmp_path)
    try:
        refused = ask(contract, served.url, "AuthCode",
                      {"code": "1234", "phone": "0509999999"}, Binding.SOAP11)
    finally:
        _code, out, err = served.stop()
    assert refused.status == 500
    said = out + err + (tmp_path / "mock.json").read_text(encoding="utf-8")
    assert "0509999999" not in said and "[redacted]" not in said
    assert f"phone={pseudonym('0509999999', key)}" in said


# -- inputs -----------------------------------------------------------------------------------


def test_a_har_file_is_mocked_too(contract, tmp_path):
    har = tmp_path / "staging.har"
    write_har([recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP12, "from-har")],
              har)
    with mocked(contract, [har]) as (url, _mock, _said):
        assert _answers(contract, url, 1) == ["from-har"]


def test_a_har_recording_answers_each_recorded_call_with_its_own_answer(contract, tmp_path):
    """A HAR file of many calls: each answered with its own recorded answer, an unrecorded
    one refused (the HAR part of the index was searched unsorted: never-recorded calls got
    another call's answer, recorded ones were refused)."""
    har = tmp_path / "staging.har"
    ids = [f"dev-{n}" for n in range(40)]
    write_har([recorded(contract, "GetTokenDevice", {"id": i}, Binding.SOAP11, f"token-{i}")
               for i in ids], har)
    with mocked(contract, [har]) as (url, _mock, said):
        got = [result_of(contract, "GetTokenDevice", Binding.HTTP_GET,
                         ask(contract, url, "GetTokenDevice", {"id": i}, Binding.HTTP_GET)
                         ).result for i in ids]
        never = ask(contract, url, "GetTokenDevice", {"id": "never"}, Binding.SOAP11)
    assert got == [f"token-{i}" for i in ids]
    assert never.status == 500 and never.header("X-Harness-Mock") == "unmatched"
    assert len(said) == 1


def test_replaying_the_sample_har_against_its_mock_passes(contract):
    from harness.judge.findings import Verdict
    from harness.replay import replay

    har = ROOT / "recordings" / "sample-all-bindings.har"
    with mocked(contract, [har]) as (url, mock, said):
        report = replay([har], contract, url, concurrency=1)
    assert not said and report.counts[Verdict.FAILED] == 0, list(report.kept())
    assert mock.stats.answered["recorded"] == 32


def test_broken_lines_are_skipped_and_named(contract, tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_LINE_BYTES", 4096)
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    with path.open("ab") as f:
        f.write(b'{"request": {"method": "GET"\n')  # a crash mid-write
        f.write(b'{"request": "' + b"x" * 10_000 + b'"}\n')  # a line over the limit
        f.write(b"[1, 2]\n")
    path.write_bytes(path.read_bytes() + write(tmp_path / "more.jsonl", [recorded(
        contract, "AuthCode", {"code": "c", "phone": "p"}, Binding.HTTP_GET)]
                                                ).read_bytes().split(b"\n", 1)[1])
    index = mock_index.load(contract, [path])
    assert index.calls == 2 and index.broken_count == 3
    assert index.broken == [f"{path}:3: broken exchange line (JSONDecodeError)",
                            f"{path}:4: broken exchange line (longer than 0 MiB)",
                            f"{path}:5: broken exchange line (TypeError)"]


def test_the_index_holds_no_bodies(contract, tmp_path):
    """21 bytes per recorded call in flat arrays; answers are read from the file."""
    big = "x" * 100_000
    path = write(tmp_path / "r.jsonl", [recorded(contract, "GetTokenDevice", {"id": str(n)},
                                                 Binding.SOAP11, big) for n in range(50)])
    index = mock_index.load(contract, [path])
    held = sum(a.itemsize * len(a) for a in (index.keys, index.wheres, index.lengths,
                                            index.bindings))
    assert held == 21 * 50
    assert big.encode() in index.fetch(index.find(index.keys[0])[0]).response.body
    index.close()


def test_an_index_cache_is_read_back_when_it_fits_and_rebuilt_when_not(contract, tmp_path):
    exchanges = [recorded(contract, "GetTokenDevice", {"id": f"device-{n}"}, Binding.SOAP11,
                          f"staging-{n}") for n in range(20)]
    wsdl = Exchange(HttpRequest("GET", f"{STAGING}/PushNotificationMobile.asmx?WSDL"),
                    HttpResponse(200, (("Content-Type", "text/xml"),), b"<x/>"))
    path = write(tmp_path / "r.jsonl", [*exchanges, wsdl])
    cache = tmp_path / "r.index"
    built = mock_index.load(contract, [path], cache=cache)
    assert built.note == f"index kept in {cache} for the next start"
    assert cache.stat().st_mode & 0o777 == 0o600
    assert b"staging-" not in cache.read_bytes() and b"device-" not in cache.read_bytes()
    again = mock_index.load(contract, [path], cache=cache)
    assert again.note == f"index read from {cache}"
    for name in ("keys", "wheres", "lengths", "bindings", "descriptions", "candidates",
                 "operations", "skipped", "exchanges"):
        assert getattr(again, name) == getattr(built, name), name
    mock = Mock(contract, again)
    response = mock.respond(contract, call(contract, "GetTokenDevice", {"id": "device-7"},
                                           Binding.HTTP_POST))
    assert b"staging-7" in response.body
    with path.open("ab") as f:  # appended to since: the cache no longer fits
        f.write(b"\n")
    assert mock_index.load(contract, [path], cache=cache).note.startswith("index kept in")
    assert mock_index.load(ORDERS, [path], cache=cache).note.startswith("index kept in")
    cache.write_bytes(b"garbage")
    assert mock_index.load(contract, [path], cache=cache).note.startswith("index kept in")
    for index in (built, again):
        index.close()


def test_hostile_requests_get_the_references_refusals(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    bomb = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>'
            b'<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
            b"<soap:Body>&a;</soap:Body></soap:Envelope>")
    hostile = [
        HttpRequest("POST", f"{STAGING}/PushNotificationMobile.asmx",
                    (("Content-Type", "text/xml; charset=utf-8"),), bomb),
        HttpRequest("GET", f"{STAGING}/nothing/here"),
        HttpRequest("POST", f"{STAGING}/PushNotificationMobile.asmx/NoSuchOperation", (), b""),
        HttpRequest("DELETE", f"{STAGING}/PushNotificationMobile.asmx/GetTokenDevice?id=7"),
        HttpRequest("POST", f"{STAGING}/PushNotificationMobile.asmx",
                    (("Content-Type", "text/xml"),), b"\xff\xfe<not xml"),
    ]
    with mocked(contract, [path]) as (url, mock, said), send.client() as http:
        for request in hostile:
            got = send.send(http, send.retarget(request, url))
            expected = answer(contract, send.retarget(request, url))
            assert (got.status, got.body) == (expected.status, expected.body), request.url
            assert got.status >= 400
    assert not said and mock.stats.other == len(hostile)


def test_a_recording_changed_under_the_mock_is_a_server_fault_and_one_line(contract,
                                                                           tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    index = mock_index.load(contract, [path])
    errors: list[str] = []
    mock = Mock(contract, index, on_error=errors.append)
    path.write_bytes(path.read_bytes()[:200])
    response = mock.respond(contract, call(contract, "GetTokenDevice", {"id": "7"},
                                           Binding.SOAP11))
    index.close()
    assert response.status == 500 and b"soap:Server" in response.body
    assert len(errors) == 1 and "changed since it was indexed" in errors[0]


# -- the command ------------------------------------------------------------------------------


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HARNESS, *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, check=False)


def test_mock_help_shows_an_example():
    done = subprocess.run([HARNESS, "mock", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and "Example:" in done.stdout and "harness mock " in done.stdout


@pytest.mark.parametrize("case", ["missing", "not-a-recording", "no-calls", "key-missing",
                                  "key-wrong", "bad-flag"])
def test_bad_input_is_one_line_and_exit_2(contract, tmp_path, case):
    good = write(tmp_path / "r.jsonl", [recorded(contract, "GetTokenDevice", {"id": "7"},
                                                 Binding.SOAP11, "staging-7")])
    (tmp_path / "text.txt").write_text("hello\n")
    empty = write(tmp_path / "empty.jsonl", [])
    (tmp_path / "other.key").write_text("00" * 32 + "\n")
    args = {"missing": [str(tmp_path / "nope.jsonl")],
            "not-a-recording": [str(tmp_path / "text.txt")],
            "no-calls": [str(empty)],
            "key-missing": [str(good), "--key-file", str(tmp_path / "nope.key")],
            "key-wrong": [str(good), "--key-file", str(tmp_path / "other.key")],
            "bad-flag": [str(good), "--fallback", "maybe"]}[case]
    done = run("mock", "--port", "0", *args, cwd=tmp_path)
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in done.stderr, lines
    assert done.stdout == ""


class Served:
    """``harness mock`` as a real process with Ctrl-C working (SIGINT at its default)."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [HARNESS, "mock", "--port", "0", "--quiet", *args], cwd=cwd, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.err: list[str] = []
        assert self.proc.stderr is not None
        while line := self.proc.stderr.readline():
            self.err.append(line)
            if " on http://" in line:
                self.url = line.split(" on ", 1)[1].split()[0]
                return
        raise AssertionError("".join(self.err))

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=120)
        return self.proc.returncode, out, "".join(self.err) + err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_command_says_what_it_answered_when_stopped(contract, tmp_path, sig):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    with path.open("ab") as f:
        f.write(b"{broken\n")
    served = Served(str(path), "--json", str(tmp_path / "mock.json"), cwd=tmp_path)
    ask(contract, served.url, "GetTokenDevice", {"id": "7"}, Binding.HTTP_GET)
    ask(contract, served.url, "GetTokenDevice", {"id": "q"}, Binding.HTTP_POST)
    ask(contract, served.url, "GetTokenDevice", {"id": "q"}, Binding.HTTP_POST)
    code, out, err = served.stop(sig)
    assert code == 1, err  # a call went unmatched
    assert "Traceback" not in err
    assert f"skipped {path}:3: broken exchange line" in err
    assert "1 recorded call(s) of 1 operation(s)" in err and "1 broken line(s) skipped" in err
    unmatched = [line for line in out.splitlines() if line.startswith("unmatched: ")]
    assert unmatched == ["unmatched: no recorded answer for GetTokenDevice(id='q') over HTTP "
                         "POST; nearest recorded: id='7'"] * 2
    assert "harness mock: 3 call(s) answered: 1 from the recording, 2 unmatched, refused" \
        in out.splitlines()
    data = json.loads((tmp_path / "mock.json").read_text(encoding="utf-8"))
    assert data["answered"] == {"stub": 0, "recorded": 1, "forwarded": 0, "reference": 0,
                                "refused": 2}
    assert data["unmatched"] == [{"operation": "GetTokenDevice", "binding": "HTTP POST",
                                  "call": "GetTokenDevice(id='q')", "nearest": "id='7'",
                                  "count": 2}]
    assert data["indexed"]["broken_lines"] == 1


def test_the_command_exits_0_when_every_call_was_recorded(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    served = Served(str(path), cwd=tmp_path)
    response = ask(contract, served.url, "GetTokenDevice", {"id": "7"}, Binding.SOAP12)
    code, out, _err = served.stop()
    assert response.status == 200 and code == 0
    assert "harness mock: 1 call(s) answered: 1 from the recording" in out


def test_the_command_listens_on_loopback_by_default(contract, tmp_path):
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    served = Served(str(path), cwd=tmp_path)
    try:
        assert served.url.startswith("http://127.0.0.1:")
    finally:
        served.stop()


def test_the_library_is_usable_without_the_command(contract, tmp_path):
    """The engine is a library: index, mock and server put together in a few lines."""
    path = write(tmp_path / "r.jsonl", [
        recorded(contract, "GetTokenDevice", {"id": "7"}, Binding.SOAP11, "staging-7")])
    index = mock_index.load(contract, [path])
    mock = Mock(contract, index)
    response = mock.respond(contract, call(contract, "GetTokenDevice", {"id": "7"},
                                           Binding.HTTP_GET))
    index.close()
    assert isinstance(response, HttpResponse) and b"staging-7" in response.body
    assert os.fspath(index.sources[0].path) == os.fspath(path)

