"""``harness certify``: run the conformance features against a deployment and give a verdict."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import add_contract_options, contract_from


def register(sub) -> None:
    p = add_command(sub, "certify", "Certify a deployment against the binding rules (the "
                    "Gherkin features): every operation on every binding. Exit 0 when every "
                    "mandatory rule holds, 1 when one fails, 2 for a usage error or an "
                    "unreachable target.",
                    "harness certify --target https://staging.example/School "
                    "--json reports/certify.json --junit reports/certify.xml")
    p.add_argument("--target", metavar="URL",
                   help="base URL of the deployment (default: start the embedded reference "
                        "on a free loopback port and certify it)")
    add_contract_options(p)
    p.add_argument("--json", metavar="FILE", type=Path,
                   help="write the verdict, counts and every failure and warning as JSON")
    p.add_argument("--junit", metavar="FILE", type=Path, help="write JUnit XML for CI")
    p.add_argument("--report-dir", metavar="DIR", type=Path, default=Path("reports"),
                   help="Allure results (DIR/allure-results) and the HTML report "
                        "(DIR/allure-report/index.html) (default reports/)")
    p.add_argument("--no-html", action="store_true",
                   help="write Allure results but do not render the HTML report")
    p.add_argument("--list-rules", action="store_true",
                   help="print the rules catalogue (rule ID, clause, side, what each profile "
                        "does) and exit")
    add_profile_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.judge import rules

    if args.list_rules:
        print(rules.catalogue_table())
        return 0
    from harness.certify.engine import Outputs, certify

    outputs = Outputs(json=args.json, junit=args.junit, report_dir=args.report_dir,
                      html=not args.no_html)
    return certify(args.target, contract_from(args), outputs, profile=profile_of(args))
