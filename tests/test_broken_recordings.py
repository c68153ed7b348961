"""Broken recordings lose nothing and hide nothing: a bad line costs that line only, hostile
JSON is a skipped line or a one-line error, an input without exchanges is an error (exit 2),
and an absurd integer is a finding, not a broken line. Each test runs the real command."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from traffic import clean_exchanges, exchange, write_recording

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, ParamType, sample_arguments
from harness.traffic.har import write_har
from harness.traffic.recording import RecordingWriter

HARNESS = [sys.executable, "-m", "harness"]
DEEP = 200_000


def run_lint(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "lint", *map(str, args)], capture_output=True, text=True,
                          timeout=180, check=False)


def _replace_line(path: Path, number: int, line: bytes) -> None:
    """Line ``number`` (1-based, the header is 1) of ``path`` becomes ``line``."""
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = line
    path.write_bytes(b"".join(lines))


def test_invalid_utf8_line_is_skipped_and_every_other_line_judged(contract: Contract,
                                                                  tmp_path: Path) -> None:
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract))
    line = path.read_bytes().splitlines(keepends=True)[3]
    _replace_line(path, 4, line[:40] + b"\xff\xfe" + line[40:])
    done = run_lint(path, "--json", tmp_path / "out.json")
    assert done.returncode == 0, done.stderr
    assert f"skipped {path}:4: broken exchange line" in done.stderr
    assert "1 broken line(s) skipped" in done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["exchanges"] == 31 and data["broken_lines"] == 1


def test_deeply_nested_line_is_a_skipped_line(contract: Contract, tmp_path: Path) -> None:
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract))
    _replace_line(path, 3, b"[" * DEEP + b"]" * DEEP + b"\n")
    done = run_lint(path)
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert f"skipped {path}:3: broken exchange line" in done.stderr
    assert "over 31 exchanges" in done.stdout


def test_deeply_nested_har_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.har"
    path.write_bytes(b'{"log": {"version": "1.2", "entries": [' + b"[" * DEEP + b"]" * DEEP
                     + b"]}}")
    done = run_lint(path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"harness lint: error: {path}: JSON nested too deeply to read"]


@pytest.mark.parametrize("content", [b"", b"header only", b"header, truncated line"],
                         ids=["empty file", "header only", "truncated exchange"])
def test_no_exchange_judged_is_exit_2(contract: Contract, tmp_path: Path,
                                      content: bytes) -> None:
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract)[:1])
    header, first = path.read_bytes().splitlines(keepends=True)
    path.write_bytes({b"": b"", b"header only": header,
                      b"header, truncated line": header + first[:100]}[content])
    done = run_lint(path)
    assert done.returncode == 2, done.stdout
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "PASSED" not in done.stdout
    assert str(path) in errors[0]


def test_5000_digit_integer_is_an_r9_int_failure(contract: Contract, tmp_path: Path) -> None:
    op = contract.operation("LogoutFromSchool")
    huge = "9" * 5000
    req = build_request(contract, op, sample_arguments(op) | {"id_row_central": huge},
                        Binding.SOAP11, "http://school.example")
    path = write_recording(tmp_path / "r.jsonl", [exchange(contract, req)])
    done = run_lint(path, "--json", tmp_path / "out.json")
    assert done.returncode == 1, done.stderr
    assert "broken" not in done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [(f["rule"], f["operation"]) for f in data["findings"]
            if f["verdict"] == "failed"] == [("R9-INT", "LogoutFromSchool")]


@pytest.mark.parametrize(("text", "accepted"), [
    ("9" * 5000, False), ("0" * 5000 + "7", True), ("-2147483648", True), ("2147483648", False),
    ("+0012", True), ("1_000", False), ("", False)])
def test_int_type_check_is_bounded(text: str, accepted: bool) -> None:
    assert ParamType.INT.accepts(text) is accepted


def test_zhar_is_read(contract: Contract, tmp_path: Path) -> None:
    har = tmp_path / "plain.har"
    write_har(clean_exchanges(contract)[:5], har)
    zhar = tmp_path / "saved.zhar"
    zhar.write_bytes(zlib.compress(har.read_bytes(), 9))  # what mitmproxy's savehar writes
    done = run_lint(zhar)
    assert done.returncode == 0, done.stderr
    assert "over 5 exchanges" in done.stdout


def test_zhar_bomb_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.errors import RecordingError
    from harness.traffic import har

    monkeypatch.setattr(har, "MAX_INFLATED", 1 << 20)
    zhar = tmp_path / "bomb.zhar"
    zhar.write_bytes(zlib.compress(b" " * (4 << 20)))
    with pytest.raises(RecordingError, match="inflates to more than 1 MiB"):
        list(har.read_har(zhar))


def test_zhar_bomb_is_refused_as_it_inflates(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap is checked piece by piece: refusing a bomb never holds much more than the cap
    (it used to inflate up to the cap in one call and then copy it: twice the cap)."""
    import tracemalloc

    from harness.errors import RecordingError
    from harness.traffic import har

    monkeypatch.setattr(har, "MAX_INFLATED", 8 << 20)
    zhar = tmp_path / "bomb.zhar"
    zhar.write_bytes(zlib.compress(b" " * (64 << 20)))
    tracemalloc.start()
    try:
        with pytest.raises(RecordingError, match="inflates to more than 8 MiB"):
            list(har.read_har(zhar))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 << 20, f"{peak / 2**20:.1f} MiB to refuse an 8 MiB cap"


