"""Counts that are requests, and an empty run is not a pass (issue 30 items 2 and 8).

"calls" is what was sent: one recording gives the same count in replay, diff and load, and
the counting server (tests/counting.py) got exactly that many calls. Recorded exchanges that
were not sent are counted under their own words in the console, JSON, JUnit and Allure:
service descriptions (replay and load do not send them; diff compares them, apart from the
calls), and exchanges left out by --operation/--binding. Before: replay said "18 calls" for
4 requests sent (its 8 recorded ?WSDL lines and the selection's left-out lines counted), load
said 4. certify counts the scenarios it ran and names the left-out ones (it said "in 84
scenarios" when 42 were skipped). A run that judged nothing (an empty recording, one of
?WSDL lines only, a selection that leaves nothing of it) exits 2 with one line (load said
"PASSED 0 checks over 0 calls" and exited 0).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from counting import Counting, counting
from lxml import etree
from traffic import clean_exchanges, exchange, write_recording

from harness.cli import main
from harness.contract.model import Contract
from harness.traffic.exchange import HttpRequest

HARNESS = [sys.executable, "-m", "harness"]
ONLY = ("--operation", "GetTokenDevice")
NOT_SENT = "over 4 calls (36 recorded exchanges not sent: "


@pytest.fixture(scope="module")
def server() -> Iterator[Counting]:
    with counting() as served:
        yield served


def _wsdl(contract: Contract) -> list:
    """The ?WSDL of every endpoint and one again (8), as a client reading them first."""
    endpoints = list(contract.endpoints)
    return [exchange(contract, HttpRequest("GET", f"http://school.example:8080{e}?WSDL",
                                           (("Host", "school.example:8080"),)))
            for e in [*endpoints, endpoints[0]]]


@pytest.fixture(scope="module")
def recordings(contract: Contract, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("counts")
    calls = clean_exchanges(contract)  # 32: each operation over each binding
    return {"day": write_recording(folder / "day.jsonl", [*_wsdl(contract), *calls]),
            "empty": write_recording(folder / "empty.jsonl", []),
            "wsdl": write_recording(folder / "wsdl.jsonl", _wsdl(contract)),
            "token": write_recording(folder / "token.jsonl", [
                e for e in calls if "/PushNotificationMobile.asmx" in e.request.url])}


def _properties(junit: Path) -> dict[str, str]:
    suite = etree.parse(str(junit)).find("testsuite")
    return {p.get("name"): p.get("value") for p in suite.iter("property")}


def test_replay_diff_and_load_count_the_same_calls_and_what_was_not_sent(
        server: Counting, recordings: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    day = str(recordings["day"])
    runs = {"replay": ["replay", day, "--target", server.url],
            "diff": ["diff", "--primary", server.url, "--candidate", server.url, day,
                     "--allure-dir", str(tmp_path / "allure")]}
    lines, data = {}, {}
    for command, argv in runs.items():
        server.counts.clear()
        assert main([*argv, *ONLY, "--quiet", "--json", str(tmp_path / f"{command}.json"),
                     "--junit", str(tmp_path / f"{command}.xml")]) == 0
        # diff sends each call to both targets (here one server): the calls it counts, twice
        sent = sum(server.counts.calls.values()) // (2 if command == "diff" else 1)
        assert sent == 4, server.counts.calls
        lines[command] = next(line for line in capsys.readouterr().out.splitlines()
                              if line.startswith(f"{command}: PASSED"))
        data[command] = json.loads((tmp_path / f"{command}.json").read_text())
    server.counts.clear()
    done = subprocess.run([*HARNESS, "load", day, "--target", server.url, *ONLY, "--quiet",
                           "--rate", "50", "--json", str(tmp_path / "load.json"),
                           "--junit", str(tmp_path / "load.xml")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(server.counts.calls.values()) == 4
    lines["load"] = next(line for line in done.stdout.splitlines()
                         if line.startswith("load: PASSED"))
    data["load"] = json.loads((tmp_path / "load.json").read_text())

    assert {command: d["exchanges"] for command, d in data.items()} == \
        {"replay": 4, "diff": 4, "load": 4}
    said = "8 service descriptions, 28 left out by --operation/--binding)"
    for command in ("replay", "load"):  # the 8 ?WSDL lines are not sent
        assert NOT_SENT + said in lines[command], lines[command]
        assert data[command]["not_sent"] == {"service_descriptions": 8, "not_selected": 28}
        assert _properties(tmp_path / f"{command}.xml")["not_sent.not_selected"] == "28"
    # diff compares the WSDL of GetTokenDevice's endpoint (a service description, not a
    # call) and leaves out the 7 others with the 28 calls of other operations
    assert "over 4 calls (35 recorded exchanges not sent: 35 left out by --operation/--binding)" \
        in lines["diff"], lines["diff"]
    assert data["diff"]["not_sent"] == {"not_selected": 35}
    assert data["diff"]["service_descriptions"] == {"WSDL": 1}
    assert _properties(tmp_path / "diff.xml")["not_sent.not_selected"] == "35"
    environment = (tmp_path / "allure" / "environment.properties").read_text()
    assert "not.sent = 35 left out by --operation/--binding" in environment


def test_certify_counts_the_scenarios_it_ran_and_names_the_left_out(tmp_path: Path) -> None:
    done = subprocess.run([*HARNESS, "certify", *ONLY, "--binding", "get", "--quiet",
                           "--no-html", "--report-dir", str(tmp_path), "--json",
                           str(tmp_path / "certify.json")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "certify.json").read_text())
    ran, left_out = data["scenarios"]["passed"], data["scenarios"]["left out"]
    assert set(data["scenarios"]) == {"passed", "left out"} and left_out > ran > 0
    assert f" in {ran} scenarios ({left_out} left out by --operation/--binding): " in done.stdout


@pytest.mark.parametrize(("command", "recording", "args"), [
    ("replay", "empty", ()), ("replay", "wsdl", ()), ("replay", "token", ("AuthCode",)),
    ("diff", "empty", ()), ("diff", "token", ("AuthCode",)),
    ("lint", "empty", ()), ("lint", "wsdl", ()),
    ("load", "empty", ()), ("load", "wsdl", ()), ("load", "token", ("AuthCode",)),
])
def test_a_run_that_judged_nothing_exits_2_with_one_line(
        command: str, recording: str, args: tuple[str, ...], server: Counting,
        recordings: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    target = {"replay": ["--target", server.url], "load": ["--target", server.url],
              "diff": ["--primary", server.url, "--candidate", server.url, "--allure-dir", ""],
              "lint": []}[command]
    argv = [command, str(recordings[recording]), *target,
            *(a for name in args for a in ("--operation", name)), "--quiet", "--json",
            str(tmp_path / "out.json")]
    if command == "load":  # its own process (Locust's gevent)
        done = subprocess.run([*HARNESS, *argv], capture_output=True, text=True, timeout=300,
                              check=False)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code = main(argv)
        out, err = capsys.readouterr()
    assert code == 2, out + err
    (line,) = [line for line in err.splitlines() if "namespace" not in line]
    read = ("8 exchanges, 8 service descriptions (counted, not judged)"
            if (command, recording) == ("lint", "wsdl") else "0 ")  # lint reads, sends none
    assert line.startswith(f"harness {command}: error: nothing judged in "
                           f"{recordings[recording]}: {read}"), line
    assert "PASSED" not in out and not (tmp_path / "out.json").exists()
    if recording == "token":
        assert line.endswith("(4 recorded exchanges not sent: 4 left out by "
                             "--operation/--binding); selected: AuthCode"), line


def test_features_whose_scenarios_are_all_left_out_are_no_pass(
        recordings: dict[str, Path], tmp_path: Path) -> None:
    features = tmp_path / "features"
    assert main(["scenarios", str(recordings["token"]), "-o", str(features)]) == 0
    done = subprocess.run([*HARNESS, "certify", "--features", str(features), "--operation",
                           "AuthCode", "--quiet", "--no-html", "--report-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        next(line for line in done.stderr.splitlines() if "nothing judged" in line)]
    assert "0 scenarios (4 left out by --operation/--binding)" in done.stderr


@pytest.mark.parametrize("command", ["certify", "probe"])
def test_a_selection_of_nothing_the_contract_offers_is_refused_before_anything_is_sent(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """SaveOrder takes a complex type, which ASMX leaves out of HTTP GET and POST."""
    contract = Path(__file__).parent / "services" / "orders" / "contract.json"
    assert main([command, "--contract", str(contract), "--operation", "SaveOrder",
                 "--binding", "get"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"harness {command}: error: --operation SaveOrder --binding get select nothing: "
        "SaveOrder is offered over SOAP 1.1, SOAP 1.2"]
