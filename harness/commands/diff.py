"""``harness diff``: where does a candidate implementation answer differently from a primary?"""

from __future__ import annotations

import argparse
import sys

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import (
    MAX_CONCURRENCY,
    add_contract_options,
    add_send_options,
    check_outputs,
    check_service,
    contract_for_target,
    positive,
    require,
    role_target,
    selection,
    send_options,
)
from harness.errors import UsageError
from harness.reports.console import print_report
from harness.reports.json_report import write_json
from harness.reports.junit import write_junit


def register(sub) -> None:
    p = add_command(
        sub, "diff", "Send the same requests to a primary (e.g. the legacy deployment) and a "
        "candidate (the new one) and report every answer that differs: status, Content-Type, "
        "XML bodies compared structurally, SOAP faults; noise learned from --secondary; each "
        "implementation checked for the same result over all four bindings.",
        "harness diff --primary https://legacy.example/School --secondary "
        "https://legacy2.example/School --candidate https://new.example/School "
        "recordings/x.jsonl --json reports/diff.json")
    p.add_argument("recordings", nargs="*", metavar="RECORDING",
                   help="recordings (native .jsonl or HAR) whose requests are sent; none: "
                        "requests generated from the contract for every operation x binding")
    p.add_argument("--primary", metavar="URL|env:NAME",
                   help="base URL of the implementation taken as right (e.g. the legacy one; "
                        "required, as a flag or in the config file); env:NAME: the target of "
                        "the config file's [env.NAME], sent with its credentials, headers and "
                        "TLS")
    p.add_argument("--candidate", metavar="URL|env:NAME",
                   help="base URL of the implementation under test (required; env:NAME as "
                        "for --primary)")
    p.add_argument("--secondary", metavar="URL|env:NAME",
                   help="a second instance of the primary: what differs between it and the "
                        "primary is noise, not held against the candidate")
    add_contract_options(p)
    p.add_argument("--ignore", action="append", default=[], metavar="PATH_GLOB",
                   help="element path pattern not compared, e.g. '*/Header' (repeatable)")
    p.add_argument("--ignore-values", action="append", default=[], metavar="PATH_GLOB",
                   help="element path pattern whose text is not compared while its structure "
                        "(names, order, attributes) still is: two implementations with other "
                        "data, e.g. '*/ListProductsResult/*' (repeatable)")
    p.add_argument("--errors", action="store_true",
                   help="without RECORDING: also send 120 erroneous requests (a SOAP version "
                        "that does not match the Content-Type, malformed XML, a wrong envelope "
                        "namespace, markup in GET/POST values, missing and non-integer "
                        "parameters) and compare the error answers")
    p.add_argument("--json", metavar="FILE", help="write the JSON report here")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 5 s on stderr)")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    p.add_argument("--allure-dir", default="reports/allure-results", metavar="DIR",
                   help="write Allure results here for `harness report` "
                        "(default reports/allure-results; '' to skip)")
    p.add_argument("--jobs", type=positive(int, MAX_CONCURRENCY), default=8,
                   help="requests in flight (default 8)")
    add_send_options(p)
    add_profile_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.diff import (
        Diff,
        Targets,
        generated_cases,
        print_places,
        recorded_cases,
        write_allure,
    )
    from harness.diff.engine import TITLES
    from harness.reports.console import require_judged
    from harness.traffic.send import check_reachable

    require(args, "primary", "candidate")
    if args.errors and args.recordings:
        raise UsageError("--errors adds erroneous requests to the generated ones; with "
                         "RECORDING the recorded requests are sent (drop one of them)")
    check_outputs(args.json, args.junit)
    options = send_options(args)
    # A role named env:NAME is sent with that environment's settings (per-target credentials)
    roles = {role: role_target(args, role) for role in ("primary", "candidate", "secondary")}
    targets = {role: (url, own or options) for role, (url, own) in roles.items() if url}
    for url, sent in targets.values():
        check_reachable(url, options=sent)  # every target up before the ?WSDL line
    for url, sent in targets.values():
        check_service(args, url, sent)
    primary, primary_options = targets["primary"]
    contract = contract_for_target(args, primary, primary_options, sys.stderr, "diff")
    chosen = selection(args, contract)
    cases = (recorded_cases(contract, args.recordings, on_broken=_warn_broken)
             if args.recordings else list(generated_cases(contract, errors=args.errors,
                                                          chosen=chosen)))
    diff = Diff(contract, Targets(primary, targets["candidate"][0],
                                  targets.get("secondary", (None,))[0]),
                ignore=args.ignore, ignore_values=args.ignore_values, jobs=args.jobs,
                options=options, selection=chosen, profile=profile_of(args, TITLES),
                key=_recordings_key(args.recordings),
                role_options={role: own for role, (_, own) in roles.items() if own})
    if args.recordings:  # what a run that judged nothing names
        diff.report.meta["recordings"] = [str(p) for p in args.recordings]
    from harness.progress import Progress

    total = len(cases) if isinstance(cases, (list, tuple)) else None
    with Progress("diff", total=total, unit="cases", quiet=args.quiet) as progress:
        result = diff.run(cases, progress)
    require_judged(result.report)
    print_places(result, sys.stdout)
    print_report(result.report, sys.stdout)
    for line in result.report.meta.get("wrong_target", []):
        print(f"diff: {line}", file=sys.stdout)
    if args.json:
        write_json(result.report, args.json)
    if args.junit:
        write_junit(result.report, args.junit)
    if args.allure_dir:
        write_allure(result, args.allure_dir)
    return result.report.exit_code


def _warn_broken(path, line: int, reason: str) -> None:
    print(f"harness diff: warning: skipped {reason}", file=sys.stderr)


def _recordings_key(recordings: list[str]) -> bytes | None:
    """The key of the first recording whose key is found (its pseudonyms are the reports'):
    a value then reads in diff's reports as in the recording."""
    from harness.traffic.keys import recording_keys

    return next((k.key for k in recording_keys(recordings or []).values() if k.key), None)
