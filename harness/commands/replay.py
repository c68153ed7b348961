"""``harness replay``: send recorded requests to a target, judge and compare the answers."""

from __future__ import annotations

import argparse

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.lint import add_report_options, broken_line_printer, write_outputs
from harness.commands.options import add_contract_options, contract_from


def register(sub) -> None:
    p = add_command(sub, "replay", "Send each recorded request to a target (body bytes unchanged, "
                    "Host rewritten), judge each response with the response-side rules and "
                    "compare it with the recorded response.",
                    "harness replay recordings/sample.jsonl --target http://127.0.0.1:8000 "
                    "--concurrency 8 --json reports/replay.json")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files")
    p.add_argument("--target", required=True, metavar="URL",
                   help="base URL of the implementation to replay against")
    p.add_argument("--concurrency", type=_positive(int), default=8, metavar="N",
                   help="requests in flight (default 8), spread over one process per core")
    p.add_argument("--rate", type=_positive(float), default=None, metavar="R",
                   help="at most R requests per second overall (default: no limit)")
    p.add_argument("--ignore", action="append", default=[], metavar="PATH_GLOB",
                   help="element path pattern not compared, e.g. '*/Timestamp' (repeatable)")
    p.add_argument("--timeout", type=_positive(float), default=30.0, metavar="S",
                   help="seconds to wait for each response (default 30)")
    add_contract_options(p)
    add_report_options(p)
    add_profile_options(p)
    p.set_defaults(run=run)


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be above 0")
        return value
    return parse


def run(args: argparse.Namespace) -> int:
    from harness.traffic.replay import REPLAY_RULES, replay
    from harness.traffic.streaming import progress_bar

    failing = 0

    def advance(result) -> None:
        nonlocal failing
        failing += result.failing
        bar.set_postfix(failing=failing, refresh=False)
        bar.update(result.exchanges)

    with progress_bar("replay", quiet=args.quiet) as bar:
        report = replay(args.recordings, contract_from(args), args.target,
                        concurrency=args.concurrency, rate=args.rate, ignore=args.ignore,
                        timeout=args.timeout, on_broken=broken_line_printer("replay"),
                        on_progress=advance, profile=profile_of(args, REPLAY_RULES))
    return write_outputs(report, args)
