"""Profiles: ``--profile spec`` (the default of every judging command) applies the spec's rules
as written; ``--profile asmx`` turns the deviations the ASMX runtime accepts into warnings;
per-rule overrides set a rule's level; ``lint --baseline`` reports only new findings. Each
through the real command on a recording answered by the reference."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from traffic import clean_exchanges, exchange, request, write_recording

from harness.contract.bindings import Binding
from harness.contract.model import Contract
from harness.traffic.exchange import HttpRequest

HARNESS = [sys.executable, "-m", "harness"]


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=180, check=False, cwd=cwd)


def _unquoted(contract: Contract) -> HttpRequest:
    return request(contract, "SendMarkNotes", Binding.SOAP11).with_header(
        "SOAPAction", "http://tempuri.org/SendMarkNotes")


def _no_charset(contract: Contract) -> HttpRequest:
    return request(contract, "AuthCode", Binding.SOAP12).with_header(
        "Content-Type", "application/soap+xml")


def _endpoint_case(contract: Contract) -> HttpRequest:
    req = request(contract, "GetTokenDevice", Binding.HTTP_GET)
    return replace(req, url=req.url.replace("/PushNotificationMobile.asmx/",
                                            "/pushnotificationmobile.asmx/"))


TOLERATED = [("unquoted SOAPAction", _unquoted, "R1-SOAPACTION"),
             ("SOAP Content-Type without charset", _no_charset, "BIND-REQUEST-CONTENT-TYPE"),
             ("endpoint path case", _endpoint_case, "BIND-METHOD-PATH")]


def _recording(contract: Contract, tmp_path: Path, *requests: HttpRequest) -> Path:
    return write_recording(tmp_path / "r.jsonl", [*clean_exchanges(contract)[:4],
                                                  *(exchange(contract, r) for r in requests)])


def _findings(path: Path) -> list[tuple[str, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(f["rule"], f["verdict"]) for f in data["findings"]]


@pytest.mark.parametrize(("deviation", "build", "rule"), TOLERATED,
                         ids=[t[0] for t in TOLERATED])
def test_spec_profile_fails_what_asmx_profile_warns(contract: Contract, tmp_path: Path,
                                                    deviation: str, build, rule: str) -> None:
    path = _recording(contract, tmp_path, build(contract))
    default = run("lint", path, "--json", tmp_path / "spec.json")
    assert default.returncode == 1, default.stdout + default.stderr
    assert _findings(tmp_path / "spec.json") == [(rule, "failed")]
    assert "profile spec" in default.stdout
    tolerant = run("lint", path, "--profile", "asmx", "--json", tmp_path / "asmx.json")
    assert tolerant.returncode == 0, tolerant.stdout + tolerant.stderr
    assert _findings(tmp_path / "asmx.json") == [(rule, "warning")]
    assert json.loads((tmp_path / "asmx.json").read_text(encoding="utf-8"))["profile"] == "asmx"


def test_severity_override_on_the_command_line(contract: Contract, tmp_path: Path) -> None:
    soap12 = request(contract, "AuthCode", Binding.SOAP12).with_header(
        "SOAPAction", '"http://tempuri.org/AuthCode"')  # zeep does this
    path = _recording(contract, tmp_path, soap12, _unquoted(contract))
    done = run("lint", path, "--severity", "R2=warning", "--severity", "R1-SOAPACTION=off",
               "--json", tmp_path / "out.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _findings(tmp_path / "out.json") == [("R2-NO-SOAPACTION", "warning")]
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["overrides"] == {"R1-SOAPACTION": "off", "R2-NO-SOAPACTION": "warning"}
    assert "R1-SOAPACTION" not in data["rules"]


@pytest.mark.parametrize("override", ["R2-NO-SOAPACTION=sometimes", "NOPE=warning", "R2"])
def test_bad_override_is_one_line(contract: Contract, tmp_path: Path, override: str) -> None:
    path = _recording(contract, tmp_path)
    done = run("lint", path, "--severity", override)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_baseline_reports_only_new_findings(contract: Contract, tmp_path: Path) -> None:
    earlier = _recording(contract, tmp_path, _unquoted(contract))
    assert run("lint", earlier, "--json", tmp_path / "base.json").returncode == 1
    same = run("lint", earlier, "--baseline", tmp_path / "base.json", "--json",
               tmp_path / "same.json")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "1 known finding(s) not shown" in same.stdout
    assert _findings(tmp_path / "same.json") == []
    later = write_recording(tmp_path / "later.jsonl", [
        exchange(contract, _unquoted(contract)), exchange(contract, _no_charset(contract))])
    new = run("lint", later, "--baseline", tmp_path / "base.json", "--json",
              tmp_path / "new.json")
    assert new.returncode == 1
    assert _findings(tmp_path / "new.json") == [("BIND-REQUEST-CONTENT-TYPE", "failed")]
    data = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))
    assert data["known_from_baseline"] == 1


@pytest.mark.parametrize("content", [b"not json", b'{"verdict": "passed"}'])
def test_bad_baseline_is_one_line(contract: Contract, tmp_path: Path, content: bytes) -> None:
    (tmp_path / "base.json").write_bytes(content)
    done = run("lint", _recording(contract, tmp_path), "--baseline", tmp_path / "base.json")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_catalogue_shows_each_profile(tmp_path: Path) -> None:
    done = run("certify", "--list-rules")
    assert done.returncode == 0
    lines = {line.split("|")[1].strip(" `"): line for line in done.stdout.splitlines()
             if line.startswith("| `")}
    assert "| failure | failure; warning: unquoted SOAPAction |" in lines["R1-SOAPACTION"]
    assert "| failure | failure |" in lines["R2-NO-SOAPACTION"]
    assert "| warning | warning |" in lines["GAP-VALUES"]


@pytest.mark.parametrize("command", ["certify", "lint", "replay", "diff"])
def test_every_judging_command_defaults_to_the_spec_profile(command: str) -> None:
    done = run(command, "--help")
    assert "--profile {spec,asmx}" in done.stdout and "--severity RULE=LEVEL" in done.stdout
    assert "spec (default)" in done.stdout


def test_overrides_and_profile_from_the_config_file(contract: Contract, tmp_path: Path) -> None:
    soap12 = request(contract, "AuthCode", Binding.SOAP12).with_header(
        "SOAPAction", '"http://tempuri.org/AuthCode"')  # a known client: zeep
    path = _recording(contract, tmp_path, soap12, _unquoted(contract))
    (tmp_path / "harness.toml").write_text('profile = "asmx"\n\n[severity]\n'
                                           'R2-NO-SOAPACTION = "warning"\n', encoding="utf-8")
    done = run("lint", path, "--json", tmp_path / "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(_findings(tmp_path / "out.json")) == [("R1-SOAPACTION", "warning"),
                                                        ("R2-NO-SOAPACTION", "warning")]
    flag = run("lint", path, "--profile", "spec", "--json", tmp_path / "flag.json", cwd=tmp_path)
    assert flag.returncode == 1  # a flag overrides the file
    assert ("R1-SOAPACTION", "failed") in _findings(tmp_path / "flag.json")
