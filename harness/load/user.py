"""The Locust side of a worker: the user class and the feed of scheduled requests it sends.

Imports Locust (gevent monkey-patching): only the load child process imports this module.

Each request goes out through the FastHttpUser's own geventhttpclient pool, at the socket
level (``HTTPClient.request``) rather than through ``FastHttpSession.request``, which would
add an Accept-Encoding, follow redirects and treat 4xx/5xx as errors: the recorded request is
sent as it is (body bytes unchanged, ``retarget`` moves it to the target), as ``harness
replay`` sends it. The request event is fired here, with the harness's verdict as Locust's
failure, so Locust's stats count a failed finding as a failed request.

Authentication (``harness.traffic.auth``) runs here as in ``harness.traffic.send``: the same
httpx Auth flows driven leg by leg (``Legs``), the same refusals. NTLM, Negotiate and Digest
keep each handshake and the requests after it on one connection: requests then go through
``OwnConnections``, one-connection clients each lent to one request at a time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import gevent
import gevent.event
import gevent.lock
import gevent.pool
from geventhttpclient.client import HTTPClient
from geventhttpclient.url import URL
from locust import FastHttpUser, constant, task
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_STOPPING

from harness.contract.model import Contract
from harness.contract.selection import Selection
from harness.errors import (
    AuthenticationFailed,
    NotSendable,
    ResponseTooLarge,
    TargetUnreachable,
)
from harness.load.schedule import Schedule
from harness.load.slicing import Recordings
from harness.load.verdict import Gathered, sampled
from harness.replay import skipped_description
from harness.traffic import wsse
from harness.traffic.auth import Legs
from harness.traffic.auth import refusal as http_refusal
from harness.traffic.exchange import HttpRequest, HttpResponse
from harness.traffic.send import (
    DECODING_ERRORS,
    SendOptions,
    decoded_pieces,
    retarget,
    unsendable,
    with_headers,
)

#: Bytes read from a socket at once: what each request in flight may hold besides its budget.
LOAD_PIECE = 64 * 1024
#: The answers one load process holds at once: at most this many times --max-response-mb
#: (plus one answer, so that the run never stalls); a request whose answer would pass it waits
#: for room. 300 requests in flight against a target answering 2 GB each hold 64 MB, not 5 GB.
BUDGET_FACTOR = 4


class HarnessFailure(Exception):
    """A failed finding on an answer, as Locust's failures table shows it."""


