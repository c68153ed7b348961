"""Running a load: Locust as a library (Environment and its local, master or worker runner).

Imports Locust (gevent monkey-patching): only the load child process imports this module.

- local (one process): reads the recordings, sends them all, writes the report;
- master: reads the recordings (their start times), waits for ``expect_workers`` workers, hands
  each its slice index and the settings (``harness_plan``), starts them together at one wall
  clock time (``harness_go``), gathers the findings (``harness_findings``) and each worker's
  end (``harness_done``), and writes one report from Locust's stats and the findings;
- worker: reads its own copy of the recordings, keeps its slice, sends it, reports back.
"""

from __future__ import annotations

import contextlib
import csv
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gevent
import gevent.event
from locust import stats as locust_stats
from locust.env import Environment
from locust.html import get_html_report
from locust.runners import STATE_CLEANUP, STATE_STOPPED, STATE_STOPPING
from locust.shape import LoadTestShape

from harness.contract.model import Contract, from_dict
from harness.contract.selection import Selection
from harness.errors import HarnessError, TargetUnreachable, UsageError
from harness.judge.findings import Report, selection_scope
from harness.load.schedule import Schedule, Timing
from harness.load.shape import Shape, parse_shape
from harness.load.slicing import Recordings, read_slice
from harness.load.trend import ALL, Limits, compare, split_name, stats_line
from harness.load.trend import TITLES as TREND_TITLES
from harness.load.user import Feed, ReplayUser
from harness.load.verdict import Merged
from harness.progress import Progress
from harness.reports.allure_results import write_cases
from harness.reports.console import print_report, require_judged
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit
from harness.traffic.auth import AuthOptions
from harness.traffic.keys import KEY_BYTES
from harness.traffic.redaction import ReportRedaction, passwords
from harness.traffic.send import SendOptions, check_reachable

#: Seconds between the go message and the first request due: every worker hears it first.
START_DELAY = 1.0


