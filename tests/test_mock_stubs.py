"""``harness mock --stubs``: answers written in the contract's terms, faults, the call journal
and its admin API, served to real clients (curl, zeep, Node's ``soap``) on loopback.

One mock of the issue's stubs file serves the module (``stubbed``); the admin API resets its
journal where a test counts calls. Faults and run-time stubs use mocks of their own, in process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from test_capture_clients import NODE_CLIENT, NODE_MODULES

from harness.contract.bindings import Binding, build_request, read_response
from harness.contract.model import Contract, school_mobile
from harness.contract.xmlsafe import parse_xml
from harness.errors import MalformedXML
from harness.mock import Mock, Options, load
from harness.mock import stubs as stub_files
from harness.mock.admin import create_mock_app, route
from harness.mock.faults import parse
from harness.mock.journal import Journal
from harness.mock.stubs import Stubs, load_files
from harness.reference.server import running
from harness.reference.wsdl import service_name

STUBS = """\
[[stub]]
operation = "GetTokenDevice"
when = { id = "dev-1" }          # values to match; omitted: any call of the operation
result = "token-stubbed"

[[stub]]
operation = "AuthCode"
fault = { code = "Client", reason = "code expired" }

[[stub]]
operation = "LogoutFromSchool"
delay = "1.5s"

[[stub]]
operation = "GetTeacherGrpupsByID"
inject = "reset"                 # or "empty", "malformed", "trickle", and probability = 0.1
"""
LOGOUT = {"PhoneNumber": "0501234567", "id_row_central": "7", "UuId": "u-1"}
AUTH = {"code": "1234", "phone": "0501234567"}


@contextlib.contextmanager
def mock_of(contract: Contract, stub_paths: list[Path], recordings: list[Path] = (), *,
            journal: Journal | None = None, **options) -> Iterator[tuple[str, Mock]]:
    index = load(contract, list(recordings))
    mock = Mock(contract, index, Options(**options),
                stubs=Stubs(load_files(contract, stub_paths)), journal=journal)
    try:
        with running(contract, app=create_mock_app(contract, mock)) as url:
            yield url, mock
    finally:
        index.close()


@pytest.fixture(scope="module")
def stubbed(tmp_path_factory) -> Iterator[tuple[str, Mock]]:
    """The mock of the issue's stubs file alone."""
    path = tmp_path_factory.mktemp("stubs") / "stubs.toml"
    path.write_text(STUBS, encoding="utf-8")
    with mock_of(school_mobile(), [path]) as served:
        yield served


def reset(url: str) -> None:
    assert httpx.delete(f"{url}/__harness/calls").status_code == 200


def counted(url: str, **query: str) -> dict:
    answer = httpx.get(f"{url}/__harness/calls", params=query)
    assert answer.status_code == 200, answer.text
    return answer.json()


def curl(contract: Contract, url: str, op: str, args: dict, binding: Binding,
         *extra: str) -> subprocess.CompletedProcess[str]:
    """curl sends the request the contract builds for ``binding``; stdout: status line, then
    the body."""
    request = build_request(contract, contract.operation(op), args, binding, url)
    command = ["curl", "-sS", "-X", request.method, request.url, "-w", "\n%{http_code}",
               *extra]
    for name, value in request.headers:
        if name.lower() not in ("host", "content-length"):
            command += ["-H", f"{name}: {value}"]
    if request.body:
        command += ["--data-binary", request.body.decode("utf-8")]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


# -- the stubs, over every binding, by real clients ------------------------------------


