"""``harness report``: Allure results -> one offline HTML file (analytics stripped)."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from harness.commands import add_command
from harness.errors import UsageError


def register(sub) -> None:
    p = add_command(sub, "report", "Render Allure results (from certify, lint, replay, "
                    "diff, load, probe, shadow, or the recorded-traffic feature under pytest; "
                    "several commands into one folder make one dashboard) into one HTML file "
                    "that opens offline; Allure's analytics script is removed.",
                    "harness certify --target URL --no-html && harness replay day.jsonl "
                    "--target URL\n  harness report --results reports/allure-results "
                    "--out reports/nightly.html")
    p.add_argument("--results", metavar="DIR", type=Path,
                   default=Path("reports/allure-results"),
                   help="Allure results folder (default reports/allure-results)")
    p.add_argument("-o", "--out", metavar="FILE", type=Path,
                   default=Path("reports/allure-report/index.html"),
                   help="the HTML file to write (default reports/allure-report/index.html)")
    p.add_argument("--name", default="harness", help="report title (default harness)")
    p.add_argument("--history", metavar="FILE|DIR",
                   help="Allure's history: show the runs this JSON Lines file holds (trends, "
                   "each test's history) and append this one (a folder: its "
                   "allure-history.jsonl). Keep it between the runs of a nightly job")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from harness.reports.allure_report import render

    if args.out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--out {args.out} is not an .html file")
    with tempfile.TemporaryDirectory(prefix="harness-report-") as work:
        html = render(args.results, Path(work) / "report", name=args.name,
                      history=args.history)
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(html, args.out)
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"harness report: {args.out} (one file, opens offline)", file=sys.stderr)
    return 0
