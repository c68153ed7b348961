"""Running mitmproxy in-process with the capture addons (what ``harness capture`` does)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from mitmproxy import exceptions, flow, hooks
from mitmproxy.addonmanager import AddonManager

from harness.capture import lean
from harness.capture.addon import Recorder
from harness.capture.release import Release
from harness.contract.model import Contract, school_mobile
from harness.errors import HarnessError, TargetUnreachable, UsageError

MODES = ("reverse", "regular")
#: mitmproxy's ``update`` event (any instance: only its name is looked at).
UPDATE = hooks.UpdateHook([])


@dataclass
class CaptureSettings:
    out: str
    upstream: str | None = None
    listen_host: str = "127.0.0.1"
    listen_port: int = 8080
    mode: str = "reverse"
    redact: bool = True
    keep_foreign: bool = False
    redact_names: list[str] = field(default_factory=list)
    key_file: str | None = None
    #: mitmproxy's configuration directory, where its CA lives (None: mitmproxy's ~/.mitmproxy).
    confdir: str | None = None
    #: Bodies over this many MB are streamed through and recorded truncated (addon.Tap).
    max_body_mb: int = 16
    #: Extra mitmproxy options (e.g. {"ssl_insecure": True}), set as they are.
    mitm_options: dict[str, object] = field(default_factory=dict)
    #: mitmproxy's web UI (mitmweb) on 127.0.0.1:web_port (None: none, capture as mitmdump).
    web_port: int | None = None


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:8080`` / ``8080`` / ``[::1]:8080`` -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
        if not 0 <= number <= 65535:
            raise ValueError
    except ValueError:
        raise UsageError(f"--listen {text!r} is not HOST:PORT") from None
    return host, number


def check_upstream(url: str | None, mode: str) -> None:
    """A one-line error for an upstream that is malformed or does not accept connections."""
    if url is None:
        if mode == "reverse":
            raise UsageError("reverse mode needs --upstream URL (the deployment to front)")
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--upstream {url!r} is not an http(s) URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UsageError(f"--upstream {url!r} has a bad port") from None
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise TargetUnreachable(f"upstream {parts.hostname}:{port} is unreachable: "
                                f"{exc.strerror or exc}") from None


def check_listen(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As the proxy's own listener does: a port whose last connections are in TIME_WAIT
        # (capture restarted after a crash) is free, not "Address already in use" for 60 s.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _check_confdir(confdir: str | None) -> None:
    """Create (or read) mitmproxy's CA now: mitmproxy does it only once listening, and there a
    failure is swallowed and leaves HTTPS interception broken without a word."""
    from mitmproxy.certs import CertStore
    from mitmproxy.options import CONF_BASENAME, CONF_DIR, KEY_SIZE

    path = Path(confdir or CONF_DIR).expanduser()
    try:
        CertStore.from_store(path, CONF_BASENAME, KEY_SIZE)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"cannot create or read mitmproxy's CA in {path}: {reason}") from None


def run_capture(settings: CaptureSettings, *, contract: Contract | None = None,
                out: IO[str] | None = None) -> int:
    """Capture until SIGINT/SIGTERM; 0 on a clean stop, 2 when recording failed."""
    contract = contract or school_mobile()
    check_settings(settings)
    recorder = Recorder(contract, out or sys.stdout)
    asyncio.run(serve(settings, recorder, lambda master: _announce(
        master, settings, contract, recorder.key_file)), loop_factory=event_loop_factory())
    if recorder.failed:
        raise HarnessError(recorder.failed)
    return 0


def check_settings(settings: CaptureSettings) -> None:
    """Everything that can be checked before anything listens: one line (UsageError,
    TargetUnreachable) for a bad mode, upstream, listening address or CA directory."""
    if settings.mode not in MODES:
        raise UsageError(f"--mode {settings.mode!r} is not one of {', '.join(MODES)}")
    check_upstream(settings.upstream, settings.mode)
    check_listen(settings.listen_host, settings.listen_port)
    if settings.web_port is not None:
        check_listen(WEB_HOST, settings.web_port)
    _check_confdir(settings.confdir)


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where uvloop is installed (not on Windows), else asyncio's own.

    mitmproxy's proxy core is mostly event-loop work (a dozen tasks, reads and writes per
    exchange): on uvloop it takes about a third less CPU per exchange (bench/bench_capture.py).
    """
    try:
        import uvloop
    except ImportError:
        return None

    class Loop(uvloop.Loop):  # type: ignore[misc,name-defined]
        def set_task_factory(self, factory) -> None:
            super().set_task_factory(None if factory is None else _tolerant(factory))

    return Loop