def test_curl_gets_the_stubbed_answers_over_all_four_bindings_and_the_journal_counts_them(
        contract, stubbed):
    url, _mock = stubbed
    reset(url)
    for binding in Binding:
        token = curl(contract, url, "GetTokenDevice", {"id": "dev-1"}, binding)
        body, status = token.stdout.rsplit("\n", 1)
        assert status == "200", token
        assert "token-stubbed" in body and ("Envelope" in body) == binding.is_soap
        fault = curl(contract, url, "AuthCode", AUTH, binding)
        body, status = fault.stdout.rsplit("\n", 1)
        assert status == "500" and "code expired" in body, fault
        if binding is Binding.SOAP12:
            assert "soap:Sender" in body
        elif binding is Binding.SOAP11:
            assert "soap:Client" in body
    for binding, (logout, took) in delayed(lambda binding: curl(
            contract, url, "LogoutFromSchool", LOGOUT, binding), list(Binding)):
        body, status = logout.stdout.rsplit("\n", 1)
        assert status == "200" and took >= 1.5, (binding, logout, took)
        assert ("LogoutFromSchoolResponse" in body) == binding.is_soap and (
            binding.is_soap or body == "")  # void over GET/POST: an empty body
    found = counted(url, operation="GetTokenDevice")
    assert found["count"] == 4
    assert sorted(c["binding"] for c in found["calls"]) == sorted(b.label for b in Binding)
    assert {c["answered"] for c in found["calls"]} == {"stub"}
    assert counted(url, operation="GetTokenDevice", binding="soap12")["count"] == 1
    assert counted(url, operation="AuthCode")["count"] == 4
    logouts = counted(url, operation="LogoutFromSchool")["calls"]
    assert sorted(c["binding"] for c in logouts) == sorted(b.label for b in Binding)
    assert {c["injected"] == ["delay 1.5s"] and c["status"] == 200 for c in logouts} == {True}


def delayed(call, bindings: list) -> list[tuple[object, tuple[object, float]]]:
    """``call(binding)`` for each binding at once (each waits out the stub's delay), with the
    seconds each took."""
    def timed(binding):
        started = time.monotonic()
        done = call(binding)
        return done, time.monotonic() - started

    with ThreadPoolExecutor(len(bindings)) as pool:
        return list(zip(bindings, pool.map(timed, bindings), strict=True))


def test_a_connection_reset_stub_makes_curl_fail_with_a_reset(contract, stubbed):
    url, _mock = stubbed
    done = curl(contract, url, "GetTeacherGrpupsByID", {"Tid": "1"}, Binding.HTTP_GET)
    assert done.returncode == 56 and "reset" in done.stderr.lower(), done


def test_zeep_gets_the_stubbed_answers_over_all_four_bindings(contract, stubbed):
    import requests
    import zeep
    from zeep.exceptions import Fault
    from zeep.transports import Transport

    url, _mock = stubbed
    reset(url)
    session = requests.Session()
    session.trust_env = False

    def port(endpoint: str, suffix: str):
        return _zeep_port(zeep, Transport(session=session), url, endpoint, suffix)

    for suffix in ("Soap", "Soap12", "HttpGet", "HttpPost"):
        assert port("/PushNotificationMobile.asmx", suffix).GetTokenDevice(
            id="dev-1") == "token-stubbed"
        with pytest.raises(Fault) as fault:
            port("/AuthCodeSending.asmx", suffix).AuthCode(**AUTH)
        if suffix.startswith("Soap"):
            assert fault.value.message == "code expired"
            assert fault.value.code.endswith("Client" if suffix == "Soap" else "Sender")
        else:  # zeep's HTTP bindings: the 500's text/plain body as the fault's message
            assert fault.value.message == b"code expired"
    # (zeep cannot call a void operation over its HTTP GET/POST bindings, the real ASMX's
    # included: its HTTP binding has no output part to read, an AttributeError in zeep)
    for suffix, (result, took) in delayed(lambda suffix: port(
            "/CenterlogOut.asmx", suffix).LogoutFromSchool(**{**LOGOUT, "id_row_central": 7}),
            ["Soap", "Soap12"]):
        assert result is None and took >= 1.5, (suffix, took)
    assert counted(url, operation="GetTokenDevice", id="dev-1")["count"] == 4
    assert counted(url, operation="AuthCode", binding="SOAP 1.2")["count"] == 1
    assert {c["binding"] for c in counted(url, operation="AuthCode")["calls"]} == {
        b.label for b in Binding}
    logouts = counted(url, operation="LogoutFromSchool")["calls"]
    assert sorted(c["binding"] for c in logouts) == ["SOAP 1.1", "SOAP 1.2"]
    assert all(c["injected"] == ["delay 1.5s"] for c in logouts)


def _zeep_port(zeep, transport, url: str, endpoint: str, suffix: str):
    client = zeep.Client(f"{url}{endpoint}?WSDL", transport=transport)
    return client.bind(service_name(endpoint), f"{service_name(endpoint)}{suffix}")


