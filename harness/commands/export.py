"""``harness export``: a recording (or HAR) as HAR 1.2 for browsers, Charles and Fiddler."""

from __future__ import annotations

import argparse
import sys

from harness.commands import add_command


def register(sub) -> None:
    p = add_command(sub, "export", "Export recordings as HAR 1.2 (opens in Chrome DevTools, "
                    "Charles, Fiddler); bodies byte-exact, headers in order.",
                    "harness export recordings/sample-all-bindings.jsonl -o sample.har")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="recordings or HAR files to export, in order")
    p.add_argument("-o", "--out", "--har", dest="out", required=True, metavar="FILE",
                   help="HAR file to write (-o/--out as every command that writes a file; "
                   "--har, its first name, still works)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.traffic.har import write_har
    from harness.traffic.recording import read_exchanges

    def broken(path, number, reason) -> None:
        print(f"harness export: warning: {reason} (skipped)", file=sys.stderr)

    count = write_har(read_exchanges(args.recordings, on_broken=broken), args.out,
                      comment="exported from " + ", ".join(args.recordings))
    print(f"harness export: {count} exchange(s) written to {args.out}", file=sys.stderr)
    return 0
