"""``harness probe``: robustness and security checks of a deployment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands import add_command
from harness.commands.options import (
    add_contract_options,
    add_send_options,
    check_outputs,
    check_service,
    contract_for_target,
    rate_or_zero,
    seconds,
    selection,
    send_options,
)


def register(sub) -> None:
    p = add_command(sub, "probe", "Probe a deployment for robustness and security: XML attacks "
                    "(entities, billion laughs, XInclude) with a canary, malformed envelopes, "
                    "invalid and boundary values generated with Hypothesis, HTTP-level oddities; "
                    "rules SEC-ENTITY, SEC-LEAK, ROB-NO-CRASH, ROB-TIME, ROB-FAULT-SHAPE, "
                    "ROB-REJECT (--timeout, 5 s by default here, is ROB-TIME's bound). "
                    "Bounded sizes, a request budget, nothing destructive. Exit 0 "
                    "when every rule holds, 1 when one fails, 2 for a usage error or an "
                    "unreachable target.",
                    "harness probe --target https://staging.example/School --max-requests 500 "
                    "--rate 10 --timeout 5 --json reports/probe.json --junit reports/probe.xml\n"
                    "  harness probe --replay reports/probe-failures.jsonl   # send the failing "
                    "cases again")
    p.add_argument("--target", metavar="URL",
                   help="base URL of the deployment (default: start the embedded reference on a "
                        "free loopback port and probe it)")
    add_contract_options(p)
    p.add_argument("--max-requests", type=int, default=1500, metavar="N",
                   help="send at most N requests, plain calls included (default 1500)")
    p.add_argument("--max-time", type=seconds, default=60.0, metavar="SECONDS",
                   help="start no case after SECONDS (default 60)")
    p.add_argument("--rate", type=rate_or_zero, default=0.0, metavar="PER_SECOND",
                   help="at most PER_SECOND requests a second (default: as fast as answered, "
                        "one at a time)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="Hypothesis seed for the generated values (default: the same values "
                        "every run)")
    p.add_argument("--replay", type=Path, metavar="FILE",
                   help="send the failing cases saved in FILE again and judge them")
    p.add_argument("--failures", type=Path, default=Path("reports/probe-failures.jsonl"),
                   metavar="FILE",
                   help="where failing cases are saved (default reports/probe-failures.jsonl)")
    p.add_argument("--json", metavar="FILE", type=Path,
                   help="write the verdict, counts and every failure and warning as JSON")
    p.add_argument("--junit", metavar="FILE", type=Path, help="write JUnit XML for CI")
    p.add_argument("--allure-dir", default="reports/allure-results", metavar="DIR",
                   help="write Allure results here for `harness report` (default "
                        "reports/allure-results; '' to skip)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 5 s on stderr)")
    p.add_argument("--list-rules", action="store_true",
                   help="print the probe's rules (rule ID, level, title) and exit")
    # --timeout is also ROB-TIME's bound: a few seconds here, not the 30 s of the other commands
    add_send_options(p, timeout=5.0)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.probe import checks

    if args.list_rules:
        print(checks.rules_table())
        return 0
    from harness.probe.runner import Budget, Outputs, probe

    check_outputs(args.json, args.junit, args.failures)
    options = send_options(args)
    check_service(args, args.target, options)
    contract = contract_for_target(args, args.target, options, sys.stdout, "probe")
    budget = Budget(args.max_requests, args.max_time, args.rate)
    outputs = Outputs(args.json, args.junit, Path(args.allure_dir) if args.allure_dir else None,
                      args.failures)
    return probe(args.target, contract, budget, outputs, options=options,
                 chosen=selection(args, contract), replay=args.replay, seed=args.seed,
                 quiet=args.quiet)
