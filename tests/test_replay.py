"""harness replay against real servers on loopback: the reference (recordings replay clean) and
deliberately faulty implementations (the difference and the broken rule are named)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from faulty import FAULTS, serve_fault
from traffic import clean_exchanges, write_recording

from harness.contract.bindings import build_response, classify
from harness.contract.model import Contract
from harness.replay import Layout, Pace, replay
from harness.reports.json_report import summary
from harness.traffic.exchange import Exchange
from harness.traffic.har import write_har

HARNESS = [sys.executable, "-m", "harness"]
SAMPLES = sorted(Path(__file__).resolve().parent.parent.glob("recordings/*.jsonl"))
PSEUDONYM = "redacted-0123456789abcdef"


@pytest.fixture
def recording(contract: Contract, tmp_path: Path) -> Path:
    return write_recording(tmp_path / "clean.jsonl", clean_exchanges(contract))


def run_replay(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "replay", *map(str, args), "--quiet"], capture_output=True,
                          text=True, timeout=180, check=False)


def _failed(data: dict) -> set[tuple[str, str | None, str | None]]:
    return {(f["rule"], f.get("operation"), f.get("binding")) for f in data["findings"]
            if f["verdict"] == "failed"}


def test_replay_against_reference_exits_0(recording: Path, reference_url: str,
                                          tmp_path: Path) -> None:
    done = run_replay(recording, "--target", reference_url, "--json", tmp_path / "r.json",
                      "--junit", tmp_path / "r.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed" and data["exchanges"] == 32
    assert data["rules"]["REPLAY-BODY"]["passed"] == 32
    assert data["rules"]["R4-STATUS"]["passed"] == 32
    assert "BIND-ENVELOPE" not in data["rules"]  # request side is lint's job, not replay's


@pytest.mark.skipif(not SAMPLES, reason="no sample recording committed yet")
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_recordings_replay_clean_against_reference(sample: Path,
                                                          reference_url: str) -> None:
    done = run_replay(sample, "--target", reference_url)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("fault", "difference"), [
    ("wrong-status", "REPLAY-STATUS"),
    ("soap11-missing-charset", "REPLAY-CONTENT-TYPE"),
    ("response-element-misnamed", "REPLAY-BODY"),
])
def test_replay_against_faulty_exits_1_naming_the_difference(
        recording: Path, tmp_path: Path, fault: str, difference: str) -> None:
    broken = FAULTS[fault]
    with serve_fault(broken) as url:
        done = run_replay(recording, "--target", url, "--json", tmp_path / "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    failed = _failed(data)
    assert any(rule == difference and (broken.operation in (None, op))
               and (broken.binding in (None, binding)) for rule, op, binding in failed), failed
    assert any(rule == broken.rule for rule, _, _ in failed), failed
    assert f"[{difference}]" in done.stdout
    indexes = [f["index"] for f in data["findings"]]
    assert indexes == sorted(indexes)


def test_ignore_drops_body_differences_under_the_path(recording: Path, tmp_path: Path) -> None:
    with serve_fault(FAULTS["void-response-not-empty"]) as url:
        plain = run_replay(recording, "--target", url, "--json", tmp_path / "a.json")
        ignored = run_replay(recording, "--target", url, "--json", tmp_path / "b.json",
                             "--ignore", "*/SendNotificationTypeResponse")
    rules_a = {r for r, _, _ in _failed(json.loads((tmp_path / "a.json").read_text()))}
    rules_b = {r for r, _, _ in _failed(json.loads((tmp_path / "b.json").read_text()))}
    assert "REPLAY-BODY" in rules_a
    assert "REPLAY-BODY" not in rules_b
    assert "R6-EMPTY-RESPONSE" in rules_b  # the rule still judges the new response
    assert plain.returncode == ignored.returncode == 1


def _token_results(contract: Contract, value: str) -> list[Exchange]:
    """Clean traffic whose recorded GetTokenDevice results all read ``value``."""
    out = []
    for ex in clean_exchanges(contract):
        call = classify(contract, ex.request)
        if call.operation.result is not None:
            ex = replace(ex, response=build_response(contract, call.operation, call.binding,
                                                     value))
        out.append(ex)
    return out


def test_redacted_results_match_any_value(contract: Contract, reference_url: str,
                                          tmp_path: Path) -> None:
    redacted = write_recording(tmp_path / "redacted.jsonl", _token_results(contract, PSEUDONYM))
    report = replay([redacted], contract, reference_url, concurrency=2)
    assert report.exit_code == 0, list(report.kept())
    altered = write_recording(tmp_path / "altered.jsonl", _token_results(contract, "0" * 64))
    report = replay([altered], contract, reference_url, concurrency=2)
    failed = [f for f in report.kept() if f["verdict"] == "failed"]
    assert {f["rule"] for f in failed} == {"REPLAY-BODY"}
    assert {f["operation"] for f in failed} == {"GetTokenDevice"}
    assert len(failed) == 4  # one per binding


def test_har_and_several_files(contract: Contract, reference_url: str, recording: Path,
                               tmp_path: Path) -> None:
    har = tmp_path / "more.har"
    write_har(clean_exchanges(contract)[:5], har)
    done = run_replay(recording, har, "--target", reference_url, "--json", tmp_path / "r.json",
                      "--concurrency", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["exchanges"] == 37


def test_concurrency_does_not_change_the_report(contract: Contract, recording: Path) -> None:
    with serve_fault(FAULTS["wrong-status"]) as url:
        one = replay([recording], contract, url, concurrency=1)
        many = replay([recording], contract, url, concurrency=6, chunk_size=5)
    assert list(one.kept()) == list(many.kept())
    assert summary(one)["rules"] == summary(many)["rules"]


def test_unreachable_target_is_one_line_exit_2(recording: Path) -> None:
    done = run_replay(recording, "--target", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "unreachable" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("args", [["--concurrency", "0"], ["--rate", "-1"],
                                  ["--target", "ftp://x"]])
def test_bad_flags_exit_2(recording: Path, args: list[str]) -> None:
    base = [] if "--target" in args else ["--target", "http://127.0.0.1:9"]
    done = run_replay(recording, *base, *args)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0


def test_pace_spaces_requests_at_the_rate() -> None:
    pace = Pace(50.0)
    started = time.monotonic()
    for _ in range(11):
        pace.wait()
    assert time.monotonic() - started >= 10 / 50 * 0.95  # a lower bound: load only adds


def test_layout_spreads_concurrency_over_processes() -> None:
    assert Layout.for_concurrency(8, cores=2) == Layout(2, 4)
    assert Layout.for_concurrency(1, cores=4) == Layout(1, 1)
    assert Layout.for_concurrency(5, cores=4) == Layout(4, 2)


def _accepts_markup(contract: Contract, request) -> object:
    """A stack without ASP.NET's request validation: every call answered as a success."""
    call = classify(contract, request)
    return build_response(contract, call.operation, call.binding)


