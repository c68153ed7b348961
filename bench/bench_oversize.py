"""Peak memory of every command against oversize targets: a 2 GB body, an endless chunked
body and a gzip bomb (~10 GB decoded), served on loopback by tests/hostile.py; of lint
and replay over recording lines with 1 MB headers; of certify given a --values file of
637,830 tables, a 300 MB feature and a feature linked to /dev/zero; and of every command that
reads recordings (lint, replay, diff, load, scenarios, export, mock) over a 0.6 MB .zhar whose
one entry inflates to 10 million headers (files built by tests/oversize.py).

Each run is the real ``harness`` command in a child process with its default options
(--max-response-mb 16, replay --concurrency 8, diff --jobs 8), except --timeout 30; load runs
320 requests with 300 in flight (--concurrency 300); capture stands between a client and the
target (--max-body-mb 16) while the client reads the whole answer (the endless one: its first
256 MiB). Memory is the peak resident set of the whole process tree (the command, its engine,
forkserver, workers or recording writer), sampled from /proc every 50 ms as bench/bench_lint.py
does. Target: <= 300 MB each (replay used to reach 16 GB on a 2 GB body, load 6.8 GB, capture
6.7 GB on a 1.1 GB answer, lint 4.75 GB on 1 MB-header lines).

    .venv/bin/python bench/bench_oversize.py
    .venv/bin/python bench/bench_oversize.py --kinds gzip-bomb --commands replay load
    .venv/bin/python bench/bench_oversize.py --kinds --no-lines --no-hostile  # files, readers
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from hostile import serve  # noqa: E402
from peak_rss import measure as measure_run  # noqa: E402
from traffic import clean_exchanges, write_recording  # noqa: E402

from harness.contract.model import school_mobile  # noqa: E402
from harness.reference.server import running  # noqa: E402

HARNESS = str(Path(sys.executable).parent / "harness")
TARGET_MB = 300
KINDS = ("huge", "endless", "gzip-bomb")
COMMANDS = ("certify", "replay", "diff", "load", "capture")
#: Lines of the 1 MB-header recording lint and replay read.
BIG_LINES = 320


def command_line(command: str, url: str, tmp: Path, recording: Path) -> list[str]:
    common = ["--timeout", "30", "--namespace", "http://tempuri.org/"]
    if command == "certify":
        return [HARNESS, "certify", "--target", url, "--no-html", "--report-dir",
                str(tmp / "reports"), *common]
    if command == "replay":
        return [HARNESS, "replay", str(recording), "--target", url, "--quiet", *common]
    if command == "load":  # 320 requests, 300 in flight at once
        return [HARNESS, "load", str(recording), "--target", url, "--quiet", "--loop", "10",
                "--rate", "1000", "--concurrency", "300", *common]
    return [HARNESS, "diff", "--primary", url, "--candidate", url, "--allure-dir", "", *common]


def measure(args: list[str], cwd: Path) -> tuple[float, int, int, str]:
    """(seconds, peak tree RSS KiB, exit status, last output line) of one run."""
    run = measure_run(args, cwd)
    lines = [line for line in (run.out + run.err).splitlines()
             if "FAILED" in line or "error" in line]
    return run.seconds, run.peak_kb, run.returncode, (lines or [""])[-1][:100]


def measure_capture(url: str, tmp: Path) -> tuple[float, int, int, str]:
    """(seconds, peak tree RSS KiB, exit status, summary) of capture while a client reads the
    target's answer through it."""
    import threading
    import time

    import httpx
    from peak_rss import tree_rss_kb

    from harness.capture.process import CaptureProcess

    out = tmp / "captured.jsonl"
    out.unlink(missing_ok=True)
    with CaptureProcess(url, out, "--key-file", str(tmp / "captured.key")) as capture:
        peak, done = [0], threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], tree_rss_kb(capture.proc.pid))
                time.sleep(0.05)

        threading.Thread(target=sample, daemon=True).start()
        started, size = time.perf_counter(), 0
        try:
            with httpx.Client(trust_env=False, timeout=120) as client, client.stream(
                    "GET", capture.url + "/AuthCodeSending.asmx/AuthCode?code=1&phone=2"
                    ) as reply:
                for piece in reply.iter_raw(1 << 20):
                    size += len(piece)
                    if size >= 256 << 20 and "chunked" in reply.headers.get(
                            "transfer-encoding", ""):
                        break
        except httpx.HTTPError as exc:
            print(f"  client: {type(exc).__name__}", flush=True)
        seconds = time.perf_counter() - started
        time.sleep(1.0)
        code, _out, _err = capture.stop()
        done.set()
    return seconds, peak[0], code, f"client read {size / 2**20:.0f} MiB"


