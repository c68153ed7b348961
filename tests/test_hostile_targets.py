"""Every command that sends (certify, replay, diff), run as the real CLI against hostile targets
on loopback (tests/hostile.py): each run ends within its deadline with one line (exit 2) or a
finding (exit 1), never a hang, a traceback or unbounded memory (bench/bench_oversize.py
measures the memory). Small deadlines and caps keep the wall time short; nothing asserts a
duration except the subprocess timeout that stands for "it did not hang"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import COOKIE_SECRET, SEEN, self_signed, serve
from traffic import clean_exchanges, write_recording

from harness.contract.bindings import Binding
from harness.contract.model import school_mobile
from harness.errors import TLSFailure
from harness.judge import asmx_matrix
from harness.reference.server import running
from harness.traffic.exchange import HttpRequest
from harness.traffic.send import Sender, SendOptions

FAST = ("--timeout", "2", "--max-response-mb", "1")
NS = ("--namespace", "http://tempuri.org/")


def harness(*args: str | Path, cwd: Path, env: dict | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=cwd,
                          text=True, capture_output=True, timeout=180, check=False, env=env)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "sample.jsonl"
    return write_recording(path, clean_exchanges(school_mobile())[:12])


def run(command: str, url: str, tmp_path: Path, recording: Path, *extra: str
        ) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / f"{command}.json"
    if command == "certify":
        args = ["certify", "--target", url, "--no-html", "--report-dir", tmp_path / "reports"]
    elif command == "replay":
        args = ["replay", recording, "--target", url, "--quiet", "--concurrency", "2"]
    else:
        args = ["diff", "--primary", url, "--candidate", url, "--jobs", "2",
                "--allure-dir", tmp_path / "allure"]
    done = harness(*args, "--json", out, *FAST, *extra, cwd=tmp_path)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return done, data


def sent(report_dir: Path) -> set[str]:
    """'Operation binding' of every call certify attached to its Allure results."""
    names: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for attachment in node.get("attachments", []):
                if attachment["name"].endswith(" request"):
                    names.add(attachment["name"].removesuffix(" request"))
            for step in node.get("steps", []):
                walk(step)
    for path in report_dir.rglob("*-result.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return names


def attachments(report_dir: Path) -> str:
    return "\n".join(p.read_text() for p in report_dir.rglob("*-attachment.txt"))


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    return errors[0]


@pytest.mark.parametrize("command", ["certify", "replay", "diff"])
@pytest.mark.parametrize("kind", ["silent", "trickle"])
def test_a_target_that_does_not_answer_stops_the_run(command, kind, tmp_path, recording):
    with serve(kind) as url:
        done, _ = run(command, url, tmp_path, recording, *NS)
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_line(done)
    assert "stopped after 3 requests in a row got no answer" in line and "within 2 s" in line


@pytest.mark.parametrize("command", ["certify", "replay", "diff"])
@pytest.mark.parametrize("kind", ["huge", "endless", "gzip-bomb"])
def test_an_oversize_answer_is_a_finding(command, kind, tmp_path, recording):
    with serve(kind) as url:
        done, data = run(command, url, tmp_path, recording, *NS, "--operation", "AuthCode")
    assert done.returncode == 1, done.stdout + done.stderr
    size = [f for f in data["findings"] if f["rule"] == "SEND-RESPONSE-SIZE"]
    assert size and all(f["verdict"] == "failed" for f in size)
    assert all(f.get("operation") and f.get("binding") for f in size), size[:2]
    assert "response larger than 1 MB" in size[0]["actual"]
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.mark.parametrize("command", ["certify", "replay", "diff"])
def test_a_self_signed_target_is_one_line_exit_2(command, tmp_path, recording, certificate):
    with serve("tls", cert=certificate) as url:
        done, _ = run(command, url, tmp_path, recording)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "TLS failed" in one_line(done) and "--cacert" in done.stderr


@pytest.mark.parametrize("trust", ["--cacert", "--insecure"])
def test_cacert_or_insecure_reach_a_self_signed_target(trust, tmp_path, recording, certificate):
    trusted = ("--cacert", str(certificate[0])) if trust == "--cacert" else ("--insecure",)
    with serve("tls", cert=certificate) as url:
        done, data = run("certify", url, tmp_path, recording, *NS, *trusted,
                         "--operation", "AuthCode")
    # it is a failing server behind TLS: findings, not a TLS error
    assert done.returncode == 1 and data["exchanges"] > 0, done.stdout + done.stderr


def test_the_os_trust_store_verifies_a_target_without_cacert(certificate, monkeypatch):
    """No --cacert, no --insecure: the OS trust store decides (here SSL_CERT_FILE, which
    OpenSSL reads as the store). The sender loads that store only at its first TLS handshake,
    in place of the stand-in httpx holds: a handshake on the stand-in would refuse every
    certificate."""
    with serve("tls", cert=certificate) as url:
        request = HttpRequest("GET", f"{url}/AuthCodeMobile.asmx/AuthCode", (), b"")
        with pytest.raises(TLSFailure), Sender(SendOptions(timeout=5)) as sender:
            sender.send(request)  # not in the store yet
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        with Sender(SendOptions(timeout=5)) as sender:
            assert sender.send(request).status == 500  # answered: the server behind TLS
            assert sender.send(request).status == 500


def test_a_cookie_the_target_sets_rides_on_the_next_request():
    """httpx's cookie jar, kept (the sender reads an answer into it only when the answer
    sets a cookie): what a target's Set-Cookie says comes back on the requests after it."""
    seen = len(SEEN)
    with serve("html") as url, Sender(SendOptions(timeout=5)) as sender:
        for _ in range(2):
            sender.send(HttpRequest("GET", f"{url}/AuthCodeMobile.asmx/AuthCode", (), b""))
    first, second = SEEN[seen:seen + 2]
    assert b"cookie:" not in first.lower()
    assert f"Cookie: {COOKIE_SECRET}".encode().lower() in second.lower()