def test_node_soap_gets_the_stubbed_answers_over_soap_11_and_12(contract, stubbed):
    if shutil.which("node") is None or not (NODE_MODULES / "soap").is_dir():
        pytest.fail("Node and tools/node_modules/soap are needed: run scripts/setup")
    url, _mock = stubbed
    reset(url)
    calls = (("/PushNotificationMobile.asmx", "GetTokenDevice", {"id": "dev-1"}),
             ("/AuthCodeSending.asmx", "AuthCode", AUTH),
             ("/CenterlogOut.asmx", "LogoutFromSchool", {**LOGOUT, "id_row_central": 7}))

    def node(suffix: str) -> subprocess.CompletedProcess[str]:
        jobs = [{"wsdl": f"{url}{endpoint}?WSDL", "port": f"{service_name(endpoint)}{suffix}",
                 "soap12": suffix == "Soap12", "calls": [{"operation": op, "args": args}]}
                for endpoint, op, args in calls]
        return subprocess.run(["node", str(NODE_CLIENT)], input=json.dumps(jobs), text=True,
                              capture_output=True, timeout=300, check=False,
                              env={**os.environ, "NODE_PATH": str(NODE_MODULES)})

    lines = []
    for suffix, (done, took) in delayed(node, ["Soap", "Soap12"]):  # the two at once
        assert done.returncode == 0, done.stderr
        assert took >= 1.5, (suffix, took)
        lines += [json.loads(line) for line in done.stdout.splitlines()]
    tokens = [line for line in lines if line["operation"] == "GetTokenDevice"]
    assert [t["result"] for t in tokens] == [{"GetTokenDeviceResult": "token-stubbed"}] * 2
    faults = [line for line in lines if line["operation"] == "AuthCode"]
    assert len(faults) == 2 and all(not f["ok"] and "code expired" in f["error"]
                                    for f in faults), faults
    logouts = [line for line in lines if line["operation"] == "LogoutFromSchool"]
    assert [(line["ok"], line["result"]) for line in logouts] == [(True, None)] * 2
    assert counted(url, operation="GetTokenDevice")["count"] == 2
    for op in ("AuthCode", "LogoutFromSchool"):
        assert {c["binding"] for c in counted(url, operation=op)["calls"]} == {
            "SOAP 1.1", "SOAP 1.2"}
    assert {tuple(c["injected"]) for c in counted(url, operation="LogoutFromSchool")[
        "calls"]} == {("delay 1.5s",)}


def test_a_call_no_stub_matches_is_refused_and_said(contract, stubbed):
    url, _mock = stubbed
    response = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                         params={"id": "dev-2"})
    assert response.status_code == 500 and response.headers["X-Harness-Mock"] == "unmatched"
    assert response.text == ("no stub answers GetTokenDevice(id='dev-2') over HTTP GET; the "
                             "stubs of GetTokenDevice match id='dev-1'")


# -- the journal: values, pseudonyms, filters ----------------------------------------------------


def test_the_journal_holds_sensitive_values_as_pseudonyms_and_finds_them_by_value(
        contract, stubbed):
    url, _mock = stubbed
    reset(url)
    for binding in (Binding.SOAP11, Binding.HTTP_GET):
        curl(contract, url, "AuthCode", AUTH, binding)
    found = counted(url, operation="AuthCode", phone="0501234567")
    assert found["count"] == 2
    values = found["calls"][0]["values"]
    assert values["phone"].startswith("redacted-") and values["code"].startswith("redacted-")
    assert "0501234567" not in json.dumps(found) and "1234" not in json.dumps(found["calls"])
    assert counted(url, operation="AuthCode", phone="0509999999")["count"] == 0
    assert counted(url, operation="AuthCode", since=str(time.time()))["count"] == 0
    assert counted(url, operation="AuthCode", after=str(found["calls"][0]["seq"]))["count"] == 1


def test_the_journal_compares_values_by_meaning(tmp_path):
    from harness.contract.model import load as load_contract

    inventory = load_contract(Path(__file__).parent / "services" / "inventory" /
                              "contract.json")
    path = tmp_path / "stubs.toml"
    path.write_text('[[stub]]\noperation = "PriceOf"\nresult = "6.00"\n', encoding="utf-8")
    with mock_of(inventory, [path]) as (url, _mock):
        asked = build_request(inventory, inventory.operation("PriceOf"),
                              {"sku": "A-1", "quantity": "3", "discount": "1.50"},
                              Binding.HTTP_GET, url)
        assert httpx.get(asked.url).status_code == 200
        assert counted(url, operation="PriceOf", quantity="+003", discount="1.5")["count"] == 1
        assert counted(url, operation="PriceOf", quantity="4")["count"] == 0


