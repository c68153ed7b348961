"""Sending a request (recorded or built) to a live target: THE sending path of every command.

Every command that sends (certify, replay, diff, probe, load...) sends through this module, so a
hostile or broken target is handled once, the same way everywhere:

- ``SendOptions``: what the user chose (``harness.commands.options.add_send_options`` gives the
  flags, ``--config`` the file): ``timeout`` is a TOTAL deadline per request (connect, TLS,
  headers and the whole body; a target trickling one byte a second is cut at ``timeout``),
  ``max_response_mb`` caps the DECODED body while it streams in (gzip/deflate/br undone piece by
  piece, at most ``PIECE`` bytes at a time, so a decompression bomb never expands in one go),
  ``insecure``/``cacert`` for TLS (the system trust store by default), ``headers`` added to
  every request (``-H``), ``max_failures``: transport failures in a row that stop the run, and
  ``auth`` (``harness.traffic.auth``): HTTP authentication (Basic, Digest, NTLM, Negotiate),
  a client certificate, a WS-Security UsernameToken (``harness.traffic.wsse``), all added on
  the wire only, so no report shows them.
- ``Sender(options)``: one run's client. ``Sender.send(request)`` returns the HttpResponse
  (body decoded, Content-Encoding dropped) or raises:

  * ``TargetUnreachable``: no answer (refused, reset, deadline); one line. The caller makes it
    a finding (rule ``TRANSPORT_RULE``, ``judge/sending.py``) and goes
    on, until ``max_failures`` in a row (a connection the target closes without an answer
    does not count: the target is there, it hung up on that request):
  * ``RunStopped`` (exit 2, one line): the run must end now (the streak above, or TLS).
    ``TLSFailure`` is one; so is ``AuthenticationFailed``: an HTTP 401 (naming the schemes the
    target asked for) or a WS-Security fault. Never catch it as a finding.
  * ``ResponseTooLarge``: the answer outgrew the cap; a finding with rule
    ``RESPONSE_SIZE_RULE`` (``size_finding(exc, operation, binding)`` in ``judge/sending.py``);
    memory stays bounded.

- ``retarget`` moves a request to another base URL; ``check_reachable`` fails early with one
  line when a target is down or its TLS is refused; ``client``/``send`` are the bare functions
  under ``Sender`` (kept for callers that hold an httpx.Client).

This module is the transport: it never judges and never imports the judge package, which
builds findings on what it returns or raises (``judge/sending.py``: the sending failures).

Example::

    with Sender(SendOptions(timeout=10, max_response_mb=8)) as sender:
        try:
            response = sender.send(request)
        except ResponseTooLarge as exc:
            report.add(size_finding(exc, op.name, binding.label))  # judge/sending.py
"""

from __future__ import annotations

import contextlib
import functools
import math
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx

from harness.errors import (
    AuthenticationFailed,
    NotSendable,
    ResponseTooLarge,
    RunStopped,
    TargetUnreachable,
    TLSFailure,
    UsageError,
    XMLRejected,
)
from harness.http_messages import headers_problem
from harness.traffic import wsse
from harness.traffic.auth import AuthOptions, Legs, channel_bindings, load_client_certificate
from harness.traffic.auth import refusal as http_refusal
from harness.traffic.defaults import (  # re-exported: part of this module's API
    DEFAULT_MAX_FAILURES,
    DEFAULT_MAX_RESPONSE_MB,
    DEFAULT_TIMEOUT,
)
from harness.traffic.exchange import HttpRequest, HttpResponse, media_type, replace_header

#: Headers that describe one connection, not the message: never forwarded (RFC 9110 7.6.1).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"})
#: Largest piece a decoder hands out at once: a bomb is cut after at most this much more.
PIECE = 256 * 1024