def _tolerant(factory):
    """mitmproxy runs its tasks with asyncio's eager task factory; uvloop passes that factory
    an ``eager_start`` argument that it takes only from Python 3.14 on. The factory starts its
    tasks eagerly anyway, so the argument is dropped."""
    def create_task(loop, coro, eager_start=None, **kwargs):
        return factory(loop, coro, **kwargs)

    return create_task


async def serve(settings: CaptureSettings, recorder: Recorder,
                announce: Callable[[Any], Awaitable[None]]) -> None:
    """Run mitmproxy with capture's addons and ``recorder`` until SIGINT/SIGTERM (or
    ``master.shutdown()``); ``announce(master)`` runs once it is started (it says where it
    listens). ``harness shadow`` serves through here too, with its own recorder."""
    from mitmproxy.master import Master

    logging.getLogger("mitmproxy").setLevel(logging.ERROR)
    lean.install()
    lean.space_collections()
    mode = f"reverse:{settings.upstream}" if settings.mode == "reverse" else "regular"
    opts = lean.CachedOptions(**({"confdir": settings.confdir} if settings.confdir else {}))
    if settings.web_port is None:
        master = Master(opts)
        master.addons = HookCache(master)  # before any addon is added
        master.addons.add(*capture_addons(), recorder)
        web: dict[str, object] = {}
    else:
        master = web_master(opts)
        master.addons.add(recorder, KeepLast(master.view))  # after the recorder's hooks
        web = {"web_open_browser": False, "web_host": WEB_HOST, "web_port": settings.web_port}
    try:
        opts.update(mode=[mode], listen_host=settings.listen_host,
                    listen_port=settings.listen_port, **web, **settings.mitm_options)
        # Opening the recording (and its key) happens here, before anything listens.
        opts.update(max_body_mb=settings.max_body_mb,
                    recording_upstream=settings.upstream, recording_mode=settings.mode,
                    keep_foreign=settings.keep_foreign, redact=settings.redact,
                    redact_names=list(settings.redact_names),
                    redaction_key_file=settings.key_file, recording=settings.out)
    except exceptions.OptionsError as exc:
        raise HarnessError(str(exc).splitlines()[0]) from None

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, master.shutdown)
    said = asyncio.create_task(announce(master))
    await master.run()
    said.cancel()


#: Where the web UI listens: loopback only (its token is in the URL capture prints).
WEB_HOST = "127.0.0.1"
#: Flows the web UI keeps (the newest): mitmweb keeps every flow in memory.
WEB_FLOWS = 2000


class KeepLast:
    """The web UI's flows bounded to the newest WEB_FLOWS (the recording has every one): a
    long capture under --web does not grow in memory."""

    def __init__(self, view) -> None:
        self.view = view

    def response(self, flow) -> None:
        self._trim()

    def error(self, flow) -> None:
        self._trim()

    def _trim(self) -> None:
        store = self.view._store  # mitmproxy's View: every flow, oldest first
        excess = len(store) - WEB_FLOWS
        if excess > 0:
            old = [f for f, _ in zip(store.values(), range(excess), strict=False)]
            self.view.remove([f for f in old if not f.live])


def web_master(opts):
    """mitmproxy's web UI master (mitmweb: its default addons, so a person can browse,
    filter, and resend flows), with the recorder added by the caller: each exchange is recorded
    exactly as without the UI."""
    from mitmproxy.tools.web.master import WebMaster

    return WebMaster(opts, with_termlog=False)


