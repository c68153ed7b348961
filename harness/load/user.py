"""The Locust side of a worker: the user class and the feed of scheduled requests it sends.

Imports Locust (gevent monkey-patching): only the load child process imports this module.

Each request goes out through the FastHttpUser's own geventhttpclient pool, at the socket
level (``HTTPClient.request``) rather than through ``FastHttpSession.request``, which would
add an Accept-Encoding, follow redirects and treat 4xx/5xx as errors: the recorded request is
sent as it is (body bytes unchanged, ``retarget`` moves it to the target), as ``harness
replay`` sends it. The request event is fired here, with the harness's verdict as Locust's
failure, so Locust's stats count a failed finding as a failed request.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import gevent
import gevent.event
import gevent.pool
from geventhttpclient.url import URL
from locust import FastHttpUser, constant, task
from locust.exception import StopUser

from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.errors import ResponseTooLarge, TargetUnreachable
from harness.load.schedule import Schedule
from harness.load.slicing import Entry
from harness.load.verdict import Gathered, sampled
from harness.replay import skipped_description
from harness.traffic.exchange import HttpRequest, HttpResponse, header_value
from harness.traffic.send import PIECE, SendOptions, retarget


class HarnessFailure(Exception):
    """A failed finding on an answer, as Locust's failures table shows it."""


@dataclass
class Feed:
    """This process's slice, its schedule and what was found; shared by its users."""

    entries: list[Entry]
    schedule: Schedule
    contract: Contract
    target: str
    check_ratio: float = 1.0
    ignore: tuple[str, ...] = ()
    options: SendOptions = field(default_factory=SendOptions)
    selection: Selection | None = None
    concurrency: int = 100  # requests in flight per process (open models)
    on_done: Callable[[], None] = lambda: None
    gathered: Gathered = field(default_factory=Gathered)
    go: gevent.event.Event = field(default_factory=gevent.event.Event)
    t0: float = 0.0  # time.monotonic() of the schedule's start
    _items: Iterator[tuple[float, int, int]] | None = None
    _users: int = 0
    error: str | None = None
    _cpu0: float = 0.0
    _done: bool = False
    _streak: int = 0

    def __post_init__(self) -> None:
        """Each selected exchange's request as it goes out (moved to the target, -H added),
        or the kind of service description it fetched (counted, not sent, as replay does)."""
        self._requests: dict[int, tuple[Entry, _Wire | str]] = {}
        for e in self.entries:
            if self.selection and not self.selection.allows(e.operation, e.binding):
                continue
            kind = skipped_description(self.contract, e.exchange)
            self._requests[e.position] = (e, kind if kind is not None else _wire(
                retarget(e.exchange.request, self.target), self.options.headers))
        self._items = self.schedule.items(list(self._requests))

    def start(self, wall_t0: float) -> None:
        """Start the schedule at ``wall_t0`` (time.time(), sent by the master)."""
        self.t0 = time.monotonic() + (wall_t0 - time.time())
        self._cpu0 = time.process_time()
        self.go.set()

    def serve(self, user: FastHttpUser) -> None:
        """A user's whole life: send until the slice is exhausted."""
        self._users += 1
        self.go.wait()
        http = _http_client(user, self.target)
        try:
            if self.schedule.timing.users:
                while (item := next(self._items, None)) is not None:
                    self.send(user, http, item)
            else:
                pool = gevent.pool.Pool(self.concurrency)
                while (item := next(self._items, None)) is not None:
                    wait = self.t0 + item[0] - time.monotonic()
                    if wait > 0:
                        gevent.sleep(wait)
                    pool.spawn(self.send, user, http, item)  # blocks while the pool is full
                pool.join()
        except Exception as exc:  # said once, as one line, by the engine
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._users -= 1
            # Done once: a user Locust spawns late finds the slice exhausted and ends.
            if self._users == 0 and not self._done:
                self._done = True
                self.gathered.cpu_s = time.process_time() - self._cpu0
                self.on_done()
        raise StopUser

    def send(self, user: FastHttpUser, http: Any, item: tuple[float, int, int]) -> None:
        due, _loop, position = item
        entry, wire = self._requests[position]
        if isinstance(wire, str):  # a service description: counted, not sent
            self.gathered.judge(entry.exchange, wire, self.contract, check=False, ignore=())
            return
        now = time.monotonic()
        if not self.schedule.timing.users:
            self.gathered.lag(now - (self.t0 + due))
        self.gathered.sending()
        started, perf = time.time(), time.perf_counter()
        answer = _exchange_over(http, wire, self.options)
        self._streak_of(answer)
        elapsed_ms = (time.perf_counter() - perf) * 1000
        found = self.gathered.judge(entry.exchange, answer, self.contract,
                                    check=sampled(position, self.check_ratio),
                                    ignore=self.ignore)
        failed = [f for f in found if f.verdict.value == "failed"]
        user.environment.events.request.fire(
            request_type=wire.method, name=entry.name, response_time=elapsed_ms,
            response_length=len(answer.body) if isinstance(answer, HttpResponse) else 0,
            exception=HarnessFailure(f"[{failed[0].rule}] {failed[0].operation} x "
                                     f"{failed[0].binding}") if failed else None,
            context={}, start_time=started, url=wire.url, response=None)


    def _streak_of(self, answer: object) -> None:
        """After ``max_failures`` requests in a row without an answer the run stops, as
        replay's Sender does (harness.traffic.send): the target is down, not slow."""
        if not isinstance(answer, TargetUnreachable):
            self._streak = 0
            return
        self._streak += 1
        if self._streak >= self.options.max_failures and self.error is None:
            self.error = (f"stopped after {self._streak} requests in a row got no answer "
                          f"(last: {answer})")
            self._items = iter(())  # nothing more is sent; what is in flight ends