@dataclass(frozen=True)
class SendOptions:
    """How to send: see the module docstring. Build from flags with
    ``harness.commands.options.send_options(args)``."""

    timeout: float = DEFAULT_TIMEOUT
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB
    insecure: bool = False
    cacert: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    max_failures: int = DEFAULT_MAX_FAILURES
    auth: AuthOptions = field(default_factory=AuthOptions)
    #: The config file's named environment these settings are (``--env NAME``), or None:
    #: reports name it.
    environment: str | None = None

    def __post_init__(self) -> None:
        if not (0 < self.timeout <= 86_400 and 0 < self.max_response_mb <= 1 << 20) \
                or self.max_failures < 1:  # finite, too: inf timeouts overflow the OS's timers
            raise UsageError("--timeout must be above 0 and at most a day, --max-response-mb "
                             "above 0 and at most 1 TB")
        if self.cacert is not None and not Path(self.cacert).is_file():
            raise UsageError(f"--cacert {self.cacert}: no such file")

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * 1024 * 1024)

    @property
    def system_trust(self) -> bool:
        """True when TLS is verified against the OS trust store alone (no --cacert, no
        --insecure, no client certificate): what ``verify`` then gives is the same for every
        client, and ``client`` loads it only for a first https connection."""
        return not self.insecure and self.cacert is None and self.auth.cert is None

    def verify(self) -> ssl.SSLContext | bool:
        """The TLS verification httpx and check_reachable use: the OS trust store by default
        (``ssl.create_default_context`` loads it), ``--cacert`` instead, off with --insecure;
        with the client certificate (``--cert``) when there is one."""
        if self.insecure and self.auth.cert is None:
            return False
        try:
            context = _no_verify() if self.insecure else ssl.create_default_context(
                cafile=self.cacert)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"--cacert {self.cacert}: not a PEM certificate file "
                             f"({_reason(exc)})") from None
        load_client_certificate(context, self.auth)
        return context