class HookCache(AddonManager):
    """mitmproxy's addon manager, but each event goes straight to the hooks that handle it.

    The stock manager walks every addon (and its children) for every event of every flow,
    looking each hook up by name, and triggers an ``update`` event after each flow event; with
    a dozen addons that is a good part of mitmproxy's CPU per exchange. Here the callables of
    each event are found once and kept until an addon is added or removed. Errors in a hook are
    logged as mitmproxy does (``Addon error: ...``) and do not stop the other hooks.
    """

    def __init__(self, master) -> None:
        super().__init__(master)
        self._hooks: dict[str, list] = {}
        self._fields: dict[type, tuple[str, ...]] = {}  # the argument names of each event
        self._plain: dict[str, bool] = {}  # events whose handlers are all plain functions

    async def handle_lifecycle(self, event) -> None:
        """As mitmproxy's, without the ``update`` event after each flow event when no addon
        handles it (none of capture's does)."""
        await self.trigger_event(event)
        if self._handlers(UPDATE):
            message = self._args(event)[0]
            if isinstance(message, flow.Flow):
                await self.trigger_event(hooks.UpdateHook([message]))

    def add(self, *addons) -> None:
        self._hooks.clear()
        self._plain.clear()
        super().add(*addons)

    def remove(self, addon) -> None:
        self._hooks.clear()
        self._plain.clear()
        super().remove(addon)

    def clear(self) -> None:
        self._hooks.clear()
        self._plain.clear()
        super().clear()

    def _handlers(self, event) -> list:
        found = self._hooks.get(event.name)
        if found is None:
            found = self._hooks[event.name] = [
                func for addon in self.chain for _a, func in self._iter_hooks(addon, event)]
        return found

    def inline(self, hook) -> bool | Release:
        """Run ``hook``'s handlers now (``harness.capture.lean``), when every one is a plain
        function and no addon wants ``update`` events: True once they ran, or a ``Release``
        when one of them returned an awaitable not yet done (the handlers after it run once
        it is, and then the release is settled). False, running nothing, otherwise."""
        plain = self._plain.get(hook.name)
        if plain is None:
            plain = self._plain[hook.name] = not self._handlers(UPDATE) and not any(
                inspect.iscoroutinefunction(func) for func in self._handlers(hook))
        if not plain:
            return False
        handlers = self._handlers(hook)
        pending = self._call(handlers, self._args(hook)) if handlers else None
        return True if pending is None or pending.settled() else pending

    def subject(self, hook) -> Any:
        """The one argument of a proxy hook (a flow, a connection...)."""
        return getattr(hook, self._args_names(hook)[0])

    def _args(self, event) -> list:
        """``event.args()``, without looking the dataclass fields up each time."""
        return [getattr(event, name) for name in self._args_names(event)]

    def _args_names(self, event) -> tuple[str, ...]:
        names = self._fields.get(type(event))
        if names is None:
            names = self._fields[type(event)] = tuple(f.name for f in fields(event))
        return names

    async def trigger_event(self, event) -> None:
        handlers = self._handlers(event)
        if not handlers:
            return
        args = self._args(event)
        for func in handlers:
            try:
                result = func(*args)
                if result is not None and inspect.isawaitable(result):
                    await result
            except exceptions.AddonHalt:
                return
            except exceptions.OptionsError:
                raise
            except Exception as exc:
                _addon_error(exc)

    def _call(self, handlers: list, args: list, start: int = 0) -> Release | None:
        """``trigger_event`` for plain functions, from ``handlers[start]`` on: None once all
        ran; a ``Release`` if one returned an awaitable (settled once it and the rest are:
        at once after a ``Release`` it returned, a loop iteration later after a future)."""
        for at in range(start, len(handlers)):
            try:
                result = handlers[at](*args)
            except exceptions.AddonHalt:
                return None
            except exceptions.OptionsError:
                raise
            except Exception as exc:
                _addon_error(exc)
                continue
            if result is not None and inspect.isawaitable(result):
                if not isinstance(result, Release):
                    result = Release.of(asyncio.ensure_future(result))
                return self._then(result, handlers, args, at + 1)
        return None

    def _then(self, awaited: Release, handlers: list, args: list, start: int) -> Release:
        done = Release()

        def go_on() -> None:
            failed = awaited.exception
            halted = isinstance(failed, exceptions.AddonHalt)
            if failed is not None and not halted:
                _addon_error(failed)
            rest = None if halted else self._call(handlers, args, start)
            if rest is None:
                done.settle()
            else:
                rest.then(done.settle)

        awaited.then(go_on)
        return done