@dataclass(frozen=True)
class Settings:
    """What decides how a run sends and judges: the master hands it to every worker."""

    target: str
    contract: dict[str, Any]  # harness.contract.model.to_dict
    timing: Timing
    check_ratio: float = 1.0
    ignore: tuple[str, ...] = ()
    concurrency: int = 100
    #: harness.traffic.send.SendOptions as data (timeout, max_response_mb, insecure, cacert,
    #: headers, auth: AuthOptions.to_data), and the --operation/--binding selection. The
    #: master hands it to its workers: headers and passwords with it, as Locust's own
    #: connection carries them (keep master and workers on a network you trust).
    sending: dict[str, Any] = field(default_factory=dict)
    operations: tuple[str, ...] = ()
    bindings: tuple[str, ...] = ()
    #: --key-file: the recordings' pseudonym key file (a path: each process reads its own;
    #: without it, or where it is missing, each finds the key where capture put it).
    key_file: str | None = None
    #: The run's key of the pseudonyms its reports show (hex; a recording's key wins): the
    #: master's, so that every worker shows a secret by the same pseudonym. Never written.
    report_key: str = ""

    def to_data(self) -> dict[str, Any]:
        return {**self.__dict__, "timing": self.timing.__dict__, "ignore": list(self.ignore),
                "operations": list(self.operations), "bindings": list(self.bindings)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Settings:
        return cls(**{**data, "timing": Timing(**data["timing"]), "ignore": tuple(data["ignore"]),
                      "operations": tuple(data["operations"]),
                      "bindings": tuple(data["bindings"])})

    @property
    def options(self) -> SendOptions:
        return SendOptions(**{**self.sending, "headers": tuple(
            (str(k), str(v)) for k, v in self.sending.get("headers", ())),
            "auth": AuthOptions.from_data(self.sending.get("auth"))})

    def selection(self, contract: Contract) -> Selection:
        return Selection.parse(contract, self.operations, self.bindings)

    def users(self, workers: int = 1) -> int:
        """Locust users in all: one dispatcher per worker in the open models."""
        return self.timing.users or workers


@dataclass(frozen=True)
class Outputs:
    json: str | None = None
    junit: str | None = None
    csv: str | None = None
    html: str | None = None
    quiet: bool = False
    fail_ratio: float | None = None
    p95_ms: float | None = None
    web_port: int | None = None
    #: harness.load.trend: the previous run read (``read_baseline``) and the limits.
    baseline: dict[str, Any] | None = None
    limits: dict[str, Any] | None = None
    #: Where the Allure results go (None: none).
    allure_dir: str | None = None


# ------------------------------------------------------------------------------------ local


def run_local(paths: list[str], settings: Settings, outputs: Outputs) -> int:
    check_reachable(settings.target, options=settings.options)
    recordings = read_slice(paths, from_dict(settings.contract), on_broken=_skipped)
    schedule = Schedule(recordings.start_times(), settings.timing)
    env = _environment(settings)
    runner = env.create_local_runner()
    done = gevent.event.Event()
    feed = _feed(recordings, schedule, settings, done.set)
    env.events.test_stop.add_listener(lambda **kw: feed.finish())  # a shape's end
    extras = _start_outputs(env, outputs, _total(schedule))
    started = time.time()
    feed.start(started + 0.05)
    _start_users(runner, settings, 1)
    with interruptions(feed.stop, done.set) as stop:
        done.wait()
    runner.quit()
    recordings.close()
    merged = _merged(settings, paths, schedule, workers=1, broken=recordings.broken)
    while batch := feed.gathered.take_kept():
        merged.add_kept(batch)
    merged.add_figures(feed.gathered.figures())
    return _finish(env, merged, outputs, extras, started, [feed.error] if feed.error else [],
                   stop.signal)


# ----------------------------------------------------------------------------------- master


def run_master(paths: list[str], settings: Settings, outputs: Outputs, *, workers: int,
               bind_host: str, port: int, wait_workers: float) -> int:
    check_reachable(settings.target, options=settings.options)
    recordings = read_slice(paths, from_dict(settings.contract), keep=False,
                            on_broken=_skipped)
    schedule = Schedule(recordings.start_times(), settings.timing)
    if settings.timing.users and settings.timing.users < workers:
        raise UsageError(f"--users {settings.timing.users} is fewer than the {workers} workers")
    env = _environment(settings)
    runner = env.create_master_runner(master_bind_host=bind_host, master_bind_port=port)
    merged = _merged(settings, paths, schedule, workers=workers, broken=recordings.broken)
    state: dict[str, Any] = {"hello": set(), "ready": set(), "done": set(), "errors": []}
    finished = gevent.event.Event()

    def on_ready(environment, msg, **kw) -> None:
        state["ready"].add(msg.node_id)
        if msg.data.get("error"):
            state["errors"].append(f"worker {msg.node_id}: {msg.data['error']}")
        elif msg.data.get("count") != schedule.count:
            state["errors"].append(f"worker {msg.node_id} read {msg.data.get('count')} "
                                   f"exchanges, the master {schedule.count}: not the same "
                                   "recordings")
            finished.set()

    def on_findings(environment, msg, **kw) -> None:
        merged.add_kept(msg.data)

    def on_done(environment, msg, **kw) -> None:
        merged.add_figures(msg.data["figures"])
        if msg.data.get("error"):
            state["errors"].append(f"worker {msg.node_id}: {msg.data['error']}")
        state["done"].add(msg.node_id)
        if len(state["done"]) >= workers:
            finished.set()

    runner.register_message("harness_hello", lambda msg, **kw: state["hello"].add(msg.node_id))
    runner.register_message("harness_ready", on_ready)
    runner.register_message("harness_findings", on_findings)
    runner.register_message("harness_done", on_done)
    _say(outputs, f"load: master on {bind_host}:{port}, waiting for {workers} worker(s)")
    try:
        with interruptions(lambda: None, lambda: None) as early:
            _hand_out(runner, settings, state, workers, wait_workers, f"{bind_host}:{port}",
                      early)
    except HarnessError:
        runner.quit()  # the workers end too
        raise
    extras = _start_outputs(env, outputs, _total(schedule))
    started, cpu0 = time.time(), time.process_time()
    runner.send_message("harness_go", {"t0": started + START_DELAY})
    _start_users(runner, settings, workers)
    with interruptions(lambda: None, finished.set) as stop:
        _watch(runner, finished, workers, state["errors"],
               shaped_wait=settings.options.timeout + 30.0 if settings.timing.shape else None)
    merged.report.meta["master_cpu_s"] = round(time.process_time() - cpu0, 3)
    if stop.signal or state["errors"]:  # the workers stop sending and exit non-zero
        reason = _signal_name(stop.signal) if stop.signal else state["errors"][0]
        runner.send_message("harness_stop", {"reason": reason})
        gevent.sleep(0.2)
        if stop.signal:  # what they sent until then: their calls in flight end, they report
            deadline = time.monotonic() + STOP_REPORTS_S
            while len(state["done"]) < workers and time.monotonic() < deadline:
                gevent.sleep(0.05)
    runner.quit()
    return _finish(env, merged, outputs, extras, started, state["errors"], stop.signal)


def _hand_out(runner, settings: Settings, state: dict[str, Any], workers: int,
              wait_workers: float, where: str, stop: Interruptions) -> None:
    """Each worker its slice index and the settings, once all are there; back once every
    one has read its slice. A signal meanwhile ends the run before it starts."""
    errors = state["errors"]
    stop.on_signal = lambda: errors.append(f"interrupted by {_signal_name(stop.signal)} "
                                           "before the run started")
    # A worker says hello once its handlers are registered: a plan sent before would be lost.
    ids = _wait_for(lambda: list(state["hello"]), workers, wait_workers,
                    f"{workers} worker(s) did not connect to {where} in time", errors)
    gevent.sleep(0.5)  # a worker more would take users (Locust deals them to all): refuse it
    if len(runner.clients.ready) != workers:
        raise UsageError(f"{len(runner.clients.ready)} workers connected to {where}, "
                         f"--expect-workers {workers}")
    for index, client_id in enumerate(sorted(ids)):
        runner.send_message("harness_plan", {"settings": settings.to_data(), "index": index,
                                             "workers": workers}, client_id=client_id)
    _wait_for(lambda: list(state["ready"]), workers, wait_workers,
              "the workers did not read their recordings in time", state["errors"])


def _watch(runner, finished: gevent.event.Event, workers: int, errors: list[str], *,
           shaped_wait: float | None = None) -> None:
    """Until every worker is done; a worker that goes missing ends the run with an error.
    Once a shape has ended, Locust lets the stopped workers go (they come back ready after
    its stop timeout): each reports its end within ``shaped_wait`` seconds, or the run ends
    with an error."""
    ended: float | None = None
    while not finished.wait(1.0):
        if shaped_wait is not None and runner.state in (STATE_CLEANUP, STATE_STOPPING,
                                                        STATE_STOPPED):
            ended = ended or time.monotonic()
            if time.monotonic() - ended > shaped_wait:
                errors.append("a worker did not report its end after the shape ended")
                return
            continue
        clients = runner.clients
        if len(clients.ready) + len(clients.spawning) + len(clients.running) < workers:
            errors.append("a worker was lost before it finished")
            return


# ----------------------------------------------------------------------------------- worker


def run_worker(paths: list[str], *, master_host: str, port: int) -> int:
    env = _environment(None)
    try:  # Locust retries for about 5 minutes
        runner = env.create_worker_runner(master_host, port)
    except ConnectionError:
        raise TargetUnreachable(f"no master answered on {master_host}:{port}") from None
    feeds: list[Feed] = []
    ended: dict[str, str] = {}  # why this worker ends before its slice did, if it does

    def on_plan(environment, msg, **kw) -> None:
        try:
            feeds.append(_plan(paths, msg.data, runner))
        except HarnessError as exc:  # e.g. no such recording here: the master says it
            runner.send_message("harness_ready", {"error": str(exc)})
            return
        runner.send_message("harness_ready", {"count": feeds[-1].schedule.count,
                                              "slice": len(feeds[-1].recordings)})

    def on_go(environment, msg, **kw) -> None:
        feeds[-1].start(msg.data["t0"])

    def on_stop(environment, msg, **kw) -> None:
        ended.setdefault("why", f"the master stopped the run ({msg.data.get('reason')})")
        for feed in feeds:
            feed.stop()

    def end(why: str) -> None:
        ended.setdefault("why", why)
        for feed in feeds:
            feed.stop()
            if feed.go.is_set() and not feed._done:
                feed.error = feed.error or why
        gevent.spawn_later(1.0, runner.greenlet.kill, block=False)

    def on_test_stop(**kw) -> None:  # a shape's end: report, then leave (exit 0)
        shaped = [feed for feed in feeds if feed.shaped and feed.go.is_set()]
        for feed in shaped:
            feed.finish()
        if shaped:
            gevent.spawn_later(2.0, runner.greenlet.kill, block=False)

    env.events.test_stop.add_listener(on_test_stop)
    runner.register_message("harness_plan", on_plan, concurrent=True)
    runner.register_message("harness_go", on_go)
    runner.register_message("harness_stop", on_stop)
    runner.send_message("harness_hello")
    watch = gevent.spawn(_watch_master, runner, end)
    with interruptions(lambda: end("interrupted"), lambda: None) as stop:
        runner.greenlet.join()
    watch.kill(block=False)
    for feed in feeds:
        feed.recordings.close()
    if stop.signal:
        print(f"harness load: worker interrupted by {_signal_name(stop.signal)}",
              file=sys.stderr)
        return 128 + stop.signal
    if "why" in ended:
        print(f"harness load: error: worker: {ended['why']}", file=sys.stderr)
        return 2
    return 0


#: Seconds the master waits, after a signal, for its workers' last figures and findings
#: (they end the calls in flight first); past it the report holds what came.
STOP_REPORTS_S = 3.0
#: Seconds without the master's heartbeat (sent every second) before a worker ends: Locust's
#: own limit is 60 s, during which a worker whose master died goes on sending.
MASTER_LOST_S = 10.0


def _watch_master(runner, end: Callable[[str], None]) -> None:
    while True:
        gevent.sleep(1.0)
        last = runner.last_heartbeat_timestamp
        if last is not None and time.time() - last > MASTER_LOST_S:
            end(f"lost the master (no heartbeat for {MASTER_LOST_S:g} s)")
            return


def _plan(paths: list[str], data: dict[str, Any], runner) -> Feed:
    """This worker's feed: its slice of its own copy of the recordings, as the master says."""
    settings = Settings.from_data(data["settings"])
    _configure(settings)
    runner.environment.host = settings.target
    recordings = read_slice(paths, from_dict(settings.contract), data["index"],
                            data["workers"], pause=lambda: gevent.sleep(0))
    schedule = Schedule(recordings.start_times(), settings.timing)
    feed = _feed(recordings, schedule, settings, lambda: _report_done(runner, feed))
    return feed


def _report_done(runner, feed: Feed) -> None:
    """Locust's stats first (the master's figures are then complete), then the findings in
    batches, then the end; messages from one worker arrive in the order sent."""
    runner._send_stats()  # Locust sends them every 3 s; the last ones must not be lost
    while batch := feed.gathered.take_kept():
        runner.send_message("harness_findings", batch)
    runner.send_message("harness_done", {"figures": feed.gathered.figures(),
                                         "error": feed.error})


# ----------------------------------------------------------------------------------- shared


def _environment(settings: Settings | None) -> Environment:
    if settings is not None:
        _configure(settings)
    shape = settings.timing.shape if settings is not None else None
    if not shape:
        return Environment(user_classes=[ReplayUser],
                           host=settings.target if settings else None)
    # A user the shape lets go ends after its answer (its request is not cut off).
    return Environment(user_classes=[ReplayUser], host=settings.target,
                       shape_class=Shaped(parse_shape(shape)),
                       stop_timeout=settings.options.timeout + 1.0)


class Shaped(LoadTestShape):
    """Locust's load shape for ``--shape`` (harness.load.shape): the user count each second,
    and the count the runner had then (the report's ``users_over_time``)."""

    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.shape = shape
        self.timeline: list[list[float | int]] = []

    def tick(self) -> tuple[int, float] | None:
        t = self.get_run_time()
        users = self.shape.users_at(t)
        if self.runner is not None and len(self.timeline) < 100_000:
            self.timeline.append([round(t, 1), users,
                                  self.get_current_user_count()])
        if users is None:
            return None
        return users, float(max(self.shape.peak, 1))  # each change within about a second


def _start_users(runner, settings: Settings, workers: int) -> None:
    if settings.timing.shape:
        runner.start_shape()
    else:
        runner.start(settings.users(workers), spawn_rate=10 * settings.users(workers))


def _configure(settings: Settings) -> None:
    """The user class as the settings say (users are made after this, when they spawn)."""
    options = settings.options
    ReplayUser.host = settings.target
    ReplayUser.network_timeout = ReplayUser.connection_timeout = options.timeout
    ReplayUser.concurrency = settings.concurrency
    ReplayUser.insecure = options.insecure
    factory = ssl_context_factory(options)
    ReplayUser.ssl_context_factory = staticmethod(factory) if factory else None


def ssl_context_factory(options: SendOptions) -> Callable[[], Any] | None:
    """The TLS context factory of geventhttpclient for ``options``: --cacert, and the client
    certificate (--cert); None: geventhttpclient's own (the system's trust store)."""
    if not (options.cacert or options.auth.cert):
        return None

    def made() -> Any:
        import gevent.ssl

        context = options.verify()  # gevent's SSLContext: the ssl module is patched
        return context if context is not False else gevent.ssl._create_unverified_context()
    return made

def _feed(recordings: Recordings, schedule: Schedule, settings: Settings,
          on_done: Callable[[], None]) -> Feed:
    contract = from_dict(settings.contract)
    keys = _keys(recordings.sources, settings.key_file)
    feed = Feed(recordings, schedule, contract, settings.target, settings.check_ratio,
                settings.ignore, settings.options, settings.selection(contract),
                settings.concurrency, on_done, keys=keys)
    feed.gathered.redaction = _redaction(settings, contract, keys)
    ReplayUser.feed = feed
    return feed


def _keys(recordings: list[str], key_file: str | None) -> dict[str, bytes | None]:
    """Each recording's pseudonym key in this process: --key-file's where this machine has
    that file, else where capture put it (``harness.traffic.keys``)."""
    from harness.traffic.keys import recording_keys

    given = key_file if key_file and Path(key_file).is_file() else None
    try:
        found = recording_keys(recordings, given)
    except UsageError:  # not the key of this machine's copies: look for theirs
        found = recording_keys(recordings)
    return {path: k.key for path, k in found.items()}


def _redaction(settings: Settings, contract: Contract,
               keys: dict[str, bytes | None]) -> ReportRedaction:
    """The run's one face for every secret: a recording's key (a value reads as in the
    recording), else the master's key of the run; the -H values and passwords among them."""
    key = next((k for k in keys.values() if k), None) or bytes.fromhex(settings.report_key)
    redaction = ReportRedaction(contract, key)
    options = settings.options
    redaction.add([*(value for _, value in options.headers), *passwords(options.auth)])
    return redaction


def _skipped(reason: str) -> None:
    """A broken line or entry of the recordings, named as every reader names it."""
    print(f"harness load: skipped {reason}", file=sys.stderr, flush=True)


def _merged(settings: Settings, paths: list[str], schedule: Schedule, *, workers: int,
            broken: int) -> Merged:
    t = settings.timing
    merged = Merged(settings.target, environment=settings.options.environment,
                    recordings=list(paths), mode=t.mode, speed=t.speed,
                    loops=t.loops, max_wait=t.max_wait, rate=t.rate, users=t.users, shape=t.shape,
                    workers=workers, check_ratio=settings.check_ratio,
                    scheduled_duration_s=schedule.duration, broken_lines=broken)
    contract = from_dict(settings.contract)
    merged.report.scope = selection_scope(contract, settings.selection(contract))
    merged.report.redaction = _redaction(settings, contract, _keys(paths, settings.key_file))
    return merged


def _wait_for(found: Callable[[], list], count: int, timeout: float, message: str,
              errors: list[str]) -> list:
    """``found()`` once it holds ``count`` items; the first error or ``message`` after
    ``timeout`` seconds as one line."""
    deadline = time.monotonic() + timeout
    while len(items := found()) < count and not errors:
        if time.monotonic() > deadline:
            raise TargetUnreachable(message)
        gevent.sleep(0.1)
    if errors:
        raise HarnessError(errors[0])
    return items


class Interruptions:
    """What ``interruptions`` saw: the first signal (None: none)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.on_signal: Callable[[], None] | None = None


@contextlib.contextmanager
def interruptions(stop: Callable[[], None], wake: Callable[[], None]):
    """SIGINT, SIGTERM and SIGHUP end the run: the first calls ``stop`` (send nothing more)
    and ``wake`` (whatever waits for the run's end), and the run ends without a verdict
    (exit 128 + the signal); a second one ends the process at once."""
    import os
    import signal

    seen = Interruptions()

    def handler(signum: int) -> None:
        if seen.signal is not None:
            os._exit(128 + signum)
        seen.signal = signum
        if seen.on_signal is not None:
            seen.on_signal()
        stop()
        wake()

    handles = [gevent.signal_handler(sig, handler, sig)
               for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
    try:
        yield seen
    finally:
        for handle in handles:
            handle.cancel()


def _signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _say(outputs: Outputs, line: str) -> None:
    if not outputs.quiet:
        print(line, file=sys.stderr, flush=True)


def _start_outputs(env: Environment, outputs: Outputs, total: int | None) -> dict[str, Any]:
    """Progress in the console, the history CSV, the web UI: greenlets for the run."""
    extras: dict[str, Any] = {"greenlets": [], "total": total}
    if not outputs.quiet:
        extras["greenlets"].append(gevent.spawn(_progress, env, total))
    if outputs.csv:
        writer = locust_stats.StatsCSVFileWriter(env, locust_stats.PERCENTILES_TO_REPORT,
                                                 _prefix(outputs.csv), full_history=False)
        extras["csv"] = writer
        extras["greenlets"].append(gevent.spawn(writer.stats_writer))
    extras["greenlets"].append(gevent.spawn(locust_stats.stats_history, env.runner))
    if outputs.web_port is not None:
        extras["web"] = env.create_web_ui("127.0.0.1", outputs.web_port)
        _say(outputs, f"load: Locust's web UI on http://127.0.0.1:{outputs.web_port}")
    return extras


def _total(schedule: Schedule) -> int | None:
    """The requests a run sends (None: a shape's, which ends with the shape)."""
    return None if schedule.timing.shape else schedule.total


def _progress(env: Environment, total: int | None) -> None:
    """Locust's counts in the shared progress (``harness.progress``): a bar on a terminal,
    a line every 5 s without one; ends when the greenlet is killed."""
    with Progress("load", total=total, unit="requests") as progress:
        while True:
            gevent.sleep(0.5)
            t = env.stats.total
            progress.set(t.num_requests, t.num_failures)


def _prefix(path: str) -> str:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return path


def _finish(env: Environment, merged: Merged, outputs: Outputs, extras: dict[str, Any],
            started: float, errors: list[str], interrupted: int | None = None) -> int:
    for greenlet in extras["greenlets"]:
        greenlet.kill(block=False)
    total = env.stats.total
    report = merged.finish()
    report.meta.update(
        duration_s=round(time.time() - started, 3), requests=total.num_requests,
        locust_failures=total.num_failures, fail_ratio=round(total.fail_ratio, 4),
        rps=round(total.num_requests / max(time.time() - started, 1e-9), 1),
        p50_ms=total.get_response_time_percentile(0.5),
        p95_ms=total.get_response_time_percentile(0.95),
        p99_ms=total.get_response_time_percentile(0.99))
    if interrupted:
        # A run cut short: what it judged, marked interrupted (never a verdict), exit 128 + N
        report.interrupt(_signal_name(interrupted))
        report.planned = extras.get("total")  # "after N of M calls"
        if "csv" in extras:
            _write_csv(extras["csv"], outputs.csv)
        _write_report(report, outputs)
        print(f"harness load: interrupted by {_signal_name(interrupted)} after "
              f"{total.num_requests} request(s): the report is of the part that ran, "
              "no verdict", file=sys.stderr)
        for error in errors:
            if not error.startswith("interrupted by"):
                print(f"harness load: error: {error}", file=sys.stderr)
        return 128 + interrupted
    if not errors:
        require_judged(report)  # before anything is written: an empty run is no pass
    _add_trends(env, report, outputs, time.time() - started)
    if "csv" in extras:
        _write_csv(extras["csv"], outputs.csv)
    if outputs.html:
        _write_text(outputs.html, get_html_report(env, show_download_link=False))
    if errors and report.exit_code == 0:
        # Never PASSED for a run that did not complete (a worker lost, the run stopped).
        print(f"load: no verdict: the run did not complete ({total.num_requests} request(s) "
              "answered)", file=sys.stdout)
        code = 0
    else:
        code = _write_report(report, outputs)
    for error in errors:
        print(f"harness load: error: {error}", file=sys.stderr)
    breaches = _breaches(report, outputs)
    for line in breaches:
        print(f"harness load: {line}", file=sys.stdout)
    if "web" in extras:
        _say(outputs, "load: done; the web UI stays up until Ctrl-C")
        with contextlib.suppress(KeyboardInterrupt):
            gevent.sleep(1e9)
    if errors:
        return 2
    return 1 if code or breaches else 0


def _add_trends(env: Environment, report: Report, outputs: Outputs, seconds: float) -> None:
    """Locust's stats per operation x binding and in all (``stats``: what a later
    --baseline compares with), the user count a shape asked for and had
    (``users_over_time``), and the comparison with the --baseline as findings."""
    lines: dict[tuple[str, str], list] = {}
    for entry in env.stats.entries.values():
        key = split_name(entry.name)
        line = lines.setdefault(key, [0, 0, entry])
        line[0] += entry.num_requests
        line[1] += entry.num_failures
        if entry.num_requests > line[2].num_requests:
            line[2] = entry

    def percentiles(entry) -> tuple[Any, ...]:
        return tuple(entry.get_response_time_percentile(p) if entry.num_requests else None
                     for p in (0.5, 0.95, 0.99))

    stats = [stats_line(op, b, n, failed, seconds, *percentiles(entry))
             for (op, b), (n, failed, entry) in sorted(lines.items())]
    total = env.stats.total
    stats.append(stats_line(ALL, ALL, total.num_requests, total.num_failures, seconds,
                            *percentiles(total)))
    report.meta["stats"] = stats
    if isinstance(env.shape_class, Shaped):
        report.meta["users_over_time"] = env.shape_class.timeline
    if outputs.baseline is not None:
        report.titles.update(TREND_TITLES)
        report.meta["baseline_run"] = outputs.baseline["path"]
        report.extend(compare(outputs.baseline, stats, report.meta,
                              Limits(**(outputs.limits or {}))))


def _write_csv(writer, prefix: str) -> None:
    """Locust's stats, failures and exceptions CSVs as the run ended (the history CSV was
    written along the run)."""
    writer.close_files()
    for suffix, write in (("_stats.csv", writer.requests_csv),
                          ("_failures.csv", writer.failures_csv),
                          ("_exceptions.csv", writer.exceptions_csv)):
        with open(prefix + suffix, "w", newline="", encoding="utf-8") as f:
            write(csv.writer(f))


def _write_text(path: str, text: str) -> None:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write_report(report: Report, outputs: Outputs) -> int:
    m = report.meta
    print_report(report, sys.stdout)
    print(f"load: {m['requests']} requests in {m['duration_s']} s ({m['rps']} req/s), "
          f"p50 {m['p50_ms']} ms, p95 {m['p95_ms']} ms, p99 {m['p99_ms']} ms; "
          f"lag max {m['lag_max_s']} s, mean {m['lag_mean_s']} s, {m['late']} late; "
          f"{m['workers']} worker(s)", file=sys.stdout)
    if m.get("broken_lines"):
        print(f"harness load: {m['broken_lines']} broken line(s) skipped", file=sys.stderr)
    if outputs.json:
        write_json(report, outputs.json)
    if outputs.junit:
        write_junit(report, outputs.junit)
    if outputs.allure_dir:
        write_cases(report, outputs.allure_dir)
        print(f"load: Allure results in {outputs.allure_dir}", file=sys.stdout)
    return report.exit_code


def _breaches(report: Report, outputs: Outputs) -> list[str]:
    m, out = report.meta, []
    if outputs.fail_ratio is not None and m["fail_ratio"] > outputs.fail_ratio:
        out.append(f"failed requests {m['fail_ratio']:.2%} above --fail-ratio "
                   f"{outputs.fail_ratio:.2%}")
    if outputs.p95_ms is not None and (m["p95_ms"] or 0) > outputs.p95_ms:
        out.append(f"p95 {m['p95_ms']} ms above --p95-ms {outputs.p95_ms:g}")
    return out


def run_from_options(o: dict[str, Any]) -> int:
    """The child's entry: the options ``harness load`` parsed (harness.commands.load)."""
    quiet_locust_logs()
    if o["worker"]:
        return run_worker(o["recordings"], master_host=o["master_host"], port=o["master_port"])
    timing = Timing(o["speed"], o["loop"], o["max_wait"], o["rate"], o["users"],
                    o.get("shape"))
    sending = {"timeout": o["timeout"], "max_response_mb": o["max_response_mb"],
               "insecure": o["insecure"], "cacert": o["cacert"], "headers": o["header"],
               "auth": o.get("auth"), "environment": o.get("env")}
    settings = Settings(o["target"], o["contract"], timing, o["check_ratio"],
                        tuple(o["ignore"]), o["concurrency"], sending,
                        tuple(o["operation"]), tuple(o["binding"]), o.get("key_file"),
                        secrets.token_hex(KEY_BYTES))
    outputs = Outputs(o["json"], o["junit"], o["csv"], o["html"], o["quiet"], o["fail_ratio"],
                      o["p95_ms"], o["web_port"], o.get("baseline_run"), o.get("limits"),
                      o.get("allure_dir") or None)
    if o["master"]:
        return run_master(o["recordings"], settings, outputs, workers=o["expect_workers"],
                          bind_host=o["master_bind_host"], port=o["master_port"],
                          wait_workers=o["wait_workers"])
    return run_local(o["recordings"], settings, outputs)


def quiet_locust_logs() -> None:
    """Locust's own log lines at WARNING and above only (HARNESS_LOAD_LOG=DEBUG for all)."""
    import logging
    import os

    logging.basicConfig(level=os.environ.get("HARNESS_LOAD_LOG", "WARNING").upper(),
                        format="locust: %(levelname)s %(message)s")