def base_url(url: str) -> str:
    """``url`` checked as an absolute http(s) base URL, without a trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{url!r} is not an absolute http:// or https:// URL")
    try:
        parts.port  # noqa: B018 (urllib checks the port when it is read)
    except ValueError:
        raise UsageError(f"{url!r} has a bad port (1 to 65535)") from None
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def retarget(request: HttpRequest, base: str) -> HttpRequest:
    """``request`` addressed to ``base`` (e.g. ``https://new.example/School``).

    The recorded path keeps its part from the ``.asmx`` segment on; what came before it (the
    old deployment's prefix) is replaced by the base URL's path. Body bytes and the other headers
    are unchanged, except that hop-by-hop headers are dropped and a Content-Length is kept true.
    """
    target = urlsplit(base_url(base))
    parts = urlsplit(request.url)
    segments = parts.path.split("/")
    at = next((i for i, s in enumerate(segments) if s.lower().endswith(".asmx")), None)
    tail = "/".join(segments[at:]) if at is not None else parts.path.lstrip("/")
    path = f"{target.path}/{tail}"
    url = urlunsplit((target.scheme, target.netloc, path, parts.query, ""))
    headers = tuple((k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP)
    headers = replace_header(headers, "Host", target.netloc)
    if request.header("Content-Length") is not None:
        headers = replace_header(headers, "Content-Length", str(len(request.body)))
    return HttpRequest(request.method, url, headers, request.body, request.http_version)


# ------------------------------------------------------------------------- the client


class _Client(httpx.Client):
    """An httpx client with the authentication state of its connections (``auth``: an httpx
    Auth flow that ``send`` drives leg by leg; see harness.traffic.auth.Legs)."""

    auth_flow: httpx.Auth | None = None
    #: Held for the whole of each request under connection-bound authentication: another
    #: thread's request must not slip between a handshake's legs on the one connection.
    exclusive: threading.Lock | None = None


def client(options: SendOptions | float = DEFAULT_TIMEOUT, connections: int = 16, *,
           timeout: float | None = None) -> httpx.Client:
    """An httpx client that sends only the request's own headers (no User-Agent of its own),
    whose every read, write and connect obeys the deadline ``send`` sets for its request.
    ``options`` may be a bare timeout in seconds (or ``timeout=``), as before SendOptions.
    With connection-bound authentication (NTLM, Negotiate, Digest) it keeps ONE connection,
    which its handshakes and requests share: give each thread a client of its own (``Sender``
    keeps a pool of them)."""
    if not isinstance(options, SendOptions):
        options = SendOptions(timeout=float(timeout if timeout is not None else options))
    if options.auth.per_connection:
        connections = 1
    trust = _SystemTrust(options) if options.system_trust else None
    made = _Client(timeout=options.timeout, follow_redirects=False,
                   verify=trust.stand_in if trust else options.verify(),
                   limits=httpx.Limits(max_connections=connections,
                                       max_keepalive_connections=connections))
    for name in list(made.headers):
        del made.headers[name]
    made._cookies = _Cookies()  # httpx's setter would copy it into a plain Cookies
    made.auth_flow = options.auth.http_auth()
    made.exclusive = threading.Lock() if options.auth.per_connection else None
    # httpx has no public hook for the socket layer: its pools (private) take our backend.
    for transport in [made._transport, *made._mounts.values()]:
        pool = getattr(transport, "_pool", None)
        if pool is not None:  # env proxies included: every pool reads through the deadline
            pool._network_backend = _DeadlineBackend(pool._network_backend, trust)
    return made


class _Cookies(httpx.Cookies):
    """httpx's cookie jar (a cookie the target sets rides on the requests after it, as
    before), which reads an answer only when it sets a cookie: reading every answer through
    http.cookiejar cost each call ~40 us for nothing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers or "set-cookie2" in response.headers:
            super().extract_cookies(response)


class _SystemTrust:
    """The OS trust store's TLS context (``options.verify()``, made only where
    ``options.system_trust``), loaded at a client's first TLS handshake: loading it cost
    every client ~20 ms, for nothing against an http:// target (certify's embedded
    reference). httpx holds ``stand_in``, which no handshake uses:
    ``_DeadlineStream.start_tls`` puts the real one in its place."""

    def __init__(self, options: SendOptions) -> None:
        self.stand_in = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._options = options
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def instead_of(self, context: ssl.SSLContext) -> ssl.SSLContext:
        if context is not self.stand_in:  # another's (an https proxy's own)
            return context
        with self._lock:
            if self._context is None:
                # a context, not False: system_trust is never --insecure
                self._context = cast(ssl.SSLContext, self._options.verify())
                self._context.set_alpn_protocols(["http/1.1"])  # as httpcore sets (no h2)
            return self._context


def send(http: httpx.Client, request: HttpRequest,
         options: SendOptions | None = None) -> HttpResponse:
    """Send ``request`` as it is (plus ``options.headers``), within ``options.timeout`` in
    total; the body comes back decoded and capped. Raises TargetUnreachable, TLSFailure or
    ResponseTooLarge (see the module docstring)."""
    options = options or _client_options(http)
    headers = with_headers(request.headers, options.headers)
    if (problem := unsendable(request.url, headers)) is not None:
        raise NotSendable(f"the request cannot be sent: {problem}")
    if not all(v.isascii() for _, v in headers):  # httpx encodes str values as ASCII only
        headers = [(k, v if v.isascii() else v.encode("utf-8")) for k, v in headers]  # type: ignore[misc]
    body = request.body
    stamped = wsse.stamp(body, options.auth.wsse) if options.auth.wsse is not None else None
    if stamped is not None:  # the UsernameToken on the wire only: reports show the request
        body = stamped
        if request.header("Content-Length") is not None:
            headers = with_headers(headers, (("Content-Length", str(len(body))),))
    auth = getattr(http, "auth_flow", None)
    exclusive = getattr(http, "exclusive", None) or contextlib.nullcontext()
    _deadline.at = time.monotonic() + options.timeout
    try:
        # Without authentication no legs: their request (the URL parsed once more) cost every
        # call ~30 us for nothing.
        legs = Legs(auth, request.method, request.url) if auth is not None else None
        with exclusive:
            response = _legs(http, request, headers, body, legs, options)
    except httpx.InvalidURL as exc:  # not an HTTPError: a URL httpx will not send
        raise NotSendable(f"the request cannot be sent: its URL is refused ({exc})") from None
    except httpx.TimeoutException:
        raise TargetUnreachable(f"{_origin(request.url)} did not answer {request.method} "
                                f"{urlsplit(request.url).path} within {options.timeout:g} s"
                                ) from None
    except httpx.HTTPError as exc:
        if (cause := _tls_cause(exc)) is not None:
            raise TLSFailure(f"{_origin(request.url)}: TLS failed: {cause} "
                             f"({_tls_hint(cause, options)})") from None
        raise TargetUnreachable(f"{_origin(request.url)}: {_reason(exc)}",
                                hung_up=isinstance(exc, httpx.RemoteProtocolError)) from None
    finally:
        _deadline.at = math.inf
    why = http_refusal(_origin(request.url), response.status,
                       [v for k, v in response.headers if k.lower() == "www-authenticate"],
                       options.auth)
    if why is None and stamped is not None:
        why = wsse.refusal(_origin(request.url), response.status, response.body,
                           options.auth.wsse)
    if why is not None:
        raise AuthenticationFailed(why)
    return response


#: The longest URL httpx sends (a longer one is httpx.InvalidURL).
MAX_URL = 65_536


def unsendable(url: str, headers: Iterable[tuple[str, str]]) -> str | None:
    """Why HTTP/1.1 cannot carry a request with this URL and these headers, or None (every
    sending command checks before it sends: NotSendable then)."""
    if len(url) > MAX_URL:
        return f"its URL is {len(url):,} characters long (at most {MAX_URL:,} are sent)"
    return headers_problem(headers)


def _legs(http: httpx.Client, request: HttpRequest, headers: list[tuple[str, str]],
          body: bytes, legs: Legs | None, options: SendOptions) -> HttpResponse:
    """The answer to ``request``, each challenge of the authentication answered on the way
    (``legs``; None without authentication): its body read within the cap, the next leg goes
    over the same connection."""
    auth = getattr(http, "auth_flow", None)
    while True:
        with http.stream(request.method, _httpx_url(request.url), content=body or None,
                         headers=with_headers(headers, legs.headers()) if legs else headers
                         ) as reply:
            if auth is not None and reply.status_code == 401:
                _bind_channel(auth, reply)
            if legs is not None and legs.answered(reply.status_code,
                                                  reply.headers.multi_items()):
                _read_body(reply, options.max_response_bytes, request)
                continue
            return _response(reply, options, request)


#: The longest URL parsed once for all its calls (``_httpx_url``).
MAX_CACHED_URL = 2048


@functools.lru_cache(maxsize=256)
def _parsed_url(url: str) -> httpx.URL:
    return httpx.URL(url)


def _httpx_url(url: str) -> httpx.URL | str:
    """``url`` parsed once for all the calls to it: a run sends a few URLs many times, and
    httpx parsed each again (~40 us a call). A long one is left to httpx (the cache stays
    small)."""
    return _parsed_url(url) if len(url) <= MAX_CACHED_URL else url


def with_headers(headers: Iterable[tuple[str, str]], extra: Iterable[tuple[str, str]]
                 ) -> list[tuple[str, str]]:
    """``headers`` with each of ``extra`` in place of any of the same name (any case)."""
    merged = list(headers)
    for name, value in extra:
        merged = [(k, v) for k, v in merged if k.lower() != name.lower()] + [(name, value)]
    return merged


def _response(reply: httpx.Response, options: SendOptions, request: HttpRequest
              ) -> HttpResponse:
    body, decoded = _read_body(reply, options.max_response_bytes, request)
    headers_out = tuple((k, v) for k, v in reply.headers.multi_items())
    if decoded:  # the body is decoded: Content-Encoding would lie about it
        headers_out = tuple((k, v) for k, v in headers_out
                            if k.lower() not in ("content-encoding", "content-length"))
    return HttpResponse(reply.status_code, headers_out, body, reply.reason_phrase,
                        reply.http_version)


def _bind_channel(auth: httpx.Auth, reply: httpx.Response) -> None:
    """NTLM/Negotiate over TLS: the channel binding of the server's certificate (IIS's
    Extended Protection), taken from the connection the handshake is about to run on."""
    if not hasattr(auth, "channel_bindings") or auth.channel_bindings is not None:
        return
    stream = reply.extensions.get("network_stream")
    tls = stream.get_extra_info("ssl_object") if stream is not None else None
    if tls is not None:
        auth.channel_bindings = channel_bindings(tls.getpeercert(binary_form=True))


class Sender:
    """One run's sending: a client, the options and the streak of transport failures.

    Thread-safe. After ``options.max_failures`` TargetUnreachable in a row (no answer in
    between) ``send`` raises RunStopped, and keeps raising it at once for every later call."""

    def __init__(self, options: SendOptions | None = None, connections: int = 16) -> None:
        self.options = options or SendOptions()
        self._clients = _Clients(self.options, connections)
        self._lock = threading.Lock()
        self._streak = 0
        self.stopped: RunStopped | None = None

    def send(self, request: HttpRequest) -> HttpResponse:
        if self.stopped is not None:
            raise self.stopped
        try:
            with self._clients.one() as http:
                response = send(http, request, self.options)
        except TargetUnreachable as exc:
            self._failed(exc)
            raise
        except ResponseTooLarge:
            self._answered()
            raise
        except TLSFailure as exc:
            self.stopped = exc
            raise
        self._answered()
        return response

    def _failed(self, exc: TargetUnreachable) -> None:
        if exc.hung_up:  # it closed the connection at once: there, and not silent (a request
            return       # it cannot take, e.g. a POST without charset on PySimpleSOAP)
        if isinstance(exc, NotSendable):  # never sent: says nothing of the target
            return
        with self._lock:
            self._streak += 1
            if self._streak >= self.options.max_failures and self.stopped is None:
                self.stopped = RunStopped(f"stopped after {self._streak} requests in a row got "
                                          f"no answer (last: {exc})")
            stopped = self.stopped
        if stopped is not None:
            raise stopped from None

    def _answered(self) -> None:
        with self._lock:
            self._streak = 0

    def close(self) -> None:
        self._clients.close()

    def __enter__(self) -> Sender:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Clients:
    """The clients a Sender sends through: one shared client with ``connections``
    connections; with connection-bound authentication (NTLM, Negotiate, Digest) up to
    ``connections`` one-connection clients, each lent to one request at a time, so that a
    handshake and the requests after it share their connection (a pool would hand the next leg
    to another one)."""

    def __init__(self, options: SendOptions, connections: int) -> None:
        self.options, self.most = options, max(1, connections)
        self.idle: list[httpx.Client] = []
        self.made: list[httpx.Client] = []
        self.shared = None if options.auth.per_connection else client(options, connections)
        self._free = threading.Condition()

    @contextlib.contextmanager
    def one(self) -> Iterator[httpx.Client]:
        if self.shared is not None:
            yield self.shared
            return
        with self._free:
            while not self.idle and len(self.made) >= self.most:
                self._free.wait()
            if self.idle:
                http = self.idle.pop()
            else:
                http = client(self.options, 1)
                self.made.append(http)
        try:
            yield http
        finally:
            with self._free:
                self.idle.append(http)
                self._free.notify()

    def close(self) -> None:
        for http in [*self.made, *([self.shared] if self.shared is not None else [])]:
            http.close()


def check_reachable(url: str, timeout: float = 5.0, options: SendOptions | None = None) -> None:
    """Raise TargetUnreachable (one line) unless a TCP connection to ``url``'s host opens, and
    TLSFailure unless an https target's certificate passes ``options``' verification."""
    parts = urlsplit(base_url(url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            if parts.scheme == "https":
                verify = (options or SendOptions()).verify()
                context = verify if isinstance(verify, ssl.SSLContext) else _no_verify()
                with context.wrap_socket(sock, server_hostname=host):
                    pass
    except ssl.SSLError as exc:
        raise TLSFailure(f"{url}: TLS failed: {_reason(exc)} "
                         f"({_tls_hint(_reason(exc), options or SendOptions())})") from None
    except OSError as exc:
        raise TargetUnreachable(f"{url} is unreachable: {_reason(exc)}") from None


def target_namespace(base: str, options: SendOptions | None = None,
                     endpoint: str | None = None) -> tuple[str | None, str]:
    """The ``targetNamespace`` of the ?WSDL of the target's ``endpoint`` (default: School
    Mobile's first), or None and why not. TLSFailure/RunStopped propagate: they would stop the
    run anyway."""
    if endpoint is None:
        from harness.contract.model import school_mobile

        endpoint = school_mobile().operations[0].endpoint
    url = f"{base_url(base)}{endpoint}?WSDL"
    options = replace(options or SendOptions(), max_response_mb=4, max_failures=2)
    request = HttpRequest("GET", url, (("Host", urlsplit(url).netloc),))
    with Sender(options, connections=1) as sender:
        try:
            response = sender.send(request)
        except RunStopped as exc:
            if isinstance(exc, TLSFailure):
                raise
            return None, f"{endpoint}?WSDL: {exc}"
        except (TargetUnreachable, ResponseTooLarge) as exc:
            return None, f"{endpoint}?WSDL: {exc}"
    return namespace_in(response, endpoint)


def namespace_in(response: HttpResponse | None, endpoint: str) -> tuple[str | None, str]:
    """The ``targetNamespace`` of ``response``, the answer to ``endpoint``'s ?WSDL, or None and
    why not."""
    from harness.contract.xmlsafe import parse_xml

    if response is None:
        return None, f"{endpoint}?WSDL got no answer"
    if response.status != 200:
        return None, f"{endpoint}?WSDL answered HTTP {response.status}"
    try:
        found = parse_xml(response.body).get("targetNamespace")
    except XMLRejected as exc:
        return None, f"{endpoint}?WSDL is not a WSDL document ({exc})"
    return (found, "") if found else (None, f"{endpoint}?WSDL has no targetNamespace")


def looks_wrong(response: HttpResponse) -> bool:
    """A sign that the target is not this service at all: 404, or an HTML page."""
    return response.status == 404 or media_type(response.header("Content-Type")) == "text/html"


def wrong_target_line(target: str, strange: int, answered: int) -> str | None:
    """One line when most answers were 404/HTML (said besides the findings)."""
    if not answered or strange * 2 <= answered:
        return None
    return (f"{strange} of {answered} calls got 404/HTML answers: is {target} this service "
            "(the base URL of the folder holding its .asmx endpoints)?")


# --------------------------------------------------------------------- the total deadline


class _Deadline(threading.local):
    at: float = math.inf

    def left(self, timeout: float | None) -> float | None:
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("total deadline passed")
        return remaining if timeout is None else min(timeout, remaining)


#: Each thread's current request deadline (requests of one thread run one after another).
_deadline = _Deadline()


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every read/write waits at most until the request's deadline;
    its TLS handshakes take ``trust``'s context in place of its stand-in."""

    def __init__(self, inner: httpcore.NetworkStream, trust: _SystemTrust | None = None
                 ) -> None:
        self.inner = inner
        self.trust = trust

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _deadline.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        if self.trust is not None:
            ssl_context = self.trust.instead_of(ssl_context)
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname,
                                                    _deadline.left(timeout)), self.trust)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend, trust: _SystemTrust | None = None
                 ) -> None:
        self.inner = inner
        self.trust = trust

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_tcp(host, port, _deadline.left(timeout),
                                                      local_address, socket_options),
                               self.trust)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_unix_socket(path, _deadline.left(timeout),
                                                              socket_options), self.trust)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


