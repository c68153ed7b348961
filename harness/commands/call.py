"""``harness call``: one operation over one binding with given values, against any target,
shown (request and answer, pretty-printed and redacted) and judged by the binding rules."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import IO

from harness.commands import add_command
from harness.commands.judging import add_profile_options, profile_of
from harness.commands.options import (
    add_contract_options,
    add_send_options,
    check_outputs,
    contract_from,
    send_options,
)

#: Characters of a body shown; the rest is said, not printed (--json keeps the findings).
SHOWN_BODY = 64 * 1024


def register(sub) -> None:
    p = add_command(
        sub, "call", "Send one operation over one binding with the values given (the others "
        "generated), print the request and the answer (XML indented, secrets as pseudonyms) "
        "and judge the answer by the binding rules: SoapUI's request editor on the command "
        "line. Sends that call and nothing else. Exit 0 when every mandatory rule holds, 1 when "
        "one fails, 2 for a usage error or an unreachable target.",
        "harness call GetTokenDevice id=7 --binding soap12 --target "
        "https://staging.example/School")
    p.add_argument("operation", metavar="OPERATION",
                   help="the operation, as the contract names it (e.g. GetTokenDevice)")
    p.add_argument("pairs", nargs="*", metavar="NAME=VALUE",
                   help="a parameter's value (an array or complex one as JSON); parameters "
                        "not given take --values', else generated plain values")
    p.trailing_positionals = "pairs"  # NAME=VALUE after the options too
    p.add_argument("--target", metavar="URL",
                   help="base URL of the deployment (default: with --wsdl URL, the service "
                        "that WSDL describes; else the embedded reference, started for the "
                        "call)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--binding", dest="call_binding", metavar="LABEL",
                     help="soap11 (default), soap12, get or post")
    how.add_argument("--all-bindings", action="store_true",
                     help="call over every binding the operation is offered over, one after "
                          "another, and compare the answers in a table")
    add_contract_options(p)
    p.add_argument("--values", metavar="FILE",
                   help="values per operation (TOML or JSON, as certify's --values) for the "
                        "parameters not given as NAME=VALUE")
    p.add_argument("--key-file", metavar="PATH",
                   help="pseudonym key for the sensitive values shown: capture's key file "
                        "gives a recording's pseudonyms (default: a random key of this call)")
    p.add_argument("--json", metavar="FILE", help="write the verdict and findings as JSON")
    add_send_options(p, select=False)
    add_profile_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.call.engine import bindings_of, call, given_values, operation, wsdl_base
    from harness.contract.selection import Values
    from harness.reference.server import running
    from harness.reports.console import print_causes, verdict_line
    from harness.reports.json_report import write_json
    from harness.traffic.keys import load_or_create_key
    from harness.traffic.redaction import KEY_BYTES, ReportRedaction, redacting_reports
    from harness.traffic.send import base_url

    check_outputs(args.json)
    options = send_options(args)
    contract = contract_from(args, options)  # --wsdl URL: the one fetch asked for
    op = operation(contract, args.operation)
    layers = (Values.load(contract, args.values), given_values(contract, op, args.pairs))
    bindings = bindings_of(contract, op, args.call_binding, args.all_bindings)
    key = load_or_create_key(args.key_file) if args.key_file else _random_key(KEY_BYTES)
    target = args.target or (wsdl_base(args.wsdl[0]) if args.wsdl else None)
    with contextlib.ExitStack() as stack:
        url = base_url(target) if target else stack.enter_context(running(contract))
        shown = url if target else f"embedded reference at {url}"
        where = url if target else f"the embedded reference ({url})"
        print(f"call: {op.name} over {', '.join(b.label for b in bindings)} at {where}, "
              f"namespace {contract.namespace}"
              + ("" if args.namespace or args.wsdl or args.contract
                 else " (the contract's; --namespace sets another)"), file=sys.stdout)
        # one face for every secret (sensitive values, -H and config credentials, passwords)
        redaction = ReportRedaction(contract, key)
        report, answers = call(contract, op, bindings, url, layers, options, profile_of(args),
                               shown, redaction)
        with redacting_reports(redaction):
            _show(answers, op, sys.stdout)
            print_causes(report, sys.stdout)
            print(verdict_line(report), file=sys.stdout)
            if args.json:
                write_json(report, args.json)
    return report.exit_code


def _random_key(size: int) -> bytes:
    import secrets

    return secrets.token_bytes(size)


def _show(answers, op, out: IO[str]) -> None:
    """Each binding's request and answer, one after another, labelled; a table of the answers
    side by side when there are several."""
    from harness.call.engine import result_of
    from harness.judge.findings import Verdict
    from harness.traffic.report_text import http_text

    for answered in answers:
        label = answered.binding.label
        exchange = answered.exchange
        print(f"\n--- request, {label} " + "-" * 40, file=out)
        print(_cut(http_text(exchange.request, pretty=True)), file=out)
        if exchange.response is None:
            print(f"--- no answer, {label}: {answered.findings[0].actual}", file=out)
            continue
        print(f"\n--- answer, {label}: HTTP {exchange.response.status} in "
              f"{answered.seconds * 1000:.0f} ms " + "-" * 30, file=out)
        print(_cut(http_text(exchange.response, op.name, pretty=True)), file=out)
    print(file=out)
    if len(answers) < 2:
        return
    rows = [(a.binding.label,
             f"HTTP {a.exchange.response.status}" if a.exchange.response else "-",
             _short(result_of(a, op)),
             "failed" if any(f.verdict is Verdict.FAILED for f in a.findings) else
             "warning" if any(f.verdict is Verdict.WARNING for f in a.findings) else "passed")
            for a in answers]
    widths = [max(len(r[i]) for r in [("binding", "status", "answer", "verdict"), *rows])
              for i in range(4)]
    for row in [("binding", "status", "answer", "verdict"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip(), file=out)
    print(file=out)


def _cut(text: str) -> str:
    if len(text) <= SHOWN_BODY:
        return text
    return text[:SHOWN_BODY] + f"\n[... {len(text) - SHOWN_BODY:,} more characters not shown]"


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[:width - 1] + "…"
