"""harness lint: recorded client faults are found with the right rule, operation and position;
clean traffic passes. Traffic is built by harness.contract.bindings and answered by the
reference; each
faulty recording breaks one request in one way among otherwise clean exchanges."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from traffic import BASE, clean_exchanges, exchange, request, write_recording

from harness.contract.bindings import Binding, build_request
from harness.contract.model import Contract, sample_arguments
from harness.judge import streaming
from harness.judge.findings import Report
from harness.judge.lint import LintJob, lint
from harness.judge.rules import titles
from harness.reports.json_report import summary
from harness.traffic import recording
from harness.traffic.exchange import HttpRequest
from harness.traffic.har import write_har

HARNESS = [sys.executable, "-m", "harness"]
POSITION = 17  # where the faulty exchange sits (1-based), after 16 clean ones
FAULTY_CLIENT = "SchoolMobile/2.4-beta (iOS 17)"


def _body(req: HttpRequest, body: bytes) -> HttpRequest:
    """``req`` with ``body``, Content-Length kept true (so only the intended rule breaks)."""
    return replace(req, body=body).with_header("Content-Length", str(len(body)))


def _url(req: HttpRequest, old: str, new: str) -> HttpRequest:
    return replace(req, url=req.url.replace(old, new))


def _swap_parameters(contract: Contract) -> HttpRequest:
    req = request(contract, "AuthCode", Binding.SOAP11, client=FAULTY_CLIENT)
    code, phone = b"<code>A10</code>", b"<phone>A11</phone>"
    assert code in req.body and phone in req.body
    return _body(req, req.body.replace(code, b"@").replace(phone, code).replace(b"@", phone))


def _non_integer(contract: Contract) -> HttpRequest:
    op = contract.operation("LogoutFromSchool")
    args = sample_arguments(op) | {"id_row_central": "12a"}
    return build_request(contract, op, args, Binding.SOAP11, BASE).with_header(
        "User-Agent", FAULTY_CLIENT)


def _faulty(op: str, binding: Binding, change: Callable[[HttpRequest], HttpRequest]):
    def build(contract: Contract) -> HttpRequest:
        return change(request(contract, op, binding, client=FAULTY_CLIENT))
    return build


# (fault, request builder, rule, verdict, operation, binding label)
FAULTS = [
    ("no SOAPAction", _faulty("AuthCode", Binding.SOAP11,
                              lambda r: r.with_header("SOAPAction", None)),
     "R1-SOAPACTION", "failed", "AuthCode", "SOAP 1.1"),
    ("SOAPAction names another operation", _faulty(
        "GetTokenDevice", Binding.SOAP11,
        lambda r: r.with_header("SOAPAction", '"http://tempuri.org/AuthCode"')),
     "R1-SOAPACTION", "failed", "GetTokenDevice", "SOAP 1.1"),
    ("SOAPAction unquoted", _faulty(
        "SendMarkNotes", Binding.SOAP11,
        lambda r: r.with_header("SOAPAction", "http://tempuri.org/SendMarkNotes")),
     "R1-SOAPACTION", "failed", "SendMarkNotes", "SOAP 1.1"),
    ("SOAPAction on SOAP 1.2", _faulty(
        "GetTeacherGrpupsByID", Binding.SOAP12,
        lambda r: r.with_header("SOAPAction", '"http://tempuri.org/GetTeacherGrpupsByID"')),
     "R2-NO-SOAPACTION", "failed", "GetTeacherGrpupsByID", "SOAP 1.2"),
    ("SOAP 1.1 sent as application/xml", _faulty(
        "AuthCode", Binding.SOAP11,
        lambda r: r.with_header("Content-Type", "application/xml; charset=utf-8")),
     "BIND-REQUEST-CONTENT-TYPE", "failed", "AuthCode", "SOAP 1.1"),
    ("form POST without Content-Type", _faulty(
        "SendNotificationType", Binding.HTTP_POST, lambda r: r.with_header("Content-Type", None)),
     "BIND-REQUEST-CONTENT-TYPE", "failed", "SendNotificationType", "HTTP POST"),
    ("wrong Content-Length", _faulty(
        "GetStudentsAudtiNote", Binding.SOAP12, lambda r: r.with_header("Content-Length", "3")),
     "R3-LENGTH-HOST", "failed", "GetStudentsAudtiNote", "SOAP 1.2"),
    ("no Host", _faulty("GetTeacherSubjectsByID", Binding.HTTP_GET,
                        lambda r: r.with_header("Host", None)),
     "R3-LENGTH-HOST", "failed", "GetTeacherSubjectsByID", "HTTP GET"),
    ("SOAP 1.1 envelope under SOAP 1.2 Content-Type", _faulty(
        "AuthCode", Binding.SOAP11,
        lambda r: r.with_header("SOAPAction", None).with_header(
            "Content-Type", "application/soap+xml; charset=utf-8")),
     "BIND-ENVELOPE", "failed", "AuthCode", "SOAP 1.2"),
    ("operation element in another namespace", _faulty(
        "SendMarkNotes", Binding.SOAP12,
        lambda r: _body(r, r.body.replace(b'xmlns="http://tempuri.org/"',
                                          b'xmlns="http://tempuri.org/v2/"'))),
     "BIND-OPERATION-ELEMENT", "failed", "SendMarkNotes", "SOAP 1.2"),
    ("parameters out of table order", _swap_parameters,
     "R9-PARAMETERS", "failed", "AuthCode", "SOAP 1.1"),
    ("parameter misspelled", _faulty(
        "SendNotificationType", Binding.HTTP_GET,
        lambda r: _url(r, "TypeNotfication=", "TypeNotification=")),
     "R9-PARAMETERS", "failed", "SendNotificationType", "HTTP GET"),
    ("id_row_central not an integer", _non_integer,
     "R9-INT", "failed", "LogoutFromSchool", "SOAP 1.1"),
    ("operation asked at another endpoint", _faulty(
        "AuthCode", Binding.SOAP11, lambda r: _url(r, "/AuthCodeSending.asmx",
                                                   "/CenterlogOut.asmx")),
     "OP-ENDPOINT", "failed", "AuthCode", "SOAP 1.1"),
    ("version segment in the path", _faulty(
        "GetTokenDevice", Binding.HTTP_GET,
        lambda r: _url(r, "/PushNotificationMobile.asmx", "/v2/PushNotificationMobile.asmx")),
     "V2-NO-VERSION-SEGMENT", "failed", "GetTokenDevice", "HTTP GET"),
    ("not an operation of the contract", _faulty(
        "AuthCode", Binding.HTTP_GET, lambda r: _url(r, "/AuthCodeSending.asmx/AuthCode",
                                                     "/Nothing.asmx/Foo")),
     "UNCLASSIFIED", "failed", None, None),
]


def faulty_recording(contract: Contract, path: Path, build) -> Path:
    clean = clean_exchanges(contract)
    return write_recording(path, [*clean[:POSITION - 1], exchange(contract, build(contract)),
                                  *clean[POSITION - 1:]])


def _kept(report) -> list[dict]:
    return list(report.kept())


def test_clean_traffic_passes(contract: Contract, tmp_path: Path) -> None:
    report = lint([write_recording(tmp_path / "clean.jsonl", clean_exchanges(contract))],
                  contract)
    assert report.exchanges == 32
    assert _kept(report) == []
    assert report.exit_code == 0
    # every request-side rule was really applied somewhere
    for rule in ("R1-SOAPACTION", "R2-NO-SOAPACTION", "R3-LENGTH-HOST", "R9-PARAMETERS",
                 "R9-INT", "BIND-ENVELOPE", "BIND-OPERATION-ELEMENT", "OP-ENDPOINT"):
        assert report.by_rule[rule]["passed"] > 0, rule


@pytest.mark.parametrize(("fault", "build", "rule", "verdict", "operation", "binding"), FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_client_fault_is_found_where_it_is(contract: Contract, tmp_path: Path, fault, build,
                                           rule, verdict, operation, binding) -> None:
    path = faulty_recording(contract, tmp_path / "faulty.jsonl", build)
    report = lint([path], contract)
    kept = _kept(report)
    matches = [f for f in kept if f["rule"] == rule and f["verdict"] == verdict]
    assert matches, f"{fault}: no {verdict} {rule} in {kept}"
    found = matches[0]
    assert found["index"] == POSITION
    assert found["source"] == str(path)
    assert found.get("operation") == operation
    assert found.get("binding") == binding
    assert found["client"] == FAULTY_CLIENT
    assert found["expected"] and found["actual"]
    # the clean exchanges around it stay clean
    assert {f["index"] for f in kept} == {POSITION}
    assert report.exit_code == (1 if verdict == "failed" else 0)


def test_both_sides_are_judged(contract: Contract, tmp_path: Path) -> None:
    """A recorded response that breaks a response rule is found too, at its position."""
    clean = clean_exchanges(contract)
    bad = clean[5]
    assert bad.response is not None
    clean[5] = replace(bad, response=replace(bad.response, status=500))
    report = lint([write_recording(tmp_path / "r.jsonl", clean)], contract)
    assert {(f["rule"], f["index"]) for f in _kept(report)} >= {("R4-STATUS", 6)}


def test_workers_and_chunks_keep_positions(contract: Contract, tmp_path: Path) -> None:
    """Over two worker processes and small chunks, with a broken line early on, findings carry
    the same positions (broken lines not counted) and come out in the same order."""
    clean = clean_exchanges(contract)
    build = FAULTS[0][1]
    traffic = clean * 5 + [exchange(contract, build(contract))] + clean * 2
    path = write_recording(tmp_path / "long.jsonl", traffic)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(3, '{"request": {"method": "GET"\n')  # a line cut short by a crash
    path.write_text("".join(lines), encoding="utf-8")
    broken: list[str] = []
    one = lint([path], contract, workers=1, chunk_size=7, on_broken=broken.append)
    two = lint([path], contract, workers=2, chunk_size=7)
    assert broken == [f"{path}:4: broken exchange line (JSONDecodeError)"]
    assert one.meta["broken_lines"] == two.meta["broken_lines"] == 1
    assert one.exchanges == two.exchanges == len(traffic)
    assert _kept(one) == _kept(two)
    assert {f["index"] for f in _kept(one)} == {5 * 32 + 1}
    assert summary(one)["rules"] == summary(two)["rules"]


def test_the_parent_adds_the_chunks_counts_at_once(contract: Contract, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent sums the chunks' counts and adds them to the report once before a chunk
    that brings failures, and once at the end, not once a chunk (~2,000 keys each); the
    report holds the same counts in the same order as when each chunk's were added in turn."""
    clean = clean_exchanges(contract)
    traffic = clean * 3 + [exchange(contract, FAULTS[0][1](contract))] + clean * 3
    path = write_recording(tmp_path / "r.jsonl", traffic)
    job = LintJob(contract)
    streaming._start(job)
    chunk_by_chunk = Report("lint", None, titles())  # each chunk's counts, then its findings
    offset = 0
    for chunk in streaming.chunks([path], 7):
        result = streaming.process(chunk)
        chunk_by_chunk.add_counts(result.counts)
        for finding in result.kept:
            chunk_by_chunk.add(replace(finding, index=finding.index + offset))
        offset += result.exchanges
    added: list[int] = []
    add_counts = Report.add_counts
    monkeypatch.setattr(Report, "add_counts",
                        lambda report, counts: (added.append(len(counts)),
                                                add_counts(report, counts))[1])
    report = lint([path], contract, workers=1, chunk_size=7)
    assert len(added) == 2  # before the failure's chunk, and at the end
    assert report.counts == chunk_by_chunk.counts
    assert list(report.by_rule.items()) == list(chunk_by_chunk.by_rule.items())
    assert list(report.by_case.items()) == list(chunk_by_chunk.by_case.items())
    assert _kept(report) == _kept(chunk_by_chunk) != []


