"""``harness contract``: a contract file from a deployment's WSDLs, or a deployment checked
against a saved contract."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands import add_command
from harness.errors import UsageError


def register(sub) -> None:
    p = add_command(sub, "contract", "Write the contract of an ASMX service from its WSDLs "
                    "(one per .asmx endpoint; read with zeep's parser, nothing is called), or "
                    "with --check compare them with a saved contract. The file is JSON, one "
                    "line per parameter, for people and diffs; every command takes it with "
                    "--contract FILE.",
                    "harness contract --wsdl http://host/Stock.asmx --wsdl http://host/Catalog"
                    ".asmx --name Inventory -o inventory.json")
    p.add_argument("--wsdl", metavar="URL|FILE", action="append", default=[],
                   help="an endpoint's WSDL: its URL (?WSDL is added) or a saved file; repeat "
                        "for every endpoint (default with --check: each endpoint of the saved "
                        "contract under --target)")
    p.add_argument("-o", "--out", metavar="FILE", type=Path,
                   help="write the contract here (default: standard output)")
    p.add_argument("--name", default="", help="the service's name in the contract (default: "
                   "the first WSDL's service name)")
    p.add_argument("--annotate", metavar="FILE",
                   help="keep what a WSDL cannot say (name, clauses, sensitive flags) from "
                        "this contract file; 'school-mobile' for the shipped one")
    p.add_argument("--sensitive", metavar="NAME", action="append", default=[],
                   help="mark this parameter (NAME or Operation.NAME) or result (its element, "
                        "e.g. GetTokenDeviceResult, or Operation.result) as personal data: "
                        "redacted in recordings and reports (repeatable; kept in the file as "
                        "\"sensitive\"/\"result_sensitive\")")
    p.add_argument("--check", metavar="FILE",
                   help="compare the WSDLs with this saved contract instead of writing one: "
                        "exit 1 naming each drift (operation, parameter order or type, result "
                        "type, binding)")
    p.add_argument("--target", metavar="URL",
                   help="with --check and no --wsdl: the deployment's base URL")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.contract import model, wsdl_import
    from harness.traffic.wsdls import import_wsdls

    if args.check:
        return _check(args)
    if not args.wsdl:
        raise UsageError("give at least one --wsdl URL|FILE")
    contract = import_wsdls(args.wsdl, args.name)
    if args.annotate:
        known = (model.school_mobile() if args.annotate == "school-mobile"
                 else model.load(args.annotate))
        contract = wsdl_import.annotate(contract, known)
    if args.sensitive:
        contract = model.mark_sensitive(contract, args.sensitive)
    text = model.dumps(contract)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        args.out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"harness contract: {len(contract.operations)} operation(s) on "
          f"{len(contract.endpoints)} endpoint(s), namespace {contract.namespace}, "
          f"{_sensitive_said(contract)} -> {args.out}", file=sys.stderr)
    return 0


def _sensitive_said(contract) -> str:
    names = sorted(contract.sensitive_names())
    return (f"sensitive: {', '.join(names)}" if names else
            "nothing marked sensitive (--sensitive NAME marks personal data)")


def _check(args: argparse.Namespace) -> int:
    from harness.contract import model
    from harness.judge import wsdl_rules
    from harness.judge.findings import Verdict

    saved = (model.school_mobile() if args.check == "school-mobile" else model.load(args.check))
    if args.wsdl:
        descriptions = wsdl_rules.describe_sources(saved, args.wsdl)
    elif args.target:
        descriptions = wsdl_rules.describe_deployment(saved, args.target)
    else:
        raise UsageError("--check needs --wsdl URL|FILE or --target URL")
    findings = wsdl_rules.judge_deployment(saved, descriptions)
    # Drift from the saved contract is any difference, what certify only warns of included
    # (a binding the WSDL leaves out, an operation the contract does not name).
    drift = [f for f in findings if f.verdict in (Verdict.FAILED, Verdict.WARNING)]
    for f in drift:
        where = " ".join(x for x in (f.source, f.operation, f.binding) if x)
        print(f"[{f.rule}] {where}: expected {f.expected}, actual {f.actual}"
              + (f" ({f.message})" if f.message else ""))
    print(f"harness contract: {len(drift)} drift(s) from {args.check} in "
          f"{len(findings)} check(s)", file=sys.stderr)
    return 1 if drift else 0
