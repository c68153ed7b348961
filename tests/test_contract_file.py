"""The contract as a data file, and contracts imported from ASMX WSDLs (zeep's parser)."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from harness.contract import model
from harness.contract.model import Contract, ParamType, school_mobile
from harness.contract.wsdl_import import WsdlError, annotate
from harness.errors import UsageError
from harness.traffic.wsdls import describe, import_wsdls

INVENTORY = Path(__file__).parent / "services" / "inventory"


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=240, check=False)


def without_annotations(contract: Contract) -> Contract:
    """The declared differences between a WSDL and the School Mobile contract file: a WSDL
    says nothing of the contract's name, its spec, clause numbers or personal data."""
    ops = tuple(replace(op, clause="", result_sensitive=False,
                        parameters=tuple(replace(p, sensitive=False) for p in op.parameters))
                for op in contract.operations)
    return replace(contract, operations=ops, name="", spec="")


def wsdl_urls(base: str, contract: Contract) -> list[str]:
    return [f"{base}{endpoint}" for endpoint in contract.endpoints]


def test_shipped_file_is_the_school_mobile_contract() -> None:
    contract = school_mobile()
    assert contract.name == "School Mobile" and len(contract.operations) == 8
    assert model.SCHOOL_MOBILE_FILE.read_text(encoding="utf-8") == model.dumps(contract)
    assert model.from_dict(json.loads(model.dumps(contract))) == contract


def test_file_round_trips_every_type() -> None:
    inventory = model.load(INVENTORY / "contract.json")
    assert inventory.namespace == "http://example.org/inventory/"
    kinds = {p.type for op in inventory.operations for p in op.parameters}
    assert {ParamType.GUID, ParamType.DATETIME, ParamType.ENUM, ParamType.UNSIGNED_LONG} <= kinds
    assert model.from_dict(json.loads(model.dumps(inventory))) == inventory


@pytest.mark.parametrize("text, problem", [
    ("{", "is not JSON"),
    ('{"format": 2, "operations": []}', "format 2"),
    ('{"format": 1, "operations": [{"name": "X"}]}', "is not a contract file"),
    ('{"format": 1, "operations": [], "bindings": ["smtp"]}', "is not a contract file"),
])
def test_broken_contract_file_is_one_usage_error(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=problem):
        model.load(path)
    done = harness("serve", "--contract", str(path), "--port", "0")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_reference_wsdls_import_as_the_shipped_contract(reference_url: str) -> None:
    imported = import_wsdls(wsdl_urls(reference_url, school_mobile()))
    assert without_annotations(imported) == without_annotations(school_mobile())
    assert annotate(imported, school_mobile()) == school_mobile()


@pytest.mark.interop
def test_real_deployment_wsdls_import_as_the_shipped_contract(asmx_url: str) -> None:
    imported = import_wsdls(wsdl_urls(asmx_url, school_mobile()))
    assert without_annotations(imported) == without_annotations(school_mobile())
    assert annotate(imported, school_mobile()) == school_mobile()


def test_contract_command_writes_a_file_every_command_reads(reference_url: str,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "school.json"
    wsdls = [arg for url in wsdl_urls(reference_url, school_mobile()) for arg in ("--wsdl", url)]
    done = harness("contract", *wsdls, "--annotate", "school-mobile", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == model.dumps(school_mobile())
    check = harness("contract", "--check", str(out), "--target", reference_url)
    assert check.returncode == 0, check.stdout + check.stderr


def test_wsdl_from_a_file(reference_url: str, tmp_path: Path) -> None:
    import httpx

    saved = tmp_path / "push.wsdl"
    saved.write_bytes(httpx.get(f"{reference_url}/PushNotificationMobile.asmx?WSDL").content)
    d = describe(str(saved))
    assert d.endpoint == "/PushNotificationMobile.asmx"
    assert [op.name for op in d.operations] == ["GetTokenDevice"]
    assert d.bindings == model.ALL_BINDINGS


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        _Recorder.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'<s:schema xmlns:s="http://www.w3.org/2001/XMLSchema"/>')

    def log_message(self, *args: object) -> None:
        pass


def test_hostile_wsdls_are_refused_without_fetching_anything(tmp_path: Path) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        external = f"http://127.0.0.1:{server.server_port}/evil.xsd"
        wsdl = tmp_path / "external.wsdl"
        wsdl.write_text(
            '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" '
            'xmlns:s="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x">'
            f'<wsdl:import namespace="urn:y" location="{external}"/>'
            '<wsdl:types><s:schema targetNamespace="urn:x">'
            f'<s:import namespace="urn:z" schemaLocation="{external}"/></s:schema></wsdl:types>'
            '</wsdl:definitions>')
        with pytest.raises(WsdlError, match="external references are not loaded"):
            describe(str(wsdl))
        assert _Recorder.hits == []
    finally:
        server.shutdown()
    bomb = tmp_path / "bomb.wsdl"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]>'
                    '<d xmlns="http://schemas.xmlsoap.org/wsdl/">&a;</d>')
    with pytest.raises(WsdlError):
        describe(str(bomb))
    done = harness("contract", "--wsdl", str(bomb))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    missing = harness("contract", "--wsdl", str(tmp_path / "nope.wsdl"))
    assert missing.returncode == 2 and "cannot read WSDL" in missing.stderr


def test_sensitive_marks_parameters_and_results_capture_redacts_them(reference_url: str,
                                                                    tmp_path: Path) -> None:
    """A contract made from WSDLs marks nothing sensitive: capture says so in one warning line
    (not "(redacted, …)") and records values in clear; --sensitive marks them, capture redacts."""
    import httpx

    from harness.capture.process import CaptureProcess

    wsdls = [arg for url in wsdl_urls(reference_url, school_mobile()) for arg in ("--wsdl", url)]
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    assert harness("contract", *wsdls, "-o", str(plain)).returncode == 0
    done = harness("contract", *wsdls, "--sensitive", "phone", "--sensitive", "AuthCode.code",
                   "--sensitive", "GetTokenDeviceResult", "-o", str(marked))
    assert done.returncode == 0, done.stderr
    assert "sensitive: GetTokenDeviceResult, code, phone" in done.stderr
    contract = model.load(marked)
    auth = contract.operation("AuthCode")
    assert auth.parameter("phone").sensitive and auth.parameter("code").sensitive
    assert contract.operation("GetTokenDevice").result_sensitive
    assert not contract.operation("LogoutFromSchool").parameter("UuId").sensitive
    unknown = harness("contract", *wsdls, "--sensitive", "Phone")
    assert unknown.returncode == 2 and "--sensitive Phone" in unknown.stderr
    for contract_file, in_clear in ((plain, True), (marked, False)):
        out = tmp_path / f"{contract_file.stem}.jsonl"
        with CaptureProcess(reference_url, out, "--contract", str(contract_file)) as capture:
            httpx.get(f"{capture.url}/AuthCodeSending.asmx/AuthCode",
                      params={"code": "c-4711", "phone": "0509998877"}, trust_env=False)
            code, _, stderr = capture.stop()
        assert code == 0, stderr
        warnings = [line for line in stderr.splitlines() if "warning" in line]
        assert (b"0509998877" in out.read_bytes()) is in_clear
        assert (b"c-4711" in out.read_bytes()) is in_clear
        if in_clear:
            assert len(warnings) == 1 and "marks no parameter or result sensitive" in warnings[0]
            assert "(credential headers redacted, pseudonym key in" in stderr
        else:
            assert not warnings and "(redacted, pseudonym key in" in stderr
