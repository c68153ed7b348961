"""Regenerate harness/contract/asmx_matrix.json from the real ASMX runtime (scripts/asmx_matrix).

Each row's hand-written part (ID, rule, binding, the request in words, the verdict on another
value, why) stays; what ASMX answers is written from what the three configurations answer:

- a row stating an equivalence (``"as": ...``) is checked: for every operation it applies to,
  on every configuration, the odd request's answer equals the answer to the spec call with the
  equivalent values (status, media type, form, envelope version, value). A row where it does
  not hold is listed and the run exits 1: edit the row (a fixed answer, or another equivalence).
- a row with a fixed answer gets the statuses, media type and form observed; the media type and
  form must agree over every operation and configuration (else it is listed, exit 1); several
  statuses are kept when configurations differ (e.g. 405 stock, 500 hardened).

``observed`` records, per configuration, the answer to the first operation with a result the row
applies to (GetTokenDevice in School Mobile): the evidence docs/third-party-stacks.md quotes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness.contract.model import Contract, school_mobile
from harness.judge import asmx_matrix
from harness.traffic import send
from harness.traffic.exchange import HttpRequest, HttpResponse

ROOT = Path(__file__).resolve().parents[1]
HARDENED_CONFIG = ROOT / "tests" / "services" / "asmx_hardened" / "web.config"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/asmx_matrix", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--default", default=os.environ.get("HARNESS_ASMX_URL"),
                        help="stock ASMX (default: $HARNESS_ASMX_URL)")
    parser.add_argument("--customerrors", default=os.environ.get("HARNESS_ASMX_CUSTOMERRORS_URL"),
                        help="ASMX with customErrors On (default: $HARNESS_ASMX_CUSTOMERRORS_URL)")
    parser.add_argument("--hardened", help="hardened ASMX (default: one started from "
                        "$HARNESS_ASMX_HOME with tests/services/asmx_hardened/web.config)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the file is not what ASMX answers")
    parser.add_argument("--out", type=Path, default=asmx_matrix.MATRIX)
    parser.add_argument("--curl", metavar="ROW", help="print the curl commands of row ROW "
                        "(its request, its spec calls) for --target and write nothing; "
                        "bodies go to files in --bodies")
    parser.add_argument("--operation", default="GetTokenDevice", help="with --curl")
    parser.add_argument("--target", default="http://127.0.0.1:33325", help="with --curl")
    parser.add_argument("--bodies", type=Path, default=Path(tempfile.gettempdir()),
                        help="with --curl: where request bodies are written")
    args = parser.parse_args(argv)
    if args.curl:
        return print_curl(args.curl, args.operation, args.target, args.bodies)
    if not args.default or not args.customerrors:
        parser.error("the stock and customErrors runtimes are needed: --default URL "
                     "--customerrors URL (or HARNESS_ASMX_URL, HARNESS_ASMX_CUSTOMERRORS_URL)")
    with hardened(args.hardened) as hardened_url:
        variants = {"default": args.default, "customerrors": args.customerrors,
                    "hardened": hardened_url}
        data, problems = regenerate(school_mobile(), variants)
    for line in problems:
        print(f"asmx_matrix: {line}", file=sys.stderr)
    if problems:
        return 1
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        stale = args.out.read_text(encoding="utf-8") != text
        print(f"asmx_matrix: {args.out} is {'stale' if stale else 'up to date'}")
        return int(stale)
    args.out.write_text(text, encoding="utf-8")
    rows = len(data["rows"])
    print(f"asmx_matrix: {rows} rows written to {args.out} ({', '.join(variants)})")
    return 0


def regenerate(contract: Contract, variants: dict[str, str]
               ) -> tuple[dict[str, object], list[str]]:
    """The matrix's data with ASMX's answers as ``variants`` give them, and the rows whose
    stated equivalence or fixed answer does not hold (in words)."""
    data = asmx_matrix.as_data()
    rows = {row.id: row for row in asmx_matrix.matrix().rows}
    seen: dict[str, dict[str, list[tuple[str, asmx_matrix.Shape, asmx_matrix.Shape | None]]]] = {
        row: {} for row in rows}
    options = send.SendOptions(timeout=30.0)
    with send.Sender(options) as sender:
        for name, base in variants.items():
            for mreq, answers in asmx_matrix.run(contract, base, _sending(sender)):
                if answers.response is None or answers.plain is None:
                    raise SystemExit(f"asmx_matrix: {base} did not answer {mreq.row.label}")
                got = asmx_matrix.shape(mreq.operation, mreq.binding, answers.response)
                want = (asmx_matrix.shape(mreq.operation, mreq.binding, answers.control)
                        if answers.control is not None else None)
                seen[mreq.row.id].setdefault(name, []).append((mreq.operation.name, got, want))
    problems = []
    for entry in data["rows"]:  # type: ignore[union-attr]
        row = rows[entry["id"]]
        answers = seen[row.id]
        if not answers:
            problems.append(f"{row.id}: applies to no School Mobile operation")
            continue
        if row.expected.same_as is not None:
            off = [f"{variant} {op}: {got.words()} vs the spec call's {want.words()}"
                   for variant, found in answers.items() for op, got, want in found
                   if want is None or got != want]
            problems += [f"{row.id} (as {row.expected.same_as}): {line}" for line in off[:3]]
        else:
            kinds = {(got.media, got.form) for found in answers.values() for _, got, _ in found}
            if len(kinds) > 1:
                problems.append(f"{row.id}: no fixed answer: {sorted(map(str, kinds))}")
                continue
            media, form = kinds.pop()
            statuses = sorted({got.status for found in answers.values() for _, got, _ in found})
            entry["asmx"] = asmx_matrix.Expected(None, tuple(statuses), media, form).to_dict()
        entry["observed"] = {variant: _evidence(contract, found)
                             for variant, found in answers.items()}
    return data, problems


def print_curl(row_id: str, operation: str, target: str, bodies: Path) -> int:
    """The curl commands that send row ``row_id`` for ``operation`` to ``target``: the
    evidence a finding on a stack is checked with, against the real ASMX."""
    contract = school_mobile()
    row = next((r for r in asmx_matrix.matrix().rows if r.id == row_id), None)
    op = contract.find(operation)
    if row is None or op is None:
        print(f"asmx_matrix: no row {row_id!r} or operation {operation!r}", file=sys.stderr)
        return 2
    mreq = asmx_matrix.build(contract, op, row, target.rstrip("/"))
    if mreq is None:
        print(f"asmx_matrix: {row_id} does not apply to {operation}", file=sys.stderr)
        return 2
    print(f"# {row.label}; ASMX: {row.expected.words()}")
    named = [("request", mreq.request), ("spec call", mreq.control)]
    for what, request in named + [("plain call", mreq.plain)] * (mreq.plain != mreq.control):
        if request is not None:
            print(f"# {what}\n{_curl(request, bodies / f'{row_id}.{what.split()[0]}.body')}")
    return 0


def _curl(request: HttpRequest, body: Path) -> str:
    head = "-I" if request.method == "HEAD" else f"-X {request.method}"
    parts = ["curl -s -i", head]
    parts += [f"-H {shlex.quote(f'{k}: {v}')}" for k, v in request.headers
              if k.lower() not in ("host", "content-length")]
    if "content-type" not in {k.lower() for k, _ in request.headers} and request.body:
        parts.append("-H 'Content-Type:'")
    if request.body:
        body.write_bytes(request.body)
        parts.append(f"--data-binary @{body}")
    elif request.header("Content-Length") == "0":
        parts.append("--data-binary ''")  # Content-Length: 0, as sent
    parts.append(shlex.quote(request.url))
    return " ".join(parts)


def _evidence(contract: Contract, found: list[tuple[str, asmx_matrix.Shape,
                                                    asmx_matrix.Shape | None]]) -> str:
    with_result = [f for f in found if contract.find(f[0]).result is not None]
    op, got, _ = (with_result or found)[0]
    return f"{op}: {got.words()}"


def _sending(sender: send.Sender):
    def sent(request: HttpRequest) -> HttpResponse | None:
        try:
            return sender.send(request)
        except send.TargetUnreachable:
            return None
    return sent


@contextlib.contextmanager
def hardened(url: str | None) -> Iterator[str]:
    """``url``, or a hardened ASMX started from $HARNESS_ASMX_HOME for the run."""
    if url:
        yield url
        return
    home = os.environ.get("HARNESS_ASMX_HOME")
    if not home:
        raise SystemExit("asmx_matrix: --hardened URL, or HARNESS_ASMX_HOME to start one")
    with tempfile.TemporaryDirectory(prefix="asmx-matrix-") as work:
        service = Path(work) / "service"
        service.mkdir()
        for asmx in sorted((Path(home) / "service").glob("*.asmx")):
            (service / asmx.name).symlink_to(asmx)
        shutil.copyfile(HARDENED_CONFIG, service / "web.config")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "ASMX_SERVICE": str(service)}
        started = subprocess.run([f"{home}/start.sh", str(port), "default", f"{work}/run"],
                                 env=env, capture_output=True, text=True, timeout=600,
                                 check=False)
        try:
            if started.returncode != 0:
                raise SystemExit(f"asmx_matrix: the hardened runtime did not start: "
                                 f"{started.stderr[-500:]}")
            yield f"http://127.0.0.1:{port}"
        finally:
            subprocess.run([f"{home}/stop.sh", f"{work}/run"], capture_output=True,
                           timeout=120, check=False)


if __name__ == "__main__":
    sys.exit(main())
