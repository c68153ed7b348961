"""The headers ``-H`` (or the config's ``headers``) sends are credentials whatever their name
(issue 21 item 4): a target that echoes one back never gets its value into a report. A real
certify run (subprocess) against a loopback server that echoes the header and fails a rule,
so the JUnit system-out shows the exchange."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from faulty import FAULTS, serve_fault

from harness.traffic.exchange import HttpResponse
from harness.traffic.redaction import REPORT_REDACTED, add_credential_headers, redact_credentials


def _echoing(contract, request) -> HttpResponse:
    response = FAULTS["response-element-misnamed"].respond(contract, request)
    echoed = request.header("X-Tenant")
    headers = (*response.headers, ("X-Tenant", echoed)) if echoed else response.headers
    return HttpResponse(response.status, headers, response.body, response.reason)


def test_a_dash_h_header_echoed_by_the_target_is_redacted_in_every_report(tmp_path: Path):
    with serve_fault(_echoing) as url:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "certify", "--target", url, "--operation",
             "AuthCode", "--binding", "soap11", "--no-html", "--json", "out/certify.json",
             "--junit", "out/junit.xml", "--report-dir", "out/rep",
             "-H", "X-Tenant: acme-s3cret"],
            cwd=tmp_path, text=True, capture_output=True, timeout=240, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    junit = (tmp_path / "out/junit.xml").read_text(encoding="utf-8")
    # the echo is shown, its value by its pseudonym (the run's one face for it)
    assert re.search(r"x-tenant: redacted-[0-9a-f]{16}\n", junit.lower())
    for path in (p for p in (tmp_path / "out").rglob("*") if p.is_file()):
        assert b"acme-s3cret" not in path.read_bytes(), path
    assert "acme-s3cret" not in done.stdout + done.stderr


def test_add_credential_headers_makes_any_name_a_credential():
    headers = (("X-Tenant-Id", "t-1"), ("Accept", "*/*"))
    assert redact_credentials(headers) == headers  # no credential by its name alone
    add_credential_headers(["x-tenant-id"])
    assert redact_credentials(headers) == (("X-Tenant-Id", REPORT_REDACTED), ("Accept", "*/*"))
