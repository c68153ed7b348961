"""``certify --key-file`` (issue 22 item 7, "the same pseudonyms"): with capture's key file,
the sensitive values certify's reports show are the very pseudonyms the recording holds. A real
capture (in front of the embedded reference) and a real certify run against a failing server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
from faulty import FAULTS, serve_fault

from harness.capture.process import CaptureProcess
from harness.traffic.keys import recorded_key_id, stored_key_path

VALUES = """[AuthCode]
code = "SECRETCODE4711"
phone = "5550199887"
"""


def test_reports_show_the_recordings_pseudonyms_with_its_key(reference_url, tmp_path: Path):
    recording = tmp_path / "traffic.jsonl"
    with CaptureProcess(reference_url, recording) as capture:
        httpx.get(f"{capture.url}/AuthCodeSending.asmx/AuthCode",
                  params={"code": "SECRETCODE4711", "phone": "5550199887"}, trust_env=False)
        capture.stop()
    recorded = recording.read_text(encoding="utf-8")
    assert "SECRETCODE4711" not in recorded
    (tmp_path / "values.toml").write_text(VALUES, encoding="utf-8")

    def certify(*extra: str) -> str:
        out = tmp_path / f"out{len(extra)}"
        with serve_fault(FAULTS["response-element-misnamed"]) as url:  # AuthCode x SOAP 1.1
            done = subprocess.run(
                [sys.executable, "-m", "harness", "certify", "--target", url, "--values",
                 "values.toml", "--operation", "AuthCode", "--no-html", "--junit",
                 str(out / "junit.xml"), "--report-dir", str(out / "rep"), *extra],
                cwd=tmp_path, text=True, capture_output=True, timeout=240, check=False)
        assert done.returncode == 1, done.stdout + done.stderr
        return "".join(p.read_text("utf-8", "replace") for p in out.rglob("*") if p.is_file())

    keyed = certify("--key-file", str(stored_key_path(recorded_key_id(recording))))
    assert "SECRETCODE4711" not in keyed and "5550199887" not in keyed

    pseudonyms = set(re.findall(r"redacted-[0-9a-f]{16}", recorded))
    assert pseudonyms and pseudonyms <= set(re.findall(r"redacted-[0-9a-f]{16}", keyed))
    unkeyed = certify()  # a key of the run: other pseudonyms, no value in clear either
    assert "SECRETCODE4711" not in unkeyed
    assert not pseudonyms & set(re.findall(r"redacted-[0-9a-f]{16}", unkeyed))
