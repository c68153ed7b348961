"""``harness capture --web``: the capture addon under mitmproxy's web UI (mitmweb) on loopback.
A real capture process in front of the reference, a real call through it, the UI page fetched
with the token capture prints, the flow listed by the UI and written to the recording."""

from __future__ import annotations

import re
import socket
import time

import httpx

from harness.capture.process import CaptureProcess, run_harness
from harness.contract.bindings import Binding, build_request
from harness.contract.model import sample_arguments
from harness.traffic.recording import read_exchanges

_WEB = re.compile(r"web UI \(mitmweb\) on (http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+))")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def web_line(capture: CaptureProcess) -> re.Match[str]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _WEB.search("".join(capture._stderr))
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("".join(capture._stderr))


def test_capture_web_serves_mitmweb_and_records_as_capture_does(contract, reference_url,
                                                                tmp_path) -> None:
    out = tmp_path / "web.jsonl"
    port = free_port()
    op = contract.operations[0]
    with CaptureProcess(reference_url, out, "--web", "--web-port", str(port)) as capture:
        url, shown, token = web_line(capture).groups()
        assert int(shown) == port
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and "<title>mitmproxy</title>" in page.text
        request = build_request(contract, op, sample_arguments(op, 1), Binding.SOAP11,
                                capture.url)
        answer = httpx.request(request.method, request.url, content=request.body,
                               headers=[h for h in request.headers if h[0].lower() != "host"],
                               timeout=30)
        assert answer.status_code == 200
        flows = httpx.get(f"http://127.0.0.1:{port}/flows", timeout=30,
                          headers={"Authorization": f"Bearer {token}"}).json()
        assert [f["request"]["path"] for f in flows] == [op.endpoint]
        assert httpx.get(f"http://127.0.0.1:{port}/flows", timeout=30).status_code == 403
        code, _, stderr = capture.stop()
    assert code == 0, stderr
    recorded = list(read_exchanges([out]))
    assert len(recorded) == 1 and recorded[0].meta["operation"] == op.name
    assert recorded[0].meta["binding"] == Binding.SOAP11.value
    assert recorded[0].response is not None and recorded[0].response.status == 200


def test_a_web_port_in_use_is_one_line_exit_2(reference_url, tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_harness("capture", "--upstream", reference_url, "--listen", "127.0.0.1:0",
                           "--out", tmp_path / "x.jsonl", "--web", "--web-port",
                           str(taken.getsockname()[1]), check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot listen" in done.stderr
