"""mitmproxy's proxy core with less work per exchange, the same behaviour.

Capture runs mitmproxy as its engine; these cut what mitmproxy does for every exchange that
capture has no use for (bench/bench_capture.py; docs/benchmarks.md says what each saved):

- ``InlineHooks``: for every hook an exchange passes through (``requestheaders``, ``request``,
  ``responseheaders``, ``response``) mitmproxy's ``ConnectionHandler.server_event`` starts a
  task; the task runs the addons' hooks, then waits for the handler's lock (held by the
  ``server_event`` that started it) to hand ``HookCompleted`` back to the layers. When every
  handler of the hook is a plain function, that task, its lock wait and its second pass through
  the lock are overhead: the hooks ran at once anyway (mitmproxy starts its tasks eagerly).
  Here such a hook runs in line, and its ``HookCompleted`` goes to the layers as soon as the
  event being handled is through, under the same lock. A plain handler may return something
  to wait for (capture's ``response`` returns a ``Release``, settled when the writer has the
  exchange): the hook completes then, from its callback, without a task. A hook with a
  coroutine function among its handlers, or a flow an addon intercepted, takes mitmproxy's
  own path.
- It also joins writes: mitmproxy sends an HTTP/1 message's head and its body to the socket in
  two sends, one after the other; consecutive writes to one connection within one event are
  joined into one send (the same bytes in the same order; a command in between writes what
  came before it first).
- ``CachedOptions``: mitmproxy's layers read a dozen options per exchange, and each read
  deep-copies the value; plain values (numbers, strings, booleans, None) are kept until an
  option changes.
- ``Context.fork`` (once per exchange) built a server connection (with a uuid4) only to throw
  it away.
- mitmproxy type-checks every field of every request and response it creates, under ``if
  __debug__`` (a development check; ``python -O`` drops it): about a tenth of its CPU per
  exchange; the messages are mitmproxy's own, built by its HTTP layer.

- ``space_collections``: Python's cyclic garbage collector looks at the young generation
  every 2,000 allocations, and every tenth time at the middle one; with a thousand connections'
  mitmproxy objects alive, those and the full collections they lead to took ~100 us of CPU per
  exchange (at 1,000 clients: three full collections of 130-360 ms in 30 s). Now that an
  exchange leaves no cycles (``FinishedStreams``), a young pass finds nothing to free, but it
  still walks every young object alive, i.e. the connections' pending reads: 13-36 ms with
  1,000 connections, the event loop stopped. Its count still grows by about 6 per exchange
  (allocations not matched by frees in CPython's count, not objects kept: the number of
  objects stays flat), so at every 20,000 such a pass came every ~7 s at 500 exchanges/s,
  more than 1% of the requests behind one. Every 100,000: one every ~30 s at that rate, and
  the garbage that does wait for it (a closed connection's cycles, about 70 objects each)
  stays at some 10-20 MB at most.

- ``FinishedStreams``: every exchange's ``HttpStream`` is in reference cycles (its state
  functions are its own bound methods; its context's list of layers holds it), so when it is
  done, it, its flow, request, response, headers and buffers (~27 objects) wait for the cyclic
  garbage collector instead of going at once. With 1,000 connections that collector's young
  pass over ~20,000 such objects stopped the event loop for 20-55 ms every 1.7 s at 500
  exchanges/s: the 1,000-client p99. A stream mitmproxy has dropped (its exchange is over)
  has those cycles cut right after the event that finished it, so reference counting frees it
  all, and the collector has almost nothing left to do.

- ``deeper_backlog``: mitmproxy listens with asyncio's default backlog of 100 connections
  waiting to be accepted; when more clients connect at once (1,000 apps at the start of a
  shift), the kernel drops the others' SYNs and they retry after 1 s, 3 s, 7 s: through
  capture, connecting and a first exchange took 1.6 s for half of 1,000 clients starting
  together and up to 8 s (straight to the service: 0.13 s at most). The listening socket's
  backlog is raised to ``BACKLOG`` (the system's ``net.core.somaxconn`` caps it).

- ``headers_get``, ``headers_contains``, ``headers_getitem``: mitmproxy's layers look headers
  up (Content-Length, Transfer-Encoding, Connection, Upgrade...) through ``Mapping.get`` and
  ``in``, i.e. ``__getitem__`` raising KeyError for each missing one, each name and field
  converted by a few helper calls: ~11% of the proxy's own time per exchange (py-spy). The
  same lookups, straight over the fields, with the same results.

``install`` patches mitmproxy's classes only on the mitmproxy versions this was written against
(``SUPPORTED``); ``InlineHooks`` works only under capture's addon manager (``HookCache``, which
has ``inline``); anywhere else mitmproxy's own code runs.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import logging
import os
import socket
from typing import Any

from mitmproxy import flow, http, options
from mitmproxy.proxy import commands, context, events, layer, mode_servers
from mitmproxy.proxy.layers import http as http_layers
from mitmproxy.proxy.mode_servers import ProxyConnectionHandler
from mitmproxy.utils import asyncio_utils, signals
from mitmproxy.version import VERSION

from harness.capture.release import Release

#: The mitmproxy releases whose ``ConnectionHandler.server_event``, ``Context`` and options
#: this mirrors.
SUPPORTED = ("12.",)


def install() -> bool:
    """Make mitmproxy's servers hand their connections to ``InlineHooks``, and its
    ``Context.fork`` and messages lean (on a supported mitmproxy); whether it did."""
    if not VERSION.startswith(SUPPORTED):
        return False
    mode_servers.ProxyConnectionHandler = InlineHooks  # what ServerInstance instantiates
    context.Context.fork = _fork  # type: ignore[method-assign]
    if "__post_init__" in vars(http.MessageData):  # the debug-only type checks
        http.MessageData.__post_init__ = lambda self: None  # type: ignore[method-assign]
    if not getattr(http_layers.HttpLayer.__init__, "finished_streams", False):
        http_layers.HttpLayer.__init__ = _with_finished_streams(http_layers.HttpLayer.__init__)
    if http.Headers.get is not headers_get:
        _ORIGINAL.update(get=http.Headers.get, contains=http.Headers.__contains__,
                         getitem=http.Headers.__getitem__)
        http.Headers.get = headers_get  # type: ignore[method-assign]
        http.Headers.__contains__ = headers_contains  # type: ignore[method-assign]
        http.Headers.__getitem__ = headers_getitem  # type: ignore[method-assign]
    listen = mode_servers.AsyncioServerInstance.listen
    if not getattr(listen, "deeper_backlog", False):
        mode_servers.AsyncioServerInstance.listen = deeper_backlog(listen)  # type: ignore[method-assign]
    return True


#: mitmproxy's own header lookups, for a key that is neither str nor bytes (its errors).
_ORIGINAL: dict[str, Any] = {}


def _header_name(key: object) -> bytes | None:
    """A header name as mitmproxy compares it: as bytes, then ASCII-lowercased."""
    if isinstance(key, str):
        return key.encode("utf-8", "surrogateescape").lower()
    if isinstance(key, bytes):
        return key.lower()
    return None


def _folded(headers: http.Headers, name: bytes) -> str | None:
    """Every value of the header ``name`` (lowercased), folded with ", "; None if none."""
    values = [value for field, value in headers.fields if field.lower() == name]
    if not values:
        return None
    return ", ".join([value.decode("utf-8", "surrogateescape") for value in values])


def headers_getitem(self: http.Headers, key: str | bytes) -> str:
    """``Headers[key]``: every value of that name, folded with ", " (KeyError if none)."""
    name = _header_name(key)
    if name is None:
        return _ORIGINAL["getitem"](self, key)
    found = _folded(self, name)
    if found is None:
        raise KeyError(key)
    return found


def headers_get(self: http.Headers, key: str | bytes, default: Any = None) -> Any:
    """``Headers.get``: as ``Headers[key]``, or ``default`` when there is no such header."""
    name = _header_name(key)
    if name is None:
        return _ORIGINAL["get"](self, key, default)
    found = _folded(self, name)
    return default if found is None else found


def headers_contains(self: http.Headers, key: object) -> bool:
    """``key in headers``."""
    name = _header_name(key)
    if name is None:
        return _ORIGINAL["contains"](self, key)
    return any(field.lower() == name for field, _ in self.fields)


#: Connections the kernel keeps waiting to be accepted, per listening socket.
BACKLOG = 4096


def deeper_backlog(listen):
    """mitmproxy's ``AsyncioServerInstance.listen``, then each listening TCP socket's backlog
    raised to ``BACKLOG`` (listening again on a listening socket only changes its backlog)."""
    async def listen_deeper(self, host: str, port: int) -> list:
        servers = await listen(self, host, port)
        for server in servers:
            for sock in getattr(server, "sockets", None) or ():
                with socket.socket(fileno=os.dup(sock.fileno())) as listening:
                    listening.listen(BACKLOG)
        return servers

    listen_deeper.deeper_backlog = True  # type: ignore[attr-defined]
    return listen_deeper


def _with_finished_streams(init):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.streams = FinishedStreams()

    __init__.finished_streams = True  # type: ignore[attr-defined]
    return __init__


class FinishedStreams(dict):
    """``HttpLayer.streams``: the HTTP streams of a connection by id. mitmproxy pops a stream
    once its exchange is over (``DropStream``); the stream's reference cycles are cut right
    after the event being handled (its own code still runs until then), so that reference
    counting frees it and its flow (module docstring)."""

    def pop(self, key: Any, *default: Any) -> Any:
        stream = super().pop(key, *default)
        if isinstance(stream, http_layers.HttpStream):
            asyncio.get_running_loop().call_soon(unlink, stream)
        return stream


def unlink(stream: http_layers.HttpStream) -> None:
    """Cut a finished stream's reference cycles: its states (bound methods of itself) become a
    plain function that takes any late event as a finished stream does (nothing), and its own
    context (forked for it alone) no longer lists it. A stream that became a tunnel (a 101
    upgrade: WebSocket, raw TCP) is never dropped, and is left as it is."""
    if stream.child_layer is not None:
        return
    stream.client_state = stream.server_state = state_finished  # type: ignore[method-assign]
    stream.context.layers.clear()


def state_finished(_event: events.Event) -> layer.CommandGenerator[None]:
    """The state of a stream whose exchange is over: every event is ignored."""
    yield from ()


#: Allocations between two looks of the garbage collector at the young generation (CPython's
#: default: 2,000).
YOUNG_THRESHOLD = 100_000


def space_collections() -> None:
    """The collector's young threshold at ``YOUNG_THRESHOLD`` (module docstring); the older
    generations' as they are."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def _fork(self: context.Context) -> context.Context:
    """``Context.fork`` without building a server connection that is replaced at once."""
    forked = context.Context.__new__(context.Context)
    forked.client, forked.options = self.client, self.options
    forked.server, forked.layers = self.server, self.layers.copy()
    return forked


