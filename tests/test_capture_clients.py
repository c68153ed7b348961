"""Real SOAP clients of two ecosystems stay on the proxy: zeep (Python) and Node's ``soap`` load
the WSDL through ``harness capture`` with no workaround and call every operation over SOAP 1.1
and 1.2 at the address that WSDL names; curl calls every operation over GET and POST. Every
call is recorded and classified, in front of the embedded reference and of the real ASMX
runtime (interop lane)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from harness.capture.process import CaptureProcess
from harness.capture.samples import zeep_arguments
from harness.contract.bindings import Binding
from harness.contract.model import Contract, ParamType, sample_arguments
from harness.reference.wsdl import service_name
from harness.traffic.recording import read_exchanges

ROOT = Path(__file__).resolve().parents[1]
NODE_CLIENT = ROOT / "tests" / "clients" / "node_soap.js"
NODE_MODULES = ROOT / "tools" / "node_modules"
SOAP_PORTS = {Binding.SOAP11: "Soap", Binding.SOAP12: "Soap12"}


def _endpoints(contract: Contract) -> dict[str, list]:
    found: dict[str, list] = {}
    for op in contract.operations:
        found.setdefault(op.endpoint, []).append(op)
    return found


# -- the clients -------------------------------------------------------------------------------


def _zeep(contract: Contract, proxy: str, verify: str | bool = True,
          only: str | None = None) -> list[tuple]:
    """zeep loads each endpoint's WSDL (or ``only`` one's) through the proxy and calls the
    address it names."""
    import requests
    import zeep
    from zeep.transports import Transport

    session = requests.Session()
    session.trust_env, session.verify = False, verify
    calls = []
    for endpoint, ops in _endpoints(contract).items():
        if only not in (None, endpoint):
            continue
        for binding, suffix in SOAP_PORTS.items():
            client = zeep.Client(f"{proxy}{endpoint}?WSDL", transport=Transport(session=session))
            service = client.bind(service_name(endpoint), f"{service_name(endpoint)}{suffix}")
            assert service._binding_options["address"] == f"{proxy}{endpoint}"
            for op in ops:
                getattr(service, op.name)(**zeep_arguments(op, sample_arguments(op)))
                calls.append(("zeep", binding.value, op.name))
    return calls


def _node(contract: Contract, proxy: str) -> list[tuple]:
    """Node's ``soap`` does the same, one job per endpoint and port."""
    if shutil.which("node") is None or not (NODE_MODULES / "soap").is_dir():
        pytest.fail("Node and tools/node_modules/soap are needed: run scripts/setup")
    jobs = [{"wsdl": f"{proxy}{endpoint}?WSDL", "port": f"{service_name(endpoint)}{suffix}",
             "soap12": binding is Binding.SOAP12,
             "calls": [{"operation": op.name, "args": _node_arguments(op)} for op in ops]}
            for endpoint, ops in _endpoints(contract).items()
            for binding, suffix in SOAP_PORTS.items()]
    done = subprocess.run(["node", str(NODE_CLIENT)], input=json.dumps(jobs), text=True,
                          capture_output=True, timeout=300,
                          env={**os.environ, "NODE_PATH": str(NODE_MODULES)})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(contract.operations) * 2
    calls = []
    for line in lines:
        assert line["ok"], line
        assert line["endpoint"].startswith(proxy), line  # the address the WSDL named
        binding = Binding.SOAP12 if line["port"].endswith("Soap12") else Binding.SOAP11
        calls.append(("node", binding.value, line["operation"]))
    return calls


def _node_arguments(op) -> dict[str, object]:
    args = sample_arguments(op)
    return {p.name: int(args[p.name]) if p.type is ParamType.INT else args[p.name]
            for p in op.parameters}  # in the order of the contract: ASMX reads a sequence


def _curl(contract: Contract, proxy: str) -> list[tuple]:
    calls = []
    for op in contract.operations:
        query = urlencode(sample_arguments(op))
        url = f"{proxy}{op.endpoint}/{op.name}"
        for binding, command in ((Binding.HTTP_GET, ["curl", "-sS", f"{url}?{query}"]),
                                 (Binding.HTTP_POST, ["curl", "-sS", "--data", query, url])):
            done = subprocess.run([*command, "-o", "/dev/null", "-w", "%{http_code}"],
                                  capture_output=True, text=True, timeout=60)
            assert done.stdout == "200", (command, done.stdout, done.stderr)
            calls.append(("curl", binding.value, op.name))
    return calls