@pytest.mark.parametrize("binding", ["HTTP GET", "HTTP POST"])
def test_a_markup_refusal_is_a_warning_in_replay_either_way(contract: Contract,
                                                            reference_url: str,
                                                            tmp_path: Path, binding: str) -> None:
    """One verdict per behaviour (4.10): a recording of a stack that takes markup in a
    GET/POST value, replayed against one that refuses it as ASP.NET does (the reference), and
    the other way round, warns (GAP-VALUES, the REPLAY-* differences) and fails nothing."""
    from traffic import exchange, request

    from harness.contract.bindings import Binding

    how = Binding.parse(binding)
    markup = request(contract, "SendMarkNotes", how, variant=2)
    accepted = Exchange(markup, _accepts_markup(contract, markup))
    refused = exchange(contract, markup)
    assert refused.response.status == 500 and b"potentially dangerous" in refused.response.body
    with serve_fault(_accepts_markup) as accepting:
        for recorded, target in ((accepted, reference_url), (refused, accepting)):
            path = write_recording(tmp_path / f"{target.rsplit(':', 1)[1]}.jsonl", [recorded])
            done = run_replay(path, "--target", target, "--json", tmp_path / "r.json")
            assert done.returncode == 0, done.stdout + done.stderr
            data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
            warned = {f["rule"] for f in data["findings"] if f["verdict"] == "warning"}
            assert data["counts"]["failed"] == 0 and "REPLAY-STATUS" in warned, data
            status = next(f for f in data["findings"] if f["rule"] == "REPLAY-STATUS")
            assert "request validation" in status["message"] and "4.10" in status["message"]
            if target == reference_url:  # the new refusal is judged too: GAP-VALUES, not R4
                assert "GAP-VALUES" in warned
                assert data["rules"]["R4-STATUS"] == {"not applicable": 1}


def test_a_recording_answered_in_the_other_soap_version_is_said_to_be_the_recording_s(
        contract: Contract, reference_url: str, tmp_path: Path) -> None:
    """Node's soap answers SOAP 1.2 in a SOAP 1.1 envelope; replayed against a target that
    answers in the request's version (the real ASMX, the reference), the words blame the
    recording, not the target: no "SOAP 1.1 answered with a SOAP 1.2 envelope" (issue 31)."""
    from faulty import FAULTS

    soap11_answers = FAULTS["soap12-answered-in-soap11"].respond
    exchanges = [Exchange(ex.request, soap11_answers(contract, ex.request))
                 for ex in clean_exchanges(contract)]
    recorded = write_recording(tmp_path / "node.jsonl", exchanges)
    done = run_replay(recorded, "--target", reference_url, "--json", tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    causes = [c["cause"] for c in data["causes"]]
    assert causes == ["the recording has a SOAP 1.1 envelope to a SOAP 1.2 request, the "
                      "target answers in SOAP 1.2"], done.stdout
    assert "answered with a SOAP 1.2 envelope" not in done.stdout
