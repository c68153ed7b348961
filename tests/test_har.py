"""HAR 1.2 both ways: our exports round-trip byte-exact; HAR from mitmproxy and browsers reads."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from harness.contract.bindings import Binding, build_request, build_response, classify
from harness.contract.model import sample_arguments
from harness.errors import RecordingError
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.har import read_har, write_har
from harness.traffic.recording import read_exchanges


def _exchanges(contract) -> list[Exchange]:
    out = []
    for i, op in enumerate(contract.operations):
        binding = list(Binding)[i % 4]
        request = build_request(contract, op, sample_arguments(op, i % 3), binding,
                                "http://svc.example:8080")
        response = build_response(contract, op, binding, "token")
        out.append(Exchange(request, response, index=i + 1,
                            timings={"started": 1_800_000_000.5, "send": 0.001, "wait": 0.02,
                                     "receive": 0.003, "duration": 0.024},
                            meta={"binding": binding.value, "operation": op.name}))
    # Binary and latin-1 bodies, duplicate headers in odd case, and a call with no response.
    out.append(Exchange(HttpRequest("POST", "http://svc.example/x.asmx",
                                    (("content-TYPE", "application/octet-stream"),
                                     ("X-Dup", "1"), ("x-dup", "2")), bytes(range(256))),
                        HttpResponse(200, (("Content-Type", "text/plain; charset=iso-8859-1"),),
                                     "café".encode("latin-1"), "OK")))
    out.append(Exchange(HttpRequest("GET", "http://svc.example/y.asmx"), None,
                        meta={"error": "Connection refused"}))
    return out


def test_export_then_import_is_byte_exact(contract, tmp_path):
    exchanges = _exchanges(contract)
    path = tmp_path / "x.har"
    assert write_har(exchanges, path) == len(exchanges)
    back = list(read_har(path))
    assert len(back) == len(exchanges)
    for a, b in zip(exchanges, back, strict=True):
        assert b.request == a.request and b.response == a.response
        assert b.meta == a.meta and b.timings == a.timings
    assert [b.index for b in back] == list(range(1, len(back) + 1))
    assert {b.source for b in back} == {str(path)}
    entries = json.loads(path.read_text())["log"]["entries"]
    assert entries[-2]["request"]["postData"]["_encoding"] == "base64"
    assert entries[-2]["response"]["content"]["text"] == "café"  # text in its own charset
    assert entries[0]["startedDateTime"].endswith("Z") and entries[0]["time"] == 24.0
    assert entries[-1]["response"]["status"] == 0


def test_read_exchanges_dispatches_har(contract, tmp_path):
    path = tmp_path / "x.har"
    write_har(_exchanges(contract), path)
    assert len(list(read_exchanges([path]))) == len(_exchanges(contract))


def test_mitmproxy_savehar_output_reads(contract, tmp_path):
    from mitmproxy.addons.savehar import SaveHar
    from mitmproxy.test import tflow, tutils

    op = contract.operations[0]
    wanted = build_request(contract, op, sample_arguments(op), Binding.SOAP12, "http://h:80")
    flow = tflow.tflow(resp=True)
    flow.request = tutils.treq(method=b"POST", host="h", port=80, path=op.endpoint.encode(),
                               headers=tuple((k.encode(), v.encode())
                                             for k, v in wanted.headers),
                               content=wanted.body)
    flow.response = tutils.tresp(content=b"<ok/>")
    har = SaveHar().make_har([flow])
    path = tmp_path / "mitm.har"
    path.write_text(json.dumps(har))
    (exchange,) = read_har(path)
    assert exchange.request.body == wanted.body
    assert exchange.request.headers == wanted.headers
    assert classify(contract, exchange.request).operation is op
    assert exchange.response.body == b"<ok/>"
    zhar = tmp_path / "mitm.zhar"
    zhar.write_bytes(zlib.compress(json.dumps(har).encode()))
    assert next(read_har(zhar)).request.body == wanted.body


def test_browser_style_har_reads(tmp_path):
    har = {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                   "entries": [{
                       "startedDateTime": "2026-01-02T03:04:05.678Z", "time": 12.5,
                       "request": {"method": "POST", "url": "http://h/a.asmx/Op",
                                   "httpVersion": "http/1.1", "headers": [],
                                   "postData": {"mimeType": "application/x-www-form-urlencoded",
                                                "params": [{"name": "a", "value": "1 2"}]}},
                       "response": {"status": 200, "statusText": "OK", "httpVersion": "h2",
                                    "headers": [{"name": "content-encoding", "value": "gzip"}],
                                    "content": {"size": 2, "mimeType": "text/xml",
                                                "text": "<x/>"}},
                       "timings": {"send": 1, "wait": 10, "receive": 1.5}}]}}
    path = tmp_path / "chrome.har"
    path.write_text(json.dumps(har))
    (exchange,) = read_har(path)
    assert exchange.request.body == b"a=1+2" and exchange.request.http_version == "HTTP/1.1"
    assert exchange.response.http_version == "HTTP/2.0"
    # The browser stored the decoded body: the stale Content-Encoding is dropped and said.
    assert exchange.response.header("content-encoding") is None
    assert exchange.meta["har_decoded_body"] == "gzip"
    assert exchange.timings["wait"] == pytest.approx(0.01)


@pytest.mark.parametrize("content, message", [
    (b"not json at all", "neither a harness recording nor a HAR file"),
    (b'{"log": {"version": "1.2"}}', "no log.entries"),
    (b'{"log": {"version": "2.0", "entries": []}}', "HAR version 2.0"),
    (b'{"log": {"version": "1.2", "entries": [{"request": {}}]}}', "HAR entry 1 is broken"),
])
def test_broken_har_is_one_line_error(tmp_path, content, message):
    path = tmp_path / "bad.har"
    path.write_bytes(content)
    with pytest.raises(RecordingError) as err:
        list(read_exchanges([path], skip_broken=False))  # a broken entry: strict readers
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("broken", [
    {"response": {"status": 200}},  # no request
    {"request": {"method": "GET", "url": "http://h/a.asmx", "headers": "Host: h"}},
    {"request": {"method": "POST", "url": "http://h/a.asmx", "headers": [],
                 "postData": {"text": "abc", "_encoding": "base64"}}},
    {"request": {"method": "GET", "url": "http://h/a.asmx", "headers": []},
     "response": {"status": "abc"}},
])
def test_broken_har_entry_is_skipped_counted_and_named(tmp_path, broken):
    """As a broken line of a recording: the other entries are read, the broken one is named."""
    good = {"request": {"method": "GET", "url": "http://h/a.asmx", "headers": []},
            "response": {"status": 200, "headers": [], "content": {"text": "<x/>"}}}
    path = tmp_path / "one-broken.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [good, broken, good]}}))
    said: list[tuple[int, str]] = []
    read = list(read_exchanges([path], on_broken=lambda p, n, reason: said.append((n, reason))))
    assert [e.index for e in read] == [1, 2]
    assert len(said) == 1 and said[0][0] == 2
    assert f"{path}: HAR entry 2 is broken" in said[0][1] and "\n" not in said[0][1]


def test_export_never_leaves_a_half_written_file(tmp_path):
    target = tmp_path / "out.har"

    def exchanges():
        yield Exchange(HttpRequest("GET", "http://h/a.asmx"), None)
        raise RecordingError("broken input")

    with pytest.raises(RecordingError):
        write_har(exchanges(), target)
    assert not target.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["-o", "--out", "--har"])
def test_export_writes_to_out_as_every_command_does(tmp_path, flag):
    """``-o/--out FILE`` as scenarios, contract, report and capture spell it; ``--har``, the
    first spelling, keeps working."""
    from harness.cli import main

    sample = Path(__file__).resolve().parents[1] / "recordings/sample-all-bindings.jsonl"
    out = tmp_path / "sample.har"
    assert main(["export", str(sample), flag, str(out)]) == 0
    assert json.loads(out.read_text())["log"]["entries"]