def test_the_admin_api_says_what_is_wrong_with_a_query(contract, stubbed):
    url, _mock = stubbed
    for query, words in (({"operation": "GetTokenDevic"}, "did you mean GetTokenDevice?"),
                         ({"operation": "GetTokenDevice", "idd": "x"}, "did you mean id?"),
                         ({"binding": "SOAP 3"}, "binding 'SOAP 3'"),
                         ({"id": "x"}, "with an operation")):
        answer = httpx.get(f"{url}/__harness/calls", params=query)
        assert answer.status_code == 400 and words in answer.json()["error"], answer.text
    assert httpx.get(f"{url}/__harness/nothing").status_code == 404
    assert httpx.put(f"{url}/__harness/calls").status_code == 405


def test_the_admin_api_answers_loopback_clients_only(contract):
    from harness.mock.admin import _loopback

    assert _loopback(("127.0.0.1", 5)) and _loopback(("::1", 5))
    assert not _loopback(("192.168.1.10", 5)) and not _loopback(None)


# -- stubs added and removed at run time ----------------------------------------------------------


def test_stubs_added_at_run_time_come_first_and_can_be_removed(contract, stubbed):
    url, _mock = stubbed
    added = httpx.post(f"{url}/__harness/stubs", json={
        "operation": "GetTokenDevice", "when": {"id": {"pattern": "dev-[0-9]+"}},
        "answers": [{"result": "first"}, {"status": 503}]})
    assert added.status_code == 201, added.text
    stub_id = added.json()["added"][0]
    get = f"{url}/PushNotificationMobile.asmx/GetTokenDevice"
    first, second, third = (httpx.get(get, params={"id": "dev-1"}) for _ in range(3))
    assert "first" in first.text
    assert second.status_code == third.status_code == 503  # then the last again
    assert "HTTP Error 503. The service is unavailable." in second.text
    listed = httpx.get(f"{url}/__harness/stubs").json()["stubs"]
    assert listed[0]["id"] == stub_id and listed[1]["id"] == "stubs.toml:1"
    assert httpx.delete(f"{url}/__harness/stubs/{stub_id}").json() == {"removed": 1}
    assert "token-stubbed" in httpx.get(get, params={"id": "dev-1"}).text
    bad = httpx.post(f"{url}/__harness/stubs", json={"operation": "GetTokenDevice",
                                                    "result": "x", "delay": "soon"})
    assert bad.status_code == 400 and "'soon' is no duration" in bad.json()["error"]
    assert httpx.delete(f"{url}/__harness/stubs/nope").status_code == 404


# -- stub files: what the contract does not know is one line with its place ------------------------


@pytest.mark.parametrize(("change", "line", "words"), [
    (("GetTokenDevice", "GetTokenDevic"), 2,
     "'GetTokenDevic' is no operation of School Mobile (did you mean GetTokenDevice?)"),
    (('id = "dev-1"', 'idd = "dev-1"'), 3, "GetTokenDevice has no parameter 'idd' "
                                           "(did you mean id?)"),
    (('result = "token-stubbed"', 'reslt = "x"'), 4, "'reslt' is no key of a stub "
                                                     "(did you mean result?)"),
    (('code = "Client"', 'code = "Clint"'), 8, "(did you mean Client?)"),
    (('delay = "1.5s"', 'delay = "1.5"\nresult = "x"'), 13,
     "LogoutFromSchool returns nothing: leave result out"),
    (('inject = "reset"', 'inject = "rest"'), 16, "'rest' is no fault (did you mean reset?)"),
])
def test_a_stub_the_contract_does_not_know_is_its_file_and_line(contract, tmp_path, change,
                                                                line, words):
    path = tmp_path / "stubs.toml"
    path.write_text(STUBS.replace(*change, 1), encoding="utf-8")
    with pytest.raises(stub_files.StubError) as error:
        load_files(contract, [path])
    assert str(error.value).startswith(f"{path}:{line}: ") and words in str(error.value)


def test_a_value_of_the_wrong_type_is_its_line_too(tmp_path):
    from harness.contract.model import load as load_contract

    contract = load_contract(Path(__file__).parent / "services" / "inventory" / "contract.json")
    path = tmp_path / "stubs.json"
    path.write_text('{"stub": [\n {"operation": "PriceOf",\n  "when": {"quantity": "many"},\n'
                    '  "result": "1.00"}\n]}\n', encoding="utf-8")
    with pytest.raises(stub_files.StubError) as error:
        load_files(contract, [path])
    assert str(error.value) == f"{path}:3: 'many' is not a long (quantity)"


