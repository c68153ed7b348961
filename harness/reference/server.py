"""Running the reference (or any ASGI app of the harness) on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator

import uvicorn

from harness.contract.model import Contract, school_mobile
from harness.errors import UsageError
from harness.traffic import send
from harness.traffic.send import SendOptions

#: Seconds a connection may take to send a request's headers (from connecting, or from the end
#: of the previous response); then it is closed. uvicorn has no such limit: 600 half-sent
#: requests stayed open. http.sys allows 120 s; a SOAP client sends its headers at once.
HEADER_TIMEOUT = 10.0
#: Seconds a request may take to send its body once its headers are in (http.sys's EntityBody
#: timeout, ASP.NET's default, is 120 s); then the connection is closed.
BODY_TIMEOUT = 120.0
#: ASP.NET's limits (http.sys MaxFieldLength, MaxRequestBytes): one header field at most
#: 16 KiB, the request line and headers together at most 64 KiB; beyond, 431 and close.
MAX_FIELD_BYTES = 16 * 1024
MAX_HEAD_BYTES = 64 * 1024
#: Seconds a stop (Ctrl-C, SIGTERM) waits for the answers in flight; then their connections
#: are dropped (a client that does not read its answer holds none). A request still coming
#: in (headers or body) is not waited for at all, nor an answer that waits on purpose (a
#: mock's delay or trickle): a CI runner that cancels with SIGTERM gives a few seconds.
GRACEFUL_SECONDS = 0.5
#: uvicorn's own bound on the stop, past GRACEFUL_SECONDS: the app's tasks still running then
#: (none once their connections are gone) are cancelled.
SHUTDOWN_SECONDS = GRACEFUL_SECONDS + 0.5
#: Connections asyncio accepts in one go (the listen backlog): each burst opens this many file
#: descriptors before any connection_made can make room.
BACKLOG = 128
#: File descriptors kept free of connections: the app's own (files, the listening socket...)
#: and one accept burst.
FD_RESERVE = 64 + BACKLOG


def max_connections() -> int:
    """Connections served at once: the process's file descriptor limit less FD_RESERVE. At
    the limit the connection that has waited longest for its headers or body is closed to
    make room, so slow clients cannot lock normal ones out (accept() failing with EMFILE)."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65_536
    return max(16, min(soft, 65_536) - FD_RESERVE)


def _config(app, host: str, port: int, header_timeout: float = HEADER_TIMEOUT,
            body_timeout: float = BODY_TIMEOUT, **tls: str | None) -> uvicorn.Config:
    # ws="none": a SOAP service speaks no WebSocket. An Upgrade: websocket request is answered
    # as the plain request it also is, as ASMX does (checked with curl on the real ASMX); with
    # uvicorn's WebSocket protocol it reached the app as a WebSocket (500 and a traceback), and
    # loading that protocol cost every start ~13 ms.
    return uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                          lifespan="off", server_header=False, date_header=False, ws="none",
                          http=_bounded(header_timeout, body_timeout), backlog=BACKLOG,
                          timeout_graceful_shutdown=SHUTDOWN_SECONDS, **tls)


