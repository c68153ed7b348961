"""``harness load``: replay recordings at scale on Locust, timing-faithful, distributed.

This module never imports Locust: gevent's monkey-patching stays out of the CLI's process.
``run`` starts a child Python process (``python -m harness.load``) that does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import subprocess
import sys

from harness.commands import add_command
from harness.commands.lint import add_report_options
from harness.commands.options import (
    MAX_CONCURRENCY,
    MAX_COUNT,
    MAX_SECONDS,
    MAX_WORKERS,
    add_contract_options,
    add_key_option,
    add_send_options,
    check_outputs,
    check_service,
    contract_for_target,
    contract_from,
    count,
    port,
    positive,
    rate,
    recording_keys,
    seconds,
    selection,
    send_options,
)
from harness.errors import UsageError

EXAMPLE = """harness load recordings/day.jsonl --target http://127.0.0.1:8000 --speed 200% \\
      --csv reports/load --html reports/load.html --json reports/load.json --p95-ms 500

  Across machines (the recordings on every machine; start the workers, then the master):
    harness load --worker --master-host 10.0.0.5 recordings/day.jsonl      # on each worker
    harness load --master --expect-workers 2 --master-bind-host 0.0.0.0 \\
      recordings/day.jsonl --target https://staging.example/School             # on the master"""


_PLAIN = (str, int, float, bool, list, tuple, type(None))


