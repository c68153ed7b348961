"""Capture under stress: kill -9 mid-run loses nothing already written, kill -9 of the writer
answers nothing unrecorded; 200 concurrent clients lose nothing at all."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import threading
import time
from collections import Counter

import httpx
import pytest

from harness.capture.process import CaptureProcess, _children
from harness.traffic.recording import read_exchanges

CONCURRENT_CLIENTS = 200
REQUESTS_EACH = 3


def _get_url(contract, base: str, i: int) -> tuple[str, dict[str, str]]:
    op = contract.operations[i % len(contract.operations)]
    params = {p.name: str(i) for p in op.parameters}
    return f"{base}{op.endpoint}/{op.name}", params


def _plain_url(contract, base: str, i: int) -> tuple[str, dict[str, str]]:
    """Like ``_get_url``, over the operations without sensitive parameters: the recorded URL
    is the one sent, whatever redaction does."""
    ops = [o for o in contract.operations
           if o.parameters and not any(p.sensitive for p in o.parameters)]
    op = ops[i % len(ops)]
    return f"{base}{op.endpoint}/{op.name}", {p.name: str(i) for p in op.parameters}


def test_kill_9_mid_run_leaves_every_complete_line_readable(contract, reference_url, tmp_path):
    out = tmp_path / "crash.jsonl"
    capture = CaptureProcess(reference_url, out).start()
    stop = threading.Event()
    answered = []

    def hammer() -> None:
        with httpx.Client(trust_env=False, timeout=5) as client:
            i = 0
            while not stop.is_set():
                url, params = _get_url(contract, capture.url, i)
                try:
                    answered.append(client.get(url, params=params).status_code)
                except httpx.HTTPError:
                    return  # the proxy is gone
                i += 1

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while out.stat().st_size < 20_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    capture.kill()  # SIGKILL while clients are still sending
    stop.set()
    for t in threads:
        t.join()

    lines = out.read_bytes().split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # the tail is whatever was in flight (maybe nothing)
    assert len(complete) > 10
    for line in complete:
        json.loads(line)  # every complete line is valid JSON
    broken: list[str] = []
    exchanges = list(read_exchanges([out], on_broken=lambda p, n, r: broken.append(r)))
    assert len(exchanges) == len(complete) - 1  # all but the header line
    assert broken == [] and all(e.meta["binding"] == "get" for e in exchanges)
    # Each client may have had one exchange recorded whose answer the kill cut off.
    assert len(exchanges) <= len(answered) + len(threads)

    # Appending after the crash starts on a fresh line and keeps everything readable.
    with CaptureProcess(reference_url, out) as again:
        url, params = _get_url(contract, again.url, 0)
        httpx.get(url, params=params, trust_env=False)
        again.stop()
    after = list(read_exchanges([out], on_broken=lambda p, n, r: broken.append(r)))
    assert len(after) == len(exchanges) + 1
    assert len(broken) == (1 if tail.strip() else 0)


def test_kill_9_of_the_writer_under_load_answers_nothing_unrecorded(contract, reference_url,
                                                                   tmp_path):
    """No answer without its record: once the writer is killed, no client gets a response the
    recording lacks (they get 502, then the proxy stops, saying why)."""
    out = tmp_path / "writer-killed.jsonl"
    op = next(o for o in contract.operations
              if o.parameters and not any(p.sensitive for p in o.parameters))
    capture = CaptureProcess(reference_url, out).start()
    (writer,) = _children(capture.proc.pid)
    answered: list[str] = []
    refused: list[int] = []
    clients = 8

    def hammer(n: int) -> None:
        with httpx.Client(trust_env=False, timeout=30) as client:
            for i in itertools.count(n, clients):
                try:
                    answer = client.get(f"{capture.url}{op.endpoint}/{op.name}",
                                        params={p.name: f"{i}" for p in op.parameters})
                except httpx.HTTPError:
                    return  # the proxy stopped
                (answered if answer.status_code == 200 else refused).append(
                    str(answer.request.url).split("?", 1)[1] if answer.status_code == 200
                    else answer.status_code)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while out.stat().st_size < 50_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(writer, signal.SIGKILL)  # under load: 8 clients keep sending
    for t in threads:
        t.join(timeout=120)
    capture.proc.wait(timeout=120)  # it stops by itself, saying why
    code, _, stderr = capture.stop()

    recorded = {e.request.url.split("?", 1)[1] for e in read_exchanges([out])}
    assert len(answered) > 50
    assert set(answered) <= recorded, f"{len(set(answered) - recorded)} answered, not recorded"
    assert set(refused) <= {502}
    assert code == 2 and "recording writer stopped" in stderr


@pytest.mark.slow
def test_two_hundred_concurrent_clients_every_exchange_recorded(contract, reference_url,
                                                                tmp_path):
    """200 clients at once, each on its own connection: every exchange a client saw an answer
    to (whatever its status) is in the recording exactly once."""
    out = tmp_path / "load.jsonl"

    async def client_task(base: str, n: int) -> list[tuple[str, int]]:
        seen = []
        async with httpx.AsyncClient(trust_env=False, timeout=300) as client:
            for k in range(REQUESTS_EACH):
                url, params = _plain_url(contract, base, n * REQUESTS_EACH + k)
                response = await client.get(url, params=params)
                seen.append((response.url.query.decode(), response.status_code))
        return seen

    async def load(base: str) -> list[tuple[str, int]]:
        done = await asyncio.gather(*(client_task(base, n) for n in range(CONCURRENT_CLIENTS)))
        return [answer for answers in done for answer in answers]

    with CaptureProcess(reference_url, out) as capture:
        answered = asyncio.run(load(capture.url))
        code, stdout, _ = capture.stop()
    assert code == 0
    assert len(answered) == CONCURRENT_CLIENTS * REQUESTS_EACH
    exchanges = list(read_exchanges([out]))
    recorded = Counter((e.request.url.split("?", 1)[1], e.response.status if e.response else 502)
                       for e in exchanges)
    assert recorded == Counter(answered)  # each exchange exactly once, with what it answered
    assert f"captured {len(answered)} exchange(s)" in stdout


def test_hostile_request_bytes_do_not_stop_the_capture(contract, reference_url, tmp_path):
    """A request target that is not UTF-8 is recorded (percent-encoded, unclassified) and the
    exchanges after it are recorded too: the capture keeps going."""
    import socket
    from urllib.parse import urlsplit

    out = tmp_path / "hostile.jsonl"
    with CaptureProcess(reference_url, out, "--no-redact") as capture:
        proxy = urlsplit(capture.url)
        raw = (b"GET /AuthCodeSending.asmx/AuthCode?code=\xff\xfe&phone=1 HTTP/1.1\r\n"
               b"Host: x\r\nX-Odd: \xff\r\nConnection: close\r\n\r\n")
        with socket.create_connection((proxy.hostname, proxy.port)) as sock:
            sock.sendall(raw)
            assert sock.recv(100).startswith(b"HTTP/1.1 ")
        op = contract.operation("GetTokenDevice")
        answered = httpx.get(f"{capture.url}{op.endpoint}/{op.name}", params={"id": "5"},
                             timeout=10)
        assert answered.status_code == 200
        capture.stop()
    recorded = list(read_exchanges([out]))
    assert len(recorded) == 2
    first = recorded[0]
    assert "code=%FF%FE&phone=1" in first.request.url  # the same URL, representable in JSON
    assert "unclassified" in first.meta
    assert recorded[1].meta["operation"] == op.name


def test_writer_reads_every_frame_once_in_order_across_batches_and_split_frames():
    """The writer's pipe reader under load: every frame comes out once, in order, whole,
    however the bytes were split; a burst comes out in chunks of at most CHUNK, each of which
    the writer acknowledges, so that the proxy can answer the first clients of a burst while
    the writer records the rest."""
    from harness.capture.writer import CHUNK, _frame
    from harness.capture.writer import frames as framed

    frames = [bytes([n]) * (n * 1000 + 1) for n in range(1, 8)]
    burst = [bytes([n]) * 10 for n in range(2 * CHUNK + 3)]
    wire = [_frame(f) for f in frames]
    read, write = os.pipe()
    try:
        batches = framed(read)
        os.write(write, b"".join(wire[:3]))
        got = [next(batches)]  # three at once
        tail, cut = b"".join(wire[3:]), len(wire[3]) + 100
        os.write(write, tail[:cut])  # frame 4 whole, frame 5 cut in two
        got.append(next(batches))
        os.write(write, tail[cut:] + b"".join(_frame(f) for f in burst))
        os.close(write)
        write = -1
        got += list(batches)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    assert [len(b) for b in got] == [3, 1, CHUNK, CHUNK, 6]  # frames 5-7, then the burst
    assert [f for batch in got for f in batch] == frames + burst
