"""Interop lane, issue 30 item 5 ("done means"): traffic captured from the real ASMX runtime
with default redaction keeps its regression power. Its GetTokenDevice result
(``token-for-<id>``) is recorded as a pseudonym; replay and the features ``harness scenarios``
writes compare it by the live token's pseudonym under the recording's key (found where capture
put it, no flag): against the embedded reference, which answers another token, exit 1 naming
GetTokenDevice's result; against the real ASMX, exit 0. Without the key, replay says how many
values it did not compare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from harness.capture.process import CaptureProcess
from harness.contract.bindings import Binding, build_request
from harness.traffic.keys import KEY_STORE_ENV

pytestmark = pytest.mark.interop


def harness(*args: str, cwd: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=600, check=False,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def captured(contract, asmx_url, tmp_path_factory) -> Path:
    """GetTokenDevice over the four bindings (two ids), through capture in front of the real
    ASMX, redacted by default."""
    folder = tmp_path_factory.mktemp("pseudonyms")
    op = contract.operation("GetTokenDevice")
    with CaptureProcess(asmx_url, folder / "traffic.jsonl") as capture, \
            httpx.Client(trust_env=False, timeout=60) as http:
        for device in ("dev-1", "dev-2"):
            for binding in Binding:
                request = build_request(contract, op, {"id": device}, binding, capture.url)
                headers = [(k, v) for k, v in request.headers
                           if k.lower() not in ("host", "content-length")]
                answer = http.request(request.method, request.url, headers=headers,
                                      content=request.body or None)
                assert answer.status_code == 200 and f"token-for-{device}" in answer.text
        code, _out, err = capture.stop()
    assert code == 0, err
    assert b"token-for-" not in (folder / "traffic.jsonl").read_bytes()
    return folder


def test_replay_fails_on_another_token_and_passes_on_the_same(captured: Path, asmx_url: str,
                                                              reference_url: str):
    other = harness("replay", "traffic.jsonl", "--target", reference_url, "--quiet",
                    "--json", "other.json", "--junit", "other.xml", cwd=captured)
    assert other.returncode == 1, other.stdout + other.stderr
    findings = json.loads((captured / "other.json").read_text("utf-8"))["findings"]
    body = [f for f in findings if f["rule"] == "REPLAY-BODY"]
    assert len(body) == 8 and {f["operation"] for f in body} == {"GetTokenDevice"}
    assert all(f["path"].endswith(("GetTokenDeviceResult", "/string")) for f in body), body
    assert "value of the result differs (compared by pseudonym" in other.stdout
    same = harness("replay", "traffic.jsonl", "--target", asmx_url, "--quiet", cwd=captured)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "not compared" not in same.stdout  # every one compared
    for name in ("other.json", "other.xml"):
        assert "token-for-" not in (captured / name).read_text("utf-8")


def test_without_the_key_replay_says_how_many_values_it_did_not_compare(
        captured: Path, reference_url: str, tmp_path: Path):
    blind = harness("replay", "traffic.jsonl", "--target", reference_url, "--quiet",
                    "--json", "blind.json", "--junit", "blind.xml", cwd=captured,
                    env={KEY_STORE_ENV: str(tmp_path / "no-keys")})
    assert blind.returncode == 0, blind.stdout + blind.stderr
    verdict = [line for line in blind.stdout.splitlines() if line.startswith("replay: PASSED")]
    assert len(verdict) == 1 and "8 redacted values not compared: no key" in verdict[0]
    assert "no pseudonym key for traffic.jsonl" in blind.stderr
    report = json.loads((captured / "blind.json").read_text("utf-8"))
    assert report["uncompared"] == 8 and report["counts"]["warning"] == 8
    assert 'name="redacted_values.not_compared" value="8"' in \
        (captured / "blind.xml").read_text("utf-8")


def test_recorded_features_fail_on_another_token_and_pass_on_the_same(
        captured: Path, asmx_url: str, reference_url: str):
    written = harness("scenarios", "traffic.jsonl", "-o", "features", cwd=captured)
    assert written.returncode == 0, written.stderr
    assert "checked by pseudonym under key" in written.stdout
    other = harness("certify", "--features", "features", "--target", reference_url,
                    "--no-html", "--report-dir", "rep-other", cwd=captured)
    assert other.returncode == 1, other.stdout + other.stderr
    assert "GetTokenDevice over HTTP GET: expected the result's pseudonym \"redacted-" \
        in other.stdout
    same = harness("certify", "--features", "features", "--target", asmx_url, "--no-html",
                   "--report-dir", "rep-same", cwd=captured)
    assert same.returncode == 0, same.stdout + same.stderr
