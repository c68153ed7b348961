"""``harness lint``: judge recorded traffic (native recordings or HAR) without sending anything."""

from __future__ import annotations

import argparse
import sys

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import (
    MAX_WORKERS,
    add_contract_options,
    contract_from,
    positive,
)
from harness.judge.findings import Report
from harness.reports import ALLURE_RESULTS
from harness.reports.console import print_report, require_judged
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit


def register(sub) -> None:
    p = add_command(sub, "lint", "Judge recorded requests (the client: e.g. the mobile app) and "
                    "recorded responses against the spec's rules, sending nothing.",
                    "harness lint recordings/app-1.4.jsonl traffic.har --json reports/lint.json")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files, judged in the order given")
    add_contract_options(p)
    p.add_argument("--workers", type=positive(int, MAX_WORKERS), default=None,
                   help="worker processes (default: one per core for large inputs)")
    add_report_options(p)
    add_profile_options(p, config=True)
    p.add_argument("--baseline", metavar="FILE",
                   help="the --json of an earlier run: report only findings not in it")
    p.set_defaults(run=run)


def add_report_options(p: argparse.ArgumentParser) -> None:
    """--json, --junit, --allure-dir and --quiet: shared by the commands that judge traffic
    into a Report (lint, replay, load)."""
    p.add_argument("--json", metavar="FILE", help="write the report as JSON")
    p.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML")
    p.add_argument("--allure-dir", default=ALLURE_RESULTS, metavar="DIR",
                   help=f"write Allure results here for `harness report`, beside other "
                        f"commands' (default {ALLURE_RESULTS}; '' to skip)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def broken_line_printer(command: str):
    """Prints each broken recording line as one line on stderr."""
    def report(reason: str) -> None:
        print(f"harness {command}: skipped {reason}", file=sys.stderr)
    return report


def write_outputs(report: Report, args: argparse.Namespace) -> int:
    """Console summary, then the files asked for; the exit status (0 passed, 1 failed).

    A run that judged nothing (an empty or truncated recording, one of service descriptions
    only, one that --operation/--binding leave nothing of) is an error, not a pass:
    NothingJudged (one line, exit 2). An interrupted run writes what it judged and exits 130
    (SIGINT) or 143 (SIGTERM)."""
    require_judged(report)
    broken = report.meta.get("broken_lines", 0)
    print_report(report, sys.stdout)
    if broken:
        print(f"harness {report.command}: {broken} broken line(s) skipped", file=sys.stderr)
    if args.json:
        write_json(report, args.json)
    if args.junit:
        write_junit(report, args.junit)
    if args.allure_dir:
        from harness.reports.allure_results import write_cases  # Allure's model: only now

        write_cases(report, args.allure_dir)
        print(f"{report.command}: Allure results in {args.allure_dir}")
    return report.exit_code


def run(args: argparse.Namespace) -> int:
    from harness.judge.lint import lint
    from harness.progress import Progress

    with Progress("lint", quiet=args.quiet) as bar:
        report = lint(args.recordings, contract_from(args), workers=args.workers,
                      on_broken=broken_line_printer("lint"),
                      on_progress=lambda result: bar.update(result.exchanges,
                                                             failing=result.failing),
                      profile=profile_of(args), baseline=args.baseline)
    return write_outputs(report, args)
