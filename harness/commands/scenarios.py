"""``harness scenarios``: features from recorded traffic, run with ``certify --features DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.commands import add_command
from harness.commands.lint import broken_line_printer
from harness.commands.options import (
    add_contract_options,
    add_key_option,
    contract_from,
    positive,
    recording_keys,
)


def register(sub) -> None:
    p = add_command(
        sub, "scenarios",
        "Write Gherkin features from recorded traffic: one feature per operation, a Scenario "
        "Outline over its recorded calls (binding, parameters sent, the recorded result or "
        "fault) in the step vocabulary of certify --features, so the traffic a team captured "
        "becomes its regression suite. Duplicate calls are merged; service descriptions are "
        "left out; a redacted result is checked by its pseudonym under the recording's key "
        "(by its shape only when the key is not found). Exit 0 when features were "
        "written, 2 when the recordings hold no call of the contract.",
        "harness scenarios recordings/staging.jsonl -o features/recorded\n"
        "  harness certify --target https://staging.example/School "
        "--features features/recorded")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="native recordings (.jsonl) or HAR 1.2 files")
    p.add_argument("-o", "--out", metavar="DIR", type=Path, required=True,
                   help="folder for the features (<Operation>.feature each)")
    add_contract_options(p)
    p.add_argument("--max-examples", type=positive(int), default=None, metavar="N",
                   help="distinct calls per operation written as Examples rows, the first "
                        "ones of the recordings (default 200); the rest are counted")
    p.add_argument("--force", action="store_true",
                   help="overwrite features of the same names in DIR")
    add_key_option(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.scenarios.record import MAX_EXAMPLES, write_features
    from harness.traffic.recording import read_exchanges

    contract = contract_from(args)
    keys = recording_keys(args, "scenarios", sys.stdout)
    report_broken = broken_line_printer("scenarios")
    exchanges = read_exchanges(args.recordings,
                               on_broken=lambda _path, _number, reason: report_broken(reason))

    def said(path: Path, calls) -> None:
        rows, more = len(calls.rows), calls.left_over
        print(f"scenarios: {path}: {calls.calls} call(s) of {calls.operation.name}, {rows} "
              f"distinct" + (f", {more} call(s) left out (--max-examples)" if more else "")
              + _redacted_said(calls))

    written = write_features(args.recordings, exchanges, contract, args.out, force=args.force,
                             limit=args.max_examples or MAX_EXAMPLES, on_file=said, keys=keys)
    for why, count in written.skipped.items():
        print(f"scenarios: left out {count} exchange(s): {why}")
    print(f"scenarios: {len(written.files)} feature(s) in {args.out}; run them: harness certify "
          f"--features {args.out} [--target URL]")
    return 0


def _redacted_said(calls) -> str:
    """How the feature checks a redacted result: by pseudonym, by shape, or both."""
    result = calls.operation.result_element or "the result"
    said = []
    if calls.pseudonym_key:
        said.append(f"{result} (redacted) checked by pseudonym under key {calls.pseudonym_key}")
    if calls.redacted_result:
        said.append(f"{result} (redacted) checked by shape only"
                    + (f": no key for {', '.join(sorted(calls.keyless))}" if calls.keyless
                       else ""))
    return "; " + "; ".join(said) if said else ""