def register(sub) -> None:
    p = add_command(sub, "load", "Send recorded requests as Locust tasks, at the recorded pace "
                    "(or --speed, --rate, --users), on one machine or distributed (Locust "
                    "master/workers); judge each answer as harness replay does, and report "
                    "Locust's stats (rps, latency percentiles) with the verdict.", EXAMPLE)
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files (a worker reads its own "
                   "copy: the same files as the master)")
    p.add_argument("--target", metavar="URL", help="base URL of the implementation under load "
                   "(required, except on a --worker: the master says it)")
    when = p.add_argument_group("timing (default: the recorded pace, an open model)")
    when.add_argument("--speed", type=_speed, default=1.0, metavar="F",
                      help="replay speed: 200%% or 2 (twice as fast), 50%% or 0.5 (default 1)")
    when.add_argument("--loop", type=count, default=None, metavar="N",
                      help="send the recordings N times, one loop after the other (default 1; "
                      "with --shape: over and over until the shape ends)")
    when.add_argument("--max-wait", type=_non_negative, default=None, metavar="S",
                      help="clamp each recorded gap between requests to S seconds")
    mode = when.add_mutually_exclusive_group()
    mode.add_argument("--rate", type=rate, default=None, metavar="R",
                      help="R requests per second overall instead of the recorded pace")
    mode.add_argument("--users", type=positive(int, MAX_CONCURRENCY), default=None, metavar="N",
                      help="closed model: N users in all, each sends its next request as soon "
                      "as its answer came back")
    mode.add_argument("--shape", type=_shape, default=None, metavar="STAGES",
                      help="closed model whose user count follows these stages, on Locust's "
                      "LoadTestShape, e.g. ramp:0..50/60s,hold:120s or steps:10..50+10/30s "
                      "(also step:N/DUR); the run lasts as long as the shape")
    when.add_argument("--concurrency", type=positive(int, MAX_CONCURRENCY), default=100,
                      metavar="N",
                      help="requests in flight at most per process in the open models "
                      "(default 100); when reached, the run falls behind and the lag says so")
    when.add_argument("--dry-run", action="store_true",
                      help="print the expected duration and rate, send nothing")
    judge = p.add_argument_group("judging and sending")
    judge.add_argument("--check-ratio", type=_ratio, default=1.0, metavar="F",
                       help="judge only this share of the exchanges (0 < F <= 1; default 1: "
                       "all); unanswered requests always count")
    judge.add_argument("--ignore", action="append", default=[], metavar="PATH_GLOB",
                       help="element path pattern not compared, e.g. '*/Timestamp'")
    add_key_option(p)
    add_contract_options(p)
    add_send_options(p)
    out = p.add_argument_group("output and exit status")
    add_report_options(out)
    out.add_argument("--csv", metavar="PREFIX", help="Locust's CSV stats: PREFIX_stats.csv, "
                     "PREFIX_stats_history.csv, PREFIX_failures.csv, PREFIX_exceptions.csv")
    out.add_argument("--html", metavar="FILE", help="Locust's HTML report")
    out.add_argument("--fail-ratio", type=_ratio_or_zero, default=None, metavar="F",
                     help="exit 1 when more than this share of requests failed (0..1)")
    out.add_argument("--p95-ms", type=positive(float, MAX_SECONDS * 1000), default=None,
                     metavar="MS",
                     help="exit 1 when the 95th percentile response time is above MS")
    trend = p.add_argument_group("run over run (--baseline: the --json of a previous load run)")
    trend.add_argument("--baseline", metavar="FILE",
                       help="compare rps, latency percentiles and the failed share per "
                       "operation x binding with this previous run's --json: exit 1 on a "
                       "regression beyond the limits below")
    for name, default in (("p50", None), ("p95", "20%"), ("p99", None)):
        trend.add_argument(f"--max-{name}-regression", type=_share, default=default,
                           metavar="SHARE", help=f"{name} response time higher than the "
                           "baseline's by more than this share (20%% or 0.2) fails"
                           + (f" (default {default})".replace("%", "%%") if default
                              else " (default: not compared)"))
    trend.add_argument("--max-rps-regression", type=_share, default="20%", metavar="SHARE",
                       help="requests per second lower by more than this share fails (default "
                       "20%%; compared only when both runs had the same timing settings)")
    trend.add_argument("--max-failure-regression", type=_share, default="1%", metavar="SHARE",
                       help="a failed share of requests higher by more than this (percentage "
                       "points) fails (default 1%%)")
    trend.add_argument("--min-regression-ms", type=_non_negative, default=10.0, metavar="MS",
                       help="a latency regression must also exceed MS milliseconds (default "
                       "10: a few ms on a fast answer are noise)")
    out.add_argument("--web-port", type=port(), default=None, metavar="PORT",
                     help="Locust's web UI on 127.0.0.1:PORT during the run, and after it "
                     "until Ctrl-C (default: headless)")
    dist = p.add_argument_group("distributed (Locust's master and workers)")
    role = dist.add_mutually_exclusive_group()
    role.add_argument("--master", action="store_true", help="be the master: hand out slices, "
                      "gather the stats and findings, write the report")
    role.add_argument("--worker", action="store_true", help="be a worker of --master-host")
    dist.add_argument("--expect-workers", type=positive(int, MAX_WORKERS), default=1,
                      metavar="N",
                      help="the master starts once N workers are connected (default 1)")
    dist.add_argument("--wait-workers", type=seconds, default=120.0, metavar="S",
                      help="seconds the master waits for them (default 120)")
    dist.add_argument("--master-host", default="127.0.0.1", metavar="HOST",
                      help="the master a worker connects to (default 127.0.0.1)")
    dist.add_argument("--master-bind-host", default="127.0.0.1", metavar="HOST",
                      help="interface the master listens on (default 127.0.0.1; 0.0.0.0 for "
                      "workers on other machines)")
    dist.add_argument("--master-port", type=port(), default=5557, metavar="PORT",
                      help="the master's port (default 5557)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.worker and not args.target:
        raise UsageError("--target is required (except on a --worker)")
    if args.target:
        from harness.traffic.send import base_url

        args.target = base_url(args.target)
    from harness.contract.model import to_dict

    check_outputs(args.json, args.junit, args.html)
    if args.shape and args.worker:
        raise UsageError("--shape is the master's (a worker takes it from the master)")
    if args.shape:
        from harness.load.shape import parse_shape

        args.users = parse_shape(args.shape).peak  # the closed model's users at most
    if args.loop is None:
        args.loop = MAX_COUNT if args.shape else 1
    trends = _trends(args)
    sending = send_options(args)
    if args.dry_run:  # nothing is sent: no need to ask the target for its namespace
        return dry_run(args, contract_from(args))
    if args.worker:  # the master checked the target and says the contract: nothing to ask
        contract = contract_from(args)
    else:
        check_service(args, args.target, sending)
        contract = contract_for_target(args, args.target, sending, sys.stderr, "load")
    selection(args, contract)  # names checked here, applied by each sending process
    recording_keys(args, "load")  # said here (a missing key); each process finds its own
    # The options as plain data, the contract too: the child (and every worker, from the
    # master) judges with it.
    options = {k: v for k, v in vars(args).items() if isinstance(v, _PLAIN)
               and k not in _SECRET} | {"contract": to_dict(contract), "parent": os.getpid(),
                                        **trends}
    # Headers and credentials through the environment: a command line is visible to all.
    secrets = {"header": [list(h) for h in sending.headers], "auth": sending.auth.to_data()}
    # Its own process group: a Ctrl-C at the terminal reaches the child once, through us.
    child = subprocess.Popen([sys.executable, "-m", "harness.load", json.dumps(options)],
                             process_group=0,
                             env={**os.environ, "HARNESS_LOAD_SECRETS": json.dumps(secrets)})
    with _forwarding_signals(child):
        code = child.wait()
    return 128 - code if code < 0 else code  # killed by a signal: the shell's 128 + N


#: Options never on the child's command line (they travel in HARNESS_LOAD_SECRETS).
_SECRET = frozenset({"user", "cert_pass", "wsse_user", "login_data", "header", "login_header"})


@contextlib.contextmanager
def _forwarding_signals(child: subprocess.Popen):
    """SIGINT, SIGTERM and SIGHUP to this process go to the child, which ends its run (a
    second one ends it at once); the child ends by itself if this process is killed."""
    def forward(signum, frame) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    try:
        old = {sig: signal.signal(sig, forward)
               for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread: nothing to forward from
        old = {}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _trends(args: argparse.Namespace) -> dict:
    """The --baseline run, read now (a bad file: one line before anything is sent), and the
    limits, as the load process takes them."""
    if not args.baseline:
        return {}
    from harness.load.trend import Limits, read_baseline

    def share(value) -> float | None:
        return _share(value) if isinstance(value, str) else value

    limits = Limits(p50=share(args.max_p50_regression), p95=share(args.max_p95_regression),
                    p99=share(args.max_p99_regression), rps=share(args.max_rps_regression),
                    failures=share(args.max_failure_regression),
                    min_ms=args.min_regression_ms)
    return {"baseline_run": read_baseline(args.baseline), "limits": limits.to_data()}


def _shape(text: str) -> str:
    from harness.load.shape import parse_shape

    try:
        parse_shape(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _share(text: str) -> float:
    """20% or 0.2 -> 0.2 (at least 0)."""
    stripped = text.strip()
    if stripped.endswith("%"):
        return _number(stripped[:-1], 0.0, None, False) / 100.0
    return _number(stripped, 0.0, None, False)


def dry_run(args: argparse.Namespace, contract) -> int:
    from harness.load.schedule import Schedule, Timing
    from harness.load.slicing import read_slice

    recordings = read_slice(args.recordings, contract, keep=False)
    timing = Timing(args.speed, args.loop, args.max_wait, args.rate, args.users, args.shape)
    print(f"load: {Schedule(recordings.started, timing).describe()}")
    return 0


def _speed(text: str) -> float:
    from harness.load.schedule import parse_speed

    try:
        return parse_speed(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _number(text: str, low: float, high: float | None, low_open: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number")
    if value < low or (low_open and value == low) or (high is not None and value > high):
        raise argparse.ArgumentTypeError(
            f"{text} is out of range ({'above' if low_open else 'at least'} {low:g}"
            + (f", at most {high:g})" if high is not None else ")"))
    return value


def _ratio(text: str) -> float:
    return _number(text, 0.0, 1.0, True)


def _ratio_or_zero(text: str) -> float:
    return _number(text, 0.0, 1.0, False)


def _non_negative(text: str) -> float:
    return _number(text, 0.0, MAX_SECONDS, False)
