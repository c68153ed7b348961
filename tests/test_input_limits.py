"""One line, never a traceback, and never unbounded memory, for the numbers and files a user
gives: timeouts and rates are finite and sensible (flag or config file), a TOML nested
thousands deep is an error line, and every user file (WSDL, --values, --config, contract,
baseline) is read within a limit whatever it is: /dev/zero, a FIFO that never ends. Each test
runs the real command in a child process under an address-space limit, so reading a stream
whole would fail it with a MemoryError instead of passing."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from oversize import many_tables_toml

HARNESS = [sys.executable, "-m", "harness"]
SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample-all-bindings.jsonl"
#: The command's address space: enough to start, far too little to hold an endless stream.
ADDRESS_SPACE = 1536 << 20


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def harness(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=cwd, preexec_fn=_limit)


def one_error_line(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr.replace("error:", "")
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 or lines[-1].startswith("harness"), done.stderr
    for words in said:
        assert words in lines[-1], done.stderr


@pytest.mark.parametrize("flag, value, said", [
    ("--timeout", "1e308", "too large"), ("--timeout", "inf", "not a finite number"),
    ("--timeout", "nan", "not a finite number"), ("--rate", "1e-9", "too slow"),
    ("--rate", "inf", "not a finite number"), ("--max-response-mb", "1e308", "too large"),
    ("--concurrency", "100000000", "too large")])
def test_replay_numbers_are_finite_and_sensible(flag: str, value: str, said: str) -> None:
    done = harness("replay", SAMPLE, "--target", "http://127.0.0.1:9", flag, value)
    one_error_line(done, flag, said)


@pytest.mark.parametrize("args", [
    ["load", "--rate", "1e-9"], ["load", "--max-wait", "inf"], ["load", "--speed", "1e-9"],
    ["load", "--p95-ms", "1e400"], ["load", "--wait-workers", "inf"],
    ["certify", "--timeout", "1e308"], ["diff", "--timeout", "inf"],
    ["probe", "--max-time", "inf"], ["probe", "--rate", "1e-9"]])
def test_every_command_refuses_absurd_numbers(args: list[str]) -> None:
    command, *rest = args
    target = ["--target", "http://127.0.0.1:9"] if command != "diff" else [
        "--primary", "http://127.0.0.1:9", "--candidate", "http://127.0.0.1:9"]
    recordings = [SAMPLE] if command == "load" else []
    done = harness(command, *recordings, *target, *rest)
    one_error_line(done, rest[0])


@pytest.mark.parametrize("setting", ["timeout = inf", "timeout = 1e308", "timeout = nan",
                                     "max-response-mb = inf"])
def test_config_numbers_are_finite_and_sensible(tmp_path: Path, setting: str) -> None:
    (tmp_path / "harness.toml").write_text(setting + "\n", encoding="utf-8")
    done = harness("replay", SAMPLE, "--target", "http://127.0.0.1:9", cwd=tmp_path)
    one_error_line(done, "harness.toml", setting.split()[0])


def test_deep_toml_config_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    done = harness("replay", SAMPLE, "--target", "http://127.0.0.1:9", cwd=tmp_path)
    one_error_line(done, "harness.toml", "nested too deeply")


def test_deep_toml_values_is_one_line(tmp_path: Path) -> None:
    values = tmp_path / "values.toml"
    values.write_text("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    done = harness("certify", "--values", values, "--no-html", "--report-dir", tmp_path / "r")
    one_error_line(done, "--values")


@pytest.mark.parametrize("args, said", [
    (["contract", "--wsdl", "/dev/zero"], "WSDL /dev/zero is larger than 4 MiB"),
    (["certify", "--values", "/dev/zero"], "--values /dev/zero is larger than 4 MiB"),
    (["replay", str(SAMPLE), "--target", "http://127.0.0.1:9", "--config", "/dev/zero"],
     "config /dev/zero is larger than 1 MiB"),
    (["serve", "--contract", "/dev/zero", "--port", "0"],
     "contract /dev/zero is larger than 16 MiB"),
    (["lint", str(SAMPLE), "--baseline", "/dev/zero"],
     "baseline /dev/zero is larger than 256 MiB")])
def test_endless_inputs_are_read_within_a_limit(args: list[str], said: str) -> None:
    done = harness(*args)
    one_error_line(done, said)


def test_wsdl_from_an_endless_fifo_is_refused_at_the_limit(tmp_path: Path) -> None:
    """``--wsdl <(yes '<a>')``: the limit applies while the pipe is read, not after."""
    fifo = tmp_path / "wsdl.fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def endless() -> None:
        try:
            with open(fifo, "wb") as f:
                while not stop.is_set():
                    f.write(b"<a>\n" * 65536)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    try:
        done = harness("contract", "--wsdl", fifo)
    finally:
        stop.set()
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # frees a writer still waiting
        writer.join(timeout=5)
    one_error_line(done, "is larger than 4 MiB")


@pytest.mark.parametrize("kind", ["values.toml", "values.json", "harness.toml"])
def test_a_file_of_too_many_entries_is_refused_before_it_is_parsed(tmp_path: Path,
                                                                   kind: str) -> None:
    """637,830 one-line tables fit in 4 MiB and took 595 MB to parse: entries are counted
    first (50,000 at most), strings and comments apart."""
    path = tmp_path / kind
    if kind == "values.json":
        path.write_text("[" + "[]," * 60_000 + "[]]")
    else:
        many_tables_toml(path, 60_000)
    flag = "--config" if kind == "harness.toml" else "--values"
    done = harness("certify", flag, path, "--no-html", "--report-dir", tmp_path / "r")
    what = "config" if kind == "harness.toml" else "--values"
    one_error_line(done, f"{what} {path} holds more than 50,000 entries")


def test_entries_inside_strings_and_comments_are_not_counted() -> None:
    from harness.files import _entries_at_most

    text = 'a = "x=[{,." # [b]\nc = """\n=,=\n"""\nd = [1, 2]\n[e]\nf.g = \'h,\'\n'
    # a, c, d, its 1 and 2, [e], f and f.g: 8 entries, one more counted (the top table)
    assert _entries_at_most(text, toml=True) == 9
    assert _entries_at_most('{"a,:[": [1, 2], "b": "\\",{"}', toml=False) == 7


FEATURE = ("Feature: mine\n\n  {tags}\n  Scenario: one\n    Given the service under test\n"
           "    When the client calls GetTokenDevice over HTTP GET\n"
           "    Then the HTTP status is 200\n")


@pytest.mark.parametrize("kind, said", [
    ("dev-zero", "is not a regular file"), ("fifo", "is not a regular file"),
    ("folder", "is not a regular file"), ("large", "is larger than 2 MiB"),
    ("lines", "has 25,007 lines (at most 20,000 are read)"),
    ("tags", ":3: more than 1,000 tags on one scenario, feature or Examples")])
def test_a_feature_file_is_read_within_bounds(tmp_path: Path, kind: str, said: str) -> None:
    """A ``*.feature`` linked to /dev/zero reached 4 GB in 7 s, a FIFO hung certify, 300 MB took
    1.9 GB and 100,000 tags on one scenario took minutes: each is one line, exit 2, before
    Gherkin reads it."""
    mine = tmp_path / "features"
    mine.mkdir()
    path = mine / "mine.feature"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "large":
        path.write_text(FEATURE.format(tags="") + ("    # " + "x" * 1000 + "\n") * 3000)
    elif kind == "lines":
        path.write_text("\n" * 25_000 + FEATURE.format(tags=""))
    else:
        path.write_text(FEATURE.format(tags=" ".join(f"@t{n}" for n in range(100_000))))
    done = harness("certify", "--features", mine, "--no-html", "--report-dir", tmp_path / "r")
    one_error_line(done, said)
    assert str(path) in done.stderr


def test_a_feature_within_the_bounds_runs(tmp_path: Path) -> None:
    mine = tmp_path / "features"
    mine.mkdir()
    (mine / "mine.feature").write_text(FEATURE.format(tags=" ".join(
        f"@t{n}" for n in range(1_000))))
    done = harness("certify", "--features", mine, "--no-html", "--report-dir", tmp_path / "r",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
