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
    """The text of the rendered page, and its Metadata (key -> value) and counters by their
    ``data-testid`` (Allure 3's own test ids)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.metadata: dict[str, str] = {}
        self.tabs: dict[str, str] = {}
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
        elif any(i.startswith("nav-tab-") for i in ids):
            tab = next(i for i in reversed(ids) if i.startswith("nav-tab-"))
            self.tabs[tab.removeprefix("nav-tab-")] = " ".join(
                [self.tabs.get(tab.removeprefix("nav-tab-"), ""), text]).strip()


def rendered(html: Path) -> _Overview:
    """The report's DOM after its scripts ran in headless chromium (a fresh profile, no
    network). A loaded machine renders slowly: tried with a longer virtual time until the
    overview is there."""
    for budget in (30_000, 90_000, 240_000):
        with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
            done = subprocess.run(
                [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 f"--virtual-time-budget={budget}", "--dump-dom", html.resolve().as_uri()],
                capture_output=True, text=True, timeout=600, check=False)
        page = _Overview()
        page.feed(done.stdout)
        if page.metadata:
            return page
    pytest.fail(f"chromium rendered no overview of {html}: {done.stderr[-500:]}")


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], capture_output=True, text=True, timeout=600,
                          check=False, cwd=cwd)


def test_certify_overview_shows_the_verdict_and_the_warnings(tmp_path: Path) -> None:
    done = _harness("certify", "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    page = rendered(tmp_path / "reports" / "allure-report" / "index.html")
    assert page.metadata["verdict"] == "PASSED"
    assert page.metadata["warnings"].startswith("4 (1 cause(s): values refused while the same "
                                                "call with plain values succeeds")
    assert page.metadata["failures"] == "0"
    assert page.metadata["target"].startswith("embedded reference at http://127.0.0.1:")
    # one click away: the warnings category and Allure's "accepted" resolution, 4 tests
    assert page.tabs["categories"] == "Categories 1"
    assert page.tabs["resolutionCategories"] == "Resolutions 1"
    # the same count as the console's verdict line ("... in 84 scenarios: ...")
    scenarios = re.search(r"certify: PASSED - .* in (\d+) scenarios", done.stdout)
    assert scenarios and page.tabs["results"] == f"Results {scenarios[1]}", done.stdout


def test_diff_overview_shows_primary_candidate_and_the_failure(tmp_path: Path) -> None:
    with running() as primary, serve_fault(FAULTS["get-not-served"]) as candidate:
        done = _harness("diff", "--primary", primary, "--candidate", candidate,
                        "--allure-dir", str(tmp_path / "allure"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    "--name", "harness diff", cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert (page.metadata["primary"], page.metadata["candidate"]) == (primary, candidate)
    assert page.metadata["verdict"] == "FAILED"
    assert page.metadata["failures"].endswith("(1 cause(s): HTTP 404: the call is not served)")
    assert "AuthCode [HTTP GET] candidate matches primary" in page.text


def test_probe_overview_shows_the_target_and_the_verdict(tmp_path: Path) -> None:
    with running() as target:
        done = _harness("probe", "--target", target, "--max-requests", "60", "--allure-dir",
                        str(tmp_path / "allure"), "--failures", str(tmp_path / "f.jsonl"),
                        cwd=tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = tmp_path / "report.html"
    assert _harness("report", "--results", str(tmp_path / "allure"), "--out", str(report),
                    "--name", "harness probe", cwd=tmp_path).returncode == 0
    page = rendered(report)
    assert page.metadata["target"] == target
    assert page.metadata["verdict"] in ("PASSED", "FAILED")
    assert page.metadata["checks"].endswith(" calls")
    assert page.tabs["results"].startswith("Results ")


def test_certify_of_the_real_asmx_shows_its_warnings(tmp_path: Path, asmx_url: str) -> None:
    """Interop: stock ASP.NET (../shared/asmx, default) certifies with exit 0, and the rendered
    overview says how many warnings, with the first cause, as the JSON counts them."""
    done = _harness("certify", "--target", asmx_url, "--json", str(tmp_path / "c.json"),
                    "--report-dir", str(tmp_path / "reports"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["counts"]["warning"]
    page = rendered(tmp_path / "reports" / "allure-report" / "index.html")
    assert warnings >= 4 and page.metadata["warnings"].startswith(f"{warnings} (")
    assert (page.metadata["verdict"], page.metadata["failures"]) == ("PASSED", "0")
    assert page.metadata["target"] == asmx_url
    assert page.tabs["resolutionCategories"] == "Resolutions 1"
