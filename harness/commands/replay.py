"""``harness replay``: send recorded requests to a target, judge and compare the answers."""

from __future__ import annotations

import argparse
import sys

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.lint import add_report_options, broken_line_printer, write_outputs
from harness.commands.options import (
    MAX_CONCURRENCY,
    add_contract_options,
    add_key_option,
    add_send_options,
    check_outputs,
    check_service,
    contract_for_target,
    positive,
    rate,
    recording_keys,
    require,
    selection,
    send_options,
)


def register(sub) -> None:
    p = add_command(sub, "replay", "Send each recorded request to a target (body bytes unchanged, "
                    "Host rewritten), judge each response with the response-side rules and "
                    "compare it with the recorded response. A value the recording holds as a "
                    "pseudonym is compared by the new value's pseudonym under the recording's "
                    "key (found where capture put it, or --key-file); without the key it is "
                    "not compared, and every output says how many were not.",
                    "harness replay recordings/sample.jsonl --target http://127.0.0.1:8000 "
                    "--concurrency 8 --json reports/replay.json")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files")
    p.add_argument("--target", metavar="URL",
                   help="base URL of the implementation to replay against (required, as a flag "
                        "or in the config file)")
    p.add_argument("--concurrency", type=positive(int, MAX_CONCURRENCY), default=8, metavar="N",
                   help="requests in flight (default 8), spread over one process per core")
    p.add_argument("--rate", type=rate, default=None, metavar="R",
                   help="at most R requests per second overall (default: no limit)")
    p.add_argument("--ignore", action="append", default=[], metavar="PATH_GLOB",
                   help="element path pattern not compared, e.g. '*/Timestamp' (repeatable)")
    add_key_option(p)
    add_contract_options(p)
    add_send_options(p)
    add_report_options(p)
    add_profile_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.judge.streaming import count_exchanges
    from harness.progress import Progress
    from harness.replay import REPLAY_RULES, replay

    require(args, "target")
    check_outputs(args.json, args.junit)
    options = send_options(args)
    check_service(args, args.target, options)
    contract = contract_for_target(args, args.target, options, sys.stderr, "replay")
    keys = recording_keys(args, "replay")

    def advance(result) -> None:
        bar.update(result.exchanges, failing=result.failing)

    with Progress("replay", quiet=args.quiet, total=count_exchanges(args.recordings)) as bar:
        report = replay(args.recordings, contract, args.target,
                        concurrency=args.concurrency, rate=args.rate, ignore=args.ignore,
                        options=options, selection=selection(args, contract),
                        on_broken=broken_line_printer("replay"), on_progress=advance,
                        profile=profile_of(args, REPLAY_RULES), keys=keys)
    status = write_outputs(report, args)
    if report.meta.get("wrong_target"):
        print(f"replay: {report.meta['wrong_target']}")
    return status