def measure_big_lines(folder: Path) -> list[tuple[str, float, int, int, str]]:
    """lint and replay over BIG_LINES exchanges, each with a 1 MB request header."""
    from dataclasses import replace

    from harness.traffic.recording import RecordingWriter

    path = folder / "big-headers.jsonl"
    base, value = clean_exchanges(school_mobile()), "v" * (1 << 20)
    with RecordingWriter(path, upstream="http://school.example", redacted=False) as writer:
        for i in range(BIG_LINES):
            ex = base[i % len(base)]
            writer.write(replace(ex, request=replace(
                ex.request, headers=(*ex.request.headers, ("X-Big", value)))))
    rows = []
    with running() as url:
        for command in ("lint", "replay"):
            args = [HARNESS, command, str(path), "--quiet"] + (
                ["--target", url, "--namespace", "http://tempuri.org/"]
                if command == "replay" else ["--workers", "2"])
            rows.append((command, *measure(args, folder)))
    return rows


#: Headers in the one hostile entry of the .zhar every reader reads (~230 MiB inflated).
ZHAR_HEADERS = 10_000_000


def measure_readers(folder: Path, url: str) -> list[tuple[str, float, int, int, str]]:
    """Every command that reads recordings, over a ~0.6 MB .zhar whose entry 2 of 3 inflates
    to ZHAR_HEADERS tiny headers: the entry is refused by name, the other two are read."""
    from oversize import many_headers_zhar

    zhar = many_headers_zhar(folder / "hostile.zhar", clean_exchanges(school_mobile()),
                             ZHAR_HEADERS)
    common = ["--namespace", "http://tempuri.org/"]
    commands = {
        "lint": ["lint", str(zhar)],
        "replay": ["replay", str(zhar), "--target", url, "--quiet", *common],
        "diff": ["diff", "--primary", url, "--candidate", url, str(zhar), "--allure-dir", "",
                 "--quiet", *common],
        "load": ["load", str(zhar), "--target", url, "--loop", "1", "--quiet", *common],
        "scenarios": ["scenarios", str(zhar), "-o", str(folder / "features"), "--force"],
        "export": ["export", str(zhar), "-o", str(folder / "out.har")],
        "mock": ["mock", str(zhar), "--port", "0"],
    }
    rows = []
    for command, args in commands.items():
        run = (measure_served([HARNESS, *args], folder) if command == "mock"
               else measure_run([HARNESS, *args], folder))
        said = [line for line in run.err.splitlines() if "refused" in line or "error" in line]
        rows.append((command, run.seconds, run.peak_kb, run.returncode, (said or [""])[0][-100:]))
    return rows


def measure_hostile(folder: Path, url: str) -> list[tuple[str, float, int, int, str]]:
    """What the user writes or a recording holds that backtracking or HTTP cannot take: a
    catastrophic pattern in a feature, a GET URL over 64 KiB in a recording, recorded
    statuses 999, 0 and -1 (tests/test_user_patterns.py, tests/test_hostile_answers.py)."""
    from dataclasses import replace

    from test_user_patterns import FEATURE  # its step backtracks for ~2^64 steps on re
    from traffic import exchange, request

    from harness.contract.bindings import Binding
    from harness.traffic.exchange import Exchange

    contract = school_mobile()
    features = folder / "hostile-features"
    features.mkdir(exist_ok=True)
    (features / "tokens.feature").write_text(FEATURE, encoding="utf-8")
    plain = exchange(contract, request(contract, "GetTokenDevice", Binding.HTTP_GET))
    long_url = replace(plain.request, url=plain.request.url + "a" * 70_000)
    statuses = [replace(plain, response=replace(plain.response, status=s)) for s in (999, 0, -1)]
    recording = write_recording(folder / "hostile.jsonl",
                                [plain, Exchange(long_url, plain.response), *statuses])
    commands = {
        "certify": (["certify", "--features", str(features), "--target", url, "--no-html",
                     "--report-dir", str(folder / "reports")], "checks over"),
        "replay": (["replay", str(recording), "--target", url, "--quiet",
                    "--namespace", "http://tempuri.org/"], "cannot be sent"),
        "scenarios": (["scenarios", str(recording), "-o", str(folder / "from-hostile"),
                       "--force"], "left out"),
    }
    rows = []
    for command, (args, wanted) in commands.items():
        run = measure_run([HARNESS, *args], folder)
        said = [line.strip() for line in (run.out + run.err).splitlines() if wanted in line]
        rows.append((command, run.seconds, run.peak_kb, run.returncode, (said or [""])[0][:100]))
    return rows


#: One-line tables of the --values file: 637,830 fit in its 4 MiB (595 MB parsed, unbounded).
VALUES_TABLES = 637_830
#: Bytes of the large feature file (1.9 GB read whole, unbounded).
FEATURE_BYTES = 300 << 20


