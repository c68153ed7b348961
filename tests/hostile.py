"""Hostile HTTP targets on loopback, each a plain-socket server in a thread (no framework that
would tidy up what they do wrong). Used by tests/test_hostile_targets.py and
bench/bench_oversize.py:

    from hostile import serve
    with serve("gzip-bomb") as url: ...          # http://127.0.0.1:PORT

Kinds: ``silent`` (accepts, never answers), ``trickle`` (headers, then one body byte a
second), ``huge`` (Content-Length 2 GB, streamed from one reused block), ``endless`` (chunked,
never ends), ``gzip-bomb`` (Content-Encoding gzip: ~10 GB decoded from a few MB; each chunk is
one gzip member of zeros), ``html`` (a plain web server: 404 text/html to everything, with a
Set-Cookie credential: not the service), ``broken`` (a plain-text 500 to everything, the same
cookie: judged as a failing service),
``tls`` (``serve("tls", cert=...)``: HTTPS with a self-signed certificate, answers as ``broken``),
``large`` (a body of 8 MiB, sent as ``huge`` is), ``hangup`` (headers announcing 100,000
bytes, 1,000 of them, then the connection closes), ``odd-status`` (status 999 to everything).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import gzip
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

BLOCK = b"x" * (1 << 20)
KINDS = ("silent", "trickle", "huge", "large", "endless", "gzip-bomb", "html", "broken", "tls",
         "hangup", "odd-status")
#: Heads of the requests the servers read (this process), to check what was sent.
SEEN: list[bytes] = []
#: The cookie the ``html`` and ``broken`` servers set: a credential that must never reach a report.
COOKIE_SECRET = "session=s3cr3t-cookie-value"


@functools.cache
def _bomb_member() -> bytes:
    """One gzip member: 64 MiB of zeros, ~64 KB compressed. Every chunk of the bomb."""
    return gzip.compress(b"\0" * (64 << 20), compresslevel=9)


def _read_request(conn: socket.socket) -> bool:
    """Reads the request head and a Content-Length body; False when the client went away."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            return False
        data += got
    head, _, rest = data.partition(b"\r\n\r\n")
    SEEN.append(head)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        got = conn.recv(65536)
        if not got:
            return False
        rest += got
    return True


def _silent(conn: socket.socket, stop: threading.Event) -> None:
    _read_request(conn)
    stop.wait()


def _trickle(conn: socket.socket, stop: threading.Event) -> None:
    _read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 100000\r\n\r\n")
    while not stop.wait(1.0):
        conn.sendall(b"<")


def _huge(conn: socket.socket, stop: threading.Event, total: int = 2 << 30) -> None:
    while _read_request(conn):
        size = total
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\n"
                     b"Content-Length: %d\r\n\r\n" % size)
        while size > 0 and not stop.is_set():
            conn.sendall(BLOCK[:size])
            size -= len(BLOCK)


def _endless(conn: socket.socket, stop: threading.Event) -> None:
    _read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked"
                 b"\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (len(BLOCK), BLOCK)
    while not stop.is_set():
        conn.sendall(chunk)


def _gzip_bomb(conn: socket.socket, stop: threading.Event) -> None:
    while _read_request(conn):
        members, member = 160, _bomb_member()  # 160 x 64 MiB = 10 GiB decoded
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Encoding: gzip\r\n"
                     b"Content-Length: %d\r\n\r\n" % (members * len(member)))
        for _ in range(members):
            if stop.is_set():
                return
            conn.sendall(member)


def _html(conn: socket.socket, stop: threading.Event) -> None:
    page = b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>"
    while _read_request(conn):
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nSet-Cookie: %s\r\n"
                     b"Content-Length: %d\r\n\r\n%s"
                     % (COOKIE_SECRET.encode(), len(page), page))


def _broken(conn: socket.socket, stop: threading.Event) -> None:
    """A server of something that fails every call with a plain-text 500 (not 404, not HTML:
    judged as the service), setting the same cookie."""
    text = b"Server Error"
    while _read_request(conn):
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                     b"Set-Cookie: %s\r\nContent-Length: %d\r\n\r\n%s"
                     % (COOKIE_SECRET.encode(), len(text), text))


def _odd_status(conn: socket.socket, stop: threading.Event) -> None:
    """Status 999 to everything: three digits, as HTTP/1.1's grammar allows, outside the
    100-599 a server may send."""
    while _read_request(conn):
        conn.sendall(b"HTTP/1.1 999 Odd\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                     b"\r\nodd")


def _large(conn: socket.socket, stop: threading.Event) -> None:
    _huge(conn, stop, 8 << 20)


def _hangup(conn: socket.socket, stop: threading.Event) -> None:
    _read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\n"
                 b"Content-Length: 100000\r\n\r\n" + b"<" * 1000)


HANDLERS: dict[str, Callable[[socket.socket, threading.Event], None]] = {
    "silent": _silent, "trickle": _trickle, "huge": _huge, "endless": _endless,
    "gzip-bomb": _gzip_bomb, "html": _html, "broken": _broken, "tls": _broken, "hangup": _hangup,
    "large": _large, "odd-status": _odd_status}


@contextlib.contextmanager
def serve(kind: str, cert: tuple[Path, Path] | None = None) -> Iterator[str]:
    """The hostile target ``kind`` on a free loopback port; its base URL."""
    handler = HANDLERS[kind]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    context = None
    if cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*cert)
    stop = threading.Event()

    def one(conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ssl.SSLError), conn:
            if context is not None:
                conn.settimeout(10)
                conn = context.wrap_socket(conn, server_side=True)
                conn.settimeout(None)
            handler(conn, stop)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.setblocking(True)
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    if kind == "gzip-bomb":
        _bomb_member()  # made before the first request, not within its deadline
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    scheme = "https" if cert else "http"
    try:
        yield f"{scheme}://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
        time.sleep(0)


def self_signed(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for ``host`` (cert.pem, key.pem in ``folder``)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(
                ipaddress.ip_address(host))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path