def test_chunks_hold_the_lines_as_the_line_reader_reads_them(
        contract: Contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader hands a worker where a chunk's lines are in the file (the worker reads them:
    none goes through the pipe) instead of the lines: every line, its number, an empty line,
    a raw CR, a line longer than a chunk's bytes, one over MAX_LINE_BYTES and a last line
    without its newline come out as ``lines_of`` reads them, whatever the chunk's size in
    lines and bytes."""
    monkeypatch.setattr(recording, "MAX_LINE_BYTES", 64 << 10)
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract))
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5:5] = [b"\n", b'{"request": "a\rb"}\n', b'{"x": "' + b"y" * (40 << 10) + b'"}\n',
                  b'{"x": "' + b"z" * (100 << 10) + b'"}\n']
    lines[-1] = lines[-1].rstrip(b"\n")
    path.write_bytes(b"".join(lines))
    with path.open("rb") as f:
        f.readline()
        expected = [None if line is None else line.removesuffix(b"\n")
                    for line in recording.lines_of(f)]
    for size, max_bytes in ((7, 16 << 10), (2000, 16 << 10), (3, 1 << 20), (2000, 2 << 20)):
        got: list[bytes | str | None] = []
        for chunk in streaming.chunks([path], size, max_bytes):
            assert chunk.first_line == 2 + len(got)
            items = streaming._items(chunk)
            assert len(items) <= size
            got += [i.removesuffix(b"\n") if type(i) is bytes else i for i in items]
        assert got == expected, (size, max_bytes)
    first = next(streaming.chunks([path], 2000))
    assert first.span is not None and len(pickle.dumps(first)) < 1000  # 5 lines: not sent
    # the end is cut finer (streaming.TAIL_CHUNKS): the workers run out of work together
    plain = write_recording(tmp_path / "plain.jsonl", clean_exchanges(contract) * 2)
    sizes = [len(streaming._items(chunk)) for chunk in streaming.chunks([plain], 8)]
    assert sum(sizes) == 64 and sizes[:2] == [8, 8], sizes
    assert max(sizes[-4:]) <= 8 // streaming.TAIL_CHUNKS, sizes
    said: list[str] = []
    report = lint([path], contract, workers=1, chunk_size=4, on_broken=said.append)
    read_said: list[str] = []
    read = list(recording.read_exchanges([path], on_broken=lambda p, n, r: read_said.append(r)))
    assert said == read_said and report.exchanges == len(read) == 32


# ------------------------------------------------------------------- the real command


def run_lint(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "lint", *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def test_command_clean_exits_0(contract: Contract, tmp_path: Path) -> None:
    path = write_recording(tmp_path / "clean.jsonl", clean_exchanges(contract))
    done = run_lint(path, "--json", tmp_path / "out.json", "--junit", tmp_path / "out.xml")
    assert done.returncode == 0, done.stderr
    assert "lint: PASSED" in done.stdout
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed" and data["exchanges"] == 32 and data["findings"] == []
    assert "<testsuites" in (tmp_path / "out.xml").read_text(encoding="utf-8")


def test_command_faulty_exits_1_naming_rule_and_position(contract: Contract,
                                                         tmp_path: Path) -> None:
    path = faulty_recording(contract, tmp_path / "faulty.jsonl", FAULTS[0][1])
    done = run_lint(path, "--json", tmp_path / "out.json")
    assert done.returncode == 1, done.stderr
    assert f"AuthCode x SOAP 1.1 #{POSITION} in " in done.stdout
    assert "[R1-SOAPACTION]" in done.stdout
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    first = next(f for f in data["findings"] if f["rule"] == "R1-SOAPACTION")
    assert (first["index"], first["client"]) == (POSITION, FAULTY_CLIENT)


def test_command_reads_har_and_several_files(contract: Contract, tmp_path: Path) -> None:
    clean = clean_exchanges(contract)
    native = write_recording(tmp_path / "a.jsonl", clean)
    faulty = exchange(contract, FAULTS[3][1](contract))  # SOAPAction on SOAP 1.2
    har = tmp_path / "b.har"
    write_har([*clean[:2], faulty], har)
    done = run_lint(native, har, "--json", tmp_path / "out.json")
    assert done.returncode == 1, done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["exchanges"] == 35
    assert {(f["rule"], f["source"], f["index"]) for f in data["findings"]
            if f["verdict"] == "failed"} >= {("R2-NO-SOAPACTION", str(har), 3)}
    assert {f["source"] for f in data["findings"]} == {str(har)}


def test_command_skips_broken_lines_one_line_each(contract: Contract, tmp_path: Path) -> None:
    path = write_recording(tmp_path / "r.jsonl", clean_exchanges(contract)[:4])
    with path.open("a", encoding="utf-8") as f:
        f.write("not json at all\n")
        f.write('{"request": 5}\n')
    done = run_lint(path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"harness lint: skipped {path}:6: broken exchange line (JSONDecodeError)",
                     f"harness lint: skipped {path}:7: broken exchange line (TypeError)",
                     "harness lint: 2 broken line(s) skipped"]
    assert "over 4 exchanges" in done.stdout


@pytest.mark.parametrize("args", [["missing.jsonl"], ["--workers", "0", "x.jsonl"]])
def test_command_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run([*HARNESS, "lint", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_command_not_a_recording_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n", encoding="utf-8")
    done = run_lint(path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert str(path) in done.stderr