def _client_of(exchange) -> str:
    return _client_name(dict((k.lower(), v) for k, v in exchange.request.headers).get(
        "user-agent", ""))


def _client_name(agent: str) -> str:
    return ("zeep" if "zeep" in agent.lower() else "node" if agent.startswith("node-soap")
            else "curl" if agent.startswith("curl") else agent)


# -- the tests ---------------------------------------------------------------------------------


TARGETS = [pytest.param("reference_url", id="reference"),
           pytest.param("asmx_url", id="asmx", marks=pytest.mark.interop)]


@pytest.fixture(scope="module", params=TARGETS)
def captured(request, contract, tmp_path_factory):
    target = request.getfixturevalue(request.param)
    out = tmp_path_factory.mktemp("clients") / "clients.jsonl"
    with CaptureProcess(target, out) as capture:
        calls = _zeep(contract, capture.url) + _node(contract, capture.url) + _curl(
            contract, capture.url)
        code, stdout, stderr = capture.stop()
    assert code == 0, stderr
    return target, capture.url, list(read_exchanges([out])), calls, stdout


def test_every_call_of_every_client_is_recorded_and_classified(contract, captured):
    _target, _proxy, exchanges, calls, stdout = captured
    assert len(calls) == len(contract.operations) * 6
    recorded = Counter((_client_of(e), e.meta["binding"], e.meta["operation"])
                       for e in exchanges if "operation" in e.meta)
    assert recorded == Counter(calls)
    assert all(e.response is not None and e.response.status == 200 for e in exchanges)
    # Besides the calls, only the service descriptions the two SOAP clients loaded.
    others = [e for e in exchanges if "operation" not in e.meta]
    assert len(others) == len(exchanges) - len(calls)
    # (zeep loads the WSDL per client, Node's soap once per URL: it caches it)
    assert Counter(_client_of(e) for e in others) == {"zeep": 14, "node": 7}
    assert all(e.request.url.endswith("?WSDL") for e in others)
    assert f"captured {len(exchanges)} exchange(s)" in stdout


def test_descriptions_are_recorded_as_the_upstream_sent_them(captured):
    target, proxy, exchanges, *_ = captured
    wsdls = [e for e in exchanges if e.request.url.endswith("?WSDL")]
    assert wsdls
    upstream = urlsplit(target)
    for exchange in wsdls:
        assert exchange.request.url.startswith(target)
        body = exchange.response.body
        assert f'location="{target}/'.encode() in body and proxy.encode() not in body
        assert exchange.meta["addresses_rewritten"] == {
            "from": [f"{upstream.scheme}://{upstream.netloc}"], "to": proxy}


def test_help_page_names_the_proxy(reference_url, tmp_path):
    help_page = _through_proxy(reference_url, tmp_path, "/PushNotificationMobile.asmx")
    assert f'href="{help_page.proxy}/PushNotificationMobile.asmx?WSDL"'.encode() in help_page.body


@pytest.mark.interop
def test_disco_names_the_proxy(asmx_url, tmp_path):
    disco = _through_proxy(asmx_url, tmp_path, "/PushNotificationMobile.asmx?disco")
    assert disco.body.count(f'"{disco.proxy}/PushNotificationMobile.asmx'.encode()) == 4


@dataclass
class _Answer:
    proxy: str
    body: bytes


def _through_proxy(target: str, tmp_path: Path, path: str) -> _Answer:
    """GET ``path`` through capture: the answer names the upstream nowhere, its length is
    right, and the recording holds what the upstream sent."""
    import httpx

    out = tmp_path / "docs.jsonl"
    with CaptureProcess(target, out) as capture, httpx.Client(trust_env=False) as http:
        answer = http.get(f"{capture.url}{path}")
        capture.stop()
    assert answer.status_code == 200
    assert target.encode() not in answer.content
    assert int(answer.headers["content-length"]) == len(answer.content)
    (recorded,) = read_exchanges([out])
    assert target.encode() in recorded.response.body
    assert recorded.meta["addresses_rewritten"]["to"] == capture.url
    return _Answer(capture.url, answer.content)