@pytest.mark.parametrize("command", ["certify", "replay", "diff"])
def test_a_plain_web_server_gets_one_line_saying_so(command, tmp_path, recording):
    """404 and an HTML page to everything: a wrong base URL, exit 2 before anything is
    judged (tests/test_wrong_target.py has the hint's wording)."""
    with serve("html") as url:
        done, data = run(command, url, tmp_path, recording, *NS)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{url} is not the service" in one_line(done) and data == {}


def test_credentials_never_reach_reports(tmp_path, recording):
    """A Set-Cookie from the target and an -H Authorization: none in JSON, JUnit, Allure."""
    SEEN.clear()
    token = "Bearer t0ken-never-in-reports"
    with serve("broken") as url, running() as reference:
        done, _ = run("certify", url, tmp_path, recording, *NS, "--operation", "AuthCode",
                      "-H", f"Authorization: {token}", "--junit", tmp_path / "c.xml")
        diffed = harness("diff", "--primary", url, "--candidate", reference, *NS,
                         "--operation", "AuthCode", "-H", f"Authorization: {token}",
                         "--json", "d.json", "--junit", "d.xml", "--allure-dir", "diff-allure",
                         cwd=tmp_path)
    assert done.returncode == 1 and diffed.returncode == 1, diffed.stdout + diffed.stderr
    assert "set-cookie" in (tmp_path / "d.json").read_text().lower()  # the header is reported
    assert any(token.encode() in head for head in SEEN)  # it was sent
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 5
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "s3cr3t" not in text and "t0ken" not in text, path
    assert COOKIE_SECRET not in done.stdout + diffed.stdout


def test_unwritable_output_is_refused_before_sending(tmp_path, recording):
    """A folder that is a file cannot hold the report (a read-only folder would not stop
    root, which these tests may run as)."""
    SEEN.clear()
    (tmp_path / "not-a-folder").write_text("x")
    with serve("html") as url:
        for command in ("certify", "replay", "diff"):
            done, _ = run(command, url, tmp_path, recording, "--junit",
                          tmp_path / "not-a-folder" / "x.xml")
            assert done.returncode == 2 and "cannot write" in one_line(done), done.stderr
    assert SEEN == []


