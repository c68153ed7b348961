"""The HTML reports as a person sees them: rendered by Debian's chromium, headless (its DOM
after the report's scripts ran), the overview of certify, diff and probe shows the verdict,
the warnings and failures with their counts, and the URLs judged.

Skips with one line where chromium or Allure 3 is missing (scripts/test installs chromium,
scripts/setup Allure 3).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from faulty import FAULTS, serve_fault

from harness.contract.xmlsafe import parse_xml
from harness.reference.server import running
from harness.reports.allure_report import ALLURE

HARNESS = [sys.executable, "-m", "harness"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/test installs "
                       "Debian's chromium with apt-get): browser tests skipped"),
    pytest.mark.skipif(not ALLURE.exists() and shutil.which("allure") is None,
                       reason="Allure 3 not installed (scripts/setup): browser tests skipped"),
]


_VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "source", "track", "wbr"})


class _Overview(HTMLParser):
    """The text of the rendered page, its Metadata (key -> value), its tabs and its status
    counters (``counters["failed"]``: the overview's Failed; absent when there is none) by
    their ``data-testid`` (Allure 3's own test ids)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.metadata: dict[str, str] = {}
        self.tabs: dict[str, str] = {}
        self.counters: dict[str, int] = {}
        #: Titles of the tree's sections (the Categories tab: each category).
        self.sections: list[str] = []
        self._testid: list[str | None] = []
        self._pending_key: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _VOID:
            self._testid.append("-code-" if tag in ("script", "style")
                                else dict(attrs).get("data-testid"))

    def handle_endtag(self, tag: str) -> None:
        if self._testid and tag not in _VOID:
            self._testid.pop()

    def handle_data(self, data: str) -> None:
        text = data.strip()
        if not text or "-code-" in self._testid:
            return
        self.text.append(text)
        ids = [i for i in self._testid if i]
        if ids and ids[-1] == "metadata-item-key":
            self._pending_key = text
        elif ids and ids[-1] == "metadata-item-value" and self._pending_key:
            self.metadata[self._pending_key] = text
            self._pending_key = None
        if "tree-section-title" in ids:
            self.sections.append(text)
        if ids and ids[-1] == "metadata-value" and text.isdigit() and any(
                i.startswith("metadata-item-") for i in ids):
            item = next(i for i in reversed(ids) if i.startswith("metadata-item-"))
            self.counters[item.removeprefix("metadata-item-")] = int(text)
        elif any(i.startswith("nav-tab-") for i in ids):
            tab = next(i for i in reversed(ids) if i.startswith("nav-tab-"))
            self.tabs[tab.removeprefix("nav-tab-")] = " ".join(
                [self.tabs.get(tab.removeprefix("nav-tab-"), ""), text]).strip()


    def after(self, text: str) -> str | None:
        """The text that follows ``text`` on the page (e.g. a category's count)."""
        at = self.text.index(text) if text in self.text else -1
        return self.text[at + 1] if 0 <= at < len(self.text) - 1 else None


def rendered(html: Path, tab: str = "") -> _Overview:
    """The report's DOM after its scripts ran in headless chromium (a fresh profile, no
    network), at the overview or at ``tab`` (e.g. "categories"). A loaded machine renders
    slowly: tried with a longer virtual time until the overview is there."""
    for budget in (30_000, 90_000, 240_000):
        with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
            done = subprocess.run(
                [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 f"--virtual-time-budget={budget}", "--dump-dom",
                 html.resolve().as_uri() + (f"#{tab}" if tab else "")],
                capture_output=True, text=True, timeout=600, check=False)
        page = _Overview()
        page.feed(done.stdout)
        if page.sections if tab else page.metadata:
            return page
    pytest.fail(f"chromium rendered no overview of {html}: {done.stderr[-500:]}")


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], capture_output=True, text=True, timeout=600,
                          check=False, cwd=cwd)


#: The category the tests that passed with warnings are in (allure_report.CATEGORIES).
WARNINGS = "Warnings (permitted deviations: the run passes)"


def no_red(page: _Overview) -> None:
    """Allure's overview of a passing run: nothing failed, nothing broken."""
    assert not page.counters.get("failed") and not page.counters.get("broken"), page.counters


def failed_in_console(stdout: str, unit: str) -> int:
    """The failed scenarios or test cases of the console's verdict line (``in 84 scenarios
    (12 failed)``; with a selection ``in 5 scenarios (2 failed; 79 left out by
    --operation/--binding)``), what Allure's Failed must show."""
    found = re.search(rf" (?:in|and) \d+ {unit}s? \((\d+) failed[;)]", stdout)
    assert found, stdout
    return int(found[1])


