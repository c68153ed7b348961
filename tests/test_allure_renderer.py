"""The HTML report's renderer started ahead (issue 35): ``Renderer`` starts Node and Allure 3's
modules before the results exist (certify starts it before its run), renders the results it
finds when asked, exactly as the ``allure awesome`` CLI renders them, and leaves no process
behind when it is not used."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.reports import allure_report
from harness.reports.allure_results import AllureResults, Attach

pytestmark = pytest.mark.skipif(not allure_report.ALLURE.exists(),
                                reason="Allure 3 not installed (scripts/setup installs it)")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_EPOCH_MS = re.compile(r"\b1[6-9]\d{11}\b")


def _canonical(value: object) -> object:
    if isinstance(value, dict):  # "order", "groupOrder": Allure numbers the tests in the order
        # it read them (which the files' reading order decides when their times are equal)
        return {k: _canonical(v) for k, v in sorted(value.items())
                if k not in ("order", "groupOrder")}
    if isinstance(value, list):  # Allure reads the results in no set order
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def content(html: Path) -> dict[str, object]:
    """What a single-file report embeds (name -> decoded data, JSON canonical), with what
    differs between any two renders of the same results masked (the report's own uuids, its
    creation time, the order it read the results in)."""
    found: dict[str, object] = {}
    for name, data in re.findall(r'd\("([^"]+)","([A-Za-z0-9+/=]*)"\)',
                                 html.read_text(encoding="utf-8")):
        raw = base64.b64decode(data)
        try:
            text = _EPOCH_MS.sub("0", _UUID.sub("<uuid>", raw.decode("utf-8")))
        except UnicodeDecodeError:  # an attachment of bytes: as it is
            found[name] = raw
            continue
        try:
            found[name] = _canonical(json.loads(text))
        except ValueError:
            found[name] = text
    return found


def write_results(directory: Path) -> None:
    results = AllureResults(directory, suite="certify")
    results.add("AuthCode x SOAP 1.1", "passed", labels={"feature": "SOAP 1.1"},
                attachments=[Attach("AuthCode SOAP 1.1 request", "POST /Auth.asmx HTTP/1.1")])
    results.add("AuthCode x HTTP GET", "failed", message="expected HTTP 200, actual HTTP 500",
                attachments=[Attach("AuthCode HTTP GET response", "HTTP/1.1 500 Error")])
    results.add("SendMarkNotes x HTTP GET", "warning", message="values refused")
    results.add("GetTokenDevice x SOAP 1.2", "not applicable", message="not offered")


def write_odd_results(directory: Path) -> None:
    """Results with the files the renderer reads its own way (whole, in one loop): an empty
    attachment, one whose file is missing, one of binary bytes, a result still being written
    (*.tmp), a result that is not JSON, a folder."""
    write_results(directory)
    results = AllureResults(directory, suite="certify")
    results.add("GetTokenDevice x HTTP GET", "passed", attachments=[
        Attach("GetTokenDevice HTTP GET request", ""),
        Attach("GetTokenDevice HTTP GET response", "HTTP/1.1 200 OK\r\n\r\n\u00e9\u4e2d")])
    result = next(p for p in directory.glob("*-result.json")
                  if "GetTokenDevice" in p.read_text(encoding="utf-8"))
    data = json.loads(result.read_text(encoding="utf-8"))
    data["attachments"] = [*data.get("attachments", []),
                           {"name": "gone", "source": "missing-attachment.txt",
                            "type": "text/plain"},
                           {"name": "bytes", "source": "bytes-attachment.bin",
                            "type": "application/octet-stream"}]
    result.write_text(json.dumps(data), encoding="utf-8")
    (directory / "bytes-attachment.bin").write_bytes(bytes(range(256)) * 3)
    (directory / "half-result.json.tmp").write_text(
        result.read_text(encoding="utf-8").replace("GetTokenDevice", "Half"), encoding="utf-8")
    (directory / "broken-result.json").write_text("{not json", encoding="utf-8")
    (directory / "a-folder").mkdir()


@pytest.mark.parametrize("results", [write_results, write_odd_results])
def test_renderer_started_before_the_results_renders_them_as_the_cli_does(tmp_path: Path,
                                                                           results) -> None:
    with allure_report.Renderer() as renderer:  # before any result exists, as certify does
        results(tmp_path / "results")
        html = renderer.render(tmp_path / "results", tmp_path / "ahead", name="harness certify")
    config = tmp_path / "allurerc.json"  # the settings Renderer gives Allure
    config.write_text(json.dumps({"name": "harness certify",
                                  "categories": allure_report.CATEGORIES}), encoding="utf-8")
    cli = subprocess.run([str(allure_report.ALLURE), "awesome", str(tmp_path / "results"),
                          "--output", str(tmp_path / "cli"), "--single-file", "--report-name",
                          "harness certify", "--config", str(config)], capture_output=True,
                         text=True, timeout=300, check=False, cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    ahead = content(html)
    assert any("AuthCode x HTTP GET" in json.dumps(v) for k, v in ahead.items()
               if k.startswith("data/test-results/"))
    # Every test, status, message, attachment, category and chart alike.
    by_cli = content(tmp_path / "cli" / "index.html")
    differing = sorted(n for n in {*ahead, *by_cli} if ahead.get(n) != by_cli.get(n))
    assert not differing, [(n, str(ahead.get(n))[:300], str(by_cli.get(n))[:300])
                           for n in differing[:3]]
    assert allure_report.external_scripts(html.read_text(encoding="utf-8")) == []


def test_renderer_not_used_leaves_no_process(tmp_path: Path) -> None:
    renderer = allure_report.Renderer()
    process = renderer._process
    assert process is not None and process.poll() is None
    renderer.close()
    assert process.returncode is not None  # ended and reaped
    assert not Path(f"/proc/{process.pid}").exists() or \
        "zombie" not in Path(f"/proc/{process.pid}/status").read_text()


def test_an_allure_whose_modules_are_unknown_is_run_through_its_cli(tmp_path: Path,
                                                                    monkeypatch) -> None:
    """An ``allure`` on the PATH that is not an Allure 3 package (its modules are not beside
    it): the renderer says so (exit 3) and the CLI renders, as before."""
    fake = tmp_path / "bin" / "allure"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n# an allure CLI of another make: writes its report\n"
                    "while [ \"$1\" != --output ]; do shift; done\n"
                    "mkdir -p \"$2\" && echo '<html>other allure</html>' > \"$2/index.html\"\n",
                    encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(allure_report, "ALLURE", tmp_path / "nowhere")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    write_results(tmp_path / "results")
    html = allure_report.render(tmp_path / "results", tmp_path / "out")
    assert html.read_text(encoding="utf-8").strip() == "<html>other allure</html>"


def test_a_started_render_runs_while_the_caller_goes_on(tmp_path: Path) -> None:
    """certify hands the renderer its job, then stops the reference and writes its other
    reports: the page is rendered meanwhile, without waiting for ``finish``, which then checks
    it as ``render`` does. A refusal (no results) comes from ``finish``, in its place."""
    write_results(tmp_path / "results")
    with allure_report.Renderer() as renderer:
        renderer.start(tmp_path / "results", tmp_path / "out", name="harness certify")
        deadline = time.monotonic() + 240
        while renderer._process.poll() is None:
            assert time.monotonic() < deadline, "the started render never ended"
            time.sleep(0.05)
        page = tmp_path / "out" / "index.html"
        assert not page.exists()  # rendered aside: the report's page only once checked
        html = renderer.finish()
    assert html == page
    assert not [p for p in [*tmp_path.iterdir(), *page.parent.iterdir()]
                if p.name.startswith(".")]  # the folder Allure wrote is gone
    assert allure_report.external_scripts(html.read_text(encoding="utf-8")) == []
    assert any("AuthCode x HTTP GET" in json.dumps(v) for k, v in content(html).items()
               if k.startswith("data/test-results/"))
    (tmp_path / "empty").mkdir()
    with allure_report.Renderer() as renderer:
        renderer.start(tmp_path / "empty", tmp_path / "none")
        with pytest.raises(UsageError, match="holds no Allure results"):
            renderer.finish()


def test_a_render_stopped_before_its_end_leaves_the_previous_page_whole(tmp_path: Path) -> None:
    """certify stops the renderer it started when writing its other reports fails, or on a
    signal: the report folder keeps the page it had (a previous run's), never half a page of
    this run's, and nothing of the render is left beside it."""
    write_results(tmp_path / "results")
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("<html>yesterday's report</html>", encoding="utf-8")
    renderer = allure_report.Renderer()
    renderer.start(tmp_path / "results", out, name="harness certify")
    deadline = time.monotonic() + 240
    while renderer._process.poll() is None:  # Node has written its whole page by now
        assert time.monotonic() < deadline, "the started render never ended"
        time.sleep(0.05)
    renderer.close()  # stopped without finish: the page was never checked
    assert (out / "index.html").read_text(encoding="utf-8") == "<html>yesterday's report</html>"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]  # nothing left in it