def _addon_error(exc: Exception) -> None:
    """Logged as mitmproxy's addon manager does; the other hooks still run."""
    logging.getLogger("mitmproxy.addonmanager").error(f"Addon error: {exc}", exc_info=exc)


def capture_addons() -> list[object]:
    """The mitmproxy addons capture needs, and no more: the proxy server, protocol detection,
    TLS interception (mitmproxy's CA, ``--insecure``), startup error checks, and the safety and
    correctness ones a proxy should keep (refusing clients from the internet, no h2c upgrade,
    Alt-Svc pointing at the proxy). mitmdump's other default addons (replay, map/modify,
    sticky cookies, saving flows, dumping them...) run hooks on every flow for features
    capture does not offer: leaving them out roughly halves mitmproxy's CPU per exchange."""
    from mitmproxy.addons import (
        block,
        core,
        disable_h2c,
        errorcheck,
        next_layer,
        proxyserver,
        tlsconfig,
        update_alt_svc,
    )

    return [core.Core(), block.Block(), disable_h2c.DisableH2C(), proxyserver.Proxyserver(),
            next_layer.NextLayer(), tlsconfig.TlsConfig(), update_alt_svc.UpdateAltSvc(),
            errorcheck.ErrorCheck()]


def redaction_said(settings: CaptureSettings, contract: Contract, key_file: Path | None = None
                   ) -> tuple[str, str | None]:
    """What the listening line says of redaction (and where its key is: never to be shared),
    and the one warning line when the contract marks nothing sensitive (then only credential
    headers and --redact names are redacted)."""
    if not settings.redact:
        return "NOT redacted (--no-redact)", None
    key = (f", pseudonym key in {key_file}: never share it" if key_file is not None
           else ", pseudonym key in memory only")
    if contract.sensitive_names():
        return "redacted" + key, None
    return ("credential headers redacted" + (", and " + ", ".join(settings.redact_names)
                                             if settings.redact_names else "") + key,
            "harness capture: warning: the contract marks no parameter or result sensitive, so "
            "values are recorded in clear (mark them: harness contract --sensitive NAME, or "
            "capture --redact NAME)")


async def _announce(master, settings: CaptureSettings, contract: Contract,
                    key_file: Path | None = None) -> None:
    """Say where we listen once the server is up (tests and users read this line)."""
    proxyserver = master.addons.get("proxyserver")
    for _ in range(500):
        addrs = proxyserver.listen_addrs()
        if addrs:
            host, port = addrs[0][:2]
            where = f"in front of {settings.upstream}" if settings.mode == "reverse" else (
                "as an HTTP(S) proxy")
            redaction, warning = redaction_said(settings, contract, key_file)
            if warning:
                print(warning, file=sys.stderr, flush=True)
            print(f"harness capture: listening on http://{host}:{port} {where}; recording to "
                  f"{settings.out} ({redaction}); Ctrl-C stops", file=sys.stderr, flush=True)
            if settings.web_port is not None:
                print(f"harness capture: web UI (mitmweb) on {master.web_url}",
                      file=sys.stderr, flush=True)
            return
        await asyncio.sleep(0.01)
    print("harness capture: error: the proxy did not start listening", file=sys.stderr,
          flush=True)
    master.shutdown()
