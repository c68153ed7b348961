"""Capture's leaner mitmproxy core (``harness.capture.lean``): hooks run in line, without a task
per hook, every exchange still recorded and held until it is; options read without a copy,
never stale."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import select
import selectors
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from mitmproxy.utils import asyncio_utils

from harness.capture import lean
from harness.capture.addon import Recorder
from harness.capture.process import CaptureProcess
from harness.capture.proxy import CaptureSettings, event_loop_factory, serve
from harness.capture.writer import WriterProcess, recording_setup
from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _twenty_exchanges(tmp_path: Path, reference_url: str, contract: Contract, *,
                      listening: Callable[[], None] = lambda: None,
                      answered: Callable[[], None] = lambda: None
                      ) -> tuple[list[int], list[int]]:
    """20 keep-alive exchanges through an in-process capture: the statuses the client got and
    those recorded. ``listening`` runs once capture listens, ``answered`` once the last answer
    is in and the event that finished it through; the collector is restored after."""
    op = contract.operation("GetTokenDevice")
    request = build_request(contract, op, sample_arguments(op, 0), Binding.SOAP11, "http://x")
    port, out = _free_port(), tmp_path / "lean.jsonl"
    statuses: list[int] = []

    def clients() -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False) as client:
            for _ in range(20):
                answer = client.request(request.method, request.target, content=request.body,
                                        headers=[(k, v) for k, v in request.headers
                                                 if k.lower() != "host"])
                statuses.append(answer.status_code)

    async def announce(master) -> None:
        while not master.addons.get("proxyserver").listen_addrs():
            await asyncio.sleep(0.01)
        listening()
        await asyncio.to_thread(clients)
        for _ in range(3):  # the event that finished the last exchange is through
            await asyncio.sleep(0)
        answered()
        master.shutdown()

    settings = CaptureSettings(out=str(out), upstream=reference_url, listen_port=port,
                               key_file="-")
    before = gc.get_threshold()
    try:
        with (tmp_path / "console.txt").open("w") as console:
            asyncio.run(serve(settings, Recorder(contract, console), announce),
                        loop_factory=event_loop_factory())
    finally:
        gc.enable()
        gc.set_threshold(*before)  # the collector as it was for the other tests
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    return statuses, [line["response"]["status"] for line in lines]


def test_an_exchange_through_capture_starts_no_hook_task(
        tmp_path: Path, reference_url: str, contract: Contract, monkeypatch) -> None:
    """mitmproxy started a task for each of the four hooks of every exchange; capture's handler
    runs them in line (``response`` completes from the writer's acknowledgement), so 20
    keep-alive exchanges start no hook task at all, and each is recorded and answered. The
    garbage collector looks at the young generation ten times less often meanwhile."""
    started: list[str] = []
    real = asyncio_utils.create_task

    def counted(coro, *, name: str, keep_ref: bool, client=None):
        started.append(name)
        return real(coro, name=name, keep_ref=keep_ref, client=client)

    monkeypatch.setattr(asyncio_utils, "create_task", counted)
    thresholds: list[tuple[int, int, int]] = []

    def listening() -> None:
        started.clear()  # from here on: the exchanges only
        thresholds.append(gc.get_threshold())

    before = gc.get_threshold()
    statuses, recorded = _twenty_exchanges(tmp_path, reference_url, contract,
                                           listening=listening)
    assert thresholds == [(lean.YOUNG_THRESHOLD, *before[1:])]  # fewer, longer-spaced looks
    assert statuses == recorded == [200] * 20
    assert [name for name in started if name.startswith("handle_hook")] == []


def test_every_answer_goes_out_in_the_callback_that_reads_its_acknowledgement(
        tmp_path: Path, reference_url: str, contract: Contract, monkeypatch) -> None:
    """Capture holds each answer until the writer acknowledges its exchange. With futures, the
    acknowledgement, the response hook and the connection handler each passed the answer on a
    loop iteration later (three iterations, each letting every other connection's ready events
    go first, on every answer's path); now it goes to its client's socket within the callback
    that reads the acknowledgement, for each of 20 keep-alive exchanges."""
    reading: list[bool] = [False]
    answers: list[bool] = []  # per write to a client socket: inside that callback?
    read_acks, write = WriterProcess._read_acks, lean.InlineHooks._write

    def reading_acks(self: WriterProcess) -> None:
        reading[0] = True
        try:
            read_acks(self)
        finally:
            reading[0] = False

    def writing(self: lean.InlineHooks, connection, chunks: list[bytes]) -> None:
        if chunks and connection is self.client:
            answers.append(reading[0])
        write(self, connection, chunks)

    monkeypatch.setattr(WriterProcess, "_read_acks", reading_acks)
    monkeypatch.setattr(lean.InlineHooks, "_write", writing)
    statuses, recorded = _twenty_exchanges(tmp_path, reference_url, contract)
    assert statuses == recorded == [200] * 20
    assert answers == [True] * 20


def test_the_acknowledgement_does_not_wait_for_the_console(tmp_path: Path,
                                                            contract: Contract) -> None:
    """The writer acknowledges a batch once its lines are in the file, then prints their
    console lines: an answer never waits for its console line. A console nobody reads (its
    pipe full) still lets the first exchange be acknowledged; before, the writer printed
    first and the acknowledgement never came."""
    console_r, console_w = os.pipe()
    os.set_blocking(console_w, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(console_w, b"x" * 65536)
    os.set_blocking(console_w, True)
    setup = recording_setup(str(tmp_path / "out.jsonl"), contract, key_file="-")
    with os.fdopen(console_w, "w") as console:
        writer = WriterProcess(setup, console, on_failure=lambda message: None)
    op = contract.operation("GetTokenDevice")
    built = build_request(contract, op, sample_arguments(op, 0), Binding.SOAP11,
                          "http://127.0.0.1:1")
    fields = [(k.encode(), v.encode()) for k, v in built.headers]
    writer.put((built.method, f"http://127.0.0.1:1{built.target}", fields,
                built.body, "HTTP/1.1", time.time(), time.time(), None,
                ("refused", time.time()), None))
    acknowledged, _, _ = select.select([writer._acks], [], [], 15)
    drained = threading.Thread(target=lambda: [None for _ in iter(
        lambda: os.read(console_r, 65536), b"")], daemon=True)
    drained.start()
    assert writer.close() is None
    drained.join(15)
    os.close(console_r)
    assert acknowledged == [writer._acks]
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["meta"]["error"] == "refused"


def test_a_finished_exchange_leaves_nothing_for_the_garbage_collector(
        tmp_path: Path, reference_url: str, contract: Contract) -> None:
    """Each exchange's mitmproxy stream was in reference cycles, so it and its flow (request,
    response, headers, buffers) waited for the cyclic garbage collector, whose passes over them
    stopped the proxy for tens of ms at 1,000 clients. Its cycles are now cut once it is done:
    with the collector off, no flow of 20 answered keep-alive exchanges is left in memory, and
    every one is recorded."""
    from mitmproxy.http import HTTPFlow

    flows_left: list[int] = []

    def listening() -> None:
        gc.collect()
        gc.disable()

    def answered() -> None:
        flows_left.append(sum(isinstance(o, HTTPFlow) for o in gc.get_objects()))
        gc.enable()

    statuses, recorded = _twenty_exchanges(tmp_path, reference_url, contract,
                                           listening=listening, answered=answered)
    assert statuses == recorded == [200] * 20
    assert flows_left == [0]


def test_a_crowd_connecting_at_once_waits_in_the_backlog_not_in_retries(
        tmp_path: Path, reference_url: str, contract: Contract) -> None:
    """mitmproxy listened with asyncio's backlog of 100: beyond that many connections waiting
    to be accepted, the kernel dropped the SYNs and clients retried after 1 s, 3 s, 7 s (through
    capture, 1,000 clients starting together took up to 8 s to connect). With the proxy
    stopped (SIGSTOP), 250 clients connecting at once now all complete their handshake; resumed,
    it answers and records each of them."""
    op = contract.operation("GetTokenDevice")
    built = build_request(contract, op, sample_arguments(op, 0), Binding.SOAP11, "http://x")
    head = [f"{built.method} {built.target} HTTP/1.1", "Host: x", "Connection: close",
            *(f"{k}: {v}" for k, v in built.headers if k.lower() not in ("host", "connection",
                                                                         "content-length")),
            f"Content-Length: {len(built.body or b'')}"]
    raw = ("\r\n".join(head) + "\r\n\r\n").encode() + (built.body or b"")
    crowd, out = 250, tmp_path / "crowd.jsonl"
    with CaptureProcess(reference_url, out, "--key-file", "-") as cap:
        assert cap.proc is not None
        port = int(cap.url.rsplit(":", 1)[1])
        clients = [socket.socket() for _ in range(crowd)]
        os.kill(cap.proc.pid, signal.SIGSTOP)
        try:
            with selectors.DefaultSelector() as waiting:
                for client in clients:
                    client.setblocking(False)
                    client.connect_ex(("127.0.0.1", port))
                    waiting.register(client, selectors.EVENT_WRITE)
                connected = 0
                deadline = time.monotonic() + 10  # a dropped SYN is retried after 1 s and 3 s
                while connected < crowd and time.monotonic() < deadline:
                    for key, _ in waiting.select(timeout=0.5):
                        waiting.unregister(key.fileobj)
                        connected += key.fileobj.getsockopt(socket.SOL_SOCKET,
                                                            socket.SO_ERROR) == 0
        finally:
            os.kill(cap.proc.pid, signal.SIGCONT)
        assert connected == crowd
        answers = []
        for client in clients:
            client.settimeout(60)
            client.sendall(raw)
        for client in clients:
            with client:
                got = b""
                while chunk := client.recv(65536):
                    got += chunk
            answers.append(got.split(b" ", 2)[1])
        assert answers == [b"200"] * crowd
        code, _out, err = cap.stop()
    assert code == 0, err
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [line["response"]["status"] for line in lines] == [200] * crowd


def test_options_read_from_the_cache_are_never_stale() -> None:
    """Plain option values are kept between reads, but every change empties the cache before
    anyone hears of it: a subscriber reading the option sees the new value, a rollback the
    old one; a list comes as a copy, as mitmproxy gives it."""
    from mitmproxy import exceptions

    options = lean.CachedOptions()
    assert options.listen_port is None
    seen: list[object] = []

    def subscriber(updated: set[str]) -> None:
        seen.append(options.listen_port)

    options.changed.connect(subscriber)
    options.update(listen_port=8081)
    assert options.listen_port == 8081 and seen == [8081]
    options.update(listen_port=8082)
    assert options.listen_port == 8082 and seen == [8081, 8082]
    with options.rollback({"listen_port"}):
        options.update(listen_port=8083)
        raise exceptions.OptionsError("rolled back")
    assert options.listen_port == 8082
    modes = options.mode
    modes.append("socks5")
    assert options.mode == ["regular"]


def test_the_lean_core_is_only_installed_on_the_mitmproxy_it_mirrors(monkeypatch) -> None:
    """On another mitmproxy release, mitmproxy's own connection handler runs."""
    from mitmproxy.proxy import mode_servers

    before = mode_servers.ProxyConnectionHandler
    monkeypatch.setattr(lean, "VERSION", "13.0.0")
    assert lean.install() is False
    assert mode_servers.ProxyConnectionHandler is before
    monkeypatch.setattr(lean, "VERSION", lean.SUPPORTED[0] + "9")
    monkeypatch.setattr(mode_servers, "ProxyConnectionHandler", before)
    assert lean.install() is True
    assert mode_servers.ProxyConnectionHandler is lean.InlineHooks


def test_header_lookups_answer_as_mitmproxy_s_own() -> None:
    """Once installed, ``Headers.get``, ``in`` and ``[]`` are capture's direct lookups, and
    they answer exactly as mitmproxy's (the ``Mapping`` ones over ``get_all``) for names in
    any case, str or bytes, missing, repeated (folded with ", ") or not ASCII."""
    from collections.abc import Mapping

    from mitmproxy import http

    lean.install()
    assert http.Headers.get is lean.headers_get
    assert http.Headers.__contains__ is lean.headers_contains
    assert http.Headers.__getitem__ is lean.headers_getitem
    headers = http.Headers([(b"Content-Length", b"12"), (b"X-Many", b"a"), (b"x-many", b"b"),
                            (b"Empty", b""), ("Na\u00efve".encode(), b"\xff\xfe"),
                            (b"Connection", b"keep-alive")])
    keys = ["content-length", "CONTENT-LENGTH", b"content-length", "x-many", b"X-MANY",
            "empty", "na\u00efve", "NA\u00cfVE", "Na\u00efve".encode(), "missing", b"missing",
            "connection", ""]

    def mitmproxy_getitem(key):
        values = http.Headers.get_all(headers, key)
        if not values:
            raise KeyError(key)
        return http.Headers._reduce_values(values)

    for key in keys:
        try:
            expected: object = mitmproxy_getitem(key)
        except KeyError:
            expected = KeyError
        try:
            got: object = headers[key]
        except KeyError:
            got = KeyError
        assert got == expected, key
        assert headers.get(key) == (None if expected is KeyError else expected), key
        assert headers.get(key, "dflt") == ("dflt" if expected is KeyError else expected), key
        assert (key in headers) is (expected is not KeyError), key
        assert Mapping.get(headers, key, "dflt") == headers.get(key, "dflt"), key
    with pytest.raises(AttributeError):  # neither str nor bytes: mitmproxy's own lookup, as was
        None in headers  # noqa: B015