def test_selection_values_rule_and_maxfail(tmp_path, recording):
    values = tmp_path / "values.toml"
    values.write_text('[GetTeacherSubjectsByID]\nTid = 4242\n', encoding="utf-8")
    with running() as url:
        done, data = run("certify", url, tmp_path, recording, "--operation",
                         "GetTeacherSubjectsByID", "--binding", "get", "--values", values)
        assert done.returncode == 0, done.stdout + done.stderr
        # the WSDL checks of what is selected still run (WSDL-SOAPACTION: no SOAP binding), and
        # the bare GET of its endpoint; no SOAP request
        # and the ASMX matrix's HTTP GET rows of the operation
        matrix = {f"GetTeacherSubjectsByID HTTP GET with {row.words}"
                  for row in asmx_matrix.rows_of(Binding.HTTP_GET)}
        assert sent(tmp_path / "reports") == {"GetTeacherSubjectsByID HTTP GET",
                                              "/GetTeacherSubjects.asmx WSDL",
                                              "/GetTeacherSubjects.asmx bare GET", *matrix}
        assert "Tid=4242" in attachments(tmp_path / "reports")
        assert data["selection"] == {
            "covered": ["HTTP GET", "GetTeacherSubjectsByID"],
            "left_out": ["SOAP 1.1", "SOAP 1.2", "HTTP POST", "7 other operations"],
            "chosen": "--binding get --operation GetTeacherSubjectsByID", "partial": True}
        ruled, data = run("certify", url, tmp_path, recording, "--rule", "R1-SOAPACTION")
        assert ruled.returncode == 0 and set(data["rules"]) >= {"R1-SOAPACTION"}
        assert {name.split()[1] for name in sent(tmp_path / "reports")} == {"SOAP"}
        assert data["selection"]["covered"] == ["rule R1-SOAPACTION"]
        assert "PASSED for rule R1-SOAPACTION; the " in ruled.stdout
        replayed, data = run("replay", url, tmp_path, recording, "--binding", "soap12")
        assert replayed.returncode == 0
        assert data["exchanges"] == 3 and data["not_sent"] == {"not_selected": 9}  # 3 ops x 4
        assert {f.get("binding") for f in data["findings"]} <= {"SOAP 1.2"}
        assert "replay: PASSED for SOAP 1.2; SOAP 1.1, HTTP GET, HTTP POST not judged" \
            in replayed.stdout
        diffed, data = run("diff", url, tmp_path, recording, "--operation", "AuthCode")
        assert diffed.returncode == 0 and data["selection"]["covered"] == ["AuthCode"]
    with serve("broken") as url:
        stopped, _ = run("certify", url, tmp_path, recording, *NS, "--maxfail", "1")
    assert stopped.returncode == 1 and "stopping after 1 failures" in stopped.stdout


def test_config_file_and_flags_override_it(tmp_path, recording):
    (tmp_path / "values.toml").write_text('[AuthCode]\ncode = "FROM-FILE"\n', encoding="utf-8")
    with running() as url:
        (tmp_path / "harness.toml").write_text(
            f'target = "{url}"\ntimeout = 5\noperations = ["AuthCode"]\n'
            'values = "values.toml"\n[headers]\nX-Gateway-Key = "${GATEWAY_KEY}"\n'
            '[certify]\nbindings = ["soap11"]\n', encoding="utf-8")
        env = {**__import__("os").environ, "GATEWAY_KEY": "k"}
        done = harness("certify", "--no-html", "--report-dir", "a", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert {name.split(" with ")[0] for name in sent(tmp_path / "a")} == {
            "AuthCode SOAP 1.1", "/AuthCodeSending.asmx WSDL"}  # odd requests: SOAP 1.1 only
        # code is sensitive: the value from the file was sent, and reports show its pseudonym
        attached = attachments(tmp_path / "a")
        assert "FROM-FILE" not in attached and "<code>redacted-" in attached
        assert all(p.stat().st_mode & 0o077 == 0 for p in (tmp_path / "a").rglob("*"))
        flagged = harness("certify", "--no-html", "--report-dir", "b", "--binding", "post",
                          cwd=tmp_path, env=env)
        assert {name.split(" with ")[0] for name in sent(tmp_path / "b")} == {
            "AuthCode HTTP POST", "/AuthCodeSending.asmx WSDL"}, \
            flagged.stdout  # and the ASMX matrix's HTTP POST rows of AuthCode, nothing else
        missing = harness("certify", "--no-html", cwd=tmp_path)  # ${GATEWAY_KEY} unset
        assert missing.returncode == 2 and "GATEWAY_KEY" in one_line(missing)
        (tmp_path / "harness.toml").write_text("timeot = 3\n", encoding="utf-8")
        typo = harness("certify", "--no-html", cwd=tmp_path)
        assert typo.returncode == 2 and "unknown setting 'timeot'" in one_line(typo)
