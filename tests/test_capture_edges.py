"""Capture at its edges, with real processes: an answer over --max-body-mb reaches the client
whole as it comes and is recorded truncated (its first 64 KiB, its size and SHA-256), in memory
that does not depend on its size (bench/bench_oversize.py sends 2 GiB through it); an upstream
that hangs up in the middle of a body is recorded with the error and the response's status and
headers (the client gets 502); an exchange that cannot be handed to the writer is answered 502
and recorded as an error; capture restarts on its port at once after a crash."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from pathlib import Path

import httpx
from hostile import serve

from harness.capture.process import CaptureProcess

CALL = "/AuthCodeSending.asmx/AuthCode?code=1&phone=2"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def test_answer_over_the_body_limit_is_streamed_and_recorded_truncated(tmp_path: Path) -> None:
    out = tmp_path / "large.jsonl"
    with serve("large") as upstream, CaptureProcess(upstream, out, "--max-body-mb", "1") as cap:
        digest, size = hashlib.sha256(), 0
        with httpx.Client(trust_env=False, timeout=60) as client, \
                client.stream("GET", cap.url + CALL) as reply:
            assert reply.status_code == 200
            for piece in reply.iter_raw():
                digest.update(piece)
                size += len(piece)
        code, _out, err = cap.stop()
    assert code == 0, err
    assert size == 8 << 20  # the client got all of it
    (line,) = lines(out)
    assert line["response"]["status"] == 200
    assert line["meta"]["truncated"] == {"response": {
        "size": 8 << 20, "sha256": digest.hexdigest(), "kept": 64 * 1024}}
    assert line["response"]["body"] == {"text": "x" * (64 * 1024)}


def test_upstream_hanging_up_mid_body_is_recorded_with_the_error(tmp_path: Path) -> None:
    """It used to leave nothing in the recording, although the client got a 502."""
    out = tmp_path / "hangup.jsonl"
    with serve("hangup") as upstream, CaptureProcess(upstream, out) as cap:
        with httpx.Client(trust_env=False, timeout=30) as client:
            status = client.get(cap.url + CALL).status_code
        code, stdout, err = cap.stop()
    assert code == 0, err
    assert status == 502
    (line,) = lines(out)
    assert line["response"] is None
    assert "peer closed connection" in line["meta"]["error"]
    partial = line["meta"]["partial_response"]
    assert partial["status"] == 200 and ["Content-Length", "100000"] in partial["headers"]
    assert "error:" in stdout  # the console line says it too


def test_capture_restarts_on_its_port_at_once_after_a_crash(reference_url: str,
                                                             tmp_path: Path) -> None:
    """kill -9 with a client connected leaves the port's connections closing (TIME_WAIT):
    the restart used to fail with "Address already in use" for about a minute."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.jsonl"
    first = CaptureProcess(reference_url, out)
    first.args[first.args.index("127.0.0.1:0")] = f"127.0.0.1:{port}"
    first.start()
    with httpx.Client(trust_env=False, timeout=30) as client:
        assert client.get(first.url + CALL).status_code == 200
        first.kill()
        time.sleep(0.2)
    again = CaptureProcess(reference_url, out)
    again.args[again.args.index("127.0.0.1:0")] = f"127.0.0.1:{port}"
    with again:
        with httpx.Client(trust_env=False, timeout=30) as client:
            assert client.get(again.url + CALL).status_code == 200
        code, _out, err = again.stop()
    assert code == 0, err
    assert len(lines(out)) == 2


def test_an_exchange_the_writer_cannot_take_is_answered_502_and_recorded_as_an_error() -> None:
    """No answer without its record: when a snapshot cannot be handed over (a body the pipe's
    frame cannot carry, say), the client gets 502 and the recording an error line, instead of
    the answer going out unrecorded."""
    from mitmproxy.test import tflow

    from harness.capture.addon import Recorder
    from harness.capture.writer import exchange_from

    class Writer:
        def __init__(self) -> None:
            self.taken: list[tuple] = []

        def put(self, snapshot: tuple) -> int:
            if snapshot[7] is not None:  # the exchange with its answer
                raise ValueError("bytes object is too large to marshal")
            self.taken.append(snapshot)
            return len(self.taken)

    recorder = Recorder()
    recorder.writer = Writer()  # type: ignore[assignment]
    flow = tflow.tflow(resp=True)
    assert recorder.response(flow) is None  # nothing to wait for: refused at once
    assert flow.response is not None and flow.response.status_code == 502
    (snapshot,) = recorder.writer.taken  # type: ignore[attr-defined]
    exchange = exchange_from(snapshot)
    assert exchange.response is None
    assert "not recorded: ValueError: bytes object is too large" in exchange.meta["error"]
    recorder.error(flow)  # mitmproxy's error hook after the refusal adds nothing
    assert len(recorder.writer.taken) == 1  # type: ignore[attr-defined]


def test_a_gzip_bomb_is_not_decoded_whole_to_redact_it() -> None:
    """The recording writer decodes a coded body to look for personal data in it: a body
    decoding past 64 MiB is left out (and said) instead of being inflated whole."""
    import gzip
    import tracemalloc

    from harness.contract.model import school_mobile
    from harness.traffic.exchange import HttpResponse
    from harness.traffic.redaction import Redactor

    bomb = gzip.compress(b"\0" * (256 << 20), compresslevel=9)  # one member, 256 MiB inside
    redactor = Redactor.for_contract(school_mobile(), b"k" * 32)
    answer = HttpResponse(200, (("Content-Type", "text/xml; charset=utf-8"),
                                ("Content-Encoding", "gzip")), bomb, "OK")
    notes: list[str] = []
    tracemalloc.start()
    try:
        redacted = redactor.response(answer, notes=notes)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert redacted.body == b"" and "could not be decoded" in notes[0]
    assert peak < 100 << 20, f"{peak >> 20} MiB to refuse a 256 MiB bomb"