def test_the_json_equivalent_reads_as_the_toml(contract, tmp_path):
    import tomllib

    toml = tmp_path / "stubs.toml"
    toml.write_text(STUBS, encoding="utf-8")
    as_json = tmp_path / "stubs.json"
    as_json.write_text(json.dumps(tomllib.loads(STUBS), indent=1), encoding="utf-8")
    first, second = ([{k: v for k, v in s.to_data().items() if k not in ("id", "where")}
                      for s in load_files(contract, [p])] for p in (toml, as_json))
    assert first == second and len(first) == 4


def test_a_bad_stubs_file_is_one_line_and_exit_2(tmp_path):
    from test_mock import run

    path = tmp_path / "stubs.toml"
    path.write_text(STUBS.replace("AuthCode", "AuthCod"), encoding="utf-8")
    done = run("mock", "--stubs", str(path), "--port", "0", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"harness mock: error: {path}:7: 'AuthCod' is no operation of School Mobile (did you "
        "mean AuthCode?)"]


# -- faults ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Iterator[tuple[str, Mock]]:
    """A mock of a void-answering stub per operation, whose faults the tests set."""
    path = tmp_path_factory.mktemp("faults") / "stubs.toml"
    path.write_text('[[stub]]\noperation = "GetTokenDevice"\nresult = "a-token"\n',
                    encoding="utf-8")
    with mock_of(school_mobile(), [path], seed=7) as served:
        yield served


def _with_faults(mock: Mock, *specs: str) -> None:
    mock.options = Options(faults=tuple(parse(s) for s in specs), seed=7)


def test_fault_empty_reply_and_malformed_body(contract, faulty):
    url, mock = faulty
    _with_faults(mock, "empty")
    done = curl(contract, url, "GetTokenDevice", {"id": "a"}, Binding.SOAP11)
    assert done.returncode == 52 and "Empty reply from server" in done.stderr, done
    _with_faults(mock, "malformed")
    response = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                         params={"id": "a"})
    assert response.status_code == 200 and response.headers["X-Harness-Injected"] == "malformed"
    with pytest.raises(MalformedXML):
        parse_xml(response.content)


def test_fault_trickle_sends_the_whole_body_slowly(contract, faulty):
    url, mock = faulty
    _with_faults(mock, "trickle=0.8s")
    started = time.monotonic()
    response = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                         params={"id": "a"})
    assert time.monotonic() - started >= 0.7
    reading = read_response(contract.operation("GetTokenDevice"), Binding.HTTP_GET,
                            _http(response))
    assert reading.result == "a-token"


def test_fault_status_and_soap_fault_and_a_random_delay(contract, faulty):
    url, mock = faulty
    get = f"{url}/PushNotificationMobile.asmx/GetTokenDevice"
    _with_faults(mock, "503")
    assert httpx.get(get, params={"id": "a"}).status_code == 503
    _with_faults(mock, "fault=Client")
    soap = httpx.post(f"{url}/PushNotificationMobile.asmx", **_soap12(contract))
    reading = read_response(contract.operation("GetTokenDevice"), Binding.SOAP12, _http(soap))
    assert soap.status_code == 500 and reading.fault_code == "Sender"
    _with_faults(mock, "delay=0.2s-0.4s")
    started = time.monotonic()
    assert httpx.get(get, params={"id": "a"}).status_code == 200
    assert time.monotonic() - started >= 0.2


def test_a_probability_injects_into_that_share_of_calls_and_the_summary_counts_them(
        contract, faulty):
    url, mock = faulty
    _with_faults(mock, "500:25%")
    before = mock.stats.injected["HTTP 500"]
    statuses = [httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                          params={"id": "a"}).status_code for _ in range(80)]
    hit = statuses.count(500)
    assert 8 <= hit <= 35 and statuses.count(200) == 80 - hit
    assert mock.stats.injected["HTTP 500"] - before == hit
    assert route(contract, mock, "GET", "summary", [], b"")[1]["injected"]["HTTP 500"] >= hit


