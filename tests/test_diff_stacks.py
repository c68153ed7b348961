"""diff of ASMX against a migration to Node's soap: one cause, one line.

The Node stack (tests/services/node_soap) serves no HTTP GET or POST and answers SOAP 1.2
requests with a SOAP 1.1 envelope: two causes. Before, the console printed 144 failure lines
for them (a 404 was DIFF-STATUS + DIFF-CONTENT-TYPE + DIFF-BODY + DIFF-FAULT-REASON, each per
call) and hid 104 behind "... and 104 more". Now each cause is one line with its count.
The primary is the real ASMX runtime in the interop lane, else the embedded reference (which
answers as ASMX does; it only returns other GetTokenDevice tokens).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import takewhile
from pathlib import Path

from harness.reference.server import running

HARNESS = [sys.executable, "-m", "harness"]


def _diff(primary: str, candidate: str, tmp_path: Path) -> tuple[str, dict]:
    done = subprocess.run([*HARNESS, "diff", "--primary", primary, "--candidate", candidate,
                           "--json", str(tmp_path / "diff.json")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout, json.loads((tmp_path / "diff.json").read_text(encoding="utf-8"))


def _section(stdout: str, heading: str) -> list[str]:
    """The cause lines under ``heading`` (FAILURES, DIFFERENCES, WARNINGS)."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"{heading}:"):
            return list(takewhile(lambda text: text.startswith("  "), lines[i + 1:]))
    return []


def test_diff_against_node_soap_names_each_cause_once(node_soap_url: str, tmp_path: Path
                                                     ) -> None:
    real = os.environ.get("HARNESS_ASMX_URL", "").strip().rstrip("/")
    if real:
        stdout, report = _diff(real, node_soap_url, tmp_path)
    else:
        with running() as reference:
            stdout, report = _diff(reference, node_soap_url, tmp_path)
    failing = _section(stdout, "FAILURES") + _section(stdout, "DIFFERENCES")
    assert 2 <= len(failing) <= 6, stdout
    assert "more" not in "\n".join(failing)  # nothing hidden
    assert ("  HTTP GET and HTTP POST not served: 404 on every call (48 checks on 48 calls, 16 "
            "operation x binding pairs) [DIFF-STATUS]") in failing
    soap12 = [line for line in failing
              if "x SOAP 1.2 (24 checks on 24 calls, 8 operation x binding pairs)" in line]
    assert len(soap12) == 1 and "all 8 operations" in soap12[0], stdout
    assert soap12[0].startswith("  SOAP 1.2 answered with a SOAP 1.1 envelope -- ")
    assert soap12[0].endswith("[DIFF-BODY]")
    # a 404 is one failure: its body, Content-Type and fault text are not compared
    assert not [f for f in report["findings"] if f["binding"] in ("HTTP GET", "HTTP POST")
                and f["rule"] != "DIFF-STATUS" and f["verdict"] == "failed"]
    assert report["rules"]["DIFF-BODY"]["not applicable"] == 48
    # each failing cause in the JSON too, with its count; every finding names its cause
    causes = {c["cause"]: c for c in report["causes"] if c["verdict"] == "failed"}
    assert causes["HTTP 404: the call is not served"]["calls"] == 48
    assert len(causes) == len(failing)