@dataclass
class Feed:
    """This process's slice, its schedule and what was found; shared by its users."""

    recordings: Recordings
    schedule: Schedule
    contract: Contract
    target: str
    check_ratio: float = 1.0
    ignore: tuple[str, ...] = ()
    options: SendOptions = field(default_factory=SendOptions)
    selection: Selection | None = None
    concurrency: int = 100  # requests in flight per process (open models)
    on_done: Callable[[], None] = lambda: None
    #: Each recording's pseudonym key by its path (redacted values compared by pseudonym).
    keys: dict[str, bytes | None] = field(default_factory=dict)
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
        """The selected slots, in the order they are due."""
        chosen = [slot for slot in range(len(self.recordings))
                  if not self.selection or self.selection.allows(*self.recordings.label(slot))]
        self.gathered.not_selected = len(self.recordings) - len(chosen)
        self._items = self.schedule.slots(self.recordings.positions, chosen)
        self.budget = BodyBudget(BUDGET_FACTOR * self.options.max_response_bytes)
        #: Connection-bound authentication: clients of one connection each; else one Auth
        #: (Basic: the same header on every request) for the users' shared clients.
        self.own = (OwnConnections(self.target, self.options, self.concurrency)
                    if self.options.auth.per_connection else None)
        self.auth = None if self.own else self.options.auth.http_auth()

    def start(self, wall_t0: float) -> None:
        """Start the schedule at ``wall_t0`` (time.time(), sent by the master)."""
        self.t0 = time.monotonic() + (wall_t0 - time.time())
        self._cpu0 = time.process_time()
        self.go.set()

    def stop(self) -> None:
        """Send nothing more (a signal, a lost master): what is in flight ends."""
        self._items = iter(())

    def serve(self, user: FastHttpUser) -> None:
        """A user's whole life: send until the slice is exhausted (or, under a --shape, until
        Locust stops the user: it ends after its answer)."""
        self._users += 1
        self.go.wait()
        http = _http_client(user, self.target)
        try:
            if self.schedule.timing.users:
                while user._state != LOCUST_STATE_STOPPING and \
                        (item := next(self._items, None)) is not None:
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
            # Done once: a user Locust spawns late finds the slice exhausted and ends. Under
            # a --shape, no user left is not the end (a shape may go down to 0 and up again):
            # the shape's end is (``finish``), or the recordings' (every loop sent).
            if self._users == 0 and (not self.shaped or user._state != LOCUST_STATE_STOPPING):
                self.finish()
        raise StopUser

    def finish(self) -> None:
        """This process's slice is done (once): its figures are complete."""
        if not self._done:
            self._done = True
            self.gathered.cpu_s = time.process_time() - self._cpu0
            self.on_done()

    @property
    def shaped(self) -> bool:
        return bool(self.schedule.timing.shape)

    def send(self, user: FastHttpUser, http: Any, item: tuple[float, int, int]) -> None:
        due, _loop, slot = item
        position = self.recordings.positions[slot]
        exchange = self.recordings.exchange(slot)
        kind = skipped_description(self.contract, exchange)
        if kind is not None:  # a service description: counted, not sent
            self.gathered.judge(exchange, kind, self.contract, check=False, ignore=())
            return
        wire = _wire(retarget(exchange.request, self.target), self.options.headers,
                     self.options.auth.wsse)
        now = time.monotonic()
        if not self.schedule.timing.users:
            self.gathered.lag(now - (self.t0 + due))
        self.gathered.sending()
        check = sampled(position, self.check_ratio)
        hold = self.budget.hold()
        try:
            started, perf = time.time(), time.perf_counter()
            # An answer not judged is counted, not kept: its body never takes memory.
            with self._client(http) as (client, auth):
                answer, size = _exchange_over(client, wire, self.options,
                                              hold if check else None, auth)
            self._streak_of(answer)
            elapsed_ms = (time.perf_counter() - perf) * 1000
            found = self.gathered.judge(exchange, answer, self.contract, check=check,
                                        ignore=self.ignore, keys=self.keys)
        except AuthenticationFailed as exc:  # the run's credentials refused: it stops
            if self.error is None:
                self.error = str(exc)
                self.stop()
            return
        finally:
            hold.release()
        failed = [f for f in found if f.verdict.value == "failed"]
        user.environment.events.request.fire(
            request_type=wire.method, name=self.recordings.name(slot),
            response_time=elapsed_ms, response_length=size,
            exception=HarnessFailure(f"[{failed[0].rule}] {failed[0].operation} x "
                                     f"{failed[0].binding}") if failed else None,
            context={}, start_time=started, url=wire.url, response=None)

    @contextlib.contextmanager
    def _client(self, shared: Any) -> Iterator[tuple[Any, Any]]:
        """The client (and its Auth flow) a request goes through: the user's shared one, or
        a one-connection client of its own under connection-bound authentication."""
        if self.own is None:
            yield shared, self.auth
        else:
            with self.own.one() as lent:
                yield lent

    def _streak_of(self, answer: object) -> None:
        """After ``max_failures`` requests in a row without an answer the run stops, as
        replay's Sender does (harness.traffic.send): the target is down, not slow."""
        if isinstance(answer, NotSendable):  # never sent: says nothing of the target
            return
        if not isinstance(answer, TargetUnreachable):
            self._streak = 0
            return
        self._streak += 1
        if self._streak >= self.options.max_failures and self.error is None:
            self.error = (f"stopped after {self._streak} requests in a row got no answer "
                          f"(last: {answer})")
            self.stop()  # nothing more is sent; what is in flight ends