def measure_user_files(folder: Path) -> list[tuple[str, float, int, int, str]]:
    """certify given a --values file of VALUES_TABLES tables, a folder with a FEATURE_BYTES
    feature, and one with a feature linked to /dev/zero: each refused in one line."""
    from oversize import many_tables_toml

    values = many_tables_toml(folder / "values.toml", VALUES_TABLES)
    large, endless = folder / "large", folder / "endless"
    large.mkdir(exist_ok=True)
    endless.mkdir(exist_ok=True)
    step = b"    Given the service under test\n" * 32768  # 1 MiB
    with (large / "large.feature").open("wb") as f:
        f.write(b"Feature: large\n  Scenario: one\n")
        for _ in range(FEATURE_BYTES >> 20):
            f.write(step)
    (endless / "zero.feature").unlink(missing_ok=True)
    (endless / "zero.feature").symlink_to("/dev/zero")
    runs = {f"--values {VALUES_TABLES:,} tables": ["--values", str(values)],
            f"feature {FEATURE_BYTES >> 20} MB": ["--features", str(large)],
            "feature -> /dev/zero": ["--features", str(endless)]}
    rows = []
    for what, flags in runs.items():
        run = measure_run([HARNESS, "certify", "--no-html", "--report-dir",
                           str(folder / "reports"), *flags], folder)
        said = [line for line in run.err.splitlines() if "error" in line]
        rows.append((what, run.seconds, run.peak_kb, run.returncode, (said or [""])[0][-90:]))
    return rows


def measure_served(args: list[str], cwd: Path):
    """A server command (mock) from its start until it listens, then stopped with SIGINT."""
    import signal
    import subprocess
    import threading
    import time

    from peak_rss import Measured, tree_rss_kb

    started = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_kb(child.pid))
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    said = []
    assert child.stderr is not None
    while (line := child.stderr.readline()) and " on http://" not in line:
        said.append(line)
    seconds = time.perf_counter() - started
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    done.set()
    return Measured(seconds, peak[0], child.returncode, out, "".join(said) + err)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="*", default=list(KINDS), choices=KINDS)
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=COMMANDS)
    parser.add_argument("--no-lines", action="store_true",
                        help="skip lint and replay over 1 MB-header lines")
    parser.add_argument("--no-files", action="store_true",
                        help="skip certify's --values and --features files")
    parser.add_argument("--no-readers", action="store_true",
                        help="skip every reader over the 10 million-header .zhar")
    parser.add_argument("--no-hostile", action="store_true",
                        help="skip the catastrophic pattern and the hostile recorded exchanges")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"{'command':>8}  {'target':>9}  {'seconds':>7}  {'peak RSS MB':>11}  exit  summary")
    worst = 0
    with tempfile.TemporaryDirectory(prefix="bench-oversize-") as tmp:
        folder = Path(tmp)
        recording = write_recording(folder / "r.jsonl", clean_exchanges(school_mobile()))
        for kind in args.kinds:
            with serve(kind) as url:
                for command in args.commands:
                    seconds, peak, code, summary = (
                        measure_capture(url, folder) if command == "capture" else
                        measure(command_line(command, url, folder, recording), folder))
                    worst = max(worst, peak)
                    print(f"{command:>8}  {kind:>9}  {seconds:>7.1f}  {peak / 1024:>11.1f}  "
                          f"{code:>4}  {summary}", flush=True)
        if not args.no_lines:
            print(f"{BIG_LINES} lines with a 1 MB header "
                  f"(load average {os.getloadavg()[0]:.2f}):", flush=True)
            for command, seconds, peak, code, summary in measure_big_lines(folder):
                worst = max(worst, peak)
                print(f"{command:>8}  {'1MB-lines':>9}  {seconds:>7.1f}  {peak / 1024:>11.1f}  "
                      f"{code:>4}  {summary}", flush=True)
        if not args.no_files:
            print(f"files a user gives certify (load average {os.getloadavg()[0]:.2f}):",
                  flush=True)
            for what, seconds, peak, code, summary in measure_user_files(folder):
                worst = max(worst, peak)
                print(f"{what:>26}  {seconds:>7.1f}  {peak / 1024:>11.1f}  {code:>4}  {summary}",
                      flush=True)
        groups = [(f"a .zhar whose entry 2 of 3 has {ZHAR_HEADERS:,} headers", "10M-hdrs",
                   measure_readers, args.no_readers),
                  ("a catastrophic pattern, a 70 KB GET URL, statuses 999/0/-1", "hostile",
                   measure_hostile, args.no_hostile)]
        for title, label, rows_of, skipped in groups:
            if skipped:
                continue
            print(f"{title} (load average {os.getloadavg()[0]:.2f}):", flush=True)
            with running() as url:
                for command, seconds, peak, code, summary in rows_of(folder, url):
                    worst = max(worst, peak)
                    print(f"{command:>9}  {label:>9}  {seconds:>7.1f}  "
                          f"{peak / 1024:>11.1f}  {code:>4}  {summary}", flush=True)
    verdict = "met" if worst / 1024 <= TARGET_MB else "NOT met"
    print(f"target: peak RSS <= {TARGET_MB} MB: {verdict} (worst {worst / 1024:.0f} MB); "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    sys.exit(main())