def test_certify_overview_shows_the_verdict_and_the_warnings(tmp_path: Path) -> None:
    done = _harness("certify", "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    html = tmp_path / "reports" / "allure-report" / "index.html"
    page = rendered(html)
    assert page.metadata["verdict"] == "PASSED"
    assert page.metadata["warnings"].startswith("4 (1 cause(s): values refused while the same "
                                                "call with plain values succeeds")
    assert page.metadata["failures"] == "0"
    assert page.metadata["target"].startswith("embedded reference at http://127.0.0.1:")
    # no red: the warnings pass, one click away in their category, out of the failures
    no_red(page)
    assert "resolutionCategories" not in page.tabs  # nothing "accepted" (Allure counts it failed)
    assert page.tabs["categories"] == "Categories 1"
    assert rendered(html, "categories").after(WARNINGS) == "4"
    # the same count as the console's verdict line ("... in 84 scenarios: ...")
    scenarios = re.search(r"certify: PASSED - .* in (\d+) scenarios:", done.stdout)
    assert scenarios and page.tabs["results"] == f"Results {scenarios[1]}", done.stdout
    assert page.counters["passed"] == int(scenarios[1])


def test_certify_of_a_failing_target_fails_as_many_scenarios_in_allure(tmp_path: Path) -> None:
    """Allure's Failed is the console's failed scenarios (not its failed checks, nor the
    scenarios with warnings) and JSON's; JUnit's failures the console's failed test cases and
    JSON's: HTTP GET not served, the HTTP GET scenarios fail."""
    with serve_fault(FAULTS["get-not-served"]) as target:
        done = _harness("certify", "--target", target, "--binding", "get",
                        "--json", str(tmp_path / "c.json"), "--junit", str(tmp_path / "c.xml"),
                        "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    page = rendered(tmp_path / "reports" / "allure-report" / "index.html")
    assert page.metadata["verdict"] == "FAILED"
    as_json = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    scenarios = failed_in_console(done.stdout, "scenario")
    assert page.counters["failed"] == scenarios == as_json["scenarios"]["failed"] > 0
    assert not page.counters.get("broken")
    cases = failed_in_console(done.stdout, "test case")
    junit = parse_xml((tmp_path / "c.xml").read_bytes()).attrib  # <testsuites>
    assert int(junit["failures"]) == cases == as_json["test_cases"]["failed"] > 0
    assert int(junit["tests"]) == as_json["test_cases"]["total"]


def test_diff_overview_shows_primary_candidate_and_the_failure(tmp_path: Path) -> None:
    with running() as primary, serve_fault(FAULTS["get-not-served"]) as candidate:
        done = _harness("diff", "--primary", primary, "--candidate", candidate,
                        "--allure-dir", str(tmp_path / "allure"), "--junit",
                        str(tmp_path / "d.xml"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    "--name", "harness diff", cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert (page.metadata["primary"], page.metadata["candidate"]) == (primary, candidate)
    assert page.metadata["verdict"] == "FAILED"
    assert page.metadata["failures"].endswith("(1 cause(s): HTTP 404: the call is not served)")
    assert ("AuthCode [HTTP GET] candidate answers with the primary's HTTP status"
            in page.text)
    # the same count everywhere: Allure's Failed, the console's failed test cases, JUnit's
    failed = failed_in_console(done.stdout, "test case")
    assert page.counters["failed"] == failed == 8
    assert f'failures="{failed}"' in (tmp_path / "d.xml").read_text(encoding="utf-8")


def test_diff_of_a_permitted_deviation_passes_without_red(tmp_path: Path) -> None:
    """A markup refusal where the other side takes it (4.10) is a warning: the diff passes,
    Allure shows no failure and the warning in its category."""
    from test_diff import accepts_markup

    with running() as refusing, serve_fault(accepts_markup) as accepting:
        done = _harness("diff", "--primary", refusing, "--candidate", accepting,
                        "--operation", "SendMarkNotes", "--allure-dir",
                        str(tmp_path / "allure"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert page.metadata["verdict"] == "PASSED" and page.metadata["warnings"].startswith("2 (")
    no_red(page)
    assert rendered(report, "categories").after(WARNINGS) == "2"


def test_probe_overview_shows_the_target_and_the_verdict(tmp_path: Path) -> None:
    with running() as target:
        done = _harness("probe", "--target", target, "--max-requests", "60", "--allure-dir",
                        str(tmp_path / "allure"), "--failures", str(tmp_path / "f.jsonl"),
                        cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    "--name", "harness probe", cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert page.metadata["target"] == target
    assert page.metadata["verdict"] == "PASSED"
    assert page.metadata["checks"].endswith(" calls")
    assert page.tabs["results"].startswith("Results ")
    no_red(page)


def test_probe_of_a_failing_target_fails_as_many_cases_in_allure(tmp_path: Path) -> None:
    from test_probe import FIXED_CASES, expands_entities

    with serve_fault(expands_entities) as target:
        done = _harness("probe", "--target", target, "--max-requests", str(FIXED_CASES),
                        "--allure-dir",
                        str(tmp_path / "allure"), "--failures", str(tmp_path / "f.jsonl"),
                        cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert page.metadata["verdict"] == "FAILED"
    assert page.counters["failed"] == failed_in_console(done.stdout, "test case") > 0


def test_certify_of_the_real_asmx_shows_its_warnings(tmp_path: Path, asmx_url: str) -> None:
    """Interop: stock ASP.NET (../shared/asmx, default) certifies with exit 0; the rendered
    overview says how many warnings, with the first cause, as the JSON counts them, shows no
    failure (Failed 0: a warning passes) and the warned scenarios in their category."""
    done = _harness("certify", "--target", asmx_url, "--json", str(tmp_path / "c.json"),
                    "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["counts"]["warning"]
    html = tmp_path / "reports" / "allure-report" / "index.html"
    page = rendered(html)
    assert warnings >= 4 and page.metadata["warnings"].startswith(f"{warnings} (")
    assert (page.metadata["verdict"], page.metadata["failures"]) == ("PASSED", "0")
    assert page.metadata["target"] == asmx_url
    no_red(page)
    assert "resolutionCategories" not in page.tabs
    assert int(rendered(html, "categories").after(WARNINGS) or 0) >= 4