def test_zeep_through_tls_to_the_proxy_in_reverse_mode(contract, https_reference, tmp_path):
    """The client speaks HTTPS to the proxy (mitmproxy's certificate), the proxy HTTPS to a
    self-signed upstream: the WSDL names the proxy with https."""
    confdir = tmp_path / "mitmproxy"
    out = tmp_path / "tls.jsonl"
    with CaptureProcess(https_reference, out, "--insecure", "--confdir", str(confdir)) as capture:
        proxy = capture.url.replace("http://", "https://")
        calls = _zeep(contract, proxy, str(confdir / "mitmproxy-ca-cert.pem"),
                      only=contract.operations[0].endpoint)
        code, _, stderr = capture.stop()
    assert code == 0, stderr
    recorded = [e for e in read_exchanges([out]) if "operation" in e.meta]
    assert [(e.meta["binding"], e.meta["operation"]) for e in recorded] == [c[1:] for c in calls]
    assert all(e.request.url.startswith(https_reference) for e in recorded)


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_zeep_through_the_proxy_in_regular_mode(contract, reference_url, https_reference,
                                                scheme, tmp_path):
    import requests
    import zeep
    from zeep.transports import Transport

    target = https_reference if scheme == "https" else reference_url
    confdir = tmp_path / "mitmproxy"
    out = tmp_path / "regular.jsonl"
    with CaptureProcess(target, out, "--mode", "regular", "--insecure",
                        "--confdir", str(confdir)) as capture:
        session = requests.Session()
        session.trust_env = False
        session.proxies = {"http": capture.url, "https": capture.url}
        session.verify = str(confdir / "mitmproxy-ca-cert.pem")
        endpoint, ops = next(iter(_endpoints(contract).items()))
        client = zeep.Client(f"{target}{endpoint}?WSDL", transport=Transport(session=session))
        for op in ops:
            getattr(client.service, op.name)(**zeep_arguments(op, sample_arguments(op)))
        code, _, stderr = capture.stop()
    assert code == 0, stderr
    recorded = [e.meta.get("operation") for e in read_exchanges([out])]
    assert recorded == [None, *[op.name for op in ops]]  # the WSDL, then every call


@pytest.fixture(scope="module")
def https_reference(contract, tmp_path_factory):
    from test_capture_regular import self_signed  # the self-signed staging certificate

    from harness.reference.server import running

    certfile, keyfile = self_signed(tmp_path_factory.mktemp("tls"))
    with running(contract, ssl_certfile=str(certfile), ssl_keyfile=str(keyfile)) as url:
        yield url



# -- what lint and replay make of such a recording (issue 10, "done means") --------------------

#: The true findings of these clients: zeep sends a SOAPAction header with SOAP 1.2 (against
#: spec 4.1 rule 2); nothing else they send breaks a rule.
TRUE_FINDINGS = {("R2-NO-SOAPACTION", "zeep")}


def _recorded(exchanges, path: Path) -> Path:
    from harness.traffic.recording import RecordingWriter

    with RecordingWriter(path, redacted=True) as writer:
        for exchange in exchanges:
            writer.write(exchange)
    return path


def test_lint_of_the_recording_reports_only_true_findings(contract, captured, tmp_path):
    from harness.judge.lint import lint

    _target, _proxy, exchanges, _calls, _ = captured
    report = lint([_recorded(exchanges, tmp_path / "r.jsonl")], contract)
    found = {(f["rule"], _client_name(f.get("client") or "")) for f in report.kept()}
    assert found <= TRUE_FINDINGS, found
    assert dict(report.descriptions) == {"WSDL": 21}


def test_replaying_the_recording_against_its_deployment_exits_0(captured, tmp_path):
    target, _proxy, exchanges, *_ = captured
    path = _recorded(exchanges, tmp_path / "r.jsonl")
    done = subprocess.run([sys.executable, "-m", "harness", "replay", str(path), "--target",
                           target, "--quiet", "--json", str(tmp_path / "out.json")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["service_descriptions"] == {"WSDL": 21}
    assert data["counts"]["failed"] == 0