class BodyBudget:
    """The bytes of answer bodies one load process holds at once (``BUDGET_FACTOR`` x the
    per-answer cap). A request takes room for each piece it keeps and waits while there is
    none; so that the run never stalls, the one request still reading while every other
    holder waits may go past the budget (by at most one answer: it ends within the cap)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self.holders = 0  # requests holding room
        self.waiting = 0  # of which wait for more
        self._room = gevent.event.Event()

    def hold(self) -> Hold:
        return Hold(self)

    def _freed(self) -> None:
        room, self._room = self._room, gevent.event.Event()
        room.set()  # every waiter looks again


class Hold:
    """One request's share of a BodyBudget; ``release`` when its answer is judged."""

    __slots__ = ("budget", "held")

    def __init__(self, budget: BodyBudget) -> None:
        self.budget, self.held = budget, 0

    def take(self, size: int) -> None:
        budget = self.budget
        while budget.used + size > budget.total:
            if self.held and budget.waiting + 1 >= budget.holders:
                break  # every other holder waits for room: this one must go on
            budget.waiting += bool(self.held)
            try:
                budget._room.wait()
            finally:
                budget.waiting -= bool(self.held)
        if not self.held:
            budget.holders += 1
        self.held += size
        budget.used += size

    def release(self) -> None:
        if self.held:
            budget = self.budget
            budget.used -= self.held
            budget.holders -= 1
            self.held = 0
            budget._freed()


class OwnConnections:
    """Up to ``most`` geventhttpclient clients of one connection each, with the Auth flow of
    that connection, each lent to one request at a time (NTLM/Negotiate/Digest)."""

    def __init__(self, target: str, options: SendOptions, most: int) -> None:
        self.target, self.options = target, options
        self.idle: list[tuple[Any, Any]] = []
        self.room = gevent.lock.BoundedSemaphore(max(1, most))

    @contextlib.contextmanager
    def one(self) -> Iterator[tuple[Any, Any]]:
        with self.room:
            lent = self.idle.pop() if self.idle else self._made()
            try:
                yield lent
            finally:
                self.idle.append(lent)

    def _made(self) -> tuple[Any, Any]:
        from harness.load.engine import ssl_context_factory

        http = HTTPClient.from_url(
            URL(self.target), concurrency=1, connection_timeout=self.options.timeout,
            network_timeout=self.options.timeout, insecure=self.options.insecure,
            ssl_context_factory=ssl_context_factory(self.options))
        http.default_headers = http.headers_type()
        return http, self.options.auth.http_auth()


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
    stamped: bool = False  # a WS-Security UsernameToken is in the body


def _wire(request: HttpRequest, extra: tuple[tuple[str, str], ...] = (),
          token: wsse.UsernameToken | None = None) -> _Wire:
    """``request`` ready to send, with the -H headers in place of any of the same name, and
    the WS-Security UsernameToken in its SOAP envelope (a fresh one for each request)."""
    headers = with_headers(request.headers, extra)
    body = request.body
    stamped = wsse.stamp(body, token) if token is not None else None
    if stamped is not None:
        body = stamped
        if request.header("Content-Length") is not None:
            headers = with_headers(headers, (("Content-Length", str(len(body))),))
    return _Wire(request.method, request.url, request.target or "/", headers, body,
                 stamped is not None)


def _http_client(user: FastHttpUser, target: str) -> Any:
    """The user's geventhttpclient client for ``target``, sending only the request's own
    headers (no User-Agent of its own, as harness.traffic.send.client)."""
    http = user.client.client.clientpool.get_client(URL(target))
    http.default_headers = http.headers_type()
    return http


