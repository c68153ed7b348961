"""One line, never a traceback: Hypothesis drives the real CLI (``harness.cli.main``, in this
process) with generated options and generated input files (recordings, HAR, WSDL, contract,
values, config, baseline: random bytes, random JSON, half-right documents), against an
unreachable target and the embedded reference. Whatever it is given, a command returns an
exit status or argparse exits with one; no other exception escapes, and nothing prints a
traceback. (Long-running commands are left out: serve and capture listen until stopped; load
runs in its --dry-run.)"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main

pytestmark = pytest.mark.slow

UNREACHABLE = "http://127.0.0.1:9"

numbers = st.one_of(
    st.sampled_from(["inf", "-inf", "nan", "1e308", "-1e308", "1e-308", "0", "-0", "-1",
                     "1e-9", "0x10", "1_000", "", " ", "9" * 400, "2147483648", "1.5"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**40), 10**40).map(str))
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                max_size=30).filter(lambda t: "\x00" not in t)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20)


def _recording(lines: list[str]) -> bytes:
    header = {"format": "asmx-harness-recording", "version": 1, "redacted": False}
    return "\n".join([json.dumps(header), *lines]).encode("utf-8", "surrogatepass")


exchange_like = st.fixed_dictionaries({
    "request": st.one_of(json_values, st.fixed_dictionaries({
        "method": st.sampled_from(["GET", "POST", "PUT", ""]) | texts,
        "url": st.sampled_from(["http://h/AuthCodeSending.asmx/AuthCode?code=1&phone=2",
                                "http://h/CenterlogOut.asmx", "/", ""]) | texts,
        "headers": st.one_of(json_values, st.lists(st.tuples(texts, texts), max_size=3)),
        "body": json_values})),
    "response": json_values, "timings": json_values, "meta": json_values})

file_contents = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.lists(st.one_of(exchange_like.map(json.dumps), texts), max_size=5).map(_recording),
    st.lists(st.one_of(exchange_like, json_values), max_size=4).map(
        lambda entries: json.dumps({"log": {"version": "1.2", "entries": entries}}).encode()),
    texts.map(lambda t: f"timeout = {t!r}\n[values]\nx = 1\n".encode()),
    st.sampled_from([b"<definitions xmlns='http://schemas.xmlsoap.org/wsdl/'/>",
                     b"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>",
                     b"x = " + b"[" * 3000 + b"]" * 3000, b'{"findings": [1, "x", null]}',
                     b'{"format": 1, "name": "x", "operations": [{"name": 5}]}']))

COMMANDS = {
    "lint": (["RECORDING"], {"--workers": numbers, "--baseline": "FILE", "--contract": "FILE",
                             "--rule": texts, "--severity": texts, "--profile": texts}),
    "replay": (["RECORDING", "--target", "TARGET"],
               {"--timeout": numbers, "--rate": numbers, "--concurrency": numbers,
                "--max-response-mb": numbers, "--operation": texts, "--binding": texts,
                "--values": "FILE", "--config": "FILE", "-H": texts, "--ignore": texts}),
    "load": (["RECORDING", "--target", "TARGET", "--dry-run"],
             {"--speed": numbers, "--rate": numbers, "--loop": numbers, "--max-wait": numbers,
              "--check-ratio": numbers, "--concurrency": numbers, "--p95-ms": numbers,
              "--wsdl": "FILE", "--config": "FILE"}),
    "contract": ([], {"--wsdl": "FILE", "--contract": "FILE", "--namespace": texts}),
    "export": (["RECORDING", "--har", "OUT"], {}),
    "diff": (["--primary", "TARGET", "--candidate", "TARGET"],
             {"--timeout": numbers, "--jobs": numbers, "--values": "FILE",
              "--config": "FILE", "--allure-dir": st.just("")}),
    "certify": (["--target", UNREACHABLE, "--no-html"],
                {"--timeout": numbers, "--values": "FILE", "--config": "FILE",
                 "--max-response-mb": numbers}),
    "probe": (["--target", UNREACHABLE], {"--max-time": numbers, "--rate": numbers,
                                          "--max-requests": numbers, "--seed": numbers}),
}


@st.composite
def command_lines(draw, reference: str, folder: Path) -> list[str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    fixed, options = COMMANDS[name]
    files = iter(range(1000))

    def a_file() -> str:
        path = folder / f"input-{next(files)}"
        path.write_bytes(draw(file_contents))
        return str(path)

    argv = [name]
    for item in fixed:
        argv.append({"RECORDING": None, "TARGET": None, "OUT": str(folder / "out.har")}.get(
            item, item) or (a_file() if item == "RECORDING" else
                            draw(st.sampled_from([UNREACHABLE, reference]))))
    for flag in draw(st.lists(st.sampled_from(sorted(options)), max_size=4, unique=True)
                     if options else st.just([])):
        value = options[flag]
        argv += [flag, a_file() if value == "FILE" else draw(value)]
    return argv


@settings(max_examples=int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_the_cli_answers_every_input_with_an_exit_status(reference_url: str, tmp_path: Path,
                                                         data) -> None:
    folder = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    argv = data.draw(command_lines(reference_url, folder))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)  # no harness.toml of the repository's; reports land here
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code
    finally:
        os.chdir(cwd)
    assert isinstance(code, int), (argv, code)
    assert "Traceback" not in err.getvalue(), (argv, err.getvalue())
