"""``harness certify``: run the conformance features against a deployment and give a verdict."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import (
    add_contract_options,
    add_send_options,
    check_outputs,
    check_service,
    contract_for_target,
    positive,
    selection,
    send_options,
)

if TYPE_CHECKING:
    from harness.reports.allure_report import Renderer


def register(sub) -> None:
    p = add_command(sub, "certify", "Certify a deployment against the binding rules (the "
                    "Gherkin features): every operation on every binding. Exit 0 when every "
                    "mandatory rule holds, 1 when one fails, 2 for a usage error, an "
                    "unreachable or silent target or a TLS failure.",
                    "harness certify --target https://staging.example/School "
                    "--json reports/certify.json --junit reports/certify.xml")
    p.add_argument("--target", metavar="URL",
                   help="base URL of the deployment (default: start the embedded reference "
                        "on a free loopback port and certify it)")
    add_contract_options(p)
    p.add_argument("--json", metavar="FILE", type=Path,
                   help="write the verdict, counts and every failure and warning as JSON")
    p.add_argument("--junit", metavar="FILE", type=Path, help="write JUnit XML for CI")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar on a terminal, else a line every 5 s on stderr)")
    p.add_argument("--report-dir", metavar="DIR", type=Path, default=Path("reports"),
                   help="Allure results (DIR/allure-results) and the HTML report "
                        "(DIR/allure-report/index.html) (default reports/)")
    p.add_argument("--no-html", action="store_true",
                   help="write Allure results but do not render the HTML report")
    p.add_argument("--history", metavar="FILE|DIR", type=Path,
                   help="Allure's history for the HTML report: the runs this JSON Lines file "
                   "holds show as trends, and this run is appended (a folder, e.g. the "
                   "previous --report-dir: its allure-history.jsonl)")
    p.add_argument("--list-rules", action="store_true",
                   help="print the rules catalogue (rule ID, clause, side, what each profile "
                        "does) and exit")
    add_send_options(p)
    p.add_argument("--rule", action="append", default=[], metavar="RULE_ID",
                   help="run only the scenarios tagged with this rule ID, e.g. R4-STATUS "
                        "(repeatable; see --list-rules)")
    p.add_argument("--maxfail", type=positive(int), metavar="N",
                   help="stop after N failed scenarios")
    p.add_argument("--features", metavar="DIR", type=Path,
                   help="run your own *.feature files (e.g. written for another contract) "
                        "with the harness's steps, instead of the packaged features")
    p.add_argument("--values", metavar="FILE",
                   help="real test data per operation (TOML: [Operation] param = value; or "
                        "FILE.json: {\"Operation\": {\"param\": value}}), used instead of "
                        "generated values; an array or complex parameter takes a JSON list or "
                        "object (fields not named keep their generated values)")
    p.add_argument("--key-file", metavar="PATH",
                   help="pseudonym key for the secrets reports show: a recording's key file "
                   "(capture keeps it in your key store, ~/.local/share/harness/keys/<key "
                   "id>.key) gives the recording's pseudonyms, so a value reads the same in "
                   "both, and lets features compare by pseudonym (default: the key of the "
                   "recording the --features check by pseudonym, from your key store, else a "
                   "random key of this run; a missing file is created 0600)")
    add_profile_options(p)
    p.add_argument("--require-wsdl", action="store_true",
                   help="an endpoint that publishes no WSDL at ?WSDL fails (default: a "
                        "warning, as the spec asks for none and hardened ASP.NET deployments "
                        "remove the Documentation protocol); the same as --severity "
                        "WSDL-PUBLISHED=failure")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.judge import rules

    if args.list_rules:
        print(rules.catalogue_table())
        return 0
    from harness.reports.allure_report import Renderer

    # Node and Allure's modules load while the rest of the harness imports and the features
    # run (on the other core): the HTML report's start-up is off the run's critical path.
    with contextlib.nullcontext() if args.no_html else Renderer() as renderer:
        return _run(args, renderer)


def _run(args: argparse.Namespace, renderer: Renderer | None) -> int:
    from harness.certify.engine import Outputs, Settings, certify, features_key, user_features
    from harness.contract.selection import Values
    from harness.traffic.redaction import load_or_create_key

    check_outputs(args.json, args.junit)
    options = send_options(args)
    check_service(args, args.target, options)
    contract = contract_for_target(args, args.target, options, sys.stdout, "certify")
    features = user_features(args.features) if args.features else ()
    if features:  # every step a sentence of the vocabulary, naming what exists: before a run
        from harness.scenarios.lint import check_features

        check_features(features, contract)
    settings = Settings(send=options, selection=selection(args, contract),
                        values=Values.load(contract, args.values),
                        key=(load_or_create_key(args.key_file) if args.key_file
                             else features_key(features)),
                        rules=frozenset(args.rule), maxfail=args.maxfail, features=features,
                        quiet=args.quiet)
    outputs = Outputs(json=args.json, junit=args.junit, report_dir=args.report_dir,
                      html=not args.no_html, history=args.history)
    if args.require_wsdl:
        args.severity = [*args.severity, "WSDL-PUBLISHED=failure"]
    return certify(args.target, contract, outputs, settings=settings,
                   profile=profile_of(args), renderer=renderer)
