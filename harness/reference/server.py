"""Running the reference (or any ASGI app of the harness) on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import uvicorn

from harness.contract.model import Contract, school_mobile
from harness.errors import UsageError


def _config(app, host: str, port: int, **tls: str | None) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                          lifespan="off", server_header=False, date_header=False, **tls)


def serve(contract: Contract | None = None, host: str = "127.0.0.1", port: int = 8000,
          app=None, announce: Callable[[str], None] | None = None) -> None:
    """Serve in the foreground until interrupted; ``announce`` gets the base URL once the
    port is bound (so a port in use is one error line, and port 0 reports the real port)."""
    from harness.reference.app import create_app

    app = app or create_app(contract or school_mobile())
    try:
        sock = _bind(host, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_port = sock.getsockname()[1]
    if announce:
        announce(base_url(host, bound_port))
    uvicorn.Server(_config(app, host, bound_port)).run(sockets=[sock])


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
            ssl_keyfile: str | None = None) -> Iterator[str]:
    """Run the reference (or ``app``) in a background thread; yields its base URL.

    With ``ssl_certfile`` and ``ssl_keyfile`` (PEM) it serves HTTPS and yields an https URL
    (what the capture tests put behind mitmproxy in regular mode)."""
    from harness.reference.app import create_app

    app = app or create_app(contract or school_mobile())
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, bound_port, ssl_certfile=ssl_certfile,
                                    ssl_keyfile=ssl_keyfile))
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