class ReplayUser(FastHttpUser):
    """Sends this process's slice of the recordings (``feed`` is set before users spawn)."""

    feed: Feed | None = None
    wait_time = constant(0)
    insecure = False  # TLS verified, as every other sending command does

    @task
    def replay(self) -> None:
        if self.feed is None:  # a process the master gave no slice: nothing to send
            raise StopUser
        self.feed.serve(self)


# ------------------------------------------------------------------------------ on the wire


@dataclass(frozen=True)
class _Wire:
    method: str
    url: str
    uri: str  # origin-form request target
    headers: list[tuple[str, str]]
    body: bytes


def _wire(request: HttpRequest, extra: tuple[tuple[str, str], ...] = ()) -> _Wire:
    """``request`` ready to send, with the -H headers in place of any of the same name."""
    headers = list(request.headers)
    for name, value in extra:
        headers = [(k, v) for k, v in headers if k.lower() != name.lower()] + [(name, value)]
    return _Wire(request.method, request.url, request.target or "/", headers, request.body)


def _http_client(user: FastHttpUser, target: str) -> Any:
    """The user's geventhttpclient client for ``target``, sending only the request's own
    headers (no User-Agent of its own, as harness.traffic.send.client)."""
    http = user.client.client.clientpool.get_client(URL(target))
    http.default_headers = http.headers_type()
    return http


def _exchange_over(http: Any, wire: _Wire, options: SendOptions
                   ) -> HttpResponse | TargetUnreachable | ResponseTooLarge:
    """The answer to ``wire`` within ``options.timeout`` seconds in all and at most
    ``options.max_response_bytes`` (decoded), or why there is none."""
    limit = options.max_response_bytes
    try:
        with gevent.Timeout(options.timeout):
            reply = http.request(wire.method, wire.uri, body=wire.body,
                                 headers=_headers(wire.headers))
            try:
                body = _read_capped(reply, limit, wire)
            finally:
                reply.release()  # a body left unread closes the connection
    except gevent.Timeout:
        return TargetUnreachable(f"{_origin(wire.url)} did not answer {wire.method} "
                                 f"{urlsplit(wire.url).path} within {options.timeout:g} s")
    except ResponseTooLarge as exc:
        return exc
    except Exception as exc:  # socket, TLS, HTTP parse errors: no answer
        text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return TargetUnreachable(f"{_origin(wire.url)}: {' '.join(str(text).split())}")
    headers = tuple((str(k), str(v)) for k, v in reply.items())
    try:
        return _decoded(HttpResponse(reply.status_code, headers, body,
                                     reply.status_message or "", "HTTP/1.1"), limit, wire)
    except ResponseTooLarge as exc:
        return exc


def _read_capped(reply: Any, limit: int, wire: _Wire) -> bytes:
    body = bytearray()
    while piece := reply.read(PIECE):
        body += piece
        if len(body) > limit:
            raise ResponseTooLarge(wire.method, wire.url, limit)
    return bytes(body)


def _headers(pairs: list[tuple[str, str]]) -> Any:
    from geventhttpclient.header import Headers

    made = Headers()
    for name, value in pairs:
        made.add(name, value)
    return made


def _decoded(response: HttpResponse, limit: int, wire: _Wire) -> HttpResponse:
    """gzip/deflate bodies decoded (within ``limit``) and Content-Encoding dropped, as
    harness.traffic.send does with httpx (the comparison sees the document)."""
    coding = (header_value(response.headers, "Content-Encoding") or "").strip().lower()
    if coding not in ("gzip", "x-gzip", "deflate"):
        return response
    try:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in coding
                                     else zlib.MAX_WBITS)
        body = inflate.decompress(response.body, limit + 1)
    except zlib.error:
        return response  # judged as it came: the comparison names the difference
    if len(body) > limit:
        raise ResponseTooLarge(wire.method, wire.url, limit)
    headers = tuple((k, v) for k, v in response.headers
                    if k.lower() not in ("content-encoding", "content-length"))
    return HttpResponse(response.status, headers, body, response.reason, response.http_version)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
