"""Interop lane: ``harness capture`` in front of the real ASMX runtime with plain clients (httpx,
curl), then ``harness lint`` of what was recorded and ``harness replay`` of it against the same
deployment. (zeep and Node ``soap`` through the proxy: tests/test_capture_clients.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from harness.capture.process import CaptureProcess
from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments
from harness.traffic.exchange import HttpRequest
from harness.traffic.recording import read_exchanges

pytestmark = pytest.mark.interop


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, check=False)


def _send(http: httpx.Client, request: HttpRequest) -> int:
    headers = [(k, v) for k, v in request.headers if k.lower() not in ("host", "content-length")]
    return http.request(request.method, request.url, headers=headers,
                        content=request.body or None).status_code


def _valid_calls(contract: Contract, proxy: str) -> list[int]:
    """Every operation x binding by httpx with plain and non-ASCII values, and GET/POST by
    curl: valid calls, each answered 200 by the real runtime."""
    statuses = []
    with httpx.Client(trust_env=False, timeout=60) as http:
        for op in contract.operations:
            for variant in (0, 1):
                for binding in Binding:
                    request = build_request(contract, op, sample_arguments(op, variant),
                                            binding, proxy)
                    statuses.append(_send(http, request))
            query = urlencode(sample_arguments(op))
            url = f"{proxy}{op.endpoint}/{op.name}"
            for command in (["curl", "-sS", f"{url}?{query}"],
                            ["curl", "-sS", "--data", query, url]):
                done = subprocess.run([*command, "-o", "/dev/null", "-w", "%{http_code}"],
                                      capture_output=True, text=True, timeout=60, check=False)
                statuses.append(int(done.stdout or 0))
    return statuses


def _erroneous_calls(contract: Contract, proxy: str) -> list[int]:
    """Calls the real runtime answers with an error: markup in GET/POST values (request
    validation) and a non-integer int over every binding."""
    op = contract.operation("LogoutFromSchool")
    statuses = []
    with httpx.Client(trust_env=False, timeout=60) as http:
        for binding in (Binding.HTTP_GET, Binding.HTTP_POST):
            statuses.append(_send(http, build_request(contract, op, sample_arguments(op, 2),
                                                      binding, proxy)))
        for binding in Binding:
            args = {**sample_arguments(op), "id_row_central": "x"}
            statuses.append(_send(http, build_request(contract, op, args, binding, proxy)))
    return statuses


def _markup_calls(contract: Contract, proxy: str) -> list[int]:
    """A plain call, then markup in a sensitive GET/POST value (refused by request
    validation), as a tester's client would send them."""
    op = contract.operation("LogoutFromSchool")
    statuses = []
    with httpx.Client(trust_env=False, timeout=60) as http:
        for binding in (Binding.HTTP_GET, Binding.HTTP_POST):
            for args in (sample_arguments(op), {**sample_arguments(op), "PhoneNumber": "<b>1"}):
                statuses.append(_send(http, build_request(contract, op, args, binding, proxy)))
    return statuses


@pytest.fixture(scope="module")
def recorded(contract, asmx_url, tmp_path_factory) -> tuple[Path, Path, Path, Path]:
    """(folder, valid.jsonl, errors.jsonl, refusal.jsonl) captured in front of the real
    deployment."""
    where = tmp_path_factory.mktemp("interop-traffic")
    paths = []
    # Redaction (the default) replaces the values, markup included: the errors are recorded
    # as sent, so that a replay sends them again; the refusal is recorded redacted, as a
    # capture records it by default.
    for name, calls, extra, answered in (
            ("valid", _valid_calls, (), {200}),
            ("errors", _erroneous_calls, ("--no-redact",), {500}),
            ("refusal", _markup_calls, (), {200, 500})):
        out = where / f"{name}.jsonl"
        with CaptureProcess(asmx_url, out, *extra) as capture:
            statuses = calls(contract, capture.url)
            code, _stdout, stderr = capture.stop()
        assert code == 0, stderr
        assert set(statuses) == answered, statuses
        paths.append(out)
    return where, paths[0], paths[1], paths[2]


def test_capture_records_every_call_classified(contract, recorded):
    _where, valid, errors, _ = recorded
    exchanges = list(read_exchanges([valid]))
    assert len(exchanges) == 8 * 2 * 4 + 8 * 2
    assert all(ex.response is not None and ex.response.status == 200 for ex in exchanges)
    pairs = {(ex.meta.get("operation"), ex.meta.get("binding")) for ex in exchanges}
    assert pairs == {(op.name, b.value) for op in contract.operations for b in Binding}
    assert [ex.response.status for ex in read_exchanges([errors])] == [500] * 6


def test_lint_of_the_real_traffic_is_clean(recorded):
    where, valid, _, _ = recorded
    done = harness("lint", str(valid), "--json", str(where / "lint.json"), "--quiet", cwd=where)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    data = json.loads((where / "lint.json").read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 0 and data["counts"]["warning"] == 0
    assert data["exchanges"] == 80


def test_lint_names_the_clients_defect_once(recorded):
    """A non-integer id_row_central is the client's defect (R9-INT), once per call; the
    refusal that answers it is right (R4 not applicable)."""
    where, _, errors, _ = recorded
    done = harness("lint", str(errors), "--json", str(where / "lint-errors.json"), "--quiet",
                   cwd=where)
    data = json.loads((where / "lint-errors.json").read_text(encoding="utf-8"))
    failed = [f for f in data["findings"] if f["verdict"] == "failed"]
    non_integer = [f for f in failed if f["rule"] == "R9-INT"]
    assert len(non_integer) == 4 and done.returncode == 1
    assert not [f for f in failed if f["rule"] != "R9-INT"]  # markup refused: a 4.10 warning
    assert data["rules"]["GAP-VALUES"]["warning"] == 2


def test_lint_of_a_recorded_request_validation_refusal_warns(recorded):
    """One verdict per behaviour: ASP.NET's refusal of markup in a GET/POST value, recorded
    by a default (redacting) capture, is the GAP-VALUES warning certify gives, not a failure;
    the refused value, redacted in the recording, is not quoted."""
    where, _, _, refusal = recorded
    done = harness("lint", str(refusal), "--json", str(where / "lint-refusal.json"),
                   "--quiet", cwd=where)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    data = json.loads((where / "lint-refusal.json").read_text(encoding="utf-8"))
    warned = [f for f in data["findings"] if f["rule"] == "GAP-VALUES"]
    assert [(f["binding"], f["verdict"]) for f in warned] == [("HTTP GET", "warning"),
                                                              ("HTTP POST", "warning")]
    assert all("PhoneNumber=(redacted value)" in f["message"] for f in warned)
    assert data["rules"]["R4-STATUS"] == {"passed": 2, "not applicable": 2}


@pytest.mark.parametrize("recording", ["valid", "errors"])
def test_replay_against_the_same_deployment_passes(recorded, asmx_url, recording):
    """The recording replayed against the deployment it was made from: every answer the
    recorded one; recorded errors given again (request validation, a non-integer int) are
    not failures."""
    where, valid, errors, _ = recorded
    path = valid if recording == "valid" else errors
    out = where / f"replay-{recording}.json"
    done = harness("replay", str(path), "--target", asmx_url, "--json", str(out), "--quiet",
                   cwd=where)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["counts"]["failed"] == 0