class CachedOptions(options.Options):
    """mitmproxy's options, with plain values read without a deep copy each time: kept until
    any option changes (every change, rollback included, is sent on ``changed``, and the cache
    is emptied before anyone hears of it)."""

    def __init__(self, **kwargs: object) -> None:
        self.__dict__["_cached"] = {}
        super().__init__(**kwargs)
        # First in line: an addon's ``configure`` reading an option must see the new value.
        self.changed.receivers.insert(0, signals.make_weak_ref(self._forget))
        self._cached.clear()

    def _forget(self, updated: object) -> None:
        self._cached.clear()

    def __getattr__(self, attr: str) -> object:
        cached = self.__dict__["_cached"]
        try:
            return cached[attr]
        except KeyError:
            value = super().__getattr__(attr)
            if value is None or type(value) in _PLAIN:
                cached[attr] = value
            return value


#: Values a caller cannot change in place (a copy of them would be equal and as immutable).
_PLAIN = frozenset({bool, int, float, str, bytes})


class InlineHooks(ProxyConnectionHandler):
    """A ``ProxyConnectionHandler`` whose ``server_event`` runs hooks in line and joins writes
    (module docstring), when ``master.addons`` is capture's ``HookCache`` (it has ``inline``);
    mitmproxy's own ``server_event`` otherwise.

    mitmproxy's ``server_event`` holds an asyncio lock while the layers handle an event: its
    body never awaits, so the lock only ever holds off a task started eagerly under the event
    (a hook, a server connection), which re-enters ``server_event`` before the layers are
    through. Here such an event waits in ``_queued`` and is handled right after, before its
    task goes on; a hook that completes later (a handler's ``Release``: capture's ``response``
    waits for the writer) hands ``HookCompleted`` to the layers from the release's callback,
    without a task.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._busy = False  # the layers are handling an event
        self._queued: collections.deque[tuple[events.Event, asyncio.Future | None]] = (
            collections.deque())

    async def server_event(self, event: events.Event) -> None:
        if not hasattr(self.master.addons, "inline"):
            await super().server_event(event)
        elif self._busy:  # re-entered by a task started under the event being handled
            handled = asyncio.get_running_loop().create_future()
            self._queued.append((event, handled))
            await handled
        else:
            self._handle(event)

    def _handle(self, event: events.Event) -> None:
        """Let the layers handle ``event``, then every event it brought about (hooks run in
        line, events of the tasks it started), one after another."""
        self._busy = True
        addons = self.master.addons
        due: collections.deque[events.Event] = collections.deque([event])
        try:
            while True:
                while due:
                    self.timeout_watchdog.register_activity()
                    try:
                        self._run(self.layer.handle_event(due.popleft()), addons, due)
                    except Exception:
                        self.log("mitmproxy has crashed!", logging.ERROR, exc_info=True)
                if not self._queued:
                    break
                queued, handled = self._queued.popleft()
                due.append(queued)
                if handled is not None:
                    handled.set_result(None)  # its task goes on once this handling is through
        finally:
            self._busy = False

    def _run(self, layer_commands, addons, due: collections.deque) -> None:
        """mitmproxy's command loop, with hooks run in line (their completions appended to
        ``due``) and consecutive writes to one connection joined."""
        to, chunks = None, []  # the writes waiting to be joined, and their connection
        for command in layer_commands:
            if isinstance(command, commands.SendData) and command.connection in self.transports:
                if to is not command.connection:
                    self._write(to, chunks)
                    to, chunks = command.connection, []
                chunks.append(command.data)
                continue
            self._write(to, chunks)
            to, chunks = None, []
            if isinstance(command, commands.StartHook):
                ran = addons.inline(command)
                if ran is True:
                    self._hook_done(command, due)
                    continue
                if ran is not False:  # a handler's Release: completed when it is settled
                    self._complete_later(command, ran)
                    continue
            self._command(command)
        self._write(to, chunks)

    def _hook_done(self, hook: commands.StartHook, due: collections.deque | None) -> None:
        data = self.master.addons.subject(hook)
        if isinstance(data, flow.Flow) and data.intercepted:
            self._resume_later(hook, data)  # an addon holds it: mitmproxy's way
        elif hook.blocking:
            if due is not None:
                due.append(events.HookCompleted(hook))
            elif self._busy:  # pragma: no cover (callbacks run from the loop, never nested)
                self._queued.append((events.HookCompleted(hook), None))
            else:
                self._handle(events.HookCompleted(hook))

    def _complete_later(self, hook: commands.StartHook, pending: Release) -> None:
        # As mitmproxy does while a hook runs: no inactivity timeout meanwhile.
        disarmed = self.timeout_watchdog.disarm()
        disarmed.__enter__()

        def completed() -> None:
            disarmed.__exit__(None, None, None)
            self._hook_done(hook, None)

        pending.then(completed)

    def _write(self, connection, chunks: list[bytes]) -> None:
        if not chunks:
            return
        writer = self.transports[connection].writer
        assert writer
        if not writer.is_closing():
            writer.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def _resume_later(self, hook: commands.StartHook, data: flow.Flow) -> None:
        async def resumed() -> None:
            await data.wait_for_resume()
            if hook.blocking:
                await self.server_event(events.HookCompleted(hook))

        asyncio_utils.create_task(resumed(), name=f"handle_hook({hook.name})", keep_ref=True,
                                  client=self.client.peername)

    def _command(self, command: commands.Command) -> None:
        """Every other command as mitmproxy's ``server_event`` carries it out."""
        if isinstance(command, commands.OpenConnection):
            assert command.connection not in self.transports
            handler = asyncio_utils.create_task(
                self.open_connection(command),
                name=f"server connection handler {command.connection.address}",
                keep_ref=False, client=self.client.peername)
            self.transports[command.connection] = _connection_io(handler)
        elif isinstance(command, commands.RequestWakeup):
            task = asyncio_utils.create_task(
                self.wakeup(command), name=f"wakeup timer ({command.delay:.1f}s)",
                keep_ref=False, client=self.client.peername)
            self.wakeup_timer.add(task)
        elif (isinstance(command, commands.ConnectionCommand)
              and command.connection not in self.transports):
            pass  # The connection has already been closed.
        elif isinstance(command, commands.CloseTcpConnection):
            self.close_connection(command.connection, command.half_close)
        elif isinstance(command, commands.CloseConnection):
            self.close_connection(command.connection, False)
        elif isinstance(command, commands.StartHook):
            asyncio_utils.create_task(self.hook_task(command), name=f"handle_hook({command.name})",
                                      keep_ref=True, client=self.client.peername)
        elif isinstance(command, commands.Log):
            self.log(command.message, command.level)
        else:
            raise RuntimeError(f"Unexpected command: {command}")


def _connection_io(handler: asyncio.Task):
    from mitmproxy.proxy.server import ConnectionIO

    return ConnectionIO(handler=handler)