def _exchange_over(http: Any, wire: _Wire, options: SendOptions, hold: Hold | None,
                   auth: Any = None
                   ) -> tuple[HttpResponse | TargetUnreachable | ResponseTooLarge, int]:
    """The answer to ``wire`` within ``options.timeout`` seconds in all and at most
    ``options.max_response_bytes`` (decoded), or why there is none; and the size of its body.
    The body is kept under ``hold`` (None: counted and dropped, not judged). ``auth``: the
    client's httpx Auth flow, run leg by leg on its connection; AuthenticationFailed when the
    target refuses it."""
    limit = options.max_response_bytes
    size = 0
    if (problem := unsendable(wire.url, wire.headers)) is not None:
        return NotSendable(f"the request cannot be sent: {problem}"), size
    legs = Legs(auth, wire.method, wire.url)
    try:
        with gevent.Timeout(options.timeout):
            while True:
                reply = http.request(wire.method, wire.uri, body=wire.body,
                                     headers=_headers(with_headers(wire.headers,
                                                                   legs.headers())))
                try:
                    headers = tuple((str(k), str(v)) for k, v in reply.items())
                    if legs.answered(reply.status_code, headers):
                        _read_body(reply, limit, wire, None)  # a challenge: the next leg
                        continue
                    body, size, decoded = _read_body(reply, limit, wire, hold)
                finally:
                    reply.release()  # a body left unread closes the connection
                break
    except gevent.Timeout:
        return TargetUnreachable(f"{_origin(wire.url)} did not answer {wire.method} "
                                 f"{urlsplit(wire.url).path} within {options.timeout:g} s"
                                 ), size
    except ResponseTooLarge as exc:
        return exc.with_traceback(None), size  # the traceback would keep the body's frame
    except AuthenticationFailed:
        raise
    except Exception as exc:  # socket, TLS, HTTP parse, body decoding errors: no answer
        text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return TargetUnreachable(f"{_origin(wire.url)}: {' '.join(str(text).split())}"), size
    why = http_refusal(_origin(wire.url), reply.status_code,
                       [v for k, v in headers if k.lower() == "www-authenticate"], options.auth)
    if why is None and wire.stamped and (hold is not None or reply.status_code >= 400):
        why = wsse.refusal(_origin(wire.url), reply.status_code, body, options.auth.wsse)
    if why is not None:
        raise AuthenticationFailed(why)
    if decoded:  # the body is decoded: Content-Encoding would lie about it
        headers = tuple((k, v) for k, v in headers
                        if k.lower() not in ("content-encoding", "content-length"))
    return HttpResponse(reply.status_code, headers, body, reply.status_message or "",
                        "HTTP/1.1"), size


def _read_body(reply: Any, limit: int, wire: _Wire, hold: Hold | None
               ) -> tuple[bytes, int, bool]:
    """(body, decoded size, decoded?): read and decoded piece by piece, ResponseTooLarge as
    soon as it passes ``limit``; kept only under a ``hold`` (else counted and dropped)."""
    declared = reply.get("content-length")
    coded = reply.get("content-encoding")
    if not coded and declared and declared.strip().isdigit() and int(declared) > limit:
        raise ResponseTooLarge(wire.method, wire.url, limit)  # said before a byte is read
    raw: Iterator[bytes] = iter(lambda: reply.read(LOAD_PIECE), b"")
    pieces, decoded = decoded_pieces(coded, raw)
    parts: list[bytes] = []
    size = 0
    try:
        for piece in pieces:
            size += len(piece)
            if size > limit:
                raise ResponseTooLarge(wire.method, wire.url, limit)
            if hold is not None:
                hold.take(len(piece))
                parts.append(piece)
    except DECODING_ERRORS as exc:
        raise ValueError(f"body is not valid {coded} ({exc})") from None
    finally:
        if size > limit:
            parts.clear()  # nothing of the body stays with the exception
    return b"".join(parts), size, decoded


def _headers(pairs: list[tuple[str, str]]) -> Any:
    from geventhttpclient.header import Headers

    made = Headers()
    for name, value in pairs:
        made.add(name, value)
    return made


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