def test_broken_har_entry_is_skipped_and_the_rest_judged(contract: Contract,
                                                         tmp_path: Path) -> None:
    har = tmp_path / "day.har"
    write_har(clean_exchanges(contract), har)
    data = json.loads(har.read_text(encoding="utf-8"))
    del data["log"]["entries"][4]["request"]  # entry 5 of 32 is broken
    data["log"]["entries"][9]["response"]["status"] = "abc"  # so is entry 10
    har.write_text(json.dumps(data), encoding="utf-8")
    done = run_lint(har, "--json", tmp_path / "out.json")
    assert done.returncode == 0, done.stderr
    assert f"skipped {har}: HAR entry 5 is broken (KeyError" in done.stderr
    assert f"skipped {har}: HAR entry 10 is broken (ValueError" in done.stderr
    assert "2 broken line(s) skipped" in done.stderr
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert out["exchanges"] == 30 and out["broken_lines"] == 2


def test_over_long_line_is_skipped_without_reading_it_whole(
        contract: Contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.traffic import recording

    monkeypatch.setattr(recording, "MAX_LINE_BYTES", 1 << 20)
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract))
    _replace_line(path, 3, b'{"request": "' + b"x" * (3 << 20) + b'"}\n')
    said: list[str] = []
    read = list(recording.read_exchanges([path], on_broken=lambda p, n, r: said.append(r)))
    assert len(read) == 31
    assert said == [f"{path}:3: broken exchange line (longer than 1 MiB)"]


def big_header_recording(contract: Contract, path: Path, count: int) -> Path:
    """``count`` exchanges, each with a 1 MB request header (a cookie jar gone wild)."""
    from dataclasses import replace as changed

    value = "v" * (1 << 20)
    base = clean_exchanges(contract)
    with RecordingWriter(path, upstream="http://school.example", redacted=False) as writer:
        for i in range(count):
            ex = base[i % len(base)]
            writer.write(changed(ex, request=changed(
                ex.request, headers=(*ex.request.headers, ("X-Big", value)))))
    return path


@pytest.mark.slow
def test_lint_of_1_mb_header_lines_stays_flat(contract: Contract, tmp_path: Path) -> None:
    """Chunks end at 8 MiB of lines, not at 2,000 lines whatever their size: 160 lines of
    1 MB were one chunk, decoded whole in each process (4.75 GB for 320 such lines)."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from peak_rss import measure

    path = big_header_recording(contract, tmp_path / "big.jsonl", 160)
    run = measure([*HARNESS, "lint", str(path), "--workers", "2", "--quiet"], tmp_path)
    assert run.returncode in (0, 1), run.err
    assert "over 160 exchanges" in run.out
    assert run.peak_kb < 300 * 1024, f"lint peaked at {run.peak_kb / 1024:.0f} MB"