@pytest.mark.parametrize(("text", "words"), [
    ("delay", "delay needs a duration"), ("resett", "did you mean reset?"),
    ("503:2", "at most 1"), ("delay=2s-1s", "the lower bound first"),
    ("status=99", "from 100 to 599"),
])
def test_a_wrong_fault_says_what_is_wrong(text, words):
    with pytest.raises(ValueError) as error:
        parse(text)
    assert words in str(error.value)


def _soap12(contract: Contract) -> dict:
    request = build_request(contract, contract.operation("GetTokenDevice"), {"id": "a"},
                            Binding.SOAP12, "http://x")
    return {"content": request.body, "headers": {k: v for k, v in request.headers
                                                 if k.lower() not in ("host",
                                                                      "content-length")}}


def _http(response: httpx.Response):
    from harness.traffic.exchange import HttpResponse

    return HttpResponse(response.status_code, tuple(response.headers.multi_items()),
                        response.content)


# -- the command ------------------------------------------------------------------------------


def test_the_command_serves_stubs_alone_and_counts_the_faults_it_injected(contract, tmp_path):
    from test_mock import Served

    path = tmp_path / "stubs.toml"
    path.write_text(STUBS.replace('delay = "1.5s"', 'delay = "0.1s"'), encoding="utf-8")
    served = Served("--stubs", str(path), "--fault", "delay=0.05s", "--journal",
                    str(tmp_path / "journal.jsonl"), "--json", str(tmp_path / "mock.json"),
                    cwd=tmp_path)
    curl(contract, served.url, "GetTokenDevice", {"id": "dev-1"}, Binding.SOAP12)
    curl(contract, served.url, "LogoutFromSchool", LOGOUT, Binding.HTTP_GET)
    curl(contract, served.url, "GetTeacherGrpupsByID", {"Tid": "1"}, Binding.HTTP_POST)
    code, out, err = served.stop()
    assert code == 0 and "Traceback" not in err, err
    assert "as stubbed on http://127.0.0.1:" in err and "/__harness/" in err
    lines = out.splitlines()
    assert "harness mock: 3 call(s) answered: 3 by stubs" in lines
    assert "harness mock: faults injected: 3 delay 0.05s, 1 delay 0.1s, 1 reset" in lines
    journal = [json.loads(line) for line in
               (tmp_path / "journal.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(j["operation"], j["binding"], j["status"]) for j in journal] == [
        ("GetTokenDevice", "SOAP 1.2", 200), ("LogoutFromSchool", "HTTP GET", 200),
        ("GetTeacherGrpupsByID", "HTTP POST", None)]
    assert journal[1]["values"]["PhoneNumber"].startswith("redacted-")
    assert "0501234567" not in (tmp_path / "journal.jsonl").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "mock.json").read_text(encoding="utf-8"))
    assert data["answered"]["stub"] == 3
    assert data["injected"] == {"delay 0.05s": 3, "delay 0.1s": 1, "reset": 1}


