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


def _config(app, host: str, port: int, header_timeout: float = HEADER_TIMEOUT,
            **tls: str | None) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                          lifespan="off", server_header=False, date_header=False,
                          http=_with_header_deadline(header_timeout), **tls)


def _with_header_deadline(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) closing a connection whose request headers are not
    complete ``seconds`` after it opened or after its previous response."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    if not hasattr(AutoHTTPProtocol, "on_headers_complete"):  # h11: no per-header hook
        return AutoHTTPProtocol

    class HeaderDeadline(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


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


@contextlib.contextmanager
def running(contract: Contract | None = None, app=None, host: str = "127.0.0.1",
            port: int = 0, *, ssl_certfile: str | None = None,
            ssl_keyfile: str | None = None,
            header_timeout: float = HEADER_TIMEOUT) -> Iterator[str]:
    """Run the reference (or ``app``) in a background thread; yields its base URL.

    With ``ssl_certfile`` and ``ssl_keyfile`` (PEM) it serves HTTPS and yields an https URL
    (what the capture tests put behind mitmproxy in regular mode)."""
    from harness.reference.app import create_app

    app = app or create_app(contract or school_mobile())
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, bound_port, header_timeout,
                                    ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                              name="reference-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the embedded server did not start")
        time.sleep(0.01)
    try:
        yield base_url(host, bound_port, "https" if ssl_certfile else "http")
    finally:
        server.should_exit = True
        thread.join(timeout=5)
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