# ------------------------------------------------------------------ the capped, decoded body


def _read_body(reply: httpx.Response, limit: int, request: HttpRequest) -> tuple[bytes, bool]:
    """The body decoded piece by piece, ResponseTooLarge as soon as it passes ``limit``."""
    encoding = reply.headers.get("content-encoding", "")
    pieces, decoded = decoded_pieces(encoding, reply.iter_raw(PIECE))
    try:
        return _capped(pieces, limit, request), decoded
    except DECODING_ERRORS as exc:
        raise httpx.DecodingError(f"body is not valid {encoding} ({exc})") from None


def _capped(pieces: Iterator[bytes], limit: int, request: HttpRequest) -> bytes:
    """The pieces joined; ResponseTooLarge as soon as they pass ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    for piece in pieces:
        size += len(piece)
        if size > limit:
            parts.clear()  # the traceback keeps this frame: it must not keep the body
            raise ResponseTooLarge(request.method, request.url, limit)
        parts.append(piece)
    return b"".join(parts)


def as_received(response: HttpResponse, request: HttpRequest, limit: int) -> HttpResponse:
    """A response received elsewhere (through a proxy: ``harness shadow``'s primary) as
    ``send`` would have returned it: its body decoded as its Content-Encoding says, and then
    Content-Encoding and Content-Length dropped, so that it compares with answers ``send``
    got. ResponseTooLarge past ``limit`` decoded bytes; a body that is not what its coding
    says is left as it is."""
    encoding = response.header("Content-Encoding")
    if not encoding:
        return response
    pieces, decoded = decoded_pieces(encoding, iter((response.body,)))
    if not decoded:
        return response
    try:
        body = _capped(pieces, limit, request)
    except DECODING_ERRORS:
        return response
    headers = tuple((k, v) for k, v in response.headers
                    if k.lower() not in ("content-encoding", "content-length"))
    return HttpResponse(response.status, headers, body, response.reason,
                        response.http_version)


def decoded_pieces(content_encoding: str | None, pieces: Iterator[bytes]
                   ) -> tuple[Iterator[bytes], bool]:
    """The body ``pieces`` decoded as ``content_encoding`` says (gzip, deflate, br, in the
    order applied), at most PIECE bytes per piece out, and whether they are decoded (False:
    a coding the harness does not undo, the pieces pass as they are). Iterating raises one of
    DECODING_ERRORS on a body that is not what its coding says."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    decoders = [_decoder(c) for c in reversed(codings)]
    decoded = bool(decoders) and all(d is not None for d in decoders)
    if decoded:
        for decoder in decoders:
            pieces = _through(decoder, pieces)  # type: ignore[arg-type]
    return pieces, decoded


def _through(decoder: _Decoder, pieces: Iterator[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        yield from decoder.feed(piece)
    yield from decoder.flush()


class _Decoder:
    def feed(self, data: bytes) -> Iterator[bytes]:
        raise NotImplementedError

    def flush(self) -> Iterator[bytes]:
        return iter(())


class _Zlib(_Decoder):
    """gzip (members one after another) or deflate (zlib-wrapped, or raw as some servers send),
    never more than PIECE bytes out per step."""

    def __init__(self, wbits: int) -> None:
        self.wbits = wbits
        self.inner = zlib.decompressobj(wbits)
        self.started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self.inner.decompress(data, PIECE)
            except zlib.error:
                if self.started or self.wbits != zlib.MAX_WBITS:
                    raise
                self.wbits, self.inner = -zlib.MAX_WBITS, zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self.started = True
            data = self.inner.unconsumed_tail
            if self.inner.eof:
                data = self.inner.unused_data + data
                self.inner = zlib.decompressobj(self.wbits)
            if out:
                yield out


class _Brotli(_Decoder):
    def __init__(self) -> None:
        import brotli

        self.inner = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        out = self.inner.process(data, output_buffer_limit=PIECE)
        while True:
            if out:
                yield out
            if self.inner.can_accept_more_data():
                return
            out = self.inner.process(b"", output_buffer_limit=PIECE)


def _decoder(coding: str) -> _Decoder | None:
    """A bounded decoder for ``coding``; None for one the harness does not decode (the body
    is then kept as sent, Content-Encoding included)."""
    if coding in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if coding == "deflate":
        return _Zlib(zlib.MAX_WBITS)
    if coding == "br":
        try:
            return _Brotli()
        except ImportError:
            return None
    return None


def _brotli_error() -> type[Exception]:
    try:
        import brotli
    except ImportError:
        return zlib.error
    return brotli.error


#: What iterating ``decoded_pieces`` raises on a body its coding does not describe.
DECODING_ERRORS: tuple[type[Exception], ...] = (zlib.error, _brotli_error())


# --------------------------------------------------------------------------------- helpers


def _client_options(http: httpx.Client) -> SendOptions:
    """Options matching a bare client's own timeout (callers of the old ``send(http, r)``)."""
    timeout = http.timeout.read or DEFAULT_TIMEOUT
    return SendOptions(timeout=timeout)


def _tls_cause(exc: BaseException) -> str | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return _reason(seen)
        seen = seen.__cause__ or seen.__context__
    return None


def _tls_hint(reason: str, options: SendOptions) -> str:
    """What to do about a TLS failure: an alert the server sent is about the client's
    certificate (missing, or refused); anything else about the server's."""
    low = reason.lower()
    if "alert" in low and any(word in low for word in (
            "certificate required", "unknown ca", "bad certificate", "certificate unknown",
            "handshake failure", "access denied", "certificate expired", "decrypt error")):
        if options.auth.cert is None:
            return "the server asks for a client certificate: give --cert FILE [--key FILE]"
        return f"the server refused the client certificate --cert {options.auth.cert}"
    return "use --cacert FILE for a private CA, or --insecure"


def _no_verify() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc) \
        or type(exc).__name__
    return " ".join(str(text).split())