_REFUSED_431 = (b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n%s")


class _Refused(Exception):
    """Stops the parser after a 431 was sent."""


def _bounded(header_seconds: float, body_seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) bounded as a production server is: the request's
    headers within ``header_seconds`` of connecting (or of the previous response), its body
    within ``body_seconds`` of its headers, a header field within MAX_FIELD_BYTES and the whole
    head within MAX_HEAD_BYTES (431 beyond), and at most ``max_connections()`` connections,
    the one waiting longest for its request closed to let a new one in."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from harness.reference.app import TRANSPORT, WAITING

    if not hasattr(AutoHTTPProtocol, "on_headers_complete"):  # h11: no per-header hook
        return AutoHTTPProtocol
    limit = max_connections()
    #: The connections waiting for their client's headers or body, longest-waiting first.
    waiting: dict[asyncio.Protocol, None] = {}

    class Bounded(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _deadline: asyncio.TimerHandle | None = None
        _head_bytes = 0
        _tail = b""
        _in_head = True
        _field_too_large = False
        _refused = False

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limit:
                self._evict_one()
            self._arm(header_seconds)

        def _evict_one(self) -> None:
            oldest = next(iter(waiting), None)
            if oldest is not None and oldest is not self:
                oldest._expire()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._in_head and self._head_too_long(data):
                self._refuse(f"request headers over {MAX_HEAD_BYTES} bytes")
                return
            super().data_received(data)

        def _head_too_long(self, data: bytes) -> bool:
            room = MAX_HEAD_BYTES - self._head_bytes
            self._head_bytes += len(data)
            if self._head_bytes <= MAX_HEAD_BYTES:
                self._tail = (self._tail + data)[-3:]
                return False
            return b"\r\n\r\n" not in self._tail + data[:max(room, 0) + 4]

        def on_header(self, name: bytes, value: bytes) -> None:
            if len(name) + len(value) > MAX_FIELD_BYTES:
                self._field_too_large = True
                return
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._in_head = False
            if self._field_too_large:
                self._refuse(f"a request header field over {MAX_FIELD_BYTES} bytes")
                raise _Refused
            self._arm(body_seconds)
            self.scope[TRANSPORT] = self.transport  # for an answer that drops the connection
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._in_head, self._head_bytes, self._tail = True, 0, b""
            self._field_too_large = False
            self._arm(header_seconds)

        def _unsupported_upgrade_warning(self) -> None:
            """Upgrade: websocket is ignored, as ASMX ignores it (uvicorn warned on every
            such request that no WebSocket library is installed)."""

        def send_400_response(self, msg: str) -> None:
            if not self._refused:  # after a 431, the parser's error says nothing more
                super().send_400_response(msg)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def shutdown(self) -> None:
            """The server stops: a request still coming in (a client half-way through its
            headers or body) or an answer that waits on purpose (a mock's delay) is not
            waited for: its connection is closed, the app sees the client gone; nor is a
            client that stopped reading its answer. Any other answer gets GRACEFUL_SECONDS to
            go out, then its connection is dropped."""
            super().shutdown()
            if self.transport.is_closing():
                return
            if self in waiting or (self.scope is not None and self.scope.get(WAITING)):
                self._expire()
            elif self.flow is not None and self.flow.write_paused:  # its client reads no more
                self.transport.abort()
            else:
                self.loop.call_later(GRACEFUL_SECONDS, self.transport.abort)

        def _refuse(self, why: str) -> None:
            self._refused = True
            self._disarm()
            body = why.encode("ascii")
            if not self.transport.is_closing():
                self.transport.write(_REFUSED_431 % (len(body), body))
                self.transport.close()

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire)
            waiting[self] = None

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            waiting.pop(self, None)

        def _expire(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self.transport.close()

    return Bounded


def serve(contract: Contract | None = None, host: str = "127.0.0.1", port: int = 8000,
          app=None, announce: Callable[[str], None] | None = None) -> None:
    """Serve in the foreground until Ctrl-C or SIGTERM, then return after a graceful shutdown;
    ``announce`` gets the base URL once the port is bound (so a port in use is one error
    line, and port 0 reports the real port)."""
    from harness.reference.app import create_app

    app = app or create_app(contract or school_mobile())
    try:
        sock = _bind(host, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, bound_port))
    sock.listen(server.config.backlog)  # a client of the URL announced waits, is not refused
    with _stopped_by_signals(server):
        if announce:
            announce(base_url(host, bound_port))
        server.run(sockets=[sock])


@contextlib.contextmanager
def _stopped_by_signals(server: uvicorn.Server) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop ``server`` from the moment its URL is announced. uvicorn
    listens to them only once its loop runs: a Ctrl-C just before was lost (the process
    served on), or ended it mid-start; and after a shutdown it raised the signal again (a
    traceback, or death by SIGTERM before the caller could say anything)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, server.handle_exit)
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def base_url(host: str, port: int, scheme: str = "http") -> str:
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio only sets TCP_NODELAY on sockets whose proto says TCP,
    # and without it every response with a body (headers and body are two writes) waits for
    # the client's delayed ACK, about 40 ms. Accepted sockets inherit the option on Linux.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


class _Stoppable(uvicorn.Server):
    """uvicorn's server as ``running`` runs it in a thread, stopped at once by ``stop``.
    uvicorn looks at ``should_exit`` every 0.1 s and then pauses 0.1 s more for the
    connections it asked to close: a run's end (certify's, every test's server) waited
    0.15-0.2 s for nothing. ``stop`` wakes the main loop; a shutdown with no connection
    and no task left skips the pause (with any, it is uvicorn's own: answers in flight go
    out)."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        #: Set once it listens (``running`` waited in steps of 10 ms).
        self.up = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.up.set()

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        ticks = 0
        while not await self.on_tick(ticks):  # as uvicorn's: a tick every 0.1 s
            ticks = (ticks + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)
            return
        for listening in self.servers:
            listening.close()
        for sock in sockets or []:
            sock.close()
        for listening in self.servers:
            await listening.wait_closed()

    def stop(self) -> None:
        """From another thread: end ``serve`` now."""
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # its loop already closed
                self._loop.call_soon_threadsafe(self._wake.set)


@contextlib.contextmanager
def running(contract: Contract | None = None, app=None, host: str = "127.0.0.1",
            port: int = 0, *, ssl_certfile: str | None = None,
            ssl_keyfile: str | None = None,
            header_timeout: float = HEADER_TIMEOUT,
            body_timeout: float = BODY_TIMEOUT) -> Iterator[str]:
    """Run the reference (or ``app``) in a background thread; yields its base URL.

    With ``ssl_certfile`` and ``ssl_keyfile`` (PEM) it serves HTTPS and yields an https URL
    (what the capture tests put behind mitmproxy in regular mode)."""
    from harness.reference.app import create_app

    app = app or create_app(contract or school_mobile())
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    server = _Stoppable(_config(app, host, bound_port, header_timeout, body_timeout,
                                ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile))
    # On the loop `harness serve` runs (uvloop where there is one): each call cost the run
    # ~0.1 ms less CPU than on asyncio's own loop, and that CPU is the caller's (one GIL).
    loop = server.config.get_loop_factory()
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock]),
                                                         loop_factory=loop),
                              name="reference-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.up.wait(0.05):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the embedded server did not start")
    try:
        yield base_url(host, bound_port, "https" if ssl_certfile else "http")
    finally:
        server.stop()
        # The listening socket is closed after uvicorn's own shutdown closed the server: a busy
        # machine can take seconds there, and a socket closed under it is a thread traceback.
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def target_or_reference(target: str | None, contract: Contract,
                        options: SendOptions | None = None) -> Iterator[str]:
    """The target's base URL once it answers, or the embedded reference started for the run
    (what certify and probe test when no --target is given)."""
    if not target:
        with running(contract) as url:
            yield url
        return
    url = send.base_url(target)
    send.check_reachable(url, options=options)
    yield url