@pytest.mark.parametrize(("args", "words"), [
    ([], "nothing to answer with: give a recording, --stubs FILE or --fallback URL"),
    (["--fault", "rest"], "--fault rest: 'rest' is no fault (did you mean reset?)"),
    (["--fallback", "somewhere"], "'somewhere' is none of none, reference, or a URL"),
    (["--stubs", "x.toml", "--record", "r.jsonl"], "--record needs --fallback URL"),
])
def test_wrong_flags_are_one_line_and_exit_2(tmp_path, args, words):
    from test_mock import run

    done = run("mock", "--port", "0", *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[-1], lines


# -- record-through ---------------------------------------------------------------------------


def test_record_through_answers_from_the_deployment_and_the_next_mock_from_the_file(
        contract, reference_url, tmp_path):
    """--fallback URL --record FILE: an unstubbed, unrecorded call is forwarded and recorded
    (redacted as capture redacts); the next mock of that recording answers it itself."""
    from harness.commands.mock import _headers, _redactor
    from harness.mock.forward import Forwarder
    from harness.reference.app import answer
    from harness.traffic.keys import find_key
    from harness.traffic.recording import read_exchanges

    record = tmp_path / "through.jsonl"
    token_call = build_request(contract, contract.operation("GetTokenDevice"), {"id": "dev-9"},
                               Binding.HTTP_GET, reference_url)
    token = read_response(contract.operation("GetTokenDevice"), Binding.HTTP_GET,
                          answer(contract, token_call)).result
    forwarder = Forwarder(contract, reference_url, record=str(record))
    index = load(contract, [])
    mock = Mock(contract, index, Options(fallback=reference_url), forwarder=forwarder)
    try:
        with running(contract, app=create_mock_app(contract, mock)) as url:
            through = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                                params={"id": "dev-9"})
            auth = httpx.get(f"{url}/AuthCodeSending.asmx/AuthCode", params=AUTH)
            journal = counted(url)
    finally:
        forwarder.close()
        index.close()
    assert through.status_code == 200 and token in through.text
    assert through.headers["X-Harness-Mock"] == auth.headers["X-Harness-Mock"] == "forwarded"
    assert [c["answered"] for c in journal["calls"]] == ["forwarded"] * 2
    recorded = list(read_exchanges([record]))
    assert len(recorded) == 2 and recorded[0].request.url.startswith(reference_url)
    kept = record.read_bytes()
    assert token.encode() not in kept and AUTH["phone"].encode() not in kept  # redacted
    key = find_key(record)  # capture's key store: the key is not beside the recording
    assert key is not None and key[1].parent != record.parent
    redactor = _redactor(str(key[1]), _headers([str(record)]))
    with contextlib.ExitStack() as stack:
        index = load(contract, [record])
        stack.callback(index.close)
        again = Mock(contract, index, Options(redactor=redactor))
        url = stack.enter_context(running(contract, app=create_mock_app(contract, again)))
        soap = httpx.post(f"{url}/PushNotificationMobile.asmx", **_soap12(contract))
        get = httpx.get(f"{url}/PushNotificationMobile.asmx/GetTokenDevice",
                        params={"id": "dev-9"})
        auth = httpx.post(f"{url}/AuthCodeSending.asmx/AuthCode", data=AUTH)
    assert get.status_code == 200 and get.headers["X-Harness-Mock"] == "recorded"
    assert auth.status_code == 200 and auth.headers["X-Harness-Mock"] == "recorded"
    assert soap.status_code == 500  # another value: not recorded, and no fallback now
    assert again.stats.answered["recorded"] == 2


def test_a_stop_does_not_wait_for_a_delayed_answer(contract, tmp_path):
    """Ctrl-C while a stub's minute-long delay is under way: the mock stops at once (the
    waiting connection closed), says what it answered, no traceback."""
    import signal
    import threading

    from test_mock import Served

    path = tmp_path / "stubs.toml"
    path.write_text('[[stub]]\noperation = "GetTokenDevice"\nresult = "x"\ndelay = "60s"\n',
                    encoding="utf-8")
    served = Served("--stubs", str(path), cwd=tmp_path)
    client = threading.Thread(target=curl, args=(contract, served.url, "GetTokenDevice",
                                                 {"id": "1"}, Binding.HTTP_GET))
    client.start()
    time.sleep(1.0)
    started = time.monotonic()
    code, out, err = served.stop(signal.SIGINT)
    client.join(timeout=30)
    assert time.monotonic() - started < 15 and code == 0
    assert "Traceback" not in err and "ERROR" not in err, err
    assert "harness mock: faults injected: 1 delay 60s" in out


def test_repeated_calls_are_each_answered_counted_and_journalled(contract, stubbed):
    """A call asked again is answered from the mock's caches: the same answer, every call in
    the journal and the counts."""
    url, mock = stubbed
    reset(url)
    before = mock.stats.answered["stub"]
    bodies = {curl(contract, url, "GetTokenDevice", {"id": "dev-1"}, Binding.SOAP11).stdout
              for _ in range(3)}
    assert len(bodies) == 1 and "token-stubbed" in bodies.pop()
    assert counted(url, operation="GetTokenDevice")["count"] == 3
    assert mock.stats.answered["stub"] - before == 3


def test_the_caches_are_bounded_by_entries_and_bytes():
    from harness.mock.service import Bounded

    kept: Bounded[str] = Bounded(3, 1000)
    for n in range(5):
        kept.put(n, f"v{n}", 10)
    assert len(kept) == 3 and kept.get(0) is None and kept.get(4) == "v4"
    kept.put("big", "x", 60)  # within a sixteenth of the bytes: kept, older ones let go
    kept.put("huge", "y", 200)  # over it: not kept at all
    assert kept.get("big") == "x" and kept.get("huge") is None
    for n in range(20):
        kept.put(("b", n), "z", 60)
    assert kept._bytes <= 1000 and len(kept) <= 3
